// The inputs `n3 cosim` and `n3 sim --rtl` take (docs/rtl.md): each malformed
// one is refused with exit 2 and one line naming it, and leaves no report or
// waveform behind.
#ifdef N3_HAVE_RTL_GEMV
#include <gtest/gtest.h>
#include <fcntl.h>
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
#include "tests/test_util.h"

namespace n3::test {
namespace {

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// Runs `args`, expects exit 2 with one line containing `names`, and none of `outputs` on disk.
void refused(const std::string& args, const std::string& names, const std::vector<std::string>& outputs = {}) {
  const RunResult r = run_n3(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1u) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << args << "\n" << r.err;
  for (const std::string& f : outputs) EXPECT_FALSE(file_exists(f)) << args << ": left " << f;
}

TEST(RtlCosimCli, MalformedOptionsAreRefusedInOneLine) {
  const std::string dir = temp_dir("rtl_cosim_cli");
  const std::string rep = dir + "/r.json", vcd = dir + "/w.fst";
  const std::string out = " --report " + rep + " --vcd " + vcd;
  for (const char* s : {"3/2", "x", "1/0", "0/1/2", "-1/2", "1/", "/2"})
    refused(std::string("cosim --unit decoder --vectors 10 --shard ") + s + out, "--shard", {rep, vcd});
  refused("cosim --unit decoder --vectors 0" + out, "--vectors", {rep, vcd});
  refused("cosim --unit nope --vectors 10" + out, "--unit", {rep, vcd});
  refused("cosim --vectors 10" + out, "--unit", {rep, vcd});
  refused("cosim --unit gemv --vectors 10 --hw " + dir + "/missing.yaml" + out, "missing.yaml", {rep, vcd});
  refused("cosim --unit gemv --vectors 3 --vcd " + dir + "/no-such-dir/w.fst --report " + rep, "no-such-dir", {rep});
  // Waveforms are FST: a name GTKWave would read as another format is refused.
  refused("cosim --unit gemv --vectors 3 --vcd " + dir + "/w.vcd --report " + rep, "name the file *.fst",
          {rep, dir + "/w.vcd"});
}

TEST(RtlCosimCli, MergeRefusesReportsThatAreNotOneRun) {
  const std::string dir = temp_dir("rtl_cosim_merge");
  auto shard = [&](const std::string& name, const std::string& args) {
    const RunResult r = run_n3("cosim --unit decoder --vectors 40 " + args + " --report " + dir + "/" + name);
    EXPECT_EQ(r.status, 0) << r.err;
    return dir + "/" + name;
  };
  const std::string a0 = shard("a0.json", "--seed 1 --shard 0/2"), a1 = shard("a1.json", "--seed 1 --shard 1/2");
  const std::string b1 = shard("b1.json", "--seed 2 --shard 1/2");
  ASSERT_EQ(run_n3("cosim --merge " + a0 + " " + a1).status, 0);
  refused("cosim --merge " + a0, "shard 1/2 is missing");
  refused("cosim --merge " + a0 + " " + a0, "shard 0 given twice");
  refused("cosim --merge " + a0 + " " + b1, "is of another run");
  // A shard run on another hardware file is not part of the regression.
  const std::string hw2 = hw_variant("rtl_cosim_merge_hw", {{"numerics.act_mantissa_bits", "8"}});
  const std::string c1 = shard("c1.json", "--seed 1 --shard 1/2 --hw " + hw2);
  refused("cosim --merge " + a0 + " " + c1, "not one regression");
  write_file_atomic(dir + "/bad.json", "{\"unit\": \"decoder\"");
  refused("cosim --merge " + a0 + " " + dir + "/bad.json", "bad.json");
  write_file_atomic(dir + "/other.json", "{\"unit\": \"decoder\", \"seed\": 1}");
  refused("cosim --merge " + dir + "/other.json", "other.json: not an n3 cosim report");
  refused("cosim --merge " + dir + "/nothing.json", "nothing.json");
  refused("cosim --unit decoder --merge " + a0 + " " + a1, "--merge takes only report files");
}

TEST(RtlCosimCli, SimRefusesAWaveformItCannotWrite) {
  const std::string dir = temp_dir("rtl_sim_vcd");
  write_npy_i32(dir + "/ids.npy", {5, 17, 3});
  const std::string io = " --model " + tiny_n3w() + " --ids " + dir + "/ids.npy --dump " + dir + "/out";
  refused("sim --backend systemc --rtl gemv --vcd " + dir + "/no-such-dir/w.fst" + io, "no-such-dir", {dir + "/out"});
  refused("sim --backend systemc --rtl gemv --rtl-vcd " + dir + "/no-such-dir/w.fst" + io, "no-such-dir", {dir + "/out"});
  refused("sim --backend systemc --rtl gemv --vcd " + dir + "/w.vcd" + io, "name the file *.fst",
          {dir + "/out", dir + "/w.vcd"});
  refused("sim --backend systemc --rtl gemv,dma --vcd " + dir + "/w.vcd" + io, "name the file *.fst",
          {dir + "/out", dir + "/w.gemv.vcd", dir + "/w.dma.vcd"});
  refused("sim --backend systemc --rtl gemv --vcd " + dir + "/a.fst --rtl-vcd " + dir + "/b.fst" + io, "give it once",
          {dir + "/out", dir + "/a.fst", dir + "/b.fst"});
  refused("sim --backend systemc --rtl gemv --vcd " + dir + "/w.fst --vcd-instructions 0" + io, "--vcd-instructions",
          {dir + "/out", dir + "/w.fst"});
  refused("sim --backend systemc --rtl gemv --vcd-instructions 5" + io, "--vcd-instructions needs --vcd", {dir + "/out"});
}

// Verilator opens the waveform's path itself and followed a symlink there,
// overwriting its target: a symlink at --vcd is refused (cosim, sim's program
// and model forms, each unit's file), the link and its target left as they were.
TEST(RtlCosimCli, AWaveformIsNotWrittenThroughASymlink) {
  const std::string dir = temp_dir("rtl_vcd_symlink");
  write_file_atomic(dir + "/victim", "keep me");
  std::filesystem::create_symlink(dir + "/victim", dir + "/w.fst");
  std::filesystem::create_symlink(dir + "/victim", dir + "/m.dma.fst");
  write_npy_i32(dir + "/ids.npy", {5, 17, 3});
  std::ofstream(dir + "/halt.s") << "    sys.halt\n";
  ASSERT_EQ(run_n3("asm " + dir + "/halt.s -o " + dir + "/halt.n3p").status, 0);
  const std::string io = " --model " + tiny_n3w() + " --ids " + dir + "/ids.npy --dump " + dir + "/out";
  const std::string link = ": is a symbolic link";
  refused("cosim --unit decoder --vectors 10 --vcd " + dir + "/w.fst --report " + dir + "/r.json", "--vcd " + dir + "/w.fst" + link,
          {dir + "/r.json"});
  refused("sim --backend systemc --rtl gemv --vcd " + dir + "/w.fst" + io, "--vcd " + dir + "/w.fst" + link, {dir + "/out"});
  refused("sim --backend systemc --rtl gemv,dma --vcd " + dir + "/m.fst" + io, "--vcd " + dir + "/m.dma.fst" + link,
          {dir + "/out", dir + "/m.gemv.fst"});
  refused("sim --backend systemc --program " + dir + "/halt.n3p --rtl gemv --vcd " + dir + "/w.fst --dump " + dir + "/out",
          "--vcd " + dir + "/w.fst" + link, {dir + "/out"});
  EXPECT_EQ(read_file_text(dir + "/victim"), "keep me");
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/w.fst"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/m.dma.fst"));
}

// A waveform being written when the run is stopped (SIGTERM, as a batch
// scheduler's time limit does): the FST and the hierarchy file its writer
// keeps beside it until close are both removed (the run journal,
// base/atomic_file.h); the .hier was once left behind.
TEST(RtlCosimCli, ASignalRemovesTheWaveformAndItsHierarchyFile) {
  const std::string dir = temp_dir("cosim_vcd_signal");
  const std::string fst = dir + "/w.fst";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(n3_binary().c_str(), "n3", "cosim", "--unit", "gemv", "--vectors", "100000000", "--vcd", fst.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Until the writer has the file open (or 60 s, then the test fails below).
  for (int i = 0; i < 600 && !std::filesystem::exists(fst); ++i) ::usleep(100000);
  EXPECT_TRUE(std::filesystem::exists(fst)) << "the waveform was never opened";
  ::usleep(300000);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir)) left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << left.front();
}

}  // namespace
}  // namespace n3::test
#endif  // N3_HAVE_RTL_GEMV
