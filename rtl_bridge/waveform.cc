#include "rtl_bridge/waveform.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <vector>

#include <verilated_fst_sc.h>

#include "base/atomic_file.h"
#include "base/error.h"

namespace n3::rtl {

void check_waveform_path(const std::string& path, const std::string& option) {
  const std::string ext = ".fst";
  require(path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0,
          option + " '" + path + "': waveforms are written as FST (GTKWave opens it, fst2vcd converts it to VCD); "
          "name the file *.fst");
  // VerilatedFstSc opens the file only when the simulation starts, where a
  // failure would pass silently: check now that it can be written, without
  // creating or truncating it (an opening probe left an empty file behind a
  // run refused for its input, and truncated a symlink's target).
  check_output_path(path, option);
  // Verilator opens the path itself (no O_NOFOLLOW, no temporary and
  // rename), so a symlink there would have its target overwritten: refused,
  // where every other output replaces the link by its own file instead.
  struct stat st {};
  require(::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode),
          option + " " + path + ": is a symbolic link; a waveform is not written through one (remove it or name another file)");
}

namespace {

// Every waveform of the process. An FST is complete only once closed (its
// header and hierarchy are written last), and the units that own waveforms
// in the SystemC model live until the process ends, so whatever is still
// open is closed when the process exits.
std::vector<Waveform*>& live() {
  static std::vector<Waveform*> w;
  return w;
}

void close_at_exit() {
  for (Waveform* w : live()) w->close();
}

}  // namespace

Waveform::Waveform(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  check_waveform_path(path_, "waveform");
  Verilated::traceEverOn(true);
  // The list first: a static built after std::atexit registers a handler
  // is destroyed before that handler runs.
  live().push_back(this);
  static const bool registered = (std::atexit(close_at_exit), true);
  (void)registered;
}

// The trace file registered itself with the SystemC kernel, which calls it
// every time step and never lets go: unregistered before it is freed.
// VerilatedFstSc derives from sc_trace_file privately; only a C-style cast
// reaches that base.
Waveform::~Waveform() {
  if (!path_.empty()) live().erase(std::remove(live().begin(), live().end(), this), live().end());
  if (!fst_) return;
  close();
  sc_core::sc_get_curr_simcontext()->remove_trace_file((sc_core::sc_trace_file*)fst_.get());  // NOLINT
}

void Waveform::open(const std::function<void(VerilatedFstC*)>& trace) {
  if (path_.empty() || fst_) return;
  // Checked again just before Verilator opens it: a link made since the
  // command's checks is refused too (the window left is this call).
  check_waveform_path(path_, "waveform");
  fst_ = std::make_unique<VerilatedFstSc>();
  trace(fst_.get());
  // From here the file is this run's (an old one is truncated): in the run
  // journal (base/atomic_file.h), so a failure or a signal removes it, and
  // with it the hierarchy file the FST writer keeps beside it until close.
  track_output(path_);
  track_output(path_ + ".hier");
  fst_->open(path_.c_str());
  require(fst_->isOpen(), "waveform '" + path_ + "': cannot write the waveform file");
  if (limit_ == 0) close();
}

void Waveform::instruction_done() {
  if (fst_ && limit_ >= 0 && ++done_ >= limit_) close();
}

void Waveform::flush() {
  if (fst_ && fst_->isOpen()) fst_->flush();
}

// Closed, the trace file stays registered until the owner goes: a closed
// FST skips its dumps.
void Waveform::close() {
  if (fst_ && fst_->isOpen()) fst_->close();
}

}  // namespace n3::rtl
