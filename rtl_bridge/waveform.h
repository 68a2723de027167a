// A Verilated unit's waveform, owned by the unit's driver (GemvRtl, DmaRtl)
// or the cosim bench: opened at the start of simulation (VerilatedFstSc
// needs the netlist bound first), closed with the owner, after its
// instruction limit, or when the process exits (an FST is complete only
// once closed, and the model's units live until then).
//
// The format is FST, which GTKWave opens and `fst2vcd` (GTKWave's) turns
// into VCD: on the tiny model's run it is a small fraction of the VCD's size
// (docs/rtl.md, "Waveforms"). A Verilated model is built for one trace
// format, so the file name must say .fst: GTKWave picks its reader by the
// name, and an FST named .vcd would not open.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

class VerilatedFstC;
class VerilatedFstSc;

namespace n3::rtl {

// Throws n3::Error (one line) unless `path` names a writable *.fst file.
// Call before any compute: it creates the file (empty) to prove it can.
void check_waveform_path(const std::string& path, const std::string& option);

class Waveform {
 public:
  // "" = no waveform. Otherwise checks the path (check_waveform_path) and
  // turns Verilator's tracing on: construct before the Verilated model.
  explicit Waveform(std::string path);
  ~Waveform();
  // `trace` hooks the unit's signals (the Verilated top's trace(fst, levels)).
  void open(const std::function<void(VerilatedFstC*)>& trace);
  // The waveform ends (the file is closed) after the n-th instruction the
  // owner reports with instruction_done(); n < 0: never (the default).
  void stop_after(int64_t n) { limit_ = n; }
  void instruction_done();
  void flush();
  void close();

 private:
  std::string path_;
  int64_t limit_ = -1, done_ = 0;
  std::unique_ptr<VerilatedFstSc> fst_;
};

}  // namespace n3::rtl
