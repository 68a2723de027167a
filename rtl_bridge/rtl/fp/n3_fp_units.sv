// n3_fp_units: every floating-point and BFP leaf of n3_fp_pkg side by
// side, each on its own ports (prefix = the leaf), for `n3 cosim --unit fp`
// (rtl_bridge/cosim_fp.cc), which drives all of them with one vector per
// step and compares each with its numerics-core function. No logic of its
// own.
module n3_fp_units (
  // fp_acc_round
  input  logic signed [63:0]  ar_acc,
  input  logic signed [15:0]  ar_e_top,
  input  logic [31:0]         ar_scale,
  input  logic [1:0]          ar_fmt,
  output logic [31:0]         ar_y,
  // fp_acc_align
  input  logic signed [63:0]  al_p,
  input  logic signed [15:0]  al_x,
  input  logic signed [15:0]  al_e_top,
  output logic signed [63:0]  al_y,
  // fp_mul
  input  logic [31:0]         mul_a,
  input  logic [31:0]         mul_b,
  output logic [31:0]         mul_y,
  // fp_add
  input  logic [31:0]         add_a,
  input  logic [31:0]         add_b,
  output logic [31:0]         add_y,
  // fp_round_fmt
  input  logic [31:0]         rf_x,
  input  logic [1:0]          rf_fmt,
  output logic [31:0]         rf_y,
  // fp_to_f32
  input  logic [31:0]         cv_bits,
  input  logic [1:0]          cv_fmt,
  output logic [31:0]         cv_y,
  // fp_bfp_quant, a block of 32
  input  logic [31:0][31:0]   bq_x,
  input  logic [5:0]          bq_cnt,
  input  logic [4:0]          bq_mbits,
  output logic signed [15:0]  bq_exp_q,
  output logic [31:0][15:0]   bq_mant
);
  import n3_fp_pkg::*;
  assign ar_y = fp_acc_round(ar_acc, ar_e_top, ar_scale, ar_fmt);
  assign al_y = fp_acc_align(al_p, al_x, al_e_top);
  assign mul_y = fp_mul(mul_a, mul_b);
  assign add_y = fp_add(add_a, add_b);
  assign rf_y = fp_round_fmt(rf_x, rf_fmt);
  assign cv_y = fp_to_f32(cv_bits, cv_fmt);
  // A 32-element block is the 64-element quantiser with the rest zero.
  // The upper 32 mantissas of a 32-element block are zero, read by no one.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [QB-1:0][15:0] bq_m;
  /* verilator lint_on UNUSEDSIGNAL */
  always_comb begin
    fp_bfp_quant({{(QB - 32) * 32{1'b0}}, bq_x}, {1'b0, bq_cnt}, bq_mbits, bq_exp_q, bq_m);
    bq_mant = bq_m[31:0];
  end
endmodule
