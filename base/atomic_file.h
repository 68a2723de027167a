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
// temporary before the process dies of the signal as it would have.
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

// Checks before any compute that `path` can be written: its folder exists and
// is a writable directory and `path` itself is not a directory. Throws
// n3::Error naming `path` and `what` ("--stats", "-o", ...).
void check_output_path(const std::string& path, const std::string& what);

}  // namespace n3
