// tools/rtl_vs_model.py (bench/rtl_e4b.sh's side-by-side table): the same
// report against itself prints zero gaps; reports it cannot compare are
// refused with exit 2 and one line (docs/rtl.md, "E4B with the RTL units").
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/test_util.h"

#ifdef N3_HAVE_SYSTEMC
namespace n3::test {
namespace {

// Runs the tool; stdout and stderr in r.out / r.err.
RunResult tool(const std::string& args, const std::string& dir) {
  const std::string cmd = "python3 " + source_dir() + "/tools/rtl_vs_model.py " + args + " >" + dir + "/o 2>" + dir + "/e";
  const int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read_file_text(dir + "/o"), read_file_text(dir + "/e")};
}

TEST(RtlVsModelTool, SameReportGivesZeroGapsAndUncomparableOnesAreRefused) {
  const std::string dir = temp_dir("rtl_vs_model");
  const std::string ids = dir + "/ids.npy";
  {
    std::string h = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
    while ((10 + h.size() + 1) % 64) h += ' ';
    h += '\n';
    std::string f = std::string("\x93NUMPY\x01\x00", 8) + char(h.size()) + char(0) + h;
    for (int v : {5, 6, 7}) f.append(reinterpret_cast<const char*>(&v), 4);
    write_file_atomic(ids, f);
  }
  ASSERT_EQ(run_n3("sim --backend systemc --timing-only --model " + tiny_n3w() + " --ids " + ids + " --stats " + dir +
                   "/a.json")
                .status,
            0);
  const std::string a = dir + "/a.json";
  RunResult r = tool(a + " " + a + " --top 5", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("total cycles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("programs:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+0.000%"), std::string::npos) << r.out;
  // Every gap of a report against itself is zero.
  for (const std::string sign : {"+0.", "-0."})
    for (size_t p = r.out.find(sign); p != std::string::npos; p = r.out.find(sign, p + 1))
      EXPECT_EQ(r.out.substr(p + 1, 6), "0.000%") << r.out;

  const nlohmann::json j = nlohmann::json::parse(read_file_text(a));
  nlohmann::json other_hw = j, other_prog = j;
  other_hw["hw"] = "not-" + j.value("hw", std::string("kv260"));
  other_prog["runs"][0]["program"] = "some_other_program";
  write_file_atomic(dir + "/hw.json", other_hw.dump());
  write_file_atomic(dir + "/prog.json", other_prog.dump());
  write_file_atomic(dir + "/not_stats.json", "{\"x\": 1}");
  write_file_atomic(dir + "/broken.json", "{\"total_cycles\": ");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {a + " " + dir + "/hw.json", "different hardware"},
      {a + " " + dir + "/prog.json", "different programs"},
      {a + " " + dir + "/not_stats.json", "not an n3 sim --stats report"},
      {a + " " + dir + "/broken.json", "broken.json"},
      {a + " " + dir + "/missing.json", "missing.json"},
      {a + " " + a + " --top -1", "--top must be 0 or more"},
  };
  for (const auto& [args, needle] : bad) {
    r = tool(args, dir);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << "no partial table: " << r.out;
  }
}

}  // namespace
}  // namespace n3::test
#endif  // N3_HAVE_SYSTEMC
