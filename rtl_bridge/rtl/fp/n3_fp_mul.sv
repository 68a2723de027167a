// n3_fp_mul: the IEEE binary32 product y = a * b, round to nearest even,
// subnormal operands and results (no flushing), inf * 0 = NaN; every NaN
// result is the canonical NaN. The exact product of the two 24-bit
// significands (48 bits) goes through the one rounder. Equal, bit for bit,
// to C++ a * b on x86 SSE for every non-NaN result. Combinational.
module n3_fp_mul (
  input  logic [31:0] a,
  input  logic [31:0] b,
  output logic [31:0] y
);
  import n3_fp_pkg::*;

  logic [7:0] ea8, eb8;
  logic nan_a, nan_b, inf_a, inf_b, zero_a, zero_b, neg;
  assign ea8 = a[30:23];
  assign eb8 = b[30:23];
  assign nan_a = ea8 == 8'hff && a[22:0] != 23'd0;
  assign nan_b = eb8 == 8'hff && b[22:0] != 23'd0;
  assign inf_a = ea8 == 8'hff && a[22:0] == 23'd0;
  assign inf_b = eb8 == 8'hff && b[22:0] == 23'd0;
  assign zero_a = a[30:0] == 31'd0;
  assign zero_b = b[30:0] == 31'd0;
  assign neg = a[31] ^ b[31];

  // |a| = sa * 2^xa exactly (subnormals: raw mantissa, exponent -149).
  logic [23:0] sa, sb;
  exp_t xa, xb;
  logic [31:0] r;
  assign sa = {ea8 != 8'd0, a[22:0]};
  assign sb = {eb8 != 8'd0, b[22:0]};
  assign xa = (ea8 == 8'd0) ? -20'sd149 : exp_t'(ea8) - 20'sd150;
  assign xb = (eb8 == 8'd0) ? -20'sd149 : exp_t'(eb8) - 20'sd150;

  n3_fp_round_pack #(.W(48)) u_round (
    .neg(neg), .sig(48'(sa) * 48'(sb)), .exp(xa + xb), .sticky(1'b0), .fmt(FMT_F32), .y(r)
  );

  always_comb begin
    if (nan_a || nan_b || (inf_a && zero_b) || (zero_a && inf_b)) y = NAN_BITS;
    else if (inf_a || inf_b) y = {neg, INF_MAG};
    else if (zero_a || zero_b) y = {neg, 31'd0};
    else y = r;
  end
endmodule
