// An output file that appears whole or not at all.
//
// Every file n3 writes (weights, dumps, memory images, reports) goes through
// AtomicFile: the bytes land in an unnamed file in the destination's own
// folder (O_TMPFILE; nothing to follow, share or leave behind, even on
// SIGKILL), which commit() links under a unique hidden name and renames
// over the destination, atomic within one file system. Where the file
// system lacks O_TMPFILE, the temporary is named from the start (mkostemp:
// O_CREAT | O_EXCL, so a symlink or another run's temporary at that name is
// never followed or shared). Two runs writing the same destination therefore each leave a
// whole file, the later rename winning; a reader never sees a partial one.
// A temporary not committed is removed by the destructor (errors, exceptions)
// and by SIGINT / SIGTERM / SIGHUP, whose handler unlinks every live
// temporary (and removes every output folder the run created and still
// watches, watch_created_dir) before the process dies of the signal as it
// would have.
//
// Whole files are not enough for a whole *run*: issue 22's acceptance is "no
// output left" when a command fails (exit 2) or is interrupted, also when it
// writes into a folder that existed. So a run's outputs form one journal:
// n3's main() opens it (begin_output_run) before the command and closes it
// when the command returns; in between every AtomicFile destination that
// commit() renamed into place, and every path cli::OutputGuard was given
// (folders the run created, waveforms written by other code), is listed.
// The command failing with an exception (exit 2) removes every listed path
// (abort_output_run); SIGINT / SIGTERM / SIGHUP unlink them from the
// handler, which walks a fixed arena of precomputed paths (no allocation).
// A folder that existed is never listed, so what was in it before stays
// (only --force's deletion of an old dump cannot be undone). A file that
// existed and that commit() replaces is kept until the run ends, so a
// failed or interrupted run puts it back and one that succeeds drops it:
// up to 64 MiB as a copy in an unnamed file (O_TMPFILE, nothing left even
// on SIGKILL), larger as a second hard link under a hidden name
// (".NAME.tmp.bak.PID.N", which a SIGKILL leaves beside the new file). One mechanism
// for every command, none of which needs to know of it beyond OutputGuard.
// Dumps commit files from several threads while a signal is handled on one
// of them: naming a file, renaming it and listing it is a window the
// handler waits for on every thread, and once it runs no new window opens
// (atomic_file.cc, CommitWindow), so nothing lands after its clean-up.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace n3 {

class AtomicFile {
 public:
  // Creates the temporary beside `path`; throws n3::Error naming `path` when
  // its folder is missing or not writable, or `path` is a directory.
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return tmp_; }

  // Appends (write) or places (pwrite) bytes; short writes and EINTR are
  // retried, anything else throws naming `path`.
  void write(const void* data, size_t n);
  void pwrite(const void* data, size_t n, uint64_t offset);
  // Sets the temporary's size (sparse); throws naming `path`.
  void truncate(uint64_t bytes);
  // Renames the temporary over `path`; after it the destructor leaves it.
  void commit();

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  int slot_ = -1;  // this temporary's entry in the signal handler's list
  bool named_ = false;  // the temporary has a name (mkostemp, or linked by commit)
  uint64_t end_ = 0;
  bool done_ = false;
};

// prepare_output_dir (base/file_util.h), answering the topmost folder it
// created (`dir` itself, or a missing parent made on the way), "" when `dir`
// existed: what a failed or interrupted run removes again
// (cli::OutputGuard::prepare_dir). Declared here, beside the signal
// handler's list it feeds, rather than in the widely included file_util.h.
std::string prepare_output_dir_created(const std::string& dir, bool force);

// A folder this run created for its outputs (prepare_output_dir_created's answer):
// until unwatched, SIGINT / SIGTERM / SIGHUP remove it with everything in it
// (after the live temporaries), as the error path's OutputGuard does, and
// the process then dies of the signal. Only folders the run made are
// watched, so a folder that existed before is never removed. Returns a slot
// for unwatch_created_dir (-1: more than 16 at once, or a path too long;
// such a folder is still removed on errors, not on a signal).
int watch_created_dir(const std::string& dir);
void unwatch_created_dir(int slot);

// The run journal described at the top. begin_output_run starts an empty
// one; track_output adds a path that is the run's (a file, or a folder it
// created, removed with its contents), a no-op while none is open;
// commit_output_run keeps everything and closes it; abort_output_run
// removes every listed path, newest first, and closes it.
void begin_output_run();
bool output_run_open();
void track_output(const std::string& path);
void commit_output_run();
void abort_output_run();

// Checks before any compute that `path` can be written: its folder exists and
// is a writable directory and `path` itself is not a directory. Throws
// n3::Error naming `path` and `what` ("--stats", "-o", ...).
void check_output_path(const std::string& path, const std::string& what);

// Whether files can be made in the folder `dir` (an existing directory),
// proven by making one that is never named (O_TMPFILE; where the file
// system lacks it, a named one removed at once): root passes access(2) for
// /proc and /sys, which then refuse the write after the compute. Also that
// every name in `path` fits NAME_MAX with room for the hidden temporary's
// suffix beside it. Throws n3::Error naming `what` and `path`.
void probe_output_folder(const std::string& dir, const std::string& path, const std::string& what);
// The name-length half of it alone.
void check_output_names(const std::string& path, const std::string& what);

}  // namespace n3
