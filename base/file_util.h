// Small file helpers shared by every reader and writer: whole-file reads,
// atomic writes, read-only memory maps and dump-directory preparation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace n3 {

std::vector<uint8_t> read_file_bytes(const std::string& path);
std::string read_file_text(const std::string& path);
// Writes through an AtomicFile (atomic_file.h): readers never see a partial
// file, concurrent writers never mix their bytes.
void write_file_atomic(const std::string& path, const std::string& bytes);
bool file_exists(const std::string& path);
bool is_directory(const std::string& path);

// A read-only memory map; the file stays mapped while the object lives.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// An output directory for a dump: created if missing; refused when it holds
// files unless `force` (then its old .npy files and manifest are removed).
void prepare_output_dir(const std::string& dir, bool force);

// Before any compute: whether prepare_output_dir(dir, force) could succeed
// later, creating nothing now. An existing `dir` must be a directory (empty
// unless `force`); a missing one needs its nearest existing ancestor to be a
// writable directory on a writable file system. Throws n3::Error naming
// `option` and the path.
void check_output_dir(const std::string& dir, bool force, const std::string& option);

}  // namespace n3
