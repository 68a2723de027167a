// n3_fp_round_pack: num::round_pack() of golden/numerics/common.h, the one
// rounding of the numerics core, as combinational logic. It rounds the exact
// value (-1)^neg * (sig + frac) * 2^exp, where 0 <= frac < 1 and `sticky`
// says frac != 0, into format `fmt` (f32: p = 24, bf16: p = 8, f16: p = 11)
// with round-to-nearest-even, gradual underflow and overflow to infinity,
// and returns it as the f32 pattern holding that value. sig == 0 gives a
// zero of sign `neg`, as does a value below half the format's smallest
// quantum. Every leaf that rounds (products, sums, the accumulator's final
// conversion, format conversion) instantiates it, so there is one rounding
// in the RTL as there is one in the C++.
//
// Steps (the C++'s, in order): normalise sig so its leading bit is the top
// bit (a leading-zero count), find the exponent of the result's last bit
// (lsb = max(e, emin) - (p - 1), e the leading bit's exponent), split off
// the bits below lsb (guard bit, and the rest ORed with sticky), round up on
// guard && (rest || odd), renormalise a carry into a new bit, then overflow
// to infinity above emax, or build the f32 (normal or subnormal) that holds
// q * 2^lsb exactly (num::make_f32).
module n3_fp_round_pack #(
  parameter int W = 24  // significand width of the caller's exact value
) (
  input  logic                   neg,
  input  logic [W-1:0]           sig,
  input  n3_fp_pkg::exp_t        exp,     // exponent of sig's bit 0
  input  logic                   sticky,  // a non-zero fraction below sig's bit 0
  input  logic [1:0]             fmt,
  output logic [31:0]            y
);
  import n3_fp_pkg::*;

  // Working width: at least 26 bits, so that at least two bits lie below the
  // last bit of any result (the guard bit and one more), as in the C++ where
  // the significand is normalised to 64 bits.
  localparam int WE = (W >= 26) ? W : 26;
  localparam int LW = $clog2(WE + 1);  // holds a count 0..WE

  // The format's precision and normal exponent range (num::spec_of).
  logic [4:0] p;
  exp_t emin, emax;
  always_comb begin
    case (fmt)
      FMT_BF16: begin p = 5'd8;  emin = -20'sd126; emax = 20'sd127; end
      FMT_F16:  begin p = 5'd11; emin = -20'sd14;  emax = 20'sd15;  end
      default:  begin p = 5'd24; emin = -20'sd126; emax = 20'sd127; end
    endcase
  end

  // Normalise: n has its leading one in bit WE-1; e is that bit's exponent.
  logic [WE-1:0] s, n;
  logic [LW-1:0] lz;
  exp_t e;
  assign s = WE'(sig) << (WE - W);
  always_comb begin
    lz = LW'(WE);
    for (int i = 0; i < WE; i++)
      if (s[i]) lz = LW'(WE - 1 - i);
  end
  assign n = s << lz;
  assign e = exp - exp_t'(WE - W) + exp_t'(WE - 1) - exp_t'(lz);

  // The result's last bit is at exponent lsb; `shift` bits of n lie below it
  // (WE - p of them for a normal result, more for a subnormal one). Beyond
  // WE the whole value is below half a quantum: zero.
  exp_t lsb, shift;
  logic under;
  logic [LW-1:0] sh;
  assign lsb = ((e < emin) ? emin : e) - exp_t'(p) + exp_t'(1);
  assign shift = lsb - (e - exp_t'(WE - 1));
  assign under = shift > exp_t'(WE);
  assign sh = under ? LW'(WE) : LW'(shift);

  // Round to nearest, ties to even. sh >= WE - 24 >= 2, so the guard bit
  // n[sh-1] exists and the rest lies below it.
  logic [24:0] q, q1, q2;
  logic guard, rest, up, carry;
  exp_t lsb2;
  assign q = 25'(n >> sh);  // at most p <= 24 bits
  assign guard = n[sh - LW'(1)];
  assign rest = sticky | (|(n & ((WE'(1) << (sh - LW'(1))) - WE'(1))));
  assign up = guard & (rest | q[0]);
  assign q1 = q + 25'(up);
  // Rounding up 2^p - 1 carries into a new bit: renormalise.
  assign carry = q1[p];
  assign q2 = carry ? (q1 >> 1) : q1;
  assign lsb2 = carry ? lsb + exp_t'(1) : lsb;

  // The result q2 * 2^lsb2: its bit length gives its leading exponent eq.
  logic [4:0] nb;
  exp_t eq;
  always_comb begin
    nb = 5'd0;
    for (int i = 0; i < 25; i++)
      if (q2[i]) nb = 5'(i + 1);
  end
  assign eq = lsb2 + exp_t'(nb) - exp_t'(1);

  // num::make_f32: below f32's normal range the pattern is q2 * 2^(lsb2 + 149)
  // (f32 and bf16 subnormals); otherwise the biased exponent and the 23 bits
  // under the leading one.
  logic [30:0] mag;
  always_comb begin
    if (q2 == 25'd0) mag = 31'd0;
    else if (eq < -20'sd126) mag = 31'(q2) << 5'(lsb2 + 20'sd149);
    else mag = {8'(eq + 20'sd127), 23'(q2 << (5'd24 - nb))};
  end

  always_comb begin
    if (sig == '0 || under) y = {neg, 31'd0};
    else if (q2 != 25'd0 && eq > emax) y = {neg, INF_MAG};
    else y = {neg, mag};
  end
endmodule
