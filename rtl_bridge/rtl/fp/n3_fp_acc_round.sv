// n3_fp_acc_round: y = num::acc_finish(acc, e_top, scale, fmt) of
// golden/numerics/mac.h, the single rounding of a dot product
// (docs/numerics.md, "MAC"): y = RNE_fmt(A * 2^(e_top - 16) * scale), with
// A = acc the exact aligned integer sum. |A| times the scale's 24-bit
// significand is formed exactly (88 bits) and rounded once into f32, bf16
// or f16 by the one rounder, so a GEMV writing bf16 rounds once, not twice.
// Special values, in the C++'s order: NaN scale -> NaN; infinite scale ->
// +-inf, or NaN when A == 0; A == 0 or scale == +-0 -> +0; overflow -> inf;
// subnormal results rounded once. Any e_top of the 16-bit port gives the
// C++'s result (the exponent arithmetic is 20 bits wide). Combinational.
module n3_fp_acc_round (
  input  logic signed [63:0] acc,
  input  logic signed [15:0] e_top,
  input  logic [31:0]        scale,
  input  logic [1:0]         fmt,
  output logic [31:0]        y
);
  import n3_fp_pkg::*;

  logic [7:0] se;
  logic nan_s, inf_s, zero_s, zero_a, neg;
  assign se = scale[30:23];
  assign nan_s = se == 8'hff && scale[22:0] != 23'd0;
  assign inf_s = se == 8'hff && scale[22:0] == 23'd0;
  assign zero_s = scale[30:0] == 31'd0;
  assign zero_a = acc == 64'sd0;
  assign neg = acc[63] ^ scale[31];

  // |A| * significand(scale) * 2^(e_top - 16 + exponent of the scale's last bit).
  logic [63:0] mag;
  logic [23:0] ms;
  exp_t xs, x;
  assign mag = acc[63] ? 64'd0 - acc : acc;
  assign ms = {se != 8'd0, scale[22:0]};
  assign xs = (se == 8'd0) ? -20'sd149 : exp_t'(se) - 20'sd150;
  assign x = exp_t'(e_top) - 20'sd16 + xs;

  logic [31:0] r;
  n3_fp_round_pack #(.W(88)) u_round (
    .neg(neg), .sig(88'(mag) * 88'(ms)), .exp(x), .sticky(1'b0), .fmt(fmt), .y(r)
  );

  always_comb begin
    if (nan_s) y = NAN_BITS;
    else if (inf_s) y = zero_a ? NAN_BITS : {neg, INF_MAG};
    else if (zero_a || zero_s) y = 32'd0;
    else y = r;
  end
endmodule
