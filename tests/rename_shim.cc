// An LD_PRELOAD library for the output-journal tests (hardening_outputs_test):
// makes one rename(2) of an n3 run misbehave, the way a full disk or a user's
// Ctrl-C would, at a chosen point of a multi-file output. AtomicFile::commit
// renames each finished file into place, so "the Nth rename" is "the Nth
// output file".
//   N3_TEST_FAIL_RENAME=N    the Nth rename fails with ENOSPC
//   N3_TEST_SIGINT_RENAME=N  the Nth rename succeeds, then the process sends
//                            itself SIGINT (a real signal, mid-output; any
//                            thread may take it, as with a Ctrl-C)
//   N3_TEST_RAISE_RENAME=N   the same, but SIGINT to the renaming thread
//                            (raise): it is taken the moment that thread's
//                            commit ends, before the run can go on, so the
//                            outcome is the same every time
//   N3_TEST_KILL_RENAME=N    the Nth rename succeeds, then SIGKILL: nothing
//                            of n3 runs after it
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
  if (n == env_int("N3_TEST_RAISE_RENAME")) ::raise(SIGINT);
  if (n == env_int("N3_TEST_KILL_RENAME")) ::raise(SIGKILL);
  return rc;
}
