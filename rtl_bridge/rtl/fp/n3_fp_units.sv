// n3_fp_units: every floating-point and BFP leaf side by side, each on its
// own ports (prefix = the leaf), for `n3 cosim --unit fp` (rtl_bridge/
// cosim_fp.cc), which drives all of them with one vector per step and
// compares each with its numerics-core function. No logic of its own.
module n3_fp_units (
  // n3_fp_acc_round
  input  logic signed [63:0]  ar_acc,
  input  logic signed [15:0]  ar_e_top,
  input  logic [31:0]         ar_scale,
  input  logic [1:0]          ar_fmt,
  output logic [31:0]         ar_y,
  // n3_acc_align
  input  logic signed [63:0]  al_p,
  input  logic signed [15:0]  al_x,
  input  logic signed [15:0]  al_e_top,
  output logic signed [63:0]  al_y,
  // n3_fp_mul
  input  logic [31:0]         mul_a,
  input  logic [31:0]         mul_b,
  output logic [31:0]         mul_y,
  // n3_fp_add
  input  logic [31:0]         add_a,
  input  logic [31:0]         add_b,
  output logic [31:0]         add_y,
  // n3_fp_round_fmt
  input  logic [31:0]         rf_x,
  input  logic [1:0]          rf_fmt,
  output logic [31:0]         rf_y,
  // n3_fp_to_f32
  input  logic [31:0]         cv_bits,
  input  logic [1:0]          cv_fmt,
  output logic [31:0]         cv_y,
  // n3_bfp_quant, B = 32
  input  logic [31:0][31:0]   bq_x,
  input  logic [5:0]          bq_cnt,
  input  logic [4:0]          bq_mbits,
  output logic signed [15:0]  bq_exp_q,
  output logic [31:0][15:0]   bq_mant
);
  n3_fp_acc_round u_acc_round (.acc(ar_acc), .e_top(ar_e_top), .scale(ar_scale), .fmt(ar_fmt), .y(ar_y));
  n3_acc_align u_acc_align (.p(al_p), .x(al_x), .e_top(al_e_top), .y(al_y));
  n3_fp_mul u_mul (.a(mul_a), .b(mul_b), .y(mul_y));
  n3_fp_add u_add (.a(add_a), .b(add_b), .y(add_y));
  n3_fp_round_fmt u_round_fmt (.x(rf_x), .fmt(rf_fmt), .y(rf_y));
  n3_fp_to_f32 u_to_f32 (.bits(cv_bits), .fmt(cv_fmt), .y(cv_y));
  n3_bfp_quant #(.B(32)) u_bfp_quant (.x(bq_x), .cnt(bq_cnt), .mbits(bq_mbits), .exp_q(bq_exp_q), .mant(bq_mant));
endmodule
