// An LD_PRELOAD library for the output-journal tests (hardening_outputs_test):
// makes one rename(2) of an n3 run misbehave, the way a full disk or a user's
// Ctrl-C would, at a chosen point of a multi-file output. AtomicFile::commit
// renames each finished file into place, so "the Nth rename" is "the Nth
// output file".
//   N3_TEST_FAIL_RENAME=N    the Nth rename fails with ENOSPC
//   N3_TEST_SIGINT_RENAME=N  the Nth rename succeeds, then the process sends
//                            itself SIGINT (a real signal, mid-output)
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>

namespace {
std::atomic<int> g_count{0};
int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : 0;
}
}  // namespace

extern "C" int rename(const char* from, const char* to) {
  using Fn = int (*)(const char*, const char*);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "rename"));
  const int n = ++g_count;
  if (n == env_int("N3_TEST_FAIL_RENAME")) {
    errno = ENOSPC;
    return -1;
  }
  const int rc = real(from, to);
  if (n == env_int("N3_TEST_SIGINT_RENAME")) ::kill(::getpid(), SIGINT);
  return rc;
}
