// n3_fp_add: the IEEE binary32 sum y = a + b, round to nearest even,
// subnormals in and out, the signed-zero rules of round-to-nearest
// (+0 + -0 = +0, -0 + -0 = -0, x + -x = +0), inf - inf = NaN; every NaN
// result is the canonical NaN. Equal, bit for bit, to C++ a + b on x86 SSE
// for every non-NaN result. Combinational.
//
// The operand of larger magnitude, `hi`, keeps its significand with 3 guard
// bits; the smaller, `lo`, is shifted right by the exponent difference and
// the bits shifted out are ORed into a sticky bit. The exact sum is then
//   hi + lo = (S + frac) * 2^(x_hi - 3),  0 <= frac < 1, frac != 0 iff sticky,
// with S = A + B for like signs and S = A - B - sticky for unlike signs
// (A - (B + f) = (A - B - 1) + (1 - f)); the sign is hi's. Bits go to the
// sticky only when the exponents differ by more than 3; then hi is normal,
// S >= 2^26 - 2^24 >= 2^25, the result's last bit is S's bit 2 or higher and
// its guard bit bit 1 or higher, so the sticky lies below the guard bit and
// the one rounder (n3_fp_round_pack) rounds the exact sum.
module n3_fp_add (
  input  logic [31:0] a,
  input  logic [31:0] b,
  output logic [31:0] y
);
  import n3_fp_pkg::*;

  logic nan_a, nan_b, inf_a, inf_b, zero_a, zero_b, sub, a_big;
  assign nan_a = a[30:23] == 8'hff && a[22:0] != 23'd0;
  assign nan_b = b[30:23] == 8'hff && b[22:0] != 23'd0;
  assign inf_a = a[30:23] == 8'hff && a[22:0] == 23'd0;
  assign inf_b = b[30:23] == 8'hff && b[22:0] == 23'd0;
  assign zero_a = a[30:0] == 31'd0;
  assign zero_b = b[30:0] == 31'd0;
  assign sub = a[31] ^ b[31];
  // Finite magnitudes order as their 31-bit patterns.
  assign a_big = a[30:0] >= b[30:0];

  logic [31:0] hi;
  logic [30:0] lo;  // lo's sign enters only through `sub`
  assign hi = a_big ? a : b;
  assign lo = a_big ? b[30:0] : a[30:0];

  // Exponent fields with a subnormal's 0 read as 1 (both mean 2^-149 per
  // mantissa unit), their difference, and the significands.
  logic [7:0] eb8, es8, d;
  logic [26:0] ab, bf, bsh;
  logic stk;
  logic [27:0] s;
  exp_t x;
  assign eb8 = (hi[30:23] == 8'd0) ? 8'd1 : hi[30:23];
  assign es8 = (lo[30:23] == 8'd0) ? 8'd1 : lo[30:23];
  assign d = eb8 - es8;
  assign ab = {hi[30:23] != 8'd0, hi[22:0], 3'b000};
  assign bf = {lo[30:23] != 8'd0, lo[22:0], 3'b000};
  assign bsh = (d >= 8'd27) ? 27'd0 : (bf >> d);
  assign stk = (d >= 8'd27) ? (bf != 27'd0) : (|(bf & ((27'd1 << d) - 27'd1)));
  assign s = sub ? 28'(ab) - 28'(bsh) - 28'(stk) : 28'(ab) + 28'(bsh);
  assign x = exp_t'(eb8) - 20'sd150 - 20'sd3;

  logic [31:0] r;
  n3_fp_round_pack #(.W(28)) u_round (
    .neg(hi[31]), .sig(s), .exp(x), .sticky(stk), .fmt(FMT_F32), .y(r)
  );

  always_comb begin
    if (nan_a || nan_b || (inf_a && inf_b && sub)) y = NAN_BITS;
    else if (inf_a) y = a;
    else if (inf_b) y = b;
    else if (zero_a && zero_b) y = {a[31] & b[31], 31'd0};
    else if (zero_a) y = b;                                   // exact
    else if (zero_b) y = a;
    else if (sub && a[30:0] == b[30:0]) y = 32'd0;            // x - x = +0
    else y = r;
  end
endmodule
