// The control engine's execute stage, rtl/ctl/n3_ctl.sv, against
// sim/ctl_exec.cc through `n3 cosim --unit ctl` (docs/rtl.md, "Control
// engine"): every ALU / ALUI op, LDST op, branch condition and SYS function
// with each of its outcomes (taken or not, each trap) computes identically,
// shards merge to the unsplit run, the cycles per instruction kind are the
// design's, and a fault injected into one RTL output is reported by name.
// RtlCtl.MillionVectors is opt-in (N3_RTL_LARGE=1).
#ifdef N3_HAVE_RTL_CTL
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "base/file_util.h"
#include "isa/isa.h"
#include "tests/cosim_summary.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3::test {
namespace {

// Every class a long enough run must reach, worked out from the ISA table
// (isa_gen.h) and the traps ctl_step can raise, not taken from the harness:
// each ALU / ALUI op (REMU also by 0), each LDST op in range, out of range
// and misaligned, each branch condition taken, not taken (AL: never) and
// taken out of the program, each SYS function.
std::set<std::string> expected_classes() {
  std::set<std::string> out;
  for (int i = 0; i < isa::kNumOpcodes; ++i) {
    const isa::OpcodeDef& d = *isa::opcode_def_at(i);
    if (d.engine != isa::Engine::CTL) continue;
    for (int si = 0; si < d.n_subops; ++si) {
      const std::string mn = isa::mnemonic(d, d.subops[si]);
      switch (d.opcode) {
        case isa::Opcode::ALU:
        case isa::Opcode::ALUI:
          out.insert(mn);
          if (mn.find(".remu") != std::string::npos) out.insert(mn + "/divide_by_zero");
          break;
        case isa::Opcode::LDST:
          for (const char* k : {"", "/out_of_range", "/misaligned"}) out.insert(mn + k);
          break;
        case isa::Opcode::BR:
          out.insert(mn + "/taken");
          out.insert(mn + "/pc_out_of_range");
          if (mn != "br.al") out.insert(mn + "/not_taken");
          break;
        default:
          out.insert(mn);
      }
    }
  }
  return out;
}

using Summary = CosimSummary;
Summary parse(const std::string& out) { return parse_cosim_summary("ctl", out); }

const RunResult& unsplit() {
  static const RunResult r = run_n3("cosim --unit ctl --vectors 10000 --seed 1");
  return r;
}

TEST(RtlCtl, TenThousandVectorsCoverEveryClass) {
  const RunResult& r = unsplit();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const Summary s = parse(r.out);
  EXPECT_EQ(s.run, 10000);
  EXPECT_EQ(s.mismatches, 0) << s.first_mismatch;
  std::set<std::string> got;
  for (const auto& [k, n] : s.classes) got.insert(k);
  EXPECT_EQ(got, expected_classes());
}

// Cycles each kind keeps the unit busy, streaming (docs/rtl.md, "Control
// engine"): one clock for ALU / ALUI, branches, SYS and every trap, the
// SystemC model's ctl_cycles (kv260: 1); REMU 1 + 64 + 1 (one quotient bit
// per clock); a store 2 and a load 3 with the bench's 1-clock memory.
TEST(RtlCtl, CyclesPerInstructionKind) {
  const Summary s = parse(unsplit().out);
  for (const char* k : {"alu", "alui", "br", "sys", "trap"}) {
    ASSERT_TRUE(s.cycles.count(k)) << k << "\n" << unsplit().out;
    EXPECT_DOUBLE_EQ(s.cycles.at(k).first, 1.0) << k;
    EXPECT_DOUBLE_EQ(s.cycles.at(k).second, 1.0) << k;
  }
  ASSERT_TRUE(s.cycles.count("alu.remu") && s.cycles.count("ldst.load") && s.cycles.count("ldst.store"));
  EXPECT_DOUBLE_EQ(s.cycles.at("alu.remu").first, 66.0);
  EXPECT_DOUBLE_EQ(s.cycles.at("ldst.store").first, 2.0);
  EXPECT_DOUBLE_EQ(s.cycles.at("ldst.load").first, 3.0);
}

TEST(RtlCtl, ShardsMergeToTheUnsplitRun) {
  const std::string dir = temp_dir("rtl_ctl_shards");
  std::string reports;
  for (int i = 0; i < 3; ++i) {
    const std::string rep = dir + "/shard" + std::to_string(i) + ".json";
    const RunResult r =
        run_n3("cosim --unit ctl --vectors 10000 --seed 1 --shard " + std::to_string(i) + "/3 --report " + rep);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    reports += " " + rep;
  }
  const RunResult m = run_n3("cosim --merge" + reports);
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  const Summary merged = parse(m.out), whole = parse(unsplit().out);
  EXPECT_EQ(merged.run, 10000);
  EXPECT_EQ(merged.mismatches, 0);
  // Each vector carries its own inputs: the shards ran the unsplit run's.
  EXPECT_EQ(merged.classes, whole.classes);
}

TEST(RtlCtl, WaveformNamesTheUnitsSignals) {
  const std::string fst = temp_dir("rtl_ctl_vcd") + "/ctl.fst";
  const RunResult r = run_n3("cosim --unit ctl --vectors 100 --vcd " + fst);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const FstFile w = read_fst(fst);
  ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open it";
  EXPECT_GT(w.end_time, 0u);
  EXPECT_TRUE(w.mentions("n3_ctl"));
  for (const char* sig : {"in_valid", "in_ready", "in_insn", "out_next_pc", "out_trap", "mem_req_addr"})
    EXPECT_TRUE(w.has(sig)) << sig;
}

TEST(RtlCtl, InjectedFaultIsReported) {
  for (const char* field : {"value", "next_pc", "trap", "we", "addr", "halt", "mem_addr"}) {
    ScopedEnv env("N3_COSIM_CTL_INJECT", field);
    const RunResult r = run_n3("cosim --unit ctl --vectors 300");
    EXPECT_EQ(r.status, 1) << field << ": " << r.out << r.err;
    const Summary s = parse(r.out);
    EXPECT_GT(s.mismatches, 0) << field;
    EXPECT_EQ(s.run, 300) << field;  // a wrong output does not stop the run
    const std::string name = std::string(field) == "mem_addr" ? "memory request addr" : std::string(field) + ":";
    EXPECT_NE(s.first_mismatch.find(name), std::string::npos) << s.first_mismatch;
    EXPECT_EQ(s.first_mismatch.rfind("vector ", 0), 0u) << s.first_mismatch;
  }
  ScopedEnv env("N3_COSIM_CTL_INJECT", "no_such_output");
  const RunResult bad = run_n3("cosim --unit ctl --vectors 10");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.out, "");
}

// Opt-in (CI): a million vectors in two processes, merged.
TEST(RtlCtl, MillionVectors) {
  if (!test::opt_in("N3_RTL_LARGE")) GTEST_SKIP() << "set N3_RTL_LARGE=1 to run 1 000 000 vectors";
  const std::string dir = temp_dir("rtl_ctl_1m");
  const auto t0 = std::chrono::steady_clock::now();
  std::string cmd;
  for (int i = 0; i < 2; ++i)
    cmd += n3_binary() + " cosim --unit ctl --vectors 1000000 --seed 1 --shard " + std::to_string(i) + "/2 --report " +
           dir + "/s" + std::to_string(i) + ".json >" + dir + "/out" + std::to_string(i) + " 2>&1 & p" +
           std::to_string(i) + "=$!; ";
  cmd += "wait $p0; r0=$?; wait $p1; r1=$?; exit $((r0 | r1))";
  const int rc = std::system(cmd.c_str());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(rc, 0) << read_file_text(dir + "/out0") << read_file_text(dir + "/out1");
  const RunResult m = run_n3("cosim --merge " + dir + "/s0.json " + dir + "/s1.json");
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  const Summary s = parse(m.out);
  EXPECT_EQ(s.run, 1000000);
  EXPECT_EQ(s.mismatches, 0) << s.first_mismatch;
  std::set<std::string> got;
  for (const auto& [k, n] : s.classes) got.insert(k);
  EXPECT_EQ(got, expected_classes());
  std::printf("RtlCtl.MillionVectors: 1000000 vectors in 2 processes, wall %.1f s\n", wall);
}

}  // namespace
}  // namespace n3::test
#endif  // N3_HAVE_RTL_CTL
