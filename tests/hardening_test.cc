// Issue 22's defects, one test each: sizes from files that overflow, a
// program that loops forever, outputs two runs write at once or a signal
// interrupts, partial output of a failed compile, outputs checked before the
// compute, a directory where a file belongs, `n3 --version`
// (docs/host_driver.md, "The command line"; docs/sim.md, "Step limit").
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/file_util.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

namespace fs = std::filesystem;
using test::run_n3;
using test::RunResult;

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

// An .npy file with the given header dict (padded as numpy pads it) and body.
void write_npy_header(const std::string& path, const std::string& dict, const std::string& body = "") {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string f = std::string("\x93NUMPY\x01\x00", 8);
  f += char(h.size() & 0xff);
  f += char(h.size() >> 8);
  std::ofstream(path, std::ios::binary) << f << h << body;
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every file and folder under `dir`, relative, sorted: "nothing written"
// is the same tree before and after.
std::vector<std::string> tree(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

// Issue 22's rule for bad input: exit 2, exactly one line on stderr naming
// `names` (the file), nothing on stdout, and `dir` as it was (`before`).
void expect_clean_refusal(const RunResult& r, const std::string& names, const std::string& dir,
                          const std::vector<std::string>& before, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(tree(dir), before) << "something was written";
}

// A program that ends at once, for the --load cases.
std::string halt_program(const std::string& dir) {
  std::ofstream(dir + "/halt.s") << "    sys.halt\n";
  EXPECT_EQ(run_n3("asm " + dir + "/halt.s -o " + dir + "/halt.n3p").status, 0);
  return dir + "/halt.n3p";
}

// Shapes whose byte count overflows 64 bits used to wrap to a small number
// that the truncation check passed: n3 diff crashed, --load loaded nothing.
TEST(Hardening, NpyShapesThatOverflowAreRefused) {
  const std::string dir = test::temp_dir("harden_npy");
  const std::string prog = halt_program(dir);
  for (const std::string shape : {"(4611686018427387904,)", "(2147483648, 2147483648)", "(1, 4611686018427387904)"}) {
    write_npy_header(dir + "/x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", "abcd");
    const std::vector<std::string> before = tree(dir);
    expect_clean_refusal(run_n3("sim --backend func --program " + prog + " --load ddr:0x100=" + dir + "/x.npy --mem-out " +
                                dir + "/m.img"),
                         dir + "/x.npy", dir, before, "--load " + shape);
    // --ids through every command that takes it: the element count overflowed
    // into "cannot create std::vector larger than max_size()".
    const std::vector<std::string> cmds = {"golden", "sim --backend func", "run --max-new 2 --out " + dir + "/o.npy"};
    for (const std::string& cmd : cmds) {
      const RunResult ids = run_n3(cmd + " --model " + test::tiny_n3w() + " --ids " + dir + "/x.npy" +
                                   (cmd == "golden" || cmd[0] == 's' ? " --dump " + dir + "/d" : ""));
      expect_clean_refusal(ids, dir + "/x.npy", dir, before, cmd + " --ids " + shape);
      EXPECT_EQ(ids.err.find("max_size"), std::string::npos) << ids.err;
    }
  }
  write_npy_header(dir + "/x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 2147483648), }");
  const RunResult r = run_n3("sim --backend func --program " + prog + " --load ddr:0x100=" + dir + "/x.npy");
  EXPECT_NE(r.err.find("more than 2^64 bytes"), std::string::npos) << r.err;
}

// The crash itself: n3 diff of two dumps whose manifest and .npy agree on a
// shape of 2^62 elements segfaulted (exit 139).
TEST(Hardening, DiffOfOverflowingShapesIsRefused) {
  const std::string dir = test::temp_dir("harden_diff");
  write_npy_header(dir + "/ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
                   std::string("\1\0\0\0\2\0\0\0\3\0\0\0", 12));
  ASSERT_EQ(run_n3("golden --model " + test::tiny_n3w() + " --ids " + dir + "/ids.npy --dump " + dir + "/a").status, 0);
  nlohmann::json m = nlohmann::json::parse(read_file_text(dir + "/a/manifest.json"));
  const std::string file = m["tensors"][0]["file"];
  for (const std::string shape : {"(1, 4611686018427387904)", "(2147483648, 2147483648)"}) {
    for (const char* side : {"b", "c"}) {
      fs::remove_all(dir + "/" + side);
      fs::copy(dir + "/a", dir + "/" + side);
      nlohmann::json e = m;
      e["tensors"][0]["shape"] = shape[1] == '1' ? nlohmann::json{1, int64_t(1) << 62}
                                                  : nlohmann::json{int64_t(1) << 31, int64_t(1) << 31};
      write_file_atomic(dir + "/" + side + "/manifest.json", e.dump(1));
      write_npy_header(dir + "/" + side + "/" + file,
                       "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", std::string(64, '\0'));
    }
    const RunResult r = run_n3("diff " + dir + "/b " + dir + "/c");
    EXPECT_EQ(r.status, 2) << shape << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  }
}

TEST(Hardening, NpyHeaderWithoutItsBracesIsRefused) {
  const std::string dir = test::temp_dir("harden_npy_brace");
  write_npy_header(dir + "/x.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), ", std::string(8, '\0'));
  const std::vector<std::string> before = tree(dir);
  for (const std::string& cmd : {"golden --dump " + dir + "/d", "sim --backend func --dump " + dir + "/d",
                                 "run --max-new 2 --out " + dir + "/o.npy --dump " + dir + "/d"}) {
    const RunResult r = run_n3(cmd + " --model " + test::tiny_n3w() + " --ids " + dir + "/x.npy");
    expect_clean_refusal(r, dir + "/x.npy", dir, before, cmd);
    EXPECT_NE(r.err.find("malformed npy header"), std::string::npos) << r.err;
  }
  const std::string prog = halt_program(dir);
  const std::vector<std::string> with_prog = tree(dir);
  const RunResult r = run_n3("sim --backend func --program " + prog + " --load ddr:0x100=" + dir + "/x.npy --mem-out " +
                             dir + "/m.img");
  expect_clean_refusal(r, dir + "/x.npy", dir, with_prog, "--load");
  EXPECT_NE(r.err.find("malformed npy header"), std::string::npos) << r.err;
}

// Sixth review: --load from a device "loaded" nothing with exit 0, and
// run --seed -1 was taken as 2^64 - 1 (synth refused it).
TEST(Hardening, LoadFromADeviceAndANegativeSeedAreRefused) {
  const std::string dir = test::temp_dir("harden_dev");
  const RunResult z = run_n3("sim --backend func --program " + halt_program(dir) + " --load ddr:0x0=/dev/zero");
  EXPECT_EQ(z.status, 2) << z.err;
  EXPECT_EQ(lines(z.err), 1) << z.err;
  EXPECT_NE(z.err.find("/dev/zero is not a regular file"), std::string::npos) << z.err;
  std::ofstream(dir + "/empty.bin").flush();
  const RunResult e = run_n3("sim --backend func --program " + halt_program(dir) + " --load ddr:0x0=" + dir + "/empty.bin");
  EXPECT_EQ(e.status, 2) << e.err;
  EXPECT_NE(e.err.find("empty.bin holds no bytes"), std::string::npos) << e.err;
  write_npy_header(dir + "/ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\1'));
  const RunResult s = run_n3("run --backend golden --model " + test::tiny_n3w() + " --ids " + dir +
                             "/ids.npy --max-new 1 --temperature 1 --seed -1");
  EXPECT_EQ(s.status, 2) << s.err;
  EXPECT_EQ(lines(s.err), 1) << s.err;
  EXPECT_NE(s.err.find("--seed: '-1' is not a whole number"), std::string::npos) << s.err;
}

// A FIFO given as an input blocked for ever in open() (no writer): refused
// before the open, for the file readers and the mapped ones alike.
TEST(Hardening, AFifoAsAnInputIsRefusedWithoutBlocking) {
  const std::string dir = test::temp_dir("harden_fifo");
  ASSERT_EQ(::mkfifo((dir + "/in.npy").c_str(), 0600), 0);
  for (const std::string& args :
       {"golden --model " + test::tiny_n3w() + " --ids " + dir + "/in.npy --dump " + dir + "/d",
        "sim --backend func --program " + dir + "/in.npy", "diff " + dir + "/in.npy " + dir + "/in.npy",
        "estimate --model " + test::source_dir() + "/configs/models/tiny.yaml --hw " + dir + "/in.npy"}) {
    const RunResult r = run_n3(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(dir + "/in.npy"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/d")) << args;
  }
}

// `top: br.al target=top` ran ~5 minutes under the old 4e9 default.
TEST(Hardening, RunawayProgramEndsWithinSecondsAndMaxStepsIsChecked) {
  const std::string dir = test::temp_dir("harden_loop");
  std::ofstream(dir + "/loop.s") << "top:\n    br.al target=top\n";
  ASSERT_EQ(run_n3("asm " + dir + "/loop.s -o " + dir + "/loop.n3p").status, 0);
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_n3("sim --backend func --program " + dir + "/loop.n3p");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(dir + "/loop.n3p: trap step_limit"), std::string::npos) << "names the program: " << r.err;
  EXPECT_NE(r.err.find("--max-steps"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("16777216"), std::string::npos) << "the default limit, 2^24: " << r.err;
  std::printf("runaway program stopped after %.2f s (default --max-steps)\n", s);
  const RunResult few = run_n3("sim --backend func --program " + dir + "/loop.n3p --max-steps 1000");
  EXPECT_NE(few.err.find("fetched 1000 instructions"), std::string::npos) << few.err;
  for (const std::string bad : {"-1", "0", "1e9", "12abc", "99999999999999999999999", "1099511627777"}) {
    const RunResult b = run_n3("sim --backend func --program " + dir + "/loop.n3p --max-steps " + bad);
    EXPECT_EQ(b.status, 2) << bad << ": " << b.err;
    EXPECT_NE(b.err.find("--max-steps"), std::string::npos) << b.err;
    EXPECT_EQ(lines(b.err), 1) << b.err;
  }
}

// Two runs to one -o used to share a fixed X.tmp: 8 of 12 trials corrupted the file.
TEST(Hardening, ConcurrentSynthToOneOutputLeavesOneRunsWholeFile) {
  const std::string dir = test::temp_dir("harden_synth");
  const std::string model = test::source_dir() + "/configs/models/tiny.yaml";
  ASSERT_EQ(run_n3("synth -q --model " + model + " --seed 3 -o " + dir + "/a.n3w").status, 0);
  ASSERT_EQ(run_n3("synth -q --model " + model + " --seed 4 -o " + dir + "/b.n3w").status, 0);
  const std::vector<uint8_t> a = read_file_bytes(dir + "/a.n3w"), b = read_file_bytes(dir + "/b.n3w");
  ASSERT_NE(a, b);
  for (int trial = 0; trial < 20; ++trial) {
    std::thread t1([&] { EXPECT_EQ(run_n3("synth -q --model " + model + " --seed 3 -o " + dir + "/x.n3w").status, 0); });
    std::thread t2([&] { EXPECT_EQ(run_n3("synth -q --model " + model + " --seed 4 -o " + dir + "/x.n3w").status, 0); });
    t1.join();
    t2.join();
    const std::vector<uint8_t> x = read_file_bytes(dir + "/x.n3w");
    EXPECT_TRUE(x == a || x == b) << "trial " << trial << ": the output is neither run's file";
  }
  // Nothing but the outputs is left in the folder.
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"a.n3w", "b.n3w", "x.n3w"}));
}

// (A symlink at the old fixed temporary name made n3 overwrite its target:
// HardeningOutputs.SymlinksWhereTheTemporariesGoAreNotFollowed places links
// where the current code writes, the old name among them.)

// The temporary goes with an error, an exception and SIGTERM / SIGINT.
TEST(Hardening, AtomicFileLeavesNothingOnErrorOrSignal) {
  const std::string dir = test::temp_dir("harden_atomic");
  // Whether this file system gives unnamed temporaries (O_TMPFILE): then
  // nothing is visible before commit and even SIGKILL leaves nothing.
  const int probe = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  const bool unnamed = probe >= 0;
  if (probe >= 0) ::close(probe);
  {
    AtomicFile f(dir + "/out.bin");
    f.write("partial", 7);
    EXPECT_EQ(files_in(dir).size(), unnamed ? 0u : 1u);  // at most the hidden temporary, never out.bin
    EXPECT_FALSE(fs::exists(dir + "/out.bin"));
  }
  EXPECT_TRUE(files_in(dir).empty()) << "destroyed before commit: no temporary, no output";
  std::vector<int> sigs = {SIGTERM, SIGINT};
  if (unnamed) sigs.push_back(SIGKILL);
  else std::printf("this file system has no O_TMPFILE: a SIGKILLed run leaves its named temporary\n");
  for (int sig : sigs) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      AtomicFile f(dir + "/out.bin");
      f.write("partial", 7);
      ::kill(::getpid(), sig);
      ::_exit(0);  // not reached: the handler re-raises the signal
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "the process dies of the signal as before";
    EXPECT_TRUE(files_in(dir).empty()) << "signal " << sig << " left " << files_in(dir).size() << " files";
  }
  AtomicFile g(dir + "/out.bin");
  g.write("whole", 5);
  g.commit();
  EXPECT_EQ(read_file_text(dir + "/out.bin"), "whole");
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"out.bin"}));
  EXPECT_THROW(AtomicFile(dir + "/no/such/folder/x"), Error);
  EXPECT_THROW(AtomicFile{dir}, Error);
}

// timing.wbuf_prefetch_tiles (the weight prefetch): negative, past
// wbuf_tiles or not a whole number is refused in one line naming the file
// and the key, before anything is written.
TEST(Hardening, BadWeightPrefetchTilesAreRefused) {
  for (const char* v : {"-1", "3", "1.5"}) {
    const std::string hw = test::hw_variant(std::string("harden_prefetch") + (v[0] == '-' ? "n" : v[0] == '3' ? "3" : "f"),
                                            {{"timing.wbuf_prefetch_tiles", v}});
    const std::string out = test::temp_dir("harden_prefetch_out") + "/c";
    const RunResult r = run_n3("compile --model " + test::source_dir() + "/configs/models/tiny.yaml --hw " + hw + " -o " + out);
    EXPECT_EQ(r.status, 2) << v << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(hw + ":"), std::string::npos) << "names the file: " << r.err;
    EXPECT_NE(r.err.find("wbuf_prefetch_tiles"), std::string::npos) << "names the key: " << r.err;
    EXPECT_FALSE(fs::exists(out)) << v;
  }
}

// A hardware file whose L2 breaks the descriptors' alignment used to leave memory_map.json.
TEST(Hardening, FailedCompileLeavesNoOutput) {
  const std::string hw = test::hw_variant("harden_l2", {{"memory.l2_bytes", "1835001"}});
  const std::string out = test::temp_dir("harden_compile") + "/c";
  const RunResult r = run_n3("compile --model " + test::source_dir() + "/configs/models/tiny.yaml --hw " + hw + " -o " + out);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(hw + ":"), std::string::npos) << "names the file: " << r.err;
  EXPECT_NE(r.err.find("'memory.l2_bytes' must be a multiple of 16"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << "a failed compile left " << out;
  // An L2 on the grid but too small for any program: the compiler's refusal
  // names the file and the key too.
  const std::string small = test::hw_variant("harden_l2_small", {{"memory.l2_bytes", "4096"}});
  const RunResult s = run_n3("compile --model " + test::source_dir() + "/configs/models/tiny.yaml --hw " + small + " -o " + out);
  EXPECT_EQ(s.status, 2) << s.err;
  EXPECT_EQ(lines(s.err), 1) << s.err;
  EXPECT_NE(s.err.find(small + ": memory.l2_bytes (4096) is less than"), std::string::npos) << s.err;
  EXPECT_FALSE(fs::exists(out)) << "a failed compile left " << out;
}

// Output paths are checked before the compute, not after it.
TEST(Hardening, UnwritableOutputsAreRefusedBeforeTheRun) {
  const std::string dir = test::temp_dir("harden_outputs");
  const std::string io = " --model " + test::tiny_n3w() + " --ids " + dir + "/ids.npy";
  write_npy_header(dir + "/ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\1'));
  const std::string missing = dir + "/no/such/folder/";
  for (const std::string& args :
       {"sim --backend func" + io + " --dump " + dir + "/d --stats " + missing + "s.json",
        "sim --backend systemc" + io + " --timing-only --trace " + missing + "t.json",
        "synth -q --model " + test::source_dir() + "/configs/models/tiny.yaml --seed 1 -o " + missing + "m.n3w",
        "run --backend golden" + io + " --max-new 1 --out " + missing + "ids.npy",
        "sim --backend func --program " + halt_program(dir) + " --mem-out " + dir}) {
    const RunResult r = run_n3(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/d")) << args;
  }
  const RunResult r = run_n3("sim --backend func" + io + " --dump " + dir + "/d --stats " + missing + "s.json");
  EXPECT_NE(r.err.find("--stats " + missing + "s.json: folder"), std::string::npos) << r.err;
}

// An output replaces its path whole: `-o` at a FIFO or device became a
// regular file in its place (as root, /dev/full itself). Refused before the
// run, naming the option's path; the FIFO stays a FIFO.
TEST(Hardening, OutputsOnAFifoOrDeviceAreRefused) {
  const std::string dir = test::temp_dir("harden_fifo");
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const std::string io = " --model " + test::tiny_n3w() + " --ids " + dir + "/ids.npy";
  write_npy_header(dir + "/ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\1'));
  for (const std::string& args :
       {"synth -q --model " + test::source_dir() + "/configs/models/tiny.yaml --seed 1 -o " + fifo,
        "sim --backend func --program " + halt_program(dir) + " --stats " + fifo,
        "run --backend golden" + io + " --max-new 1 --out " + fifo}) {
    const RunResult r = run_n3(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(fifo + ": is a device, FIFO or socket"), std::string::npos) << args << "\n" << r.err;
    struct stat st {};
    ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << args << " replaced the FIFO";
  }
}

// A dump or compile folder that cannot be made was found only after the
// compute (a 3 000-id golden run: 12 s): a regular file in its path is now
// refused before anything runs.
TEST(Hardening, UncreatableOutputFoldersAreRefusedBeforeTheRun) {
  const std::string dir = test::temp_dir("harden_out_dirs");
  std::ofstream(dir + "/afile") << "x";
  write_npy_header(dir + "/ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", std::string("\x05\0\0\0\x06\0\0\0", 8));
  const std::string io = " --model " + test::tiny_n3w() + " --ids " + dir + "/ids.npy";
  const std::string bad = dir + "/afile/sub/d";
  for (const std::string& args :
       {"golden" + io + " --dump " + bad, "sim --backend func" + io + " --dump " + bad,
        "run --backend golden" + io + " --max-new 1 --dump " + bad,
        "compile --model " + test::source_dir() + "/configs/models/tiny.yaml -o " + bad}) {
    const RunResult r = run_n3(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(bad + ": " + dir + "/afile is not a directory"), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"afile", "ids.npy"}));
}

// A directory where a file belongs said "out of memory".
TEST(Hardening, DirectoryGivenForAFileIsNamed) {
  const std::string dir = test::temp_dir("harden_dir");
  for (const std::string& args : {"sim --backend func --program " + dir, "dis " + dir, "golden --model " + test::tiny_n3w() +
                                                                                             " --ids " + dir + " --dump " +
                                                                                             dir + "/d"}) {
    const std::vector<std::string> before = tree(dir);
    const RunResult r = run_n3(args);
    expect_clean_refusal(r, dir + ": is a directory", dir, before, args);
    EXPECT_EQ(r.err.find("out of memory"), std::string::npos) << r.err;
  }
}

// A prompt longer than max_position_embeddings (5 000 ids) ran for 50 s.
TEST(Hardening, PromptPastMaxPositionsIsRefusedAtOnce) {
  const std::string dir = test::temp_dir("harden_positions");
  std::string body;
  const int n = 5000;  // tiny.yaml: max_position_embeddings 4096
  for (int i = 0; i < n; ++i) body.append(std::string("\x05\x00\x00\x00", 4));
  write_npy_header(dir + "/ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (5000,), }", body);
  for (const std::string b : {"golden", "func"}) {
    const auto t0 = std::chrono::steady_clock::now();
    const RunResult r = run_n3(std::string(b == "golden" ? "golden" : "sim --backend func") + " --model " +
                               test::tiny_n3w() + " --ids " + dir + "/ids.npy --dump " + dir + "/d");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("max_position_embeddings = 4096"), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/d"));
    std::printf("%s: 5000-id prompt refused after %.2f s\n", b.c_str(), s);
  }
}

// A million-digit immediate was echoed whole into the error line.
TEST(Hardening, LongTokensAreClippedInAssemblerErrors) {
  const std::string dir = test::temp_dir("harden_asm");
  std::ofstream(dir + "/big.s") << "    br.al target=" << std::string(100000, '9') << "\n";
  const RunResult r = run_n3("asm " + dir + "/big.s -o " + dir + "/big.n3p");
  EXPECT_EQ(r.status, 2) << r.err.size();
  EXPECT_LT(r.err.size(), 400u) << r.err.substr(0, 400);
  EXPECT_NE(r.err.find("(100000 characters)"), std::string::npos) << r.err.substr(0, 400);
  EXPECT_FALSE(fs::exists(dir + "/big.n3p"));
}

// `n3 estimate --model X.n3w` failed with a YAML parse error while every
// other command takes an .n3w: the estimate reads the shapes from its header.
TEST(Hardening, EstimateTakesAnN3wAsOtherCommandsDo) {
  const RunResult yaml = run_n3("estimate --model " + test::source_dir() + "/configs/models/tiny.yaml");
  const RunResult n3w = run_n3("estimate --model " + test::tiny_n3w());
  ASSERT_EQ(yaml.status, 0) << yaml.err;
  EXPECT_EQ(n3w.status, 0) << n3w.err;
  EXPECT_EQ(n3w.out, yaml.out);
}

// A number written as a string was taken in hardware files; a model file's
// repeated key silently kept its first value.
TEST(Hardening, QuotedNumbersAndRepeatedModelKeysAreRefused) {
  const std::string dir = test::temp_dir("harden_yaml");
  std::string hw = read_file_text(test::source_dir() + "/configs/hw/kv260.yaml");
  const size_t at = hw.find("l2_bytes: {value: ") + 18;
  hw.insert(hw.find(',', at), "\"");
  hw.insert(at, "\"");
  std::ofstream(dir + "/hw.yaml") << hw;
  const std::string tiny = test::source_dir() + "/configs/models/tiny.yaml";
  RunResult r = run_n3("estimate --model " + tiny + " --hw " + dir + "/hw.yaml");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("'memory.l2_bytes' must be a number, not a quoted string"), std::string::npos) << r.err;
  std::ofstream(dir + "/m.yaml") << read_file_text(tiny) << "hidden_size: 64\n";
  for (const std::string& cmd : {"estimate --model " + dir + "/m.yaml", "compile --model " + dir + "/m.yaml -o " + dir + "/c",
                                 "synth -q --model " + dir + "/m.yaml --seed 1 -o " + dir + "/m.n3w"}) {
    r = run_n3(cmd);
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("key 'hidden_size' is given twice"), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/c"));
  EXPECT_FALSE(fs::exists(dir + "/m.n3w"));
}

TEST(Hardening, VersionNamesCommitIsaNumericsAndBuild) {
  const RunResult r = run_n3("--version");
  EXPECT_EQ(r.status, 0) << r.err;
  // The version is CMakeLists.txt's project(n3 VERSION x.y.z), its only copy,
  // carried into the binary by the build.
  std::ifstream cm(test::source_dir() + "/CMakeLists.txt");
  const std::string cmake((std::istreambuf_iterator<char>(cm)), std::istreambuf_iterator<char>());
  std::smatch pv;
  ASSERT_TRUE(std::regex_search(cmake, pv, std::regex("project\\(n3 VERSION ([0-9]+\\.[0-9]+\\.[0-9]+)")));
  EXPECT_EQ(r.out.rfind("n3 " + pv[1].str() + " (", 0), 0u) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("commit: +([0-9a-f]{12}(-dirty)?|unknown)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("isa: +[0-9]+\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("numerics: +[0-9]+ \\(headers [0-9a-f]{16}\\)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("build: +[A-Za-z]+"))) << r.out;
  EXPECT_NE(r.out.find("rtl units:"), std::string::npos) << r.out;
  EXPECT_EQ(run_n3("--version extra").status, 2);
}

}  // namespace
}  // namespace n3
