// The functional simulator: the architectural state of the NPU and a
// bit-exact execution of ISA programs through the numerics core. It decides
// no timing; it executes in one legal order and proves, with the hazard
// checker, that every other legal order gives the same bits. docs/sim.md.
//
// Structure (mirrors the engines of isa.yaml, one unit per engine, as the
// SystemC model will): the control engine (this class) fetches, runs control
// instructions, resolves descriptors and dispatches; exec_dma / exec_gemv /
// exec_sfu (declared below, one exec_*.cc each) compute one instruction each
// from resolved operands.
#pragma once
#include <array>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "base/error.h"
#include "golden/numerics/formats_config.h"
#include "isa/program.h"
#include "sim/ctl_exec.h"
#include "sim/hazard.h"
#include "sim/memory.h"
#include "sim/view.h"

namespace n3::sim {

#define N3_TRAP_KINDS(X)                                                                           \
  X(ReservedOpcode, "reserved_opcode", "the opcode is not defined")                                \
  X(ReservedEnum, "reserved_enum", "an enum field or table record holds an undefined value")       \
  X(ReservedBits, "reserved_bits", "reserved bits, unused fields or own-engine token bits are set") \
  X(BadOperand, "bad_operand", "a slot is missing, beyond its table, or names a malformed record") \
  X(OutOfRange, "out_of_range", "an address range leaves its space, or a run-time extent its bound") \
  X(Misaligned, "misaligned", "a base, stride or scalar address is not aligned")                    \
  X(DtypeMismatch, "dtype_mismatch", "an operand's dtype is not one the instruction accepts")       \
  X(ShapeMismatch, "shape_mismatch", "operand shapes do not fit together")                         \
  X(Hazard, "hazard", "conflicting accesses of two engines are not ordered by tokens")             \
  X(Deadlock, "deadlock", "an instruction waits for a token that can never come")                  \
  X(TokenOverflow, "token_overflow", "a token queue would exceed TOKEN_MAX")                        \
  X(TokenLeftover, "token_leftover", "the program ended with tokens nobody popped")                \
  X(PcOutOfRange, "pc_out_of_range", "fetch left the program (no HALT, or a wild branch)")          \
  X(StepLimit, "step_limit", "more instructions ran than --max-steps allows")                       \
  X(DivideByZero, "divide_by_zero", "alu.remu by zero")

enum class TrapKind : uint8_t {
#define N3_X(id, name, what) id,
  N3_TRAP_KINDS(N3_X)
#undef N3_X
};
const char* trap_name(TrapKind k);
// The TrapKind of a control step's trap (sim/ctl_exec.h).
TrapKind trap_kind(CtlTrap t);
const char* trap_what(TrapKind k);
constexpr int kNumTrapKinds = 15;

// A trap: the program did something the architecture forbids. what() is one
// line: "trap <kind> at instruction <pc> (<disassembly>): <reason>".
struct Trap : Error {
  Trap(TrapKind k, int64_t pc, const std::string& dis, const std::string& reason);
  TrapKind kind;
  int64_t pc;  // -1: not tied to an instruction
  std::string dis, reason;
};

// The step limit a run gets unless --max-steps says otherwise: 2^24
// instructions fetched, about 1 s of the functional simulator and 6 s of the
// SystemC model on one core, so a program that loops forever ends in
// seconds. No real program comes near it: the compiler's programs have no
// backward branches (E4B's largest, a 5-token prefill, is 5132 instructions;
// docs/sim.md, "Step limit").
inline constexpr uint64_t kDefaultMaxSteps = uint64_t(1) << 24;

struct SimOptions {
  num::Formats formats;
  Capacities caps;
  bool hazards = true;
  uint64_t max_steps = kDefaultMaxSteps;  // instructions fetched
  std::FILE* trace = nullptr;          // --trace-insn: one line per executed instruction
  bool effects = true;                 // false: engines skip their arithmetic and writes (timing-only runs)
  // Compiled programs name every tensor they materialise; capturing them all
  // costs copies. false: capture only the always-present ones (logits,
  // layers.N; docs/dumps.md), the rest stay names in the table.
  bool capture_all = true;
  // false: capture nothing (runs that only count, such as the compiler's
  // modelled chunk choice: a 128-token program's logits alone are 134 MB of copies).
  bool captures = true;
};

// One dispatched instruction: the word, its resolved operands and the
// control engine's clock at dispatch.
struct Issued {
  uint64_t word = 0;
  uint32_t pc = 0;
  uint64_t dyn = 0;  // dynamic instruction number (fetch order)
  const isa::OpcodeDef* def = nullptr;
  const isa::SubopDef* sub = nullptr;
  std::array<View, 8> views;  // by field index; absent operands have slot 0
  uint32_t konst = 0;         // constant value bits (field k), when used
  isa::Dtype konst_type = isa::Dtype::F32;
  VClock vc{};                // clock at dispatch

  const View& op(const char* field) const;
  float kf32() const;  // the F32 constant
};

// A tensor symbol's captured values (float32; native dtype recorded).
struct Capture {
  std::string name;
  std::string native_dtype;
  int64_t rows = 0, cols = 0;
  std::vector<float> data;
};

struct Stats {
  std::array<uint64_t, isa::kNumEngines> insns{};
  std::array<uint64_t, 3> bytes_read{}, bytes_written{};  // by space
  uint64_t macs = 0;        // GEMV / GEMM multiply-accumulates
  uint64_t sfu_elems = 0;   // SFU elements produced
  uint64_t fetched = 0;     // instructions fetched (control flow included)
};

class FuncSim {
 public:
  FuncSim(isa::Program prog, SimOptions opt);

  Memory& memory() { return mem_; }
  const Memory& memory() const { return mem_; }
  const isa::Program& program() const { return prog_; }
  const num::Formats& formats() const { return opt_.formats; }
  int64_t reg(int i) const { return regs_[i]; }
  void set_reg(int i, int64_t v) {
    if (i) regs_[i] = v;
  }

  // Runs to HALT and the drain of every queue; throws Trap.
  void run();

  // Stepping interface for a timing model (sim/systemc/): the caller decides
  // when each instruction dispatches, starts and completes; tokens here carry
  // the hazard checker's clocks, the caller keeps its own timed tokens. Any
  // order the caller picks that respects the tokens gives run()'s bits.
  struct Next {
    int engine = 0;
    uint8_t wait = 0, signal = 0;
    uint32_t pc = 0;
  };
  bool halted() const { return halted_; }
  uint32_t pc() const { return pc_; }  // the next instruction to fetch
  Next peek() const;                 // the instruction at pc (checked); traps like run()
  void exec_control();               // runs the control instruction at pc; its tokens must be here
  const Issued& dispatch();          // resolves the engine instruction at pc onto its queue
  bool head_ready(int engine) const;  // queue head present and its tokens here
  void exec_head(int engine);        // executes the queue head of an engine
  void finish_checks();              // after the drain: leftover tokens, end-of-program captures

  const std::vector<Capture>& captures() const { return captures_; }
  const Stats& stats() const { return stats_; }
  Stats& stats_mut() { return stats_; }

  // For the units: trap at the instruction being executed.
  [[noreturn]] void trap(TrapKind k, const Issued& in, const std::string& reason) const;
  [[noreturn]] void trap_at(TrapKind k, int64_t pc, const std::string& reason) const;
  std::string dis(uint32_t pc) const;

 private:
  struct Queue {
    std::deque<Issued> q;
    uint64_t done = 0;  // instructions completed
    VClock vc{};        // clock after the last completion
  };

  void step();  // fetch and dispatch / execute one instruction
  void exec_ctl(const isa::OpcodeDef& d, const isa::SubopDef& s, uint64_t w, uint32_t pc);
  Issued resolve(const isa::OpcodeDef& d, const isa::SubopDef& s, uint64_t w, uint32_t pc);
  View resolve_desc(uint32_t slot, const isa::OperandDef& od, const std::string& who, uint32_t pc);
  bool tokens_ready(int engine, uint8_t wait) const;
  void pop_tokens(int engine, uint8_t wait, VClock& vc);
  void push_tokens(int engine, uint8_t signal, const VClock& vc, int64_t pc);
  // Executes ready queue heads, earliest dispatched first; true if any ran.
  bool run_ready();
  void exec_engine(int e);
  void finish();  // after HALT: drain, then check tokens
  [[noreturn]] void deadlock(int64_t pc, const std::string& waiting);
  void check_hazards(int engine, uint64_t seq, uint32_t pc, const VClock& vc, const std::vector<MemAccess>& acc);
  void capture(uint32_t pc, const Issued* in);
  void trace(int engine, uint32_t pc, const std::string& extra);

  isa::Program prog_;
  SimOptions opt_;
  Memory mem_;
  std::array<int64_t, isa::kNumRegs> regs_{};
  std::array<Queue, isa::kNumEngines> queues_;
  // tokens_[from][to]: clocks of the tokens in that queue, oldest first.
  std::array<std::array<std::deque<VClock>, isa::kNumEngines>, isa::kNumEngines> tokens_;
  std::vector<std::vector<size_t>> capture_at_;  // pc -> tensor symbol indices
  std::vector<size_t> capture_end_;
  std::vector<Capture> captures_;
  HazardChecker hazards_;
  Stats stats_;
  uint32_t pc_ = 0;
  bool halted_ = false;
  uint64_t trace_n_ = 0;
};

// The execution units, one per engine (the control engine is FuncSim). Each
// executes one dispatched instruction from its resolved operands: it checks
// shapes and dtypes (trapping through FuncSim::trap), reads all its inputs,
// computes through the numerics core, then writes its outputs. They are
// declared with FuncSim, the machine they run on and the one caller, so the
// two never include each other. docs/isa.md gives the semantics; docs/sim.md
// the unit structure.
void exec_dma(FuncSim& m, const Issued& in);   // MEMCPY, MEMSET (exec_dma.cc)
void exec_gemv(FuncSim& m, const Issued& in);  // GEMV (MV, QK, PV) and GEMM (MV) (exec_gemv.cc)
void exec_sfu(FuncSim& m, const Issued& in);   // CVO (exec_sfu.cc)

}  // namespace n3::sim
