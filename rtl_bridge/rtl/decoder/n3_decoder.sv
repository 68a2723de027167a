// The instruction decoder: a fetched 64-bit word in, the decoded instruction
// out, as the front end's dispatcher needs it: legal or the problem that
// traps it (isa::Problem, with isa::check_word's precedence), the engine whose
// queue it goes to, opcode, sub-function, wait / signal tokens, and every field
// of the opcode's format (slots of n3_isa_pkg::insn_fields_t).
//
// Everything that depends on the ISA table comes from the generated package
// (n3_isa_pkg: insn_checks, insn_problem, insn_fields, insn_subop,
// insn_engine, the header positions); this file is only the pipeline, so an
// isa.yaml change needs no edit here.
//
// Pipeline, 2 stages (docs/rtl_decoder.md, "Instruction decoder"):
//   stage 1 (check):   every check of the word at once (insn_checks: per-opcode
//                      reserved-bit masks, sub-function table, enum tables,
//                      own-engine token bits) and the field slots, registered;
//   stage 2 (resolve): check_word's precedence over the flags (a short
//                      priority chain) and the outputs, registered.
// A word accepted at clock edge t is on the outputs from edge t + 2. Both
// stages advance together when the consumer takes the output, so one word
// per clock flows with out_ready held high. Back-pressure: a stage holds its
// word while the next cannot take it (ready = !valid || next ready); in_ready
// is therefore combinational in out_ready (no skid buffer: two AND gates).
module n3_decoder
  import n3_isa_pkg::*;
(
  input  logic clk,
  input  logic rst_n,  // synchronous, active low: empties the pipeline

  // Fetched words (valid / ready: a transfer on each edge with both high;
  // the producer holds in_insn while in_valid waits for in_ready).
  input  logic        in_valid,
  output logic        in_ready,
  input  logic [63:0] in_insn,

  // Decoded instructions, same protocol; outputs hold while out_ready is low.
  output logic                          out_valid,
  input  logic                          out_ready,
  output logic [63:0]                   out_insn,         // the word itself, for the engine queue
  output logic                          out_legal,        // out_problem == PROBLEM_NONE
  output logic [1:0]                    out_problem,      // problem_e (isa::Problem)
  output logic [ENGINE_BITS-1:0]        out_engine,       // engine id; 0 for a reserved opcode
  output logic [HDR_OPCODE_WIDTH-1:0]   out_opcode,       // raw opcode bits
  output logic [SUBOP_BITS-1:0]         out_subop,        // raw sub-function field, 0 if the opcode has none
  output logic                          out_subop_valid,  // defined opcode and sub-function value
  output logic [HDR_WAIT_WIDTH-1:0]     out_wait,
  output logic [HDR_SIGNAL_WIDTH-1:0]   out_signal,
  output insn_fields_t                  out_fields        // the opcode's fields, slot k = fields[3 + k]
);
  // ---- stage 1: check ------------------------------------------------------
  logic            s1_valid;
  logic            s1_ready;
  logic [63:0]     s1_insn;
  insn_checks_t    s1_checks;
  insn_fields_t    s1_fields;
  logic [SUBOP_BITS-1:0] s1_subop;

  // ---- stage 2: resolve (the output register) -------------------------------
  logic            s2_ready;

  assign s2_ready = !out_valid || out_ready;
  assign s1_ready = !s1_valid || s2_ready;
  assign in_ready = s1_ready;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      s1_valid <= 1'b0;
    end else if (s1_ready) begin
      s1_valid <= in_valid;
    end
  end

  // Data registers load on a transfer only and need no reset: valid says
  // whether they hold a word.
  always_ff @(posedge clk) begin
    if (in_valid && s1_ready) begin
      s1_insn   <= in_insn;
      s1_checks <= insn_checks(in_insn);
      s1_fields <= insn_fields(in_insn);
      s1_subop  <= insn_subop(in_insn);
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      out_valid <= 1'b0;
    end else if (s2_ready) begin
      out_valid <= s1_valid;
    end
  end

  problem_e s2_problem;
  assign s2_problem = insn_problem(s1_checks);

  always_ff @(posedge clk) begin
    if (s1_valid && s2_ready) begin
      out_insn        <= s1_insn;
      out_legal       <= s2_problem == PROBLEM_NONE;
      out_problem     <= s2_problem;
      // A reserved opcode goes to no engine; insn_engine says 0 for it.
      out_engine      <= insn_engine(s1_insn[HDR_OPCODE_LSB +: HDR_OPCODE_WIDTH]);
      out_opcode      <= s1_insn[HDR_OPCODE_LSB +: HDR_OPCODE_WIDTH];
      out_subop       <= s1_subop;
      out_subop_valid <= s1_checks.op_defined && !s1_checks.subop_bad;
      out_wait        <= s1_insn[HDR_WAIT_LSB +: HDR_WAIT_WIDTH];
      out_signal      <= s1_insn[HDR_SIGNAL_LSB +: HDR_SIGNAL_WIDTH];
      out_fields      <= s1_fields;
    end
  end
endmodule
