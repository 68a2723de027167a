#include "base/atomic_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "base/error.h"

namespace n3 {
namespace {

// The live temporaries, for the signal handler. A handler may only call
// async-signal-safe functions, so the list is a fixed array of C strings with
// an atomic state per slot (0 free, 1 being filled, 2 live) rather than a
// container. More temporaries than slots at once are still removed by their
// destructors, just not on a signal.
constexpr int kSlots = 64;
char g_paths[kSlots][PATH_MAX];
std::atomic<int> g_state[kSlots];
std::once_flag g_handlers;

// Folders a run created for its outputs (watch_created_dir), removed with
// their contents on a signal, after the temporaries. Same slot scheme.
constexpr int kDirSlots = 16;
char g_dirs[kDirSlots][PATH_MAX];
std::atomic<int> g_dir_state[kDirSlots];

// getdents64's record (glibc before 2.30 declares no wrapper).
struct Dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// Removes `name` (relative to the folder `parent`) and, for a folder,
// everything in it, with async-signal-safe system calls only (openat,
// lseek, getdents64, unlinkat, close): a handler must not allocate, so no std::filesystem and
// no opendir. A symlink is removed, never followed (O_NOFOLLOW). Dumps and
// compiled outputs are a folder or two deep; kDepth bounds the recursion
// and its static buffers (the handler runs once: the process then dies).
constexpr int kDepth = 8;
alignas(8) char g_dents[kDepth][4096];

void remove_tree_at(int parent, const char* name, int depth) {
  if (::unlinkat(parent, name, 0) == 0 || errno == ENOENT) return;
  if (depth >= kDepth) return;
  const int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  // Entries removed while reading may shift the listing: read it again
  // from the start until a whole pass removes nothing.
  for (int pass = 0; pass < 64; ++pass) {
    bool removed = false;
    ::lseek(fd, 0, SEEK_SET);
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, g_dents[depth], sizeof g_dents[depth]);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        const Dirent64* d = reinterpret_cast<const Dirent64*>(g_dents[depth] + at);
        at += d->reclen;
        if (d->name[0] == '.' && (d->name[1] == '\0' || (d->name[1] == '.' && d->name[2] == '\0'))) continue;
        remove_tree_at(fd, d->name, depth + 1);
        removed = true;
      }
    }
    if (!removed) break;
  }
  ::close(fd);
  ::unlinkat(parent, name, AT_REMOVEDIR);
}

// The open run's outputs (begin_output_run): every path it committed or
// created, NUL-terminated one after another in a fixed arena the handler
// can read without allocating. Appends happen under g_run_mutex with signals
// blocked; g_run_len is published after the bytes, so the handler sees only
// whole entries. A run past the arena's 4 MiB (tens of thousands of paths)
// keeps the rest for the error path only (g_run_paths).
constexpr size_t kRunArena = size_t(4) << 20;
char g_run_arena[kRunArena];
std::atomic<size_t> g_run_len{0};
std::atomic<bool> g_run_open{false};
std::mutex g_run_mutex;
std::vector<std::string> g_run_paths;  // the same paths, for abort_output_run
std::unordered_set<std::string> g_run_set;  // the same again, to ask "listed already?"

// The files a commit replaced, kept until the run ends so that a run that
// fails or is interrupted puts the user's file back instead of leaving
// neither version. A file up to kCopyBackupBytes is copied into an unnamed
// file beside it (O_TMPFILE, held open: a SIGKILL leaves nothing, the kernel
// frees it); putting it back links it under a hidden name (`stage`) and
// renames that over the destination. A larger one (or where O_TMPFILE is
// missing) gets a second hard link under a hidden name instead (`source`; no
// bytes copied), renamed back; a SIGKILL leaves that link. A run that
// succeeds closes the copies and unlinks the links. Triples
// "source\0stage\0destination\0" (stage empty for a link) in an arena the
// handler reads, as above; the same in g_backups for the error and success
// paths.
constexpr size_t kBackupArena = size_t(1) << 20;
constexpr uint64_t kCopyBackupBytes = uint64_t(64) << 20;
constexpr size_t kMaxCopies = 32;  // descriptors held at once
char g_bak_arena[kBackupArena];
std::atomic<size_t> g_bak_len{0};
struct Backup {
  std::string source;  // the hard link, or /proc/self/fd/N of the copy
  std::string stage;   // the copy's hidden name when put back; "" for a link
  std::string dest;
  int fd = -1;         // the copy's descriptor
};
std::vector<Backup> g_backups;
size_t g_copies = 0;

// Puts one backup back (async-signal-safe: the handler calls it too).
void restore_backup(const char* source, const char* stage, const char* dest) {
  if (stage[0] == '\0') {
    ::rename(source, dest);
  } else if (::linkat(AT_FDCWD, source, AT_FDCWD, stage, AT_SYMLINK_FOLLOW) == 0) {
    ::rename(stage, dest);
  }
}

// Threads commit files concurrently (dumps), and a signal is handled on one
// thread while the others run on: blocking signals in the committing
// thread is not enough. g_in_flight counts the threads between naming a
// file and journaling it (CommitWindow); the handler first sets g_dying, so
// no new window opens (it waits for the process to die instead), then waits
// for the open ones to close, and only then removes what is listed.
std::atomic<int> g_in_flight{0};
std::atomic<bool> g_dying{false};

void on_signal(int sig) {
  g_dying.store(true);
  while (g_in_flight.load() > 0) {
  }
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load() == 2) ::unlink(g_paths[i]);
  // Files first, newest first: a folder the run created is listed before
  // the files it holds, and goes with everything in it.
  if (g_run_open.load()) {
    const size_t len = g_run_len.load();
    size_t end = len;
    while (end > 0) {
      size_t start = end - 1;  // end - 1 is the entry's NUL
      while (start > 0 && g_run_arena[start - 1] != '\0') --start;
      remove_tree_at(AT_FDCWD, g_run_arena + start, 0);
      end = start;
    }
    // Then the files the run had replaced come back.
    const size_t blen = g_bak_len.load();
    for (size_t at = 0; at < blen;) {
      const char* source = g_bak_arena + at;
      const char* stage = source + std::strlen(source) + 1;
      const char* dest = stage + std::strlen(stage) + 1;
      restore_backup(source, stage, dest);
      at = size_t(dest - g_bak_arena) + std::strlen(dest) + 1;
    }
  }
  for (int i = 0; i < kDirSlots; ++i)
    if (g_dir_state[i].load() == 2) remove_tree_at(AT_FDCWD, g_dirs[i], 0);
  // Die of the signal as the process would have without us (exit status and
  // the parent's view unchanged).
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: keep ignoring it
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

int register_temp(const std::string& tmp) {
  std::call_once(g_handlers, install_handlers);
  if (tmp.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expect = 0;
    if (g_state[i].compare_exchange_strong(expect, 1)) {
      std::memcpy(g_paths[i], tmp.c_str(), tmp.size() + 1);
      g_state[i].store(2);
      return i;
    }
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0) g_state[slot].store(0);
}

// Blocks SIGINT / SIGTERM / SIGHUP for its lifetime: a rename and the
// journal entry naming its result happen together or not at all, as the
// handler sees them.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&s, sig);
    ::pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~SignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

// The span in which a file gets a name and joins the lists (temporaries,
// journal): signals held in this thread, and counted in g_in_flight so a
// handler on another thread waits for it. Opened after a handler began, it
// never returns: the process is about to die of the signal, and a rename
// now would land after the handler's clean-up.
class CommitWindow {
 public:
  CommitWindow() {
    g_in_flight.fetch_add(1);
    if (g_dying.load()) {
      g_in_flight.fetch_sub(1);
      for (;;) ::pause();
    }
  }
  ~CommitWindow() { g_in_flight.fetch_sub(1); }
  CommitWindow(const CommitWindow&) = delete;
  CommitWindow& operator=(const CommitWindow&) = delete;

 private:
  SignalsHeld held_;  // constructed first: no signal on this thread inside the window
};

// Appends `path` to the open run's journal; the caller holds g_run_mutex.
void journal_locked(const std::string& path) {
  g_run_paths.push_back(path);
  g_run_set.insert(path);
  const size_t len = g_run_len.load();
  if (path.empty() || path.size() >= PATH_MAX || len + path.size() + 1 > kRunArena) return;
  std::memcpy(g_run_arena + len, path.c_str(), path.size() + 1);
  g_run_len.store(len + path.size() + 1);
}

}  // namespace

void begin_output_run() {
  std::call_once(g_handlers, install_handlers);
  SignalsHeld held;  // a handler on this thread would wait on a window that waits on this mutex
  std::lock_guard<std::mutex> lock(g_run_mutex);
  g_run_paths.clear();
  g_run_set.clear();
  g_run_len.store(0);
  g_backups.clear();
  g_copies = 0;
  g_bak_len.store(0);
  g_run_open.store(true);
}

bool output_run_open() { return g_run_open.load(); }

void track_output(const std::string& path) {
  if (!g_run_open.load()) return;
  CommitWindow window;
  std::lock_guard<std::mutex> lock(g_run_mutex);
  journal_locked(path);
}

void commit_output_run() {
  // A window, not just signals held here: a signal taken by another thread
  // meanwhile waits until the old files are unlinked and the run closed (so
  // the run stands whole), or, taken before, the handler puts the old files
  // back and this window never opens. Either way no backup is left.
  CommitWindow window;
  std::lock_guard<std::mutex> lock(g_run_mutex);
  for (const Backup& b : g_backups) {  // the run stands: the old files go
    if (b.fd >= 0) ::close(b.fd);
    else ::unlink(b.source.c_str());
  }
  g_copies = 0;
  g_run_open.store(false);
  g_run_len.store(0);
  g_bak_len.store(0);
  g_run_paths.clear();
  g_run_set.clear();
  g_backups.clear();
}

void abort_output_run() {
  // In a window for the same reason as commit_output_run: a signal meanwhile
  // waits for the clean-up to finish rather than finding the run half undone.
  CommitWindow window;
  std::lock_guard<std::mutex> lock(g_run_mutex);
  std::error_code ec;
  for (auto it = g_run_paths.rbegin(); it != g_run_paths.rend(); ++it) std::filesystem::remove_all(*it, ec);
  for (const Backup& b : g_backups) {  // the user's files come back
    restore_backup(b.source.c_str(), b.stage.c_str(), b.dest.c_str());
    if (b.fd >= 0) ::close(b.fd);
  }
  g_copies = 0;
  g_run_open.store(false);
  g_run_len.store(0);
  g_bak_len.store(0);
  g_run_paths.clear();
  g_run_set.clear();
  g_backups.clear();
}

int watch_created_dir(const std::string& dir) {
  std::call_once(g_handlers, install_handlers);
  if (dir.empty() || dir.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kDirSlots; ++i) {
    int expect = 0;
    if (g_dir_state[i].compare_exchange_strong(expect, 1)) {
      std::memcpy(g_dirs[i], dir.c_str(), dir.size() + 1);
      g_dir_state[i].store(2);
      return i;
    }
  }
  return -1;
}

void unwatch_created_dir(int slot) {
  if (slot >= 0 && slot < kDirSlots) g_dir_state[slot].store(0);
}

namespace {

std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string errno_text(int e) { return std::strerror(e); }

// A hidden name in the destination's folder: rename(2) is atomic only
// within one file system, and the dot keeps it out of `ls` and dump globs.
std::string hidden_name(const std::string& path, const std::string& suffix) {
  const size_t slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return folder_of(path) + "/." + base + ".tmp." + suffix;
}

// The old file at `path` (a regular file of `st`) copied into an unnamed
// file in its folder, its mode kept; an empty Backup (dest "") when that
// cannot be done (no O_TMPFILE, a read error): the caller links instead.
Backup copy_backup(const std::string& path, const struct stat& st, const std::string& stage) {
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return {};
  const int out = ::open(folder_of(path).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  bool ok = out >= 0;
  std::vector<char> buf(size_t(1) << 16);
  for (uint64_t left = uint64_t(st.st_size); ok && left > 0;) {
    const ssize_t r = ::read(in, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ok = false;
      break;
    }
    for (ssize_t done = 0; ok && done < r;) {
      const ssize_t w = ::write(out, buf.data() + done, size_t(r - done));
      if (w < 0 && errno == EINTR) continue;
      ok = w > 0;
      if (ok) done += w;
    }
    left -= std::min<uint64_t>(left, uint64_t(r));
  }
  ::close(in);
  if (ok) ok = ::fchmod(out, st.st_mode & 07777) == 0;
  if (!ok) {
    if (out >= 0) ::close(out);
    return {};
  }
  return Backup{"/proc/self/fd/" + std::to_string(out), stage, path, out};
}

}  // namespace

// The longest hidden suffix a name gets beside it: ".NAME.tmp.bak.PID.N".
constexpr size_t kHiddenSuffix = 40;

void check_output_names(const std::string& path, const std::string& what) {
  require(path.size() < PATH_MAX - kHiddenSuffix,
          what + " " + path.substr(0, 80) + "...: the path is longer than " + std::to_string(PATH_MAX - kHiddenSuffix) +
              " characters");
  for (size_t at = 0; at <= path.size();) {
    const size_t slash = std::min(path.find('/', at), path.size());
    require(slash - at <= NAME_MAX - kHiddenSuffix,
            what + " " + path + ": the name '" + path.substr(at, 40) + "...' is longer than " +
                std::to_string(NAME_MAX - kHiddenSuffix) + " characters (the file system's " + std::to_string(NAME_MAX) +
                " less room for a temporary name beside it)");
    at = slash + 1;
  }
}

void probe_output_folder(const std::string& dir, const std::string& path, const std::string& what) {
  check_output_names(path, what);
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    std::string t = (dir == "/" ? std::string() : dir) + "/.n3-probe.XXXXXX";
    fd = ::mkostemp(t.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(t.c_str());
  }
  if (fd < 0) throw Error(what + " " + path + ": cannot create files in " + dir + " (" + errno_text(errno) + ")");
  ::close(fd);
}

namespace {

// check_output_path without the probe: AtomicFile's own O_TMPFILE open right
// after it is the proof, and a dump commits thousands of files (one open
// each, not two).
void check_output_path_shape(const std::string& path, const std::string& what) {
  require(!path.empty(), what + ": empty output path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(what + " " + path + ": is a directory, not a file");
  // An output replaces its path whole (a rename): on a device or FIFO
  // (/dev/null, /dev/full, a pipe to a reader) that would put a regular file
  // in its place, run as root even in /dev.
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error(what + " " + path + ": is a device, FIFO or socket, not a regular file (an output replaces its path)");
  const std::string dir = folder_of(path);
  if (::stat(dir.c_str(), &st) != 0)
    throw Error(what + " " + path + ": folder " + dir + " does not exist (" + errno_text(errno) + ")");
  require(S_ISDIR(st.st_mode), what + " " + path + ": " + dir + " is not a directory");
  require(::access(dir.c_str(), W_OK) == 0, what + " " + path + ": folder " + dir + " is not writable");
  check_output_names(path, what);
}

}  // namespace

void check_output_path(const std::string& path, const std::string& what) {
  check_output_path_shape(path, what);
  probe_output_folder(folder_of(path), path, what);
}

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  check_output_path_shape(path, "output");
  // First choice: an unnamed file in the destination's folder (O_TMPFILE).
  // Nothing names it until commit(), so even SIGKILL (an OOM kill, a batch
  // scheduler's hard timeout) leaves nothing behind: the kernel frees it.
  fd_ = ::open(folder_of(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd_ >= 0) return;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    throw Error(path + ": cannot create a temporary beside it (" + errno_text(errno) + ")");
  // The file system has no O_TMPFILE: a named temporary, removed on error and
  // on SIGINT/SIGTERM/SIGHUP (not on SIGKILL).
  tmp_ = hidden_name(path, "XXXXXX");
  std::string tmpl = tmp_;
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  fd_ = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd_ < 0) throw Error(path + ": cannot create a temporary beside it (" + errno_text(errno) + ")");
  tmp_ = buf.data();
  named_ = true;
  // mkostemp creates 0600; outputs are ordinary files (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
  slot_ = register_temp(tmp_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);  // an unnamed temporary goes with its last descriptor
  if (!done_ && named_) ::unlink(tmp_.c_str());
  unregister_temp(slot_);
}

void AtomicFile::pwrite(const void* data, size_t n, uint64_t offset) {
  require(!done_, path_ + ": write after commit");
  const char* c = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd_, c, n < (size_t(1) << 30) ? n : (size_t(1) << 30), static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw Error(path_ + ": write failed (" + (w < 0 ? errno_text(errno) : std::string("no progress")) + ")");
    c += w;
    offset += uint64_t(w);
    n -= size_t(w);
  }
  if (offset > end_) end_ = offset;
}

void AtomicFile::write(const void* data, size_t n) { pwrite(data, n, end_); }

void AtomicFile::truncate(uint64_t bytes) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
    throw Error(path_ + ": cannot size to " + std::to_string(bytes) + " bytes (" + errno_text(errno) + ")");
}

void AtomicFile::commit() {
  require(!done_, path_ + ": committed twice");
  // From here to the journal entry, a signal on any thread waits for this
  // thread (CommitWindow), so the hidden name, the rename and the journal
  // entry are all seen by the handler, or none of them happened.
  CommitWindow window;
  if (!named_) {
    // Give the unnamed file a unique hidden name (linkat cannot replace a
    // file), then rename that over the destination as below.
    const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
    for (int attempt = 0;; ++attempt) {
      static std::atomic<unsigned> counter{0};
      tmp_ = hidden_name(path_, std::to_string(::getpid()) + "." + std::to_string(counter++));
      if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp_.c_str(), AT_SYMLINK_FOLLOW) == 0) break;
      if (errno != EEXIST || attempt > 100)
        throw Error(path_ + ": cannot name the temporary " + tmp_ + " (" + errno_text(errno) + ")");
    }
    named_ = true;
    slot_ = register_temp(tmp_);
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw Error(path_ + ": write failed on close (" + errno_text(errno) + ")");
  // In an open run the destination joins its journal inside the window.
  std::unique_lock<std::mutex> lock(g_run_mutex, std::defer_lock);
  Backup backup;
  if (g_run_open.load()) {
    lock.lock();
    // Room first, so the push after the rename cannot throw.
    if (g_run_paths.size() == g_run_paths.capacity()) g_run_paths.reserve(2 * g_run_paths.size() + 16);
    if (g_backups.size() == g_backups.capacity()) g_backups.reserve(2 * g_backups.size() + 4);
    g_run_set.reserve(g_run_set.size() + 1);
    // A file that was there before the run (not one this run wrote earlier)
    // is kept until the run ends (g_backups says how), so a failed or
    // interrupted run can put it back. A symlink at the destination is
    // replaced, not followed, and not kept (it names the user's file, which
    // the rename leaves alone). Where neither a copy nor a link can be made
    // the old file is not kept.
    struct stat st {};
    if (!g_run_set.count(path_) && ::lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      static std::atomic<unsigned> bak_counter{0};
      auto fresh_name = [&] {
        return hidden_name(path_, "bak." + std::to_string(::getpid()) + "." + std::to_string(bak_counter++));
      };
      if (uint64_t(st.st_size) <= kCopyBackupBytes && g_copies < kMaxCopies) backup = copy_backup(path_, st, fresh_name());
      for (int attempt = 0; backup.dest.empty() && attempt < 100; ++attempt) {
        const std::string link = fresh_name();
        if (::link(path_.c_str(), link.c_str()) == 0) backup = Backup{link, "", path_, -1};
        else if (errno != EEXIST) break;
      }
    }
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    if (backup.fd >= 0) ::close(backup.fd);
    else if (!backup.dest.empty()) ::unlink(backup.source.c_str());
    throw Error(path_ + ": cannot rename " + tmp_ + " over it (" + errno_text(e) + ")");
  }
  done_ = true;
  if (lock.owns_lock()) {
    journal_locked(path_);
    if (!backup.dest.empty()) {
      if (backup.fd >= 0) ++g_copies;
      const size_t len = g_bak_len.load();
      const size_t need = backup.source.size() + backup.stage.size() + backup.dest.size() + 3;
      if (len + need <= kBackupArena) {
        char* at = g_bak_arena + len;
        for (const std::string* part : {&backup.source, &backup.stage, &backup.dest}) {
          std::memcpy(at, part->c_str(), part->size() + 1);
          at += part->size() + 1;
        }
        g_bak_len.store(len + need);
      }
      g_backups.push_back(std::move(backup));
    }
  }
}

}  // namespace n3
