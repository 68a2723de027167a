// The control engine's execute stage (docs/rtl_ctl.md, "Control engine"): the
// scalar register file and what a legal control instruction (ALU, ALUI,
// LDST, BR, SYS; isa.yaml engine CTL) does to it, to the pc and to memory,
// bit for bit as sim/ctl_exec.cc's ctl_step (which FuncSim runs):
//   ALU / ALUI  rd = rs1 op x, 64-bit two's complement, wrapping; shifts by
//               x & 63; ALUI's AND / OR / XOR zero-extend the immediate, the
//               others sign-extend it; REMU by 0 traps (divide_by_zero);
//   LDST        address rs1 + sext(imm) (wrapping); out_of_range when bit 63
//               is set or [addr, addr + n) leaves the space's capacity, else
//               misaligned when addr % n != 0 (that precedence); the access
//               itself goes out on the memory port; LW sign-extends;
//   BR          taken per br_cond on (rs1, rs2); a taken branch's target
//               pc + sext(offset) must lie in [0, code_words] (pc_out_of_range);
//   SYS         HALT raised on out_halt; SYNC does nothing here (its tokens
//               are the dispatcher's).
// Words reach it decoded-legal: the decoder (rtl/decoder/) traps the rest,
// and tokens are the dispatcher's, so this unit ignores the header's token
// fields.
//
// Cycles (an accepted instruction to the next one accepted, out_ready high):
//   ALU / ALUI (not REMU), BR, SYS, and every trapping instruction: 1. The
//   operands are read, the result computed and written (register file and
//   output register) on the edge that accepts the word, so the next word,
//   accepted one edge later, reads the new value without forwarding.
//   REMU: 1 + 64 + 1: a restoring divider, one quotient bit per clock (a
//   64-bit combinational remainder would set the core clock), then the
//   write-back.
//   LDST: 1 + the memory port's handshakes: the request is registered (one
//   clock), a store completes on the request's transfer, a load on the
//   response (mem_rsp_valid).
// Back-pressure: in_ready = idle && (!out_valid || out_ready); a multi-cycle
// instruction leaves the output register empty until it completes.
module n3_ctl
  import n3_isa_pkg::*;
#(
  // pc and program length: a program has at most MAX_PROGRAM_WORDS words,
  // and a branch may target the word just past the end (the fetch traps).
  localparam int unsigned PC_BITS = $clog2(MAX_PROGRAM_WORDS + 1),
  localparam int unsigned REG_BITS = $clog2(NUM_REGS)
) (
  input  logic clk,
  input  logic rst_n,  // synchronous, active low: idle, output empty (registers keep their values)

  // The design's configuration, static during a run.
  input  logic [PC_BITS-1:0] code_words,  // program length in words
  input  logic [63:0]        cap_ddr,     // capacity in bytes of each space
  input  logic [63:0]        cap_l2,
  input  logic [63:0]        cap_wbuf,

  // Register set port (the bridge's: initial values, or a shadowed model's
  // state). Writes reg set_idx on the edge; only while the unit is idle and
  // no word is accepted on that edge (set has no effect otherwise). r0 stays 0.
  input  logic                set_valid,
  input  logic [REG_BITS-1:0] set_idx,
  input  logic [63:0]         set_value,

  // Commands: a legal control word and its pc (valid / ready).
  input  logic               in_valid,
  output logic               in_ready,
  input  logic [63:0]        in_insn,
  input  logic [PC_BITS-1:0] in_pc,

  // Memory port: one scalar access per LDST (valid / ready request; a load's
  // data comes back on a later edge with mem_rsp_valid, one response per load).
  output logic        mem_req_valid,
  input  logic        mem_req_ready,
  output logic        mem_req_store,
  output logic        mem_req_wide,   // 8 bytes (LD / SD), else 4
  output logic [2:0]  mem_req_space,  // space_e
  output logic [63:0] mem_req_addr,
  output logic [63:0] mem_req_wdata,  // rd (SW: the low 32 bits are stored)
  input  logic        mem_rsp_valid,
  input  logic [63:0] mem_rsp_rdata,  // LW: the low 32 bits

  // Results, one per command, in order (valid / ready; held while out_ready is low).
  output logic               out_valid,
  input  logic               out_ready,
  output logic [PC_BITS-1:0] out_pc,
  output logic [PC_BITS-1:0] out_next_pc,  // the trapping instruction's own pc on a trap
  output logic [2:0]         out_trap,     // TRAP_* below
  output logic               out_we,       // a register was written (never r0)
  output logic [REG_BITS-1:0] out_rd,      // 0 unless out_we
  output logic [63:0]        out_value,    // the value written, 0 unless out_we
  output logic [63:0]        out_addr,     // LDST: the scalar address (trapping or not), else 0
  output logic               out_halt      // SYS HALT
);
  // Trap codes: sim::CtlTrap's values (sim/ctl_exec.h).
  localparam logic [2:0] TRAP_NONE = 3'd0, TRAP_DIV0 = 3'd1, TRAP_RANGE = 3'd2, TRAP_ALIGN = 3'd3, TRAP_PC = 3'd4;

  typedef enum logic [1:0] {S_IDLE, S_DIV, S_MEM_REQ, S_MEM_RSP} state_e;
  state_e state;

  // ---- the register file -----------------------------------------------------
  logic [63:0] regs [NUM_REGS];
  logic        wb_en;
  logic [REG_BITS-1:0] wb_idx;
  logic [63:0] wb_val;

  function automatic logic [63:0] rd_reg(input logic [REG_BITS-1:0] i, input logic [63:0] r [NUM_REGS]);
    return i == '0 ? 64'd0 : r[i];
  endfunction

  // ---- decode of the accepted word ------------------------------------------
  logic [HDR_OPCODE_WIDTH-1:0] opc;
  assign opc = in_insn[HDR_OPCODE_LSB +: HDR_OPCODE_WIDTH];
  logic is_alu, is_alui, is_ldst, is_br, is_sys;
  assign is_alu  = opc == OPCODE_ALU;
  assign is_alui = opc == OPCODE_ALUI;
  assign is_ldst = opc == OPCODE_LDST;
  assign is_br   = opc == OPCODE_BR;
  assign is_sys  = opc == OPCODE_SYS;

  // ALU and ALUI share op, rd and rs1 positions in isa.yaml, but each is read
  // at its own format's position, so a layout change stays correct.
  alu_op_e aop;
  logic [REG_BITS-1:0] a_rd, a_rs1;
  logic [63:0] a_x, a_val;
  logic [63:0] a_a;
  assign aop   = is_alui ? alu_op_e'(in_insn[ALUI_OP_LSB +: ALUI_OP_WIDTH]) : alu_op_e'(in_insn[ALU_OP_LSB +: ALU_OP_WIDTH]);
  assign a_rd  = is_alui ? in_insn[ALUI_RD_LSB +: ALUI_RD_WIDTH] : in_insn[ALU_RD_LSB +: ALU_RD_WIDTH];
  assign a_rs1 = is_alui ? in_insn[ALUI_RS1_LSB +: ALUI_RS1_WIDTH] : in_insn[ALU_RS1_LSB +: ALU_RS1_WIDTH];
  assign a_a   = rd_reg(a_rs1, regs);
  always_comb begin
    if (!is_alui) a_x = rd_reg(in_insn[ALU_RS2_LSB +: ALU_RS2_WIDTH], regs);
    else if (aop == ALU_OP_AND || aop == ALU_OP_OR || aop == ALU_OP_XOR)
      a_x = {32'd0, in_insn[ALUI_IMM_LSB +: ALUI_IMM_WIDTH]};
    else a_x = {{(64 - ALUI_IMM_WIDTH){in_insn[ALUI_IMM_LSB + ALUI_IMM_WIDTH - 1]}}, in_insn[ALUI_IMM_LSB +: ALUI_IMM_WIDTH]};
  end
  always_comb begin
    unique case (aop)
      ALU_OP_ADD:  a_val = a_a + a_x;
      ALU_OP_SUB:  a_val = a_a - a_x;
      ALU_OP_MUL:  a_val = a_a * a_x;  // the low 64 bits
      ALU_OP_MIN:  a_val = $signed(a_a) < $signed(a_x) ? a_a : a_x;
      ALU_OP_MAX:  a_val = $signed(a_a) > $signed(a_x) ? a_a : a_x;
      ALU_OP_AND:  a_val = a_a & a_x;
      ALU_OP_OR:   a_val = a_a | a_x;
      ALU_OP_XOR:  a_val = a_a ^ a_x;
      ALU_OP_SHL:  a_val = a_a << a_x[5:0];
      ALU_OP_SHR:  a_val = a_a >> a_x[5:0];
      ALU_OP_SRA:  a_val = $unsigned($signed(a_a) >>> a_x[5:0]);
      ALU_OP_SLT:  a_val = {63'd0, $signed(a_a) < $signed(a_x)};
      ALU_OP_SLTU: a_val = {63'd0, a_a < a_x};
      default:     a_val = 64'd0;  // REMU: the divider's
    endcase
  end
  logic a_remu;
  assign a_remu = aop == ALU_OP_REMU;

  // LDST: the address and its checks.
  logic [LDST_OP_WIDTH-1:0] l_op;
  logic l_wide, l_store;
  logic [63:0] l_addr, l_cap;
  logic l_range, l_align;
  logic [2:0] l_space;
  assign l_op    = in_insn[LDST_OP_LSB +: LDST_OP_WIDTH];
  assign l_wide  = l_op == LDST_OP_LD || l_op == LDST_OP_SD;
  assign l_store = l_op == LDST_OP_SW || l_op == LDST_OP_SD;
  assign l_space = in_insn[LDST_SPACE_LSB +: LDST_SPACE_WIDTH];
  assign l_addr  = rd_reg(in_insn[LDST_RS1_LSB +: LDST_RS1_WIDTH], regs) +
                   {{(64 - LDST_IMM_WIDTH){in_insn[LDST_IMM_LSB + LDST_IMM_WIDTH - 1]}}, in_insn[LDST_IMM_LSB +: LDST_IMM_WIDTH]};
  always_comb begin
    unique case (l_space)
      SPACE_L2:   l_cap = cap_l2;
      SPACE_WBUF: l_cap = cap_wbuf;
      default:    l_cap = cap_ddr;  // SPACE_DDR; other values are the decoder's reserved_enum
    endcase
  end
  // SpaceMemory::in_range: addr <= cap && n <= cap - addr.
  assign l_range = l_addr[63] || l_addr > l_cap || (l_wide ? 64'd8 : 64'd4) > l_cap - l_addr;
  assign l_align = l_wide ? l_addr[2:0] != 3'd0 : l_addr[1:0] != 2'd0;

  // BR: the condition and the target.
  br_cond_e cond;
  logic [63:0] b_a, b_b;
  logic b_taken, b_bad;
  logic signed [PC_BITS+1:0] b_target;  // pc (PC_BITS, unsigned) + a BR_TARGET_WIDTH-bit signed offset
  assign cond = br_cond_e'(in_insn[BR_COND_LSB +: BR_COND_WIDTH]);
  assign b_a  = rd_reg(in_insn[BR_RS1_LSB +: BR_RS1_WIDTH], regs);
  assign b_b  = rd_reg(in_insn[BR_RS2_LSB +: BR_RS2_WIDTH], regs);
  always_comb begin
    unique case (cond)
      BR_COND_AL:  b_taken = 1'b1;
      BR_COND_EQ:  b_taken = b_a == b_b;
      BR_COND_NE:  b_taken = b_a != b_b;
      BR_COND_LT:  b_taken = $signed(b_a) < $signed(b_b);
      BR_COND_GE:  b_taken = $signed(b_a) >= $signed(b_b);
      BR_COND_LTU: b_taken = b_a < b_b;
      BR_COND_GEU: b_taken = b_a >= b_b;
      default:     b_taken = 1'b0;  // reserved: the decoder's
    endcase
  end
  assign b_target = $signed({2'b00, in_pc}) +
                    $signed({{(PC_BITS + 2 - BR_TARGET_WIDTH){in_insn[BR_TARGET_LSB + BR_TARGET_WIDTH - 1]}},
                             in_insn[BR_TARGET_LSB +: BR_TARGET_WIDTH]});
  assign b_bad = b_target < 0 || b_target > $signed({2'b00, code_words});

  logic [PC_BITS-1:0] pc_next;
  assign pc_next = in_pc + 1'b1;

  // ---- the multi-cycle state -------------------------------------------------
  logic [REG_BITS-1:0] m_rd;
  logic [63:0]         m_addr;
  logic                m_store, m_wide;
  logic [2:0]          m_space;
  logic [63:0]         m_wdata;
  logic [63:0]         d_a, d_b;  // dividend (shifted out MSB first), divisor
  logic [63:0]         d_r;       // the partial remainder (< divisor after each step)
  logic [6:0]          d_n;       // steps done
  logic [64:0]         d_sh, d_sub;
  assign d_sh  = {d_r, d_a[63]};
  assign d_sub = d_sh - {1'b0, d_b};

  logic accept, out_free;
  assign out_free = !out_valid || out_ready;
  assign in_ready = state == S_IDLE && out_free;
  assign accept   = in_valid && in_ready;

  assign mem_req_valid = state == S_MEM_REQ;
  assign mem_req_store = m_store;
  assign mem_req_wide  = m_wide;
  assign mem_req_space = m_space;
  assign mem_req_addr  = m_addr;
  assign mem_req_wdata = m_wdata;

  // Register writes: an instruction's on its completing edge; the set port's
  // otherwise (idle, nothing accepted).
  logic fin_div, fin_load;
  assign fin_div  = state == S_DIV && d_n == 7'd64;
  assign fin_load = state == S_MEM_RSP && mem_rsp_valid;
  always_comb begin
    wb_en  = 1'b0;
    wb_idx = '0;
    wb_val = 64'd0;
    if (accept && (is_alu || is_alui) && !a_remu) begin
      wb_en = 1'b1; wb_idx = a_rd; wb_val = a_val;
    end else if (fin_div) begin
      wb_en = 1'b1; wb_idx = m_rd; wb_val = d_r;
    end else if (fin_load) begin
      wb_en = 1'b1; wb_idx = m_rd;
      wb_val = m_wide ? mem_rsp_rdata : {{32{mem_rsp_rdata[31]}}, mem_rsp_rdata[31:0]};
    end else if (set_valid && state == S_IDLE && !accept) begin
      wb_en = 1'b1; wb_idx = set_idx; wb_val = set_value;
    end
  end
  always_ff @(posedge clk) begin
    if (wb_en && wb_idx != '0) regs[wb_idx] <= wb_val;
  end

  // ---- state and output --------------------------------------------------------
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      state     <= S_IDLE;
      out_valid <= 1'b0;
    end else begin
      if (out_valid && out_ready) out_valid <= 1'b0;
      unique case (state)
        S_IDLE:
          if (accept) begin
            // A multi-cycle instruction leaves the output empty until it completes.
            out_valid <= !(((is_alu || is_alui) && a_remu && a_x != 64'd0) || (is_ldst && !l_range && !l_align));
            if ((is_alu || is_alui) && a_remu && a_x != 64'd0) state <= S_DIV;
            else if (is_ldst && !l_range && !l_align) state <= S_MEM_REQ;
          end
        S_DIV:
          if (fin_div) begin
            state     <= S_IDLE;
            out_valid <= 1'b1;
          end
        S_MEM_REQ:
          if (mem_req_ready) begin
            state     <= m_store ? S_IDLE : S_MEM_RSP;
            out_valid <= m_store;
          end
        S_MEM_RSP:
          if (mem_rsp_valid) begin
            state     <= S_IDLE;
            out_valid <= 1'b1;
          end
        default: state <= S_IDLE;
      endcase
    end
  end

  // Data registers: loaded on the edges that start or finish an instruction;
  // out_valid and state say whether they mean anything.
  always_ff @(posedge clk) begin
    if (accept) begin
      out_pc  <= in_pc;
      out_halt <= is_sys && in_insn[SYS_FUNC_LSB +: SYS_FUNC_WIDTH] == SYS_FUNC_HALT;
      out_next_pc <= pc_next;
      out_trap <= TRAP_NONE;
      out_we   <= 1'b0;
      out_rd   <= '0;
      out_value <= 64'd0;
      out_addr <= is_ldst ? l_addr : 64'd0;
      if (is_alu || is_alui) begin
        if (a_remu && a_x == 64'd0) begin
          out_trap <= TRAP_DIV0;
          out_next_pc <= in_pc;
        end else if (!a_remu) begin
          out_we    <= a_rd != '0;
          out_rd    <= a_rd != '0 ? a_rd : '0;
          out_value <= a_rd != '0 ? a_val : 64'd0;
        end
        m_rd <= a_rd;
        d_a  <= a_a;
        d_b  <= a_x;
        d_r  <= 64'd0;
        d_n  <= 7'd0;
      end
      if (is_ldst) begin
        if (l_range || l_align) begin
          out_trap <= l_range ? TRAP_RANGE : TRAP_ALIGN;
          out_next_pc <= in_pc;
        end
        m_rd    <= in_insn[LDST_RD_LSB +: LDST_RD_WIDTH];
        m_addr  <= l_addr;
        m_store <= l_store;
        m_wide  <= l_wide;
        m_space <= l_space;
        m_wdata <= rd_reg(in_insn[LDST_RD_LSB +: LDST_RD_WIDTH], regs);
      end
      if (is_br && b_taken) begin
        out_trap    <= b_bad ? TRAP_PC : TRAP_NONE;
        out_next_pc <= b_bad ? in_pc : b_target[PC_BITS-1:0];
      end
    end
    if (state == S_DIV && !fin_div) begin
      d_r <= d_sub[64] ? d_sh[63:0] : d_sub[63:0];  // no borrow: d_sh >= divisor, subtract
      d_a <= d_a << 1;
      d_n <= d_n + 7'd1;
    end
    if (fin_div || fin_load) begin
      out_we    <= m_rd != '0;
      out_rd    <= m_rd;
      out_value <= m_rd != '0 ? wb_val : 64'd0;
    end
  end
endmodule
