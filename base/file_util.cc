#include "base/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"

namespace n3 {

namespace fs = std::filesystem;

namespace {
// A folder opens as a stream on Linux and reports a huge size: refuse it by
// name rather than failing later with "out of memory".
void require_regular(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  require(!S_ISDIR(st.st_mode), path + ": is a directory, not a file");
  // Opening a FIFO with no writer blocks for ever (and one with a writer has
  // no size to read): refused before the open.
  require(!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode), path + ": is a FIFO or socket, not a regular file");
}
}  // namespace

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  require_regular(path);
  std::ifstream f(path, std::ios::binary);
  require(f.good(), path + ": cannot open (" + std::strerror(errno) + ")");
  f.seekg(0, std::ios::end);
  std::streamoff n = f.tellg();
  require(n >= 0, path + ": cannot read its size (not a regular file?)");
  f.seekg(0);
  std::vector<uint8_t> buf(static_cast<size_t>(n));
  f.read(reinterpret_cast<char*>(buf.data()), n);
  require(f.good() || n == 0, path + ": read failed");
  return buf;
}

std::string read_file_text(const std::string& path) {
  std::vector<uint8_t> b = read_file_bytes(path);
  return std::string(b.begin(), b.end());
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  AtomicFile f(path);
  f.write(bytes.data(), bytes.size());
  f.commit();
}

bool file_exists(const std::string& path) { return fs::exists(path); }
bool is_directory(const std::string& path) { return fs::is_directory(path); }

MappedFile::MappedFile(const std::string& path) : path_(path) {
  require_regular(path);
  int fd = ::open(path.c_str(), O_RDONLY);
  require(fd >= 0, path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(path + ": cannot stat");
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": is a directory, not a file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw Error(path + ": mmap failed (" + std::strerror(errno) + ")");
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

std::string prepare_output_dir_created(const std::string& dir, bool force) {
  if (fs::exists(dir)) {
    require(fs::is_directory(dir), dir + ": exists and is not a directory");
    bool empty = fs::directory_iterator(dir) == fs::directory_iterator();
    require(empty || force, dir + ": directory is not empty (use --force to overwrite)");
    if (!empty) {
      for (const auto& e : fs::directory_iterator(dir)) {
        std::string ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".npy" || e.path().filename() == "manifest.json"))
          fs::remove(e.path());
      }
    }
    return "";
  }
  // The topmost folder this call creates: create_directories makes every
  // missing one from the nearest existing ancestor down.
  std::error_code ec;
  std::string top;
  for (fs::path q = fs::path(dir).lexically_normal(); !q.empty() && !fs::exists(q, ec); q = q.parent_path()) {
    top = q.string();
    if (q == q.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  require(!ec, dir + ": cannot create directory (" + ec.message() + ")");
  return top.empty() ? dir : top;
}

void prepare_output_dir(const std::string& dir, bool force) { (void)prepare_output_dir_created(dir, force); }

void check_output_dir(const std::string& dir, bool force, const std::string& option) {
  if (dir.empty()) return;
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!force) prepare_output_dir(dir, false);  // (an existing, empty directory: nothing is written)
    require(fs::is_directory(dir, ec), option + " " + dir + ": exists and is not a directory");
    probe_output_folder(dir, dir, option);
    return;
  }
  // A name too long for the file system reads as missing (ENAMETOOLONG):
  // say so now rather than when the folder is made after the compute.
  check_output_names(dir, option);
  // The folders create_directories would make hang off the nearest one that exists.
  fs::path p = fs::absolute(dir, ec);
  while (!p.empty() && p != p.parent_path() && !fs::exists(p, ec)) p = p.parent_path();
  const std::string at = p.string();
  require(fs::is_directory(p, ec), option + " " + dir + ": " + at + " is not a directory");
  struct statvfs v {};
  const bool read_only = ::statvfs(at.c_str(), &v) == 0 && (v.f_flag & ST_RDONLY);
  require(::access(at.c_str(), W_OK | X_OK) == 0 && !read_only,
          option + " " + dir + ": cannot create it in " + at + " (" + (read_only ? "read-only file system" : std::strerror(errno)) + ")");
  probe_output_folder(at, dir, option);
}

}  // namespace n3
