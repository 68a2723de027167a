// n3_bfp_quant: one block of the block-floating-point quantiser,
// exp_q = num::bfp_quantize_block(x, cnt, B, mbits, mant) of
// golden/numerics/bfp.h (docs/numerics.md, "Block floating point"):
//   E      = max over the elements i < cnt that are non-zero of floor(log2|x_i|)
//            (from the bits; subnormals included)
//   exp_q  = q = E - (mbits - 2), the block's LSB exponent
//   mant_i = clamp(RNE(x_i / 2^q), +-(2^(mbits-1) - 1)), sign applied after
// Elements i >= cnt are ignored and get mantissa 0. A block whose elements
// i < cnt are all zero gives exp_q = kBfpZero (-32768), one holding a NaN or
// an infinity kBfpPoison (32767); both with every mantissa 0. mbits must lie
// in [2, 16], cnt in [0, B] (a larger cnt reads as B). Combinational: the
// two passes of the C++ (the block maximum, then the mantissas) are a max
// tree feeding B rounding shifters.
module n3_bfp_quant #(
  parameter int B = 32
) (
  input  logic [B-1:0][31:0]        x,
  input  logic [$clog2(B+1)-1:0]    cnt,
  input  logic [4:0]                mbits,
  output logic signed [15:0]        exp_q,
  output logic [B-1:0][15:0]        mant
);
  import n3_fp_pkg::*;

  localparam int CW = $clog2(B + 1);
  localparam int TN = 2 * B - 1;  // nodes of the max tree

  // Per element: the normalised significand sig (leading one in bit 23)
  // and key = E + 150 (1..277) for a counted non-zero finite element, 0
  // otherwise; poison for a counted NaN or infinity.
  logic [B-1:0][23:0] sig;
  logic [B-1:0][8:0] key;
  logic [B-1:0] bad;
  always_comb begin
    for (int i = 0; i < B; i++) begin
      logic [4:0] nb;  // bit length of a subnormal's mantissa
      logic act;
      act = CW'(i) < cnt;
      nb = 5'd0;
      for (int j = 0; j < 23; j++)
        if (x[i][j]) nb = 5'(j + 1);
      bad[i] = act && x[i][30:23] == 8'hff;
      if (!act || x[i][30:0] == 31'd0 || x[i][30:23] == 8'hff) begin
        sig[i] = 24'd0;
        key[i] = 9'd0;
      end else if (x[i][30:23] == 8'd0) begin  // subnormal: E = -150 + nb
        sig[i] = 24'(x[i][22:0]) << (5'd24 - nb);
        key[i] = 9'(nb);
      end else begin                           // normal: E = be - 127
        sig[i] = {1'b1, x[i][22:0]};
        key[i] = 9'(x[i][30:23]) + 9'd23;
      end
    end
  end

  // The block maximum: a binary tree over the keys (leaves at B-1 .. 2B-2).
  logic [TN-1:0][8:0] t;
  always_comb begin
    for (int i = 0; i < B; i++) t[B - 1 + i] = key[i];
    for (int i = B - 2; i >= 0; i--) t[i] = (t[2 * i + 1] > t[2 * i + 2]) ? t[2 * i + 1] : t[2 * i + 2];
  end

  logic poison, zero;
  logic [8:0] kmax;
  logic [15:0] lim;  // 2^(mbits-1) - 1
  assign poison = |bad;
  assign kmax = t[0];
  assign zero = kmax == 9'd0;
  assign lim = 16'((17'd1 << (mbits - 5'd1)) - 17'd1);

  // q = E - (mbits - 2) = kmax - 150 - mbits + 2; in [-163, 125] for mbits in [2, 16].
  always_comb begin
    if (poison) exp_q = 16'sh7fff;
    else if (zero) exp_q = -16'sh8000;
    else exp_q = 16'(exp_t'(kmax) - 20'sd148 - exp_t'(mbits));
  end

  // x_i / 2^q = sig_i * 2^(E_i - 23 - q): a right shift by
  // s_i = (E - E_i) + 25 - mbits >= 9, rounded to nearest even; from 25 on
  // the value is below half a unit and the result 0. The one element that
  // can round up to 2^(mbits-1) saturates to lim.
  always_comb begin
    for (int i = 0; i < B; i++) begin
      logic [9:0] s;
      logic [4:0] sh;
      logic [25:0] v;
      logic [15:0] m, q;
      logic up;
      s = 10'(kmax - key[i]) + 10'd25 - 10'(mbits);
      sh = (s > 10'd25) ? 5'd25 : 5'(s);
      v = 26'(sig[i]);
      q = 16'(v >> sh);
      up = v[sh - 5'd1] & ((|(v & ((26'd1 << (sh - 5'd1)) - 26'd1))) | q[0]);
      m = q + 16'(up);
      if (m > lim) m = lim;
      mant[i] = (poison || zero || key[i] == 9'd0) ? 16'd0 : (x[i][31] ? 16'd0 - m : m);
    end
  end
endmodule
