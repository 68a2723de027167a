// Issue 22's review follow-ups (third round): prompts that cannot fit the
// model's positions refused before anything runs, output folders removed on
// a signal, symlinks where the current code writes its temporaries. Each
// test fails without its fix (docs/testing.md, "Hardening").
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/file_util.h"
#include "base/npy.h"
#include "host_driver/cli_util.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

namespace fs = std::filesystem;
using test::run_n3;
using test::RunResult;

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

std::vector<std::string> tree(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

// configs/models/tiny.yaml with max_position_embeddings 16, synthesised once:
// the limit is reached with a prompt that runs in a moment.
const std::string& tiny16_n3w() {
  static const std::string path = [] {
    const std::string dir = test::temp_dir("harden_tiny16");
    std::string y = read_file_text(test::source_dir() + "/configs/models/tiny.yaml");
    const std::string key = "max_position_embeddings: 4096";
    const size_t at = y.find(key);
    EXPECT_NE(at, std::string::npos);
    y.replace(at, key.size(), "max_position_embeddings: 16");
    std::ofstream(dir + "/tiny16.yaml") << y;
    EXPECT_EQ(run_n3("synth -q --model " + dir + "/tiny16.yaml --seed 1 -o " + dir + "/tiny16.n3w").status, 0);
    return dir + "/tiny16.n3w";
  }();
  return path;
}

std::vector<int32_t> ids_of(int n) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(5 + i % 7);
  return v;
}

// A prompt plus --max-new (run) or --feed (golden, sim) past the model's
// max_position_embeddings failed part-way through the run (run: after
// streaming tokens), and the message did not name the ids file. Refused now
// before anything runs: exit 2, one line naming the file, the lengths and
// the limit, nothing on stdout, no --out or --dump. One position less runs.
TEST(HardeningOutputs, PromptPlusNewTokensPastMaxPositionsIsRefusedBeforeTheRun) {
  const std::string dir = test::temp_dir("harden_maxnew");
  const std::string model = tiny16_n3w();
  write_npy_i32(dir + "/ten.npy", ids_of(10));
  write_npy_i32(dir + "/six.npy", ids_of(6));
  write_npy_i32(dir + "/seven.npy", ids_of(7));
  write_npy_i32(dir + "/twenty.npy", ids_of(20));
  write_npy_i32(dir + "/thirty-two.npy", ids_of(32));  // a chunk size compile has a program for
  const std::vector<std::string> before = tree(dir);
  struct Case {
    std::string args, names;
  };
  const std::string lim = " pass the model's max_position_embeddings = 16";
  const std::vector<Case> refused = {
      {"run --backend golden --ids " + dir + "/ten.npy --max-new 7 --out " + dir + "/o.npy --dump " + dir + "/d",
       dir + "/ten.npy: 10 prompt ids + --max-new 7 = 17 positions" + lim},
      {"run --backend func --ids " + dir + "/ten.npy --max-new 7 --out " + dir + "/o.npy",
       dir + "/ten.npy: 10 prompt ids + --max-new 7 = 17 positions" + lim},
      // A batch: the second prompt is the one too long.
      {"run --backend golden --ids " + dir + "/six.npy --ids " + dir + "/ten.npy --max-new 7 --out " + dir + "/o.npy",
       dir + "/ten.npy: 10 prompt ids + --max-new 7 = 17 positions" + lim},
      {"run --backend golden --ids " + dir + "/twenty.npy --max-new 1", dir + "/twenty.npy: 20 prompt ids + --max-new 1"},
      {"golden --ids " + dir + "/ten.npy --feed " + dir + "/seven.npy --dump " + dir + "/d",
       dir + "/ten.npy: 10 prompt ids + --feed " + dir + "/seven.npy's 7 ids = 17 positions" + lim},
      {"sim --backend func --ids " + dir + "/ten.npy --feed " + dir + "/seven.npy --dump " + dir + "/d",
       dir + "/ten.npy: 10 prompt ids + --feed " + dir + "/seven.npy's 7 ids = 17 positions" + lim},
      {"golden --ids " + dir + "/twenty.npy --dump " + dir + "/d", dir + "/twenty.npy: 20 prompt ids" + lim},
      {"sim --backend func --ids " + dir + "/twenty.npy --dump " + dir + "/d", dir + "/twenty.npy: 20 prompt ids" + lim},
      // compile --ids bakes the prompt into the image for a later run.
      {"compile --image -o " + dir + "/c --ids " + dir + "/thirty-two.npy", dir + "/thirty-two.npy: 32 prompt ids" + lim},
  };
  for (const Case& c : refused) {
    SCOPED_TRACE(c.args);
    const RunResult r = run_n3(c.args + " --model " + model);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "nothing runs, so no token is streamed";
    EXPECT_EQ(tree(dir), before);
  }
  // At the limit: 10 + 6 = 16 positions run, and so do a prompt and feed of 16.
  const RunResult ok = run_n3("run --backend golden --model " + model + " --ids " + dir + "/ten.npy --max-new 6 --out " +
                              dir + "/o.npy");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(read_ids(dir + "/o.npy", 256).size(), 6u);
  for (const std::string cmd : {"golden", "sim --backend func"}) {
    const RunResult g = run_n3(cmd + " --model " + model + " --ids " + dir + "/ten.npy --feed " + dir + "/six.npy --dump " +
                               dir + "/" + cmd.substr(0, 3));
    EXPECT_EQ(g.status, 0) << cmd << ": " << g.err;
  }
}

// Output folders the run made (--dump DIR, -o DIR, and missing parents made
// on the way) stayed behind on SIGINT / SIGTERM; the files' temporaries were
// removed. Now the handler removes every folder the run created and still
// watches, with all in it, and nothing else: a folder that existed, its
// files and its neighbours stay. A real signal to a child process.
TEST(HardeningOutputs, SignalRemovesTheOutputFoldersTheRunCreated) {
  const std::string dir = test::temp_dir("harden_signal_dirs");
  fs::create_directories(dir + "/existing");
  write_file_atomic(dir + "/existing/keep.txt", "keep");
  write_file_atomic(dir + "/neighbour.txt", "keep");
  const std::vector<std::string> before = tree(dir);
  for (int sig : {SIGTERM, SIGINT}) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(ready[0]);
      cli::OutputGuard made, kept;
      // new/deep/dump: three folders this run creates.
      made.prepare_dir(dir + "/new/deep/dump", false);
      write_file_atomic(dir + "/new/deep/dump/manifest.json", "{}");
      fs::create_directories(dir + "/new/deep/dump/sub");
      // More entries than one getdents64 buffer holds, with long names.
      for (int i = 0; i < 300; ++i)
        write_file_atomic(dir + "/new/deep/dump/sub/tensor_with_a_long_name_" + std::to_string(i) + ".npy", "x");
      ::symlink((dir + "/existing").c_str(), (dir + "/new/deep/dump/link").c_str());  // removed, not followed
      kept.prepare_dir(dir + "/existing", true);  // existed: not the run's to remove
      AtomicFile open_temp(dir + "/new/deep/dump/layers.0.npy");
      open_temp.write("partial", 7);
      (void)!::write(ready[1], "1", 1);
      ::kill(::getpid(), sig);
      ::_exit(0);  // not reached: the handler re-raises the signal
    }
    ::close(ready[1]);
    char c = 0;
    EXPECT_EQ(::read(ready[0], &c, 1), 1) << "the child got as far as the signal";
    ::close(ready[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "the process dies of the signal as before";
    EXPECT_FALSE(fs::exists(dir + "/new")) << "signal " << sig;
    EXPECT_EQ(tree(dir), before) << "signal " << sig;
    EXPECT_EQ(read_file_text(dir + "/existing/keep.txt"), "keep");
  }
  // Committed, the folder stays (the same guard, no signal).
  {
    cli::OutputGuard g;
    g.prepare_dir(dir + "/done/d", false);
    write_file_atomic(dir + "/done/d/manifest.json", "{}");
    g.commit();
  }
  EXPECT_TRUE(fs::exists(dir + "/done/d/manifest.json"));
  // Not committed (an error): the folders it made go, the existing stays.
  {
    cli::OutputGuard g;
    g.prepare_dir(dir + "/failed/d", false);
    write_file_atomic(dir + "/failed/d/manifest.json", "{}");
  }
  EXPECT_FALSE(fs::exists(dir + "/failed"));
  EXPECT_TRUE(fs::exists(dir + "/existing/keep.txt"));
}

// Issue 22, fourth round: files a run wrote into a folder that existed (a
// --dump DIR made beforehand, compile -o DIR) stayed on a signal or an
// error, since only folders the run created were watched. Now every file
// committed while n3's run journal is open (main.cc), and every path an
// OutputGuard was given, goes on SIGINT / SIGTERM and on abort_output_run,
// also after the step's guard committed; what was in the folder before
// stays. A real signal to a child process, as above.
TEST(HardeningOutputs, SignalRemovesWhatTheRunWroteIntoAnExistingFolder) {
  const std::string dir = test::temp_dir("harden_signal_journal");
  fs::create_directories(dir + "/existing");
  write_file_atomic(dir + "/existing/keep.txt", "keep");
  write_file_atomic(dir + "/neighbour.txt", "keep");
  const std::vector<std::string> before = tree(dir);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(ready[0]);
      begin_output_run();
      {
        cli::OutputGuard step;
        step.prepare_dir(dir + "/existing", true);
        for (int i = 0; i < 5; ++i) write_file_atomic(dir + "/existing/layers." + std::to_string(i) + ".npy", "x");
        step.add(dir + "/existing/wave.vcd");  // written by other code than AtomicFile
        std::ofstream(dir + "/existing/wave.vcd") << "vcd";
        step.commit();  // this step is whole; the run is not
      }
      write_file_atomic(dir + "/o.npy", "single-file output");
      (void)!::write(ready[1], "1", 1);
      ::kill(::getpid(), sig);
      ::_exit(0);  // not reached
    }
    ::close(ready[1]);
    char c = 0;
    EXPECT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
    EXPECT_EQ(tree(dir), before) << "signal " << sig;
    EXPECT_EQ(read_file_text(dir + "/existing/keep.txt"), "keep");
  }
  // The error path (main.cc's abort_output_run) removes the same, and a
  // committed run keeps it.
  begin_output_run();
  write_file_atomic(dir + "/existing/layers.0.npy", "x");
  write_file_atomic(dir + "/o.npy", "x");
  abort_output_run();
  EXPECT_EQ(tree(dir), before);
  begin_output_run();
  write_file_atomic(dir + "/existing/layers.0.npy", "x");
  commit_output_run();
  write_file_atomic(dir + "/after.npy", "not in a run");
  abort_output_run();  // none open: removes nothing
  EXPECT_TRUE(fs::exists(dir + "/existing/layers.0.npy"));
  EXPECT_TRUE(fs::exists(dir + "/after.npy"));
  EXPECT_EQ(read_file_text(dir + "/existing/keep.txt"), "keep");
}

// The symlink test planted its link at the old fixed X.tmp name, where no
// write happens any more. Here the links sit where the current code writes:
// AtomicFile's temporary is unnamed (O_TMPFILE) until commit links it as
// .NAME.tmp.<pid>.<n> (n counts from 0 in a fresh process), else mkostemp's
// .NAME.tmp.XXXXXX (O_EXCL); and at the destination itself, which the rename
// replaces. The child n3 waits until the links for its pid are in place.
TEST(HardeningOutputs, SymlinksWhereTheTemporariesGoAreNotFollowed) {
  const std::string dir = test::temp_dir("harden_symlink_pid");
  const std::string model = test::source_dir() + "/configs/models/tiny.yaml";
  ASSERT_EQ(run_n3("synth -q --model " + model + " --seed 1 -o " + dir + "/ref.n3w").status, 0);
  const std::vector<uint8_t> ref = read_file_bytes(dir + "/ref.n3w");
  write_file_atomic(dir + "/victim", "keep me");
  write_file_atomic(dir + "/victim2", "keep me too");
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(go[1]);
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(120);
    const std::string bin = test::n3_binary(), out = dir + "/m.n3w";
    ::execl(bin.c_str(), "n3", "synth", "-q", "--model", model.c_str(), "--seed", "1", "-o", out.c_str(), (char*)nullptr);
    ::_exit(127);
  }
  ::close(go[0]);
  const std::string base = dir + "/.m.n3w.tmp.";
  for (int k = 0; k < 8; ++k) fs::create_symlink(dir + "/victim", base + std::to_string(pid) + "." + std::to_string(k));
  fs::create_symlink(dir + "/victim", dir + "/m.n3w.tmp");  // the old fixed name
  fs::create_symlink(dir + "/victim2", dir + "/m.n3w");     // the destination
  ASSERT_EQ(::write(go[1], "1", 1), 1);
  ::close(go[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(read_file_text(dir + "/victim"), "keep me");
  EXPECT_EQ(read_file_text(dir + "/victim2"), "keep me too");
  EXPECT_FALSE(fs::is_symlink(dir + "/m.n3w")) << "the rename replaced the link";
  EXPECT_EQ(read_file_bytes(dir + "/m.n3w"), ref);
  for (int k = 0; k < 8; ++k) EXPECT_TRUE(fs::is_symlink(base + std::to_string(pid) + "." + std::to_string(k))) << k;
  // No temporary of the run is left: only the links planted, the outputs and the victims.
  int hidden = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string()[0] == '.') {
      ++hidden;
      EXPECT_TRUE(fs::is_symlink(e.symlink_status())) << e.path();
    }
  EXPECT_EQ(hidden, 8);
}

// A sharded checkpoint whose index maps one tensor to two shards loaded one
// of them (nlohmann keeps one of two equal keys): refused through the CLI in
// one line naming the index and the key, nothing written.
TEST(HardeningOutputs, IndexMappingATensorTwiceIsRefused) {
  const std::string dir = test::temp_dir("harden_index_dup");
  const std::string hub = test::fixture("gemma3n-dev-hub/hf");
  fs::create_directories(dir + "/ckpt");
  for (const auto& e : fs::directory_iterator(hub))
    if (e.path().filename() != "model.safetensors.index.json")
      fs::create_symlink(e.path(), dir + "/ckpt/" + e.path().filename().string());
  std::string index = read_file_text(hub + "/model.safetensors.index.json");
  const std::string map = "\"weight_map\": {";
  const size_t at = index.find(map);
  ASSERT_NE(at, std::string::npos);
  // The first entry again, pointing at another shard.
  const size_t q0 = index.find('"', at + map.size()), q1 = index.find('"', q0 + 1);
  const std::string key = index.substr(q0 + 1, q1 - q0 - 1);
  index.insert(at + map.size(), "\n    \"" + key + "\": \"model-00003-of-00003.safetensors\",");
  write_file_atomic(dir + "/ckpt/model.safetensors.index.json", index);
  write_npy_i32(dir + "/ids.npy", {5, 17, 3});
  const std::vector<std::string> before = tree(dir);
  for (const std::string& cmd : {"golden --dump " + dir + "/d", "run --max-new 2 --out " + dir + "/o.npy"}) {
    const RunResult r = run_n3(cmd + " --model " + dir + "/ckpt --ids " + dir + "/ids.npy");
    SCOPED_TRACE(cmd);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(dir + "/ckpt/model.safetensors.index.json: key '" + key + "' appears twice in 'weight_map'"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(tree(dir), before);
  }
}

}  // namespace
}  // namespace n3
