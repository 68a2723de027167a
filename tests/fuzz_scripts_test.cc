// The fuzz scripts' argument checks (tools/fuzz_ci.sh, tools/fuzz_long.sh),
// run with N3_FUZZ_CHECK_ONLY=1 so that nothing is built or fuzzed: a bad
// seed, duration, target or worker count stops the script with exit 2 and
// one line on stderr naming the value; good ones pass the checks.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/test_util.h"

namespace n3::test {
namespace {

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

// Runs `env bash tools/SCRIPT args` from a scratch folder; `env` is a list of
// NAME='value' words (single-quoted by the caller).
RunResult run_script(const std::string& script, const std::string& env, const std::string& args) {
  const std::string dir = temp_dir("fuzz_scripts");
  const std::string cmd = "cd " + dir + " && env N3_FUZZ_CHECK_ONLY=1 " + env + " bash " + source_dir() + "/tools/" +
                          script + " " + args + " >" + dir + "/out 2>" + dir + "/err";
  const int st = std::system(cmd.c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(dir + "/out"), slurp(dir + "/err")};
}

void expect_refused(const RunResult& r, const std::string& names, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(FuzzScripts, FuzzCiSeedAndSecondsAreChecked) {
  // libFuzzer reads "abc" as 0, and -seed=0 picks a random seed.
  for (const std::string s : {"abc", "0", "1x", "-1", "1e3", "4294967296", "99999999999999999999"})
    expect_refused(run_script("fuzz_ci.sh", "N3_FUZZ_SEED='" + s + "'", ""), "N3_FUZZ_SEED '" + s + "'", s);
  for (const std::string s : {"abc", "0", "-5", "30s", "1000000"})
    expect_refused(run_script("fuzz_ci.sh", "N3_FUZZ_SECONDS='" + s + "'", ""), "N3_FUZZ_SECONDS '" + s + "'", s);
  for (const std::string env : {"", "N3_FUZZ_SEED=1", "N3_FUZZ_SEED=4294967295 N3_FUZZ_SECONDS=60"}) {
    const RunResult r = run_script("fuzz_ci.sh", env, "");
    EXPECT_EQ(r.status, 0) << env << ": " << r.err;
    EXPECT_EQ(r.err, "") << env;
  }
}

TEST(FuzzScripts, FuzzLongArgumentsAreChecked) {
  // Stand-in fuzzer binaries: the checks look for fuzz_<target> in N3_FUZZ_BIN.
  const std::string bin = temp_dir("fuzz_scripts_bin");
  for (const char* t : {"npy", "n3w"}) {
    std::ofstream(bin + "/fuzz_" + t) << "#!/bin/sh\nexit 1\n";
    std::filesystem::permissions(bin + "/fuzz_" + t, std::filesystem::perms::owner_all);
  }
  const std::string env = "N3_FUZZ_BIN='" + bin + "'";
  expect_refused(run_script("fuzz_long.sh", env, "abc npy=1"), "SECONDS 'abc'", "seconds abc");
  expect_refused(run_script("fuzz_long.sh", env, "0 npy=1"), "SECONDS '0'", "seconds 0");
  expect_refused(run_script("fuzz_long.sh", env, "-60 npy=1"), "SECONDS '-60'", "seconds -60");
  expect_refused(run_script("fuzz_long.sh", env, "60 npy"), "npy: not TARGET=WORKERS", "no =");
  expect_refused(run_script("fuzz_long.sh", env, "60 npy=x"), "npy=x: WORKERS", "workers x");
  expect_refused(run_script("fuzz_long.sh", env, "60 npy=0"), "npy=0: WORKERS", "workers 0");
  expect_refused(run_script("fuzz_long.sh", env, "60 ../npy=1"), "../npy=1: TARGET", "target with a path");
  expect_refused(run_script("fuzz_long.sh", env, "60 npy=1 npy=2"), "target npy given twice", "twice");
  expect_refused(run_script("fuzz_long.sh", env, "60 nope=1"), "no fuzzer", "unknown target");
  expect_refused(run_script("fuzz_long.sh", env, "60"), "usage:", "too few");
  const RunResult r = run_script("fuzz_long.sh", env, "60 npy=2 n3w=1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace n3::test
