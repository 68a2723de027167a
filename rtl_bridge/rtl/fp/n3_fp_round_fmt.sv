// n3_fp_round_fmt: y = num::round_to(fmt, x) of golden/numerics/formats.h,
// what every write of a float to L2 does: x rounded to nearest even into f32,
// bf16 or f16 (gradual underflow, overflow to +-infinity), returned as the
// f32 pattern holding the value. NaN becomes the canonical NaN; infinities
// and zeros (-0 too) pass unchanged; for f32 every other value is unchanged.
// Combinational.
module n3_fp_round_fmt (
  input  logic [31:0] x,
  input  logic [1:0]  fmt,
  output logic [31:0] y
);
  import n3_fp_pkg::*;

  // x = sig * 2^exp exactly (a subnormal keeps its raw mantissa: the
  // rounder normalises).
  logic [7:0] be;
  logic [23:0] sig;
  exp_t exp;
  logic [31:0] r;
  assign be = x[30:23];
  assign sig = {be != 8'd0, x[22:0]};
  assign exp = (be == 8'd0) ? -20'sd149 : exp_t'(be) - 20'sd150;

  n3_fp_round_pack #(.W(24)) u_round (
    .neg(x[31]), .sig(sig), .exp(exp), .sticky(1'b0), .fmt(fmt), .y(r)
  );

  always_comb begin
    if (be == 8'hff) y = (x[22:0] != 23'd0) ? NAN_BITS : x;  // NaN -> canonical; inf unchanged
    else if (x[30:0] == 31'd0) y = x;                          // +-0 unchanged
    else y = r;
  end
endmodule
