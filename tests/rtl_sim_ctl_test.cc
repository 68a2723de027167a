// The RTL control engine's execute stage beside the functional core in the
// SystemC model (`n3 sim --backend systemc --rtl ctl`; docs/rtl.md "The
// control engine bridge"): a loop with every kind of control instruction
// (ALU, ALUI with REMU, LD / SD / LW / SW, a backward branch taken and not)
// and the attention example leave the functional core's memory with every
// control instruction executed and compared on the RTL; the tiny model's
// prompt plus decode steps gives every tensor byte-identical to golden and
// the run's cycles are the model's (the model does not wait for the RTL);
// a difference stops the run naming pc, dynamic number, word and field.
#if defined(N3_HAVE_RTL_CTL)
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/npy.h"
#include "tests/test_util.h"

namespace n3::test {
namespace {

// The summary line's figures (-1: no such line).
struct CtlLine {
  long long instructions = -1, cycles = -1, ctl_cycles = -1;
  std::string kinds;
};
CtlLine ctl_line(const std::string& err) {
  std::smatch m;
  CtlLine c;
  if (!std::regex_search(err, m,
                         std::regex("rtl ctl: ([0-9]+) control instructions executed and compared with the functional "
                                    "core, ([0-9]+) RTL cycles .*clocks per instruction by kind: (.*) \\(the model's "
                                    "ctl_cycles: ([0-9]+)\\)")))
    return c;
  c.instructions = std::stoll(m[1]);
  c.cycles = std::stoll(m[2]);
  c.kinds = m[3];
  c.ctl_cycles = std::stoll(m[4]);
  return c;
}

// Control instructions the functional core executed (--stats counts).
long long control_count(const std::string& stats_json) {
  const nlohmann::json j = nlohmann::json::parse(read_file_text(stats_json));
  return j.at("counts").at("instructions").at("CTL").get<long long>();
}

const char* kLoop =
    ".isa 1\n"
    ".region out space=ddr role=output base=0x0 size=0x200\n"
    "    alui.add rd=r1 rs1=r0 imm=0\n"
    "    alui.add rd=r2 rs1=r0 imm=10\n"
    "    alui.add rd=r3 rs1=r0 imm=-1\n"
    "loop:\n"
    "    alu.mul rd=r4 rs1=r1 rs2=r3\n"
    "    alui.remu rd=r5 rs1=r1 imm=3\n"
    "    alui.shl rd=r6 rs1=r1 imm=3\n"
    "    ldst.sd space=ddr rd=r4 rs1=r6 imm=0\n"
    "    ldst.ld space=ddr rd=r7 rs1=r6 imm=0\n"
    "    ldst.sw space=ddr rd=r5 rs1=r6 imm=256\n"
    "    ldst.lw space=ddr rd=r8 rs1=r6 imm=256\n"
    "    alu.sra rd=r9 rs1=r7 rs2=r1\n"
    "    alu.add rd=r0 rs1=r9 rs2=r8\n"
    "    alui.add rd=r1 rs1=r1 imm=1\n"
    "    br.lt rs1=r1 rs2=r2 target=loop\n"
    "    sys.halt\n";

TEST(RtlSimCtl, LoopAndExampleLeaveTheCoresMemory) {
  const std::string dir = temp_dir("rtl_sim_ctl_loop");
  write_file_atomic(dir + "/loop.s", kLoop);
  std::vector<std::string> progs = {dir + "/loop.s", source_dir() + "/isa/examples/attention_decode.s"};
  for (const std::string& src : progs) {
    ASSERT_EQ(run_n3("asm " + src + " -o " + dir + "/p.n3p").status, 0) << src;
    const std::string run = "sim --program " + dir + "/p.n3p";
    RunResult f = run_n3(run + " --backend func --mem-out " + dir + "/func.img");
    ASSERT_EQ(f.status, 0) << src << f.err;
    RunResult m = run_n3(run + " --backend systemc --stats " + dir + "/m.json");
    ASSERT_EQ(m.status, 0) << src << m.err;
    RunResult r = run_n3(run + " --backend systemc --rtl ctl --mem-out " + dir + "/rtl.img --stats " + dir + "/r.json");
    ASSERT_EQ(r.status, 0) << src << r.err;
    EXPECT_EQ(read_file_bytes(dir + "/rtl.img"), read_file_bytes(dir + "/func.img")) << src;
    const CtlLine c = ctl_line(r.err);
    EXPECT_GT(c.instructions, 1) << r.err;
    EXPECT_EQ(c.instructions, control_count(dir + "/r.json")) << src << r.err;
    EXPECT_EQ(c.ctl_cycles, 1);
    // The model does not wait for the RTL: the run's cycles are the model's.
    EXPECT_EQ(nlohmann::json::parse(read_file_text(dir + "/r.json")).at("total_cycles").get<double>(),
              nlohmann::json::parse(read_file_text(dir + "/m.json")).at("total_cycles").get<double>());
    if (src == progs[0]) {
      // 3 + 10 x 11 + 1 control instructions; the loop's kinds at the RTL's clocks.
      EXPECT_EQ(c.instructions, 114) << r.err;
      for (const char* k : {"alu 30 x 1.00", "alu.remu 10 x 66.00", "alui 23 x 1.00", "br 10 x 1.00",
                            "ldst.load 20 x 3.00", "ldst.store 20 x 2.00", "sys 1 x 1.00"})
        EXPECT_NE(c.kinds.find(k), std::string::npos) << k << "\n" << r.err;
    }
  }
}

TEST(RtlSimCtl, TinyPromptAndDecodeMatchGolden) {
  const std::string dir = temp_dir("rtl_sim_ctl_tiny");
  std::vector<int32_t> ids = {5, 42, 79, 116}, feed = {3, 10};
  write_npy_i32(dir + "/ids.npy", ids);
  write_npy_i32(dir + "/feed.npy", feed);
  const std::string io =
      " --model " + tiny_n3w() + " --ids " + dir + "/ids.npy --feed " + dir + "/feed.npy --dump-all --force";
  RunResult g = run_n3("golden --numerics npu" + io + " --dump " + dir + "/ref");
  ASSERT_EQ(g.status, 0) << g.err;
  RunResult m = run_n3("sim --backend systemc" + io + " --dump " + dir + "/m --stats " + dir + "/m.json");
  ASSERT_EQ(m.status, 0) << m.err;
  RunResult r = run_n3("sim --backend systemc --rtl ctl" + io + " --dump " + dir + "/r --stats " + dir + "/r.json");
  ASSERT_EQ(r.status, 0) << r.err;
  RunResult d = run_n3("diff " + dir + "/r " + dir + "/ref");
  EXPECT_EQ(d.status, 0) << d.out << d.err;
  const CtlLine c = ctl_line(r.err);
  EXPECT_GT(c.instructions, 10) << r.err;
  EXPECT_NE(c.kinds.find("ldst.load"), std::string::npos) << r.err;  // the compiler reads its inputs with LW
  EXPECT_EQ(nlohmann::json::parse(read_file_text(dir + "/r.json")).at("total_cycles").get<double>(),
            nlohmann::json::parse(read_file_text(dir + "/m.json")).at("total_cycles").get<double>());
}

TEST(RtlSimCtl, AMismatchStopsTheRunNamingPcAndField) {
  const std::string dir = temp_dir("rtl_sim_ctl_inject");
  write_file_atomic(dir + "/loop.s", kLoop);
  ASSERT_EQ(run_n3("asm " + dir + "/loop.s -o " + dir + "/p.n3p").status, 0);
  ScopedEnv env("N3_RTL_CTL_INJECT", "7");  // the 8th control instruction: its next pc's bit 0 flipped
  RunResult s = run_n3("sim --backend systemc --rtl ctl --program " + dir + "/p.n3p --mem-out " + dir + "/o.img");
  EXPECT_EQ(s.status, 1) << s.err;
  EXPECT_TRUE(std::regex_search(s.err, std::regex("n3 sim: rtl ctl: pc [0-9]+ \\(dynamic #8\\), word "
                                                  "0x[0-9a-f]+: next_pc rtl 0x[0-9a-f]+ vs model 0x[0-9a-f]+\n")))
      << s.err;
  EXPECT_FALSE(file_exists(dir + "/o.img")) << "no partial output";
}

}  // namespace
}  // namespace n3::test
#endif  // N3_HAVE_RTL_CTL
