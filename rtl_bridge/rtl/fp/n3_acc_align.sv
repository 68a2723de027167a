// n3_acc_align: y = num::acc_align(p, x, e_top) of golden/numerics/mac.h,
// the alignment of one block partial P_b onto the accumulator's grid
// (docs/numerics.md, "MAC"): num::shift_rne(p, d) with d = x - e_top + 16
// (kAccFrac guard bits), i.e. p * 2^d for d >= 0 and RNE(p * 2^d), ties to
// even, for d < 0, at any distance (from 64 bits down the result is 0:
// |p| <= 2^63 is at most half a unit there and a tie rounds to even 0).
// Left shifts wrap modulo 2^64 as the C++'s unsigned shift does; the C++
// leaves d >= 64 undefined (the engine never asks: e_top >= x so d <= 16),
// and this gives 0 there. Combinational.
module n3_acc_align (
  input  logic signed [63:0] p,
  input  logic signed [15:0] x,
  input  logic signed [15:0] e_top,
  output logic signed [63:0] y
);
  import n3_fp_pkg::*;

  exp_t d, s;
  assign d = exp_t'(x) - exp_t'(e_top) + 20'sd16;
  assign s = -d;

  // Right shift of |p| (p = -2^63 gives 2^63, still 64 bits unsigned).
  logic neg;
  logic [63:0] mag, q, q1;
  logic [5:0] sh;
  logic guard, rest, up;
  assign neg = p[63];
  assign mag = neg ? 64'd0 - p : p;
  assign sh = 6'(s);  // used only for 1 <= s <= 63
  assign q = mag >> sh;
  assign guard = mag[sh - 6'd1];
  assign rest = |(mag & ((64'd1 << (sh - 6'd1)) - 64'd1));
  assign up = guard & (rest | q[0]);
  assign q1 = q + {63'd0, up};

  always_comb begin
    if (d >= 20'sd64) y = '0;                  // C++: undefined; never used
    else if (d >= 20'sd0) y = p <<< d[5:0];
    else if (s >= 20'sd64) y = '0;
    else y = neg ? 64'd0 - q1 : q1;
  end
endmodule
