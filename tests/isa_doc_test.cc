// The generated artefacts of isa/isa.yaml: the checked-in docs/isa.md is
// exactly what the generator makes, the SystemVerilog package lints clean
// under Verilator -Wall, and the generator refuses inconsistent tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "base/file_util.h"
#include "tests/sim_func_util.h"

namespace n3::test {
namespace {

std::string build_dir() {
  const std::string b = n3_binary();
  return b.substr(0, b.rfind('/'));
}
std::string gen_dir() { return build_dir() + "/gen/isa"; }

TEST(IsaDoc, CheckedInDocMatchesTheTable) {
  const std::string gen = read_file_text(gen_dir() + "/isa.md");
  const std::string doc = read_file_text(source_dir() + "/docs/isa.md");
  if (gen != doc) {
    size_t i = 0;
    while (i < gen.size() && i < doc.size() && gen[i] == doc[i]) ++i;
    const size_t line = static_cast<size_t>(std::count(gen.begin(), gen.begin() + static_cast<long>(i), '\n')) + 1;
    FAIL() << "docs/isa.md differs from the generated " << gen_dir() << "/isa.md from line " << line
           << ": run 'cmake --build <build> --target isa_doc_update' and commit docs/isa.md";
  }
}

TEST(IsaDoc, VerilogPackageLintsClean) {
  if (std::system("command -v verilator >/dev/null 2>&1") != 0) GTEST_SKIP() << "verilator not installed";
  const std::string log = temp_dir("lint") + "/lint.log";
  const std::string cmd = "cd " + gen_dir() + " && verilator --lint-only -Wall n3_isa_pkg.sv n3_isa_decode.sv " +
                          "--top-module n3_isa_decode >" + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << read_file_text(log);
}

TEST(IsaDoc, GeneratorRejectsInconsistentTables) {
  if (std::system("python3 -c 'import yaml' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3-yaml not installed";
  const std::string dir = temp_dir("gen");
  const std::string table = read_file_text(source_dir() + "/isa/isa.yaml");
  struct Case {
    std::string from, to, message;
  };
  const Case cases[] = {
      // GEMV's w field moved onto src's bits.
      {"{name: w, bits: [22, 11], type: desc", "{name: w, bits: [23, 12], type: desc", "overlaps"},
      // An enum value that does not fit its width.
      {"{name: HALT, value: 1,", "{name: HALT, value: 4,", "does not fit"},
      // A sub-function operand naming no field.
      {"EXP: {operands: {dst: {access: w, dtype: float}, a:", "EXP: {operands: {dst: {access: w, dtype: float}, q:",
       "not a field"},
      // An unknown dtype class.
      {"SQRT: {operands: {dst: {access: w, dtype: float}", "SQRT: {operands: {dst: {access: w, dtype: floaty}",
       "unknown dtype class"},
  };
  for (const Case& c : cases) {
    std::string t = table;
    const size_t at = t.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    t.replace(at, c.from.size(), c.to);
    std::ofstream(dir + "/isa.yaml") << t;
    const std::string log = dir + "/log";
    const std::string cmd = "python3 " + source_dir() + "/isa/gen_isa.py --yaml " + dir + "/isa.yaml --intro " +
                            source_dir() + "/isa/isa_intro.md --out " + dir + "/out >" + log + " 2>&1";
    EXPECT_NE(std::system(cmd.c_str()), 0) << c.to;
    EXPECT_NE(read_file_text(log).find(c.message), std::string::npos) << read_file_text(log);
  }
}

}  // namespace
}  // namespace n3::test
