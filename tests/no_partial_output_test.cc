// Issue 22, "no output left": a run that fails (exit 2) or is interrupted
// leaves nothing it wrote, also in a folder that existed before, also with
// --force, also its single-file outputs (--out). n3 runs with
// tests/rename_shim.cc preloaded, which fails the Nth rename(2) (ENOSPC) or
// sends SIGINT right after it; every file n3 writes is renamed into place
// once (base/atomic_file.h), so N = 1, 2, ... walks the failure or the
// signal through every output of the run until the run gets past them all
// and succeeds. Each step asserts the folder is as before the run: nothing
// new, an unrelated file untouched.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "base/npy.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

namespace fs = std::filesystem;

// Every file and folder under `dir` with its bytes ("<dir>" for folders).
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out[fs::relative(e.path(), dir).string()] = e.is_directory() ? "<dir>" : read_file_text(e.path().string());
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> v;
  for (std::string w; in >> w;) v.push_back(w);
  return v;
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::string last_line(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s.substr(s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1);
}

struct Outcome {
  int status = 0;  // waitpid's
  std::string err;
};

// `n3 <args>` with the shim preloaded and `var`=n set; stdout discarded.
Outcome run_shimmed(const std::string& args, const char* var, int n, const std::string& scratch) {
  const std::string err_path = scratch + "/stderr";
  std::vector<std::string> argv = words(args);
  argv.insert(argv.begin(), "n3");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY), err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(null, 1);
    ::dup2(err, 2);
    ::setenv("LD_PRELOAD", N3_RENAME_SHIM, 1);
    ::setenv(var, std::to_string(n).c_str(), 1);
    std::vector<char*> cargv;
    for (std::string& w : argv) cargv.push_back(w.data());
    cargv.push_back(nullptr);
    ::execv(test::n3_binary().c_str(), cargv.data());
    ::_exit(127);
  }
  Outcome o;
  EXPECT_EQ(::waitpid(pid, &o.status, 0), pid);
  o.err = read_file_text(err_path);
  return o;
}

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__)
  return true;  // ASan must be the first library loaded; a preload comes before it
#else
  return false;
#endif
}

// The model, prompt and a scratch folder (for stderr) shared by the cases.
struct Inputs {
  std::string model = test::tiny_n3w(), scratch = test::temp_dir("nopartial_scratch"), ids;
  Inputs() {
    ids = scratch + "/ids.npy";
    write_npy_i32(ids, {5, 17, 3, 9});
  }
};

// The commands of the review, each writing into OUT (a folder) and, for run,
// also --out PARENT/o.npy.
std::vector<std::string> commands(const Inputs& s) {
  const std::string m = " --model " + s.model, ids = " --ids " + s.ids;
  return {"golden" + m + ids + " --dump-all --dump OUT",
          "sim --backend func" + m + ids + " --dump OUT",
          "run --backend golden" + m + ids + " --max-new 2 --out PARENT/o.npy --dump OUT",
          "compile" + m + " -o OUT"};
}

std::string with(std::string cmd, const std::string& parent, const std::string& out) {
  for (size_t at; (at = cmd.find("PARENT")) != std::string::npos;) cmd.replace(at, 6, parent);
  for (size_t at; (at = cmd.find("OUT")) != std::string::npos;) cmd.replace(at, 3, out);
  return cmd;
}

// Runs `cmd` with the Nth rename failing (or signalled), N = 1, 2, ..., each
// from the state `prepare` makes, and calls `check` after every run that did
// not succeed; stops at the first N the run survives. Returns how many
// failing runs were checked.
template <typename Prepare, typename Check>
int walk(const std::string& cmd, const char* var, const Inputs& s, Prepare prepare, Check check) {
  for (int n = 1; n <= 200; ++n) {
    prepare();
    const Outcome o = run_shimmed(cmd, var, n, s.scratch);
    if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0) return n - 1;
    SCOPED_TRACE(std::string(var) + "=" + std::to_string(n) + ": " + o.err);
    check(o);
  }
  ADD_FAILURE() << cmd << ": still failing after 200 renames";
  return 0;
}

// An existing, empty output folder; the Nth output fails to be renamed:
// exit 2, one line, and the parent (the empty folder, an unrelated file, no
// o.npy) exactly as before.
TEST(NoPartialOutput, FailureLeavesAnExistingEmptyFolderAsItWas) {
  if (sanitized()) GTEST_SKIP() << "LD_PRELOAD under ASan";
  const Inputs s;
  for (const std::string& c : commands(s)) {
    const std::string parent = test::temp_dir("nopartial_empty"), out = parent + "/out";
    const std::string cmd = with(c, parent, out);
    SCOPED_TRACE(cmd);
    fs::create_directories(out);
    write_file_atomic(parent + "/unrelated.txt", "keep");
    const auto before = snapshot(parent);
    const int failures = walk(cmd, "N3_TEST_FAIL_RENAME", s, [] {}, [&](const Outcome& o) {
      EXPECT_TRUE(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 2) << o.status;
      // One error line, the last (compile reports each program as it goes).
      EXPECT_EQ(count_of(o.err, ": error: "), 1) << o.err;
      EXPECT_NE(last_line(o.err).find(": error: "), std::string::npos) << o.err;
      EXPECT_EQ(snapshot(parent), before);
    });
    EXPECT_GE(failures, 2) << "the run writes several files, so several failure points were tried";
  }
}

// --force over a good earlier output: the old files --force deletes may be
// gone, but nothing of the failed run remains: every file left is one that
// was there before, with its old bytes, and the unrelated file is untouched.
TEST(NoPartialOutput, FailureWithForceLeavesNothingOfTheNewRun) {
  if (sanitized()) GTEST_SKIP() << "LD_PRELOAD under ASan";
  const Inputs s;
  for (const std::string& c : commands(s)) {
    const std::string parent = test::temp_dir("nopartial_force"), out = parent + "/out";
    const std::string cmd = with(c, parent, out) + " --force";
    SCOPED_TRACE(cmd);
    const int first = test::run_n3(with(c, parent, out)).status;
    ASSERT_EQ(first, 0);
    write_file_atomic(out + "/unrelated.txt", "keep");
    // Older bytes in every file, so a file rewritten by the new run shows.
    for (const auto& [name, bytes] : snapshot(parent))
      if (bytes != "<dir>" && name != "out/unrelated.txt") write_file_atomic(parent + "/" + name, "old " + name);
    const auto before = snapshot(parent);
    walk(cmd, "N3_TEST_FAIL_RENAME", s, [&] {
      for (const auto& [name, bytes] : before)
        if (bytes != "<dir>" && !fs::exists(parent + "/" + name)) write_file_atomic(parent + "/" + name, bytes);
    }, [&](const Outcome& o) {
      EXPECT_TRUE(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 2) << o.status;
      for (const auto& [name, bytes] : snapshot(parent)) {
        const auto was = before.find(name);
        EXPECT_TRUE(was != before.end() && was->second == bytes) << name << " is the failed run's";
      }
      EXPECT_EQ(read_file_text(out + "/unrelated.txt"), "keep");
    });
  }
}

// Single-file outputs that exist already are the user's: a run that fails
// or is interrupted at any point leaves each with its old bytes, also one it
// had already replaced (the journal keeps a hard link to the old file until
// the run ends and puts it back). Before: a failure after the replacement
// left neither version; earlier still, the guard removed them all.
TEST(NoPartialOutput, FailureOrSignalLeavesExistingFilesAsTheyWere) {
  if (sanitized()) GTEST_SKIP() << "LD_PRELOAD under ASan";
  const Inputs s;
  const std::string prog_dir = test::temp_dir("nopartial_prog");
  write_file_atomic(prog_dir + "/halt.s", "    sys.halt\n");
  ASSERT_EQ(test::run_n3("asm " + prog_dir + "/halt.s -o " + prog_dir + "/halt.n3p").status, 0);
  for (const char* var : {"N3_TEST_FAIL_RENAME", "N3_TEST_RAISE_RENAME"}) {
    for (const std::string& c :
         {"sim --backend func --program " + prog_dir + "/halt.n3p --mem-out PARENT/f.img --stats PARENT/s.json",
          "sim --backend systemc --model " + s.model + " --ids " + s.ids +
              " --timing-only --stats PARENT/s.json --trace PARENT/t.json"}) {
      const std::string parent = test::temp_dir("nopartial_files");
      const std::string cmd = with(c, parent, parent + "/unused");
      SCOPED_TRACE(cmd);
      const std::map<std::string, std::string> old = {
          {"f.img", "old image"}, {"s.json", "old stats"}, {"t.json", "old trace"}, {"unrelated.txt", "keep"}};
      const bool signal = std::string(var) == "N3_TEST_RAISE_RENAME";
      const int failures = walk(cmd, var, s, [&] {
        fs::remove_all(parent);
        fs::create_directories(parent);
        for (const auto& [name, bytes] : old) write_file_atomic(parent + "/" + name, bytes);
      }, [&](const Outcome& o) {
        if (signal) {
          EXPECT_TRUE(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGINT) << o.status;
        } else {
          EXPECT_TRUE(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 2) << o.status;
        }
        EXPECT_EQ(snapshot(parent), old) << "every file as before the run, no hidden backup left";
      });
      EXPECT_GE(failures, 2) << "two outputs, so two failure points";
      // The run that got through: new outputs in place, no backup left beside them.
      for (const auto& [name, bytes] : snapshot(parent)) {
        EXPECT_EQ(name.find(".bak."), std::string::npos) << name;
        if (name == "unrelated.txt") {
          EXPECT_EQ(bytes, "keep");
        }
      }
      EXPECT_EQ(snapshot(parent).size(), old.size()) << "outputs replace files, no temporaries";
    }
  }
}

// SIGKILL right after the Nth output is in place: nothing can clean up, but
// nothing hidden is left either (the old files the run replaced were kept
// as copies in unnamed files, which the kernel frees): each file holds its
// old bytes or the run's whole new ones.
TEST(NoPartialOutput, SigkillLeavesNoHiddenFile) {
  if (sanitized()) GTEST_SKIP() << "LD_PRELOAD under ASan";
  const Inputs s;
  const std::string prog_dir = test::temp_dir("nopartial_kill_prog");
  write_file_atomic(prog_dir + "/halt.s", "    sys.halt\n");
  ASSERT_EQ(test::run_n3("asm " + prog_dir + "/halt.s -o " + prog_dir + "/halt.n3p").status, 0);
  const std::string parent = test::temp_dir("nopartial_kill");
  const std::string cmd = "sim --backend func --program " + prog_dir + "/halt.n3p --mem-out " + parent +
                          "/f.img --stats " + parent + "/s.json";
  const std::map<std::string, std::string> old = {{"f.img", "old image"}, {"s.json", "old stats"}};
  const int killed = walk(cmd, "N3_TEST_KILL_RENAME", s, [&] {
    fs::remove_all(parent);
    fs::create_directories(parent);
    for (const auto& [name, bytes] : old) write_file_atomic(parent + "/" + name, bytes);
  }, [&](const Outcome& o) {
    EXPECT_TRUE(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGKILL) << o.status;
    const auto now = snapshot(parent);
    EXPECT_EQ(now.size(), old.size()) << "no hidden file beside the outputs";
    int replaced = 0;
    for (const auto& [name, bytes] : now) {
      ASSERT_EQ(old.count(name), 1u) << name;
      if (bytes != old.at(name)) ++replaced;
    }
    EXPECT_GE(replaced, 1) << "the killed run had replaced one";
  });
  EXPECT_GE(killed, 2);
}

// SIGINT right after the Nth output is in place (a real signal, mid-dump),
// into an existing folder: the process dies of SIGINT and the parent is as
// before, --out included.
TEST(NoPartialOutput, SigintDuringTheOutputsLeavesAnExistingFolderAsItWas) {
  if (sanitized()) GTEST_SKIP() << "LD_PRELOAD under ASan";
  const Inputs s;
  for (const std::string& c : commands(s)) {
    const std::string parent = test::temp_dir("nopartial_sigint"), out = parent + "/out";
    const std::string cmd = with(c, parent, out);
    SCOPED_TRACE(cmd);
    fs::create_directories(out);
    write_file_atomic(parent + "/unrelated.txt", "keep");
    const auto before = snapshot(parent);
    const int signalled = walk(cmd, "N3_TEST_SIGINT_RENAME", s, [] {}, [&](const Outcome& o) {
      EXPECT_TRUE(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGINT) << o.status;
      EXPECT_EQ(snapshot(parent), before);
    });
    EXPECT_GE(signalled, 2);
  }
}

}  // namespace
}  // namespace n3
