// Issue 22's "accepted silently" and "unclear message" hardware-file cases,
// run through every command that reads a hardware file: golden, compile,
// estimate, run and sim must refuse the same file with the same one line
// (file:line, the key, what is wrong), exit 2, and write nothing. Before the
// one validating reader, several of these were taken by golden, compile and
// estimate and refused only by run (kv.policy, kv.cap_tokens), or refused
// with a line that named a generated source (compiled.s:104:7).
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/file_util.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

namespace fs = std::filesystem;
using test::run_n3;
using test::RunResult;

struct BadHw {
  const char* what;  // the defect, for failure messages
  std::string text;  // the whole hardware file
  std::string says;  // what the one line must contain (after "hw.yaml:")
};

std::string kv260() { return read_file_text(test::source_dir() + "/configs/hw/kv260.yaml"); }

// kv260.yaml with one `{value: ...}` replaced; the line it is on, for the message.
BadHw with_value(const char* what, const std::string& key, const std::string& value, const std::string& says) {
  std::string s = kv260();
  const size_t p = s.find("\n  " + key + ": {value: ");
  EXPECT_NE(p, std::string::npos) << key;
  const size_t b = s.find("value: ", p) + 7, e = s.find(',', b);
  s.replace(b, e - b, value);
  const int line = int(std::count(s.begin(), s.begin() + long(p) + 1, '\n')) + 1;
  return {what, s, std::to_string(line) + ": " + says};
}

// kv260.yaml with a line added after the line holding `after`.
BadHw with_line(const char* what, const std::string& after, const std::string& line, const std::string& says) {
  std::string s = kv260();
  const size_t p = s.find('\n', s.find(after)) + 1;
  s.insert(p, line + "\n");
  const int n = int(std::count(s.begin(), s.begin() + long(p), '\n')) + 1;
  return {what, s, std::to_string(n) + ": " + says};
}

TEST(HardeningFiles, EveryCommandRefusesTheSameHardwareFileAlike) {
  const std::string dir = test::temp_dir("harden_hw_all");
  {
    std::string h = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    while ((10 + h.size() + 1) % 64) h += ' ';
    h += '\n';
    std::ofstream(dir + "/ids.npy", std::ios::binary)
        << std::string("\x93NUMPY\x01\x00", 8) << char(h.size()) << '\0' << h << std::string("\x05\0\0\0\x06\0\0\0", 8);
  }
  const std::string n3w = test::tiny_n3w(), tiny = test::source_dir() + "/configs/models/tiny.yaml";
  const std::string hw = dir + "/hw.yaml", out = dir + "/out";
  const std::vector<std::string> commands = {
      "golden --model " + n3w + " --ids " + dir + "/ids.npy --dump " + out,
      "compile --model " + tiny + " -o " + out,
      "estimate --model " + tiny + " --json",
      "run --backend golden --model " + n3w + " --ids " + dir + "/ids.npy --max-new 1 --out " + out,
      "sim --backend func --model " + n3w + " --ids " + dir + "/ids.npy --dump " + out,
  };
  // The file itself loads everywhere (or every refusal below could be the same unrelated one).
  std::ofstream(hw) << kv260();
  for (const auto& c : commands) {
    const RunResult r = run_n3(c + " --hw " + hw);
    ASSERT_EQ(r.status, 0) << c << "\n" << r.err;
    fs::remove_all(out);
  }
  const std::vector<BadHw> cases = {
      with_value("zero bandwidth (estimate printed 0.000 tok/s)", "ddr_peak_gbps", "0",
                 "'memory.ddr_peak_gbps' must be in [0.001, 1e6] (is '0')"),
      with_value("2^64 bytes of DDR (clamped to 2^63)", "ddr_bytes", "18446744073709551616",
                 "'memory.ddr_bytes' is out of range (is '18446744073709551616')"),
      with_value("1e30 bytes of DDR (called 'not an integer')", "ddr_bytes", "1e30",
                 "'memory.ddr_bytes' is out of range (is '1e30')"),
      with_value("an engine rate of 1e30 (called 'engine rates must be positive')", "gemv_cores", "1e30",
                 "'compute.gemv_cores' is out of range (is '1e30')"),
      with_value("no KV capacity (compile named compiled.s:104:7)", "cap_tokens", "0",
                 "'kv.cap_tokens' must be positive (is '0')"),
      with_value("a bogus KV policy (taken by golden, compile, estimate)", "policy", "bogus",
                 "'kv.policy' must be one of error, evict (is 'bogus')"),
      with_value("a number written as a string", "l2_bytes", "\"1048576\"",
                 "'memory.l2_bytes' must be a number, not a quoted string"),
      with_value("an L2 off the 16-byte grid (compile alone refused it, naming a descriptor)", "l2_bytes", "1835001",
                 "'memory.l2_bytes' must be a multiple of 16 (the ISA's 16-byte L2 word; is 1835001)"),
      with_value("an unknown field beside value and source", "ddr_peak_gbps", "19.2, units: \"GB/s\"",
                 "'memory.ddr_peak_gbps' has an unknown field 'units'"),
      with_value("a value given twice in one parameter (the first won)", "ddr_peak_gbps", "19.2, value: 0",
                 "'memory.ddr_peak_gbps' gives its value twice"),
      with_line("a second name (the later one won)", "name: kv260", "name: other", "'name' is given twice"),
      with_line("a key given twice (the later one won)", "ddr_peak_gbps:",
                "  ddr_peak_gbps: {value: 1, source: \"twice\"}", "'memory.ddr_peak_gbps' is given twice"),
      with_line("an unknown sub-key", "ddr_peak_gbps:", "  ddr_peek_gbps: {value: 1, source: \"typo\"}",
                "unknown hardware parameter 'memory.ddr_peek_gbps'"),
      with_line("a section given twice (yaml-cpp kept both; its keys were taken as new)", "l2_word_bits:", "memory:",
                "section 'memory' is given twice"),
  };
  for (const BadHw& b : cases) {
    std::ofstream(hw, std::ios::trunc) << b.text;
    std::string first;
    for (const auto& c : commands) {
      const RunResult r = run_n3(c + " --hw " + hw);
      EXPECT_EQ(r.status, 2) << b.what << "\n" << c << "\n" << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << b.what << ": " << r.err;
      EXPECT_NE(r.err.find(hw + ":" + b.says), std::string::npos) << b.what << "\n" << c << "\n" << r.err;
      EXPECT_TRUE(r.out.empty()) << b.what << "\n" << c << "\n" << r.out;
      EXPECT_FALSE(fs::exists(out)) << b.what << ": " << c << " wrote " << out;
      fs::remove_all(out);
      // The same line from every command, past the command's own prefix.
      const std::string msg = r.err.substr(r.err.find("error: ") + 7);
      if (first.empty()) first = msg;
      EXPECT_EQ(msg, first) << b.what << ": " << c;
    }
  }
}

// The model file's numbers: 1e30 was "not an integer"; a quoted number is a
// string. The same line from every command that reads a model YAML.
TEST(HardeningFiles, ModelNumbersOutOfRangeOrQuotedAreNamed) {
  const std::string dir = test::temp_dir("harden_model_nums");
  const std::string tiny = read_file_text(test::source_dir() + "/configs/models/tiny.yaml");
  const size_t at = tiny.find("\nhidden_size: ") + 1;
  ASSERT_NE(at, std::string::npos + 1);
  const size_t end = tiny.find('\n', at);
  for (const auto& [value, says] : std::vector<std::pair<std::string, std::string>>{
           {"1e30", "key 'hidden_size' is out of range (is 1e30)"},
           {"32.5", "key 'hidden_size' must be an integer (is 32.5)"},
           {"\"32\"", "key 'hidden_size' must be an integer (not a quoted string)"}}) {
    std::string m = tiny;
    m.replace(at, end - at, "hidden_size: " + value);
    std::ofstream(dir + "/m.yaml", std::ios::trunc) << m;
    for (const std::string& cmd : {"estimate --model " + dir + "/m.yaml", "compile --model " + dir + "/m.yaml -o " + dir + "/c",
                                   "synth -q --model " + dir + "/m.yaml --seed 1 -o " + dir + "/m.n3w"}) {
      const RunResult r = run_n3(cmd);
      EXPECT_EQ(r.status, 2) << cmd << "\n" << r.err;
      EXPECT_NE(r.err.find(dir + "/m.yaml: " + says), std::string::npos) << cmd << "\n" << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_FALSE(fs::exists(dir + "/c"));
      EXPECT_FALSE(fs::exists(dir + "/m.n3w"));
    }
  }
}

// A failed rename ended its message in "(Success)": errno was read after a
// call that had cleared it. The destination turns into a directory between
// open and commit, so the rename itself fails.
TEST(HardeningFiles, FailedRenameSaysWhy) {
  const std::string dir = test::temp_dir("harden_rename");
  AtomicFile f(dir + "/out.bin");
  f.write("x", 1);
  fs::create_directories(dir + "/out.bin/inside");
  try {
    f.commit();
    ADD_FAILURE() << "committed over a non-empty directory";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(dir + "/out.bin"), std::string::npos) << m;
    EXPECT_EQ(m.find("Success"), std::string::npos) << m;
    EXPECT_TRUE(m.find(std::strerror(EISDIR)) != std::string::npos ||
                m.find(std::strerror(ENOTEMPTY)) != std::string::npos || m.find("is a directory") != std::string::npos)
        << m;
  }
  EXPECT_TRUE(fs::is_directory(dir + "/out.bin/inside")) << "the directory is left as it was";
}

}  // namespace
}  // namespace n3
