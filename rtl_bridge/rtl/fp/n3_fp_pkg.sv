// The floating-point and BFP leaves of the GEMV engine (docs/rtl_fp.md,
// "Floating-point and BFP leaves"), each a combinational function
// bit-exact with one function of the numerics core (golden/numerics/,
// which docs/numerics.md specifies), and their shared definitions.
//
// Why functions and not modules: a unit calls a leaf inside the
// always_comb branch of the mode or clock that uses it (the float lanes
// only for float jobs, the final rounding only when a result is in the
// finish stage). Synthesis builds the same gates either way; Verilator
// evaluates every instantiated module on every evaluation, but a function
// call only when its branch is taken, which makes the integer GEMV path
// several times faster to simulate.
package n3_fp_pkg;
  // fmt: a float storage format, 2 bits wide, coded as the ISA's dtypes
  // (n3_isa_pkg: DTYPE_F32 = 0, DTYPE_BF16 = 1, DTYPE_F16 = 2). Code 3 is no
  // format; every leaf treats it as f32, as num::spec_of() does.
  localparam logic [1:0] FMT_F32 = 2'(n3_isa_pkg::DTYPE_F32);
  localparam logic [1:0] FMT_BF16 = 2'(n3_isa_pkg::DTYPE_BF16);
  localparam logic [1:0] FMT_F16 = 2'(n3_isa_pkg::DTYPE_F16);

  // Exponents inside the leaves: 20-bit two's complement. The widest range
  // is fp_acc_round's (e_top over all of int16, plus the scale's exponent
  // and an 88-bit significand), within +-2^17.
  typedef logic signed [19:0] exp_t;

  // common.h kNaNBits / kInfBits: every NaN a leaf produces is this one.
  localparam logic [31:0] NAN_BITS = 32'h7fc0_0000;
  localparam logic [30:0] INF_MAG = 31'h7f80_0000;

  // The BFP quantiser's block width: the largest numerics.bfp_block.
  localparam int QB = 64;

  // fp_round_pack: num::round_pack() of golden/numerics/common.h, the one
  // rounding of the numerics core. It rounds the exact value
  // (-1)^neg * (sig + frac) * 2^exp, where 0 <= frac < 1 and `sticky` says
  // frac != 0, into format `fmt` (f32: p = 24, bf16: p = 8, f16: p = 11)
  // with round-to-nearest-even, gradual underflow and overflow to infinity,
  // and returns the f32 pattern holding that value. sig == 0 gives a zero
  // of sign `neg`, as does a value below half the format's smallest
  // quantum. Every leaf that rounds calls it, so there is one rounding in
  // the RTL as there is one in the C++.
  //
  // Steps (the C++'s, in order): normalise sig so its leading bit is bit 63
  // (a 6-step leading-zero shifter), find the exponent of the result's last
  // bit (lsb = max(e, emin) - (p - 1), e the leading bit's exponent), split
  // off the bits below lsb (guard bit, and the rest ORed with sticky), round
  // up on guard && (rest || odd), renormalise a carry into a new bit, then
  // overflow to infinity above emax, or build the f32 (normal or subnormal)
  // that holds q * 2^lsb exactly (num::make_f32). At least 40 bits lie below
  // the last bit of a normalised result, so the guard bit always exists and
  // the sticky always lies below it.
  function automatic logic [31:0] fp_round_pack(logic neg, logic [63:0] sig, exp_t exp, logic sticky,
                                                logic [1:0] fmt);
    logic [4:0] p;
    exp_t emin, emax, e, lsb, shift, lsb2, eq;
    logic [63:0] n;
    logic [6:0] lz, sh;
    logic under, guard, rest, up, carry;
    logic [24:0] q, q1, q2;
    logic [4:0] nb;
    logic [30:0] mag;
    case (fmt)
      FMT_BF16: begin p = 5'd8;  emin = -20'sd126; emax = 20'sd127; end
      FMT_F16:  begin p = 5'd11; emin = -20'sd14;  emax = 20'sd15;  end
      default:  begin p = 5'd24; emin = -20'sd126; emax = 20'sd127; end
    endcase
    n = sig;
    lz = 7'd0;
    if (n[63:32] == 32'd0) begin n = n << 32; lz = lz + 7'd32; end
    if (n[63:48] == 16'd0) begin n = n << 16; lz = lz + 7'd16; end
    if (n[63:56] == 8'd0)  begin n = n << 8;  lz = lz + 7'd8;  end
    if (n[63:60] == 4'd0)  begin n = n << 4;  lz = lz + 7'd4;  end
    if (n[63:62] == 2'd0)  begin n = n << 2;  lz = lz + 7'd2;  end
    if (n[63] == 1'b0)     begin n = n << 1;  lz = lz + 7'd1;  end
    e = exp + 20'sd63 - exp_t'(lz);
    // `shift` bits of n lie below the last bit (64 - p for a normal result,
    // more for a subnormal one); beyond 64 the value is below half a quantum.
    lsb = ((e < emin) ? emin : e) - exp_t'(p) + 20'sd1;
    shift = lsb - (e - 20'sd63);
    under = shift > 20'sd64;
    sh = under ? 7'd64 : 7'(shift);
    q = 25'(n >> sh);  // at most p <= 24 bits
    guard = n[6'(sh - 7'd1)];
    rest = sticky | (|(n & ((64'd1 << (sh - 7'd1)) - 64'd1)));
    up = guard & (rest | q[0]);
    q1 = q + 25'(up);
    // Rounding up 2^p - 1 carries into a new bit: renormalise.
    carry = q1[p];
    q2 = carry ? (q1 >> 1) : q1;
    lsb2 = carry ? lsb + 20'sd1 : lsb;
    nb = 5'd0;
    for (int i = 0; i < 25; i++)
      if (q2[i]) nb = 5'(i + 1);
    eq = lsb2 + exp_t'(nb) - 20'sd1;
    // num::make_f32: below f32's normal range the pattern is q2 * 2^(lsb2 +
    // 149) (f32 and bf16 subnormals); otherwise the biased exponent and the
    // 23 bits under the leading one.
    if (q2 == 25'd0) mag = 31'd0;
    else if (eq < -20'sd126) mag = 31'(q2) << 5'(lsb2 + 20'sd149);
    else mag = {8'(eq + 20'sd127), 23'(q2 << (5'd24 - nb))};
    if (sig == 64'd0 || under) return {neg, 31'd0};
    if (q2 != 25'd0 && eq > emax) return {neg, INF_MAG};
    return {neg, mag};
  endfunction

  // fp_mul: the IEEE binary32 product a * b, round to nearest even,
  // subnormal operands and results (no flushing), inf * 0 = NaN; every NaN
  // result is the canonical NaN. The exact product of the two 24-bit
  // significands (48 bits) goes through the one rounder. Equal, bit for
  // bit, to C++ a * b on x86 SSE for every non-NaN result.
  function automatic logic [31:0] fp_mul(logic [31:0] a, logic [31:0] b);
    logic [7:0] ea8, eb8;
    logic nan_a, nan_b, inf_a, inf_b, zero_a, zero_b, neg;
    logic [23:0] sa, sb;
    exp_t xa, xb;
    ea8 = a[30:23];
    eb8 = b[30:23];
    nan_a = ea8 == 8'hff && a[22:0] != 23'd0;
    nan_b = eb8 == 8'hff && b[22:0] != 23'd0;
    inf_a = ea8 == 8'hff && a[22:0] == 23'd0;
    inf_b = eb8 == 8'hff && b[22:0] == 23'd0;
    zero_a = a[30:0] == 31'd0;
    zero_b = b[30:0] == 31'd0;
    neg = a[31] ^ b[31];
    if (nan_a || nan_b || (inf_a && zero_b) || (zero_a && inf_b)) return NAN_BITS;
    if (inf_a || inf_b) return {neg, INF_MAG};
    if (zero_a || zero_b) return {neg, 31'd0};
    // |a| = sa * 2^xa exactly (subnormals: raw mantissa, exponent -149).
    sa = {ea8 != 8'd0, a[22:0]};
    sb = {eb8 != 8'd0, b[22:0]};
    xa = (ea8 == 8'd0) ? -20'sd149 : exp_t'(ea8) - 20'sd150;
    xb = (eb8 == 8'd0) ? -20'sd149 : exp_t'(eb8) - 20'sd150;
    return fp_round_pack(neg, 64'(sa) * 64'(sb), xa + xb, 1'b0, FMT_F32);
  endfunction

  // fp_add: the IEEE binary32 sum a + b, round to nearest even, subnormals
  // in and out, the signed-zero rules of round-to-nearest (+0 + -0 = +0,
  // -0 + -0 = -0, x + -x = +0), inf - inf = NaN; every NaN result is the
  // canonical NaN. Equal, bit for bit, to C++ a + b on x86 SSE for every
  // non-NaN result.
  //
  // The operand of larger magnitude, `hi`, keeps its significand with 3
  // guard bits; the smaller, `lo`, is shifted right by the exponent
  // difference and the bits shifted out are ORed into a sticky bit. The
  // exact sum is then hi + lo = (S + frac) * 2^(x_hi - 3), 0 <= frac < 1,
  // frac != 0 iff sticky, with S = A + B for like signs and S = A - B -
  // sticky for unlike signs (A - (B + f) = (A - B - 1) + (1 - f)); the sign
  // is hi's. Bits go to the sticky only when the exponents differ by more
  // than 3; then hi is normal, S >= 2^25, the result's guard bit is S's bit
  // 1 or higher, so the sticky lies below it and the one rounder rounds the
  // exact sum.
  function automatic logic [31:0] fp_add(logic [31:0] a, logic [31:0] b);
    logic nan_a, nan_b, inf_a, inf_b, zero_a, zero_b, sub, a_big, stk;
    logic [31:0] hi;
    logic [30:0] lo;  // lo's sign enters only through `sub`
    logic [7:0] eb8, es8, d;
    logic [26:0] ab, bf, bsh;
    logic [27:0] s;
    nan_a = a[30:23] == 8'hff && a[22:0] != 23'd0;
    nan_b = b[30:23] == 8'hff && b[22:0] != 23'd0;
    inf_a = a[30:23] == 8'hff && a[22:0] == 23'd0;
    inf_b = b[30:23] == 8'hff && b[22:0] == 23'd0;
    zero_a = a[30:0] == 31'd0;
    zero_b = b[30:0] == 31'd0;
    sub = a[31] ^ b[31];
    if (nan_a || nan_b || (inf_a && inf_b && sub)) return NAN_BITS;
    if (inf_a) return a;
    if (inf_b) return b;
    if (zero_a && zero_b) return {a[31] & b[31], 31'd0};
    if (zero_a) return b;  // exact
    if (zero_b) return a;
    if (sub && a[30:0] == b[30:0]) return 32'd0;  // x - x = +0
    // Finite magnitudes order as their 31-bit patterns.
    a_big = a[30:0] >= b[30:0];
    hi = a_big ? a : b;
    lo = a_big ? b[30:0] : a[30:0];
    // Exponent fields with a subnormal's 0 read as 1 (both mean 2^-149 per
    // mantissa unit), their difference, and the significands.
    eb8 = (hi[30:23] == 8'd0) ? 8'd1 : hi[30:23];
    es8 = (lo[30:23] == 8'd0) ? 8'd1 : lo[30:23];
    d = eb8 - es8;
    ab = {hi[30:23] != 8'd0, hi[22:0], 3'b000};
    bf = {lo[30:23] != 8'd0, lo[22:0], 3'b000};
    bsh = (d >= 8'd27) ? 27'd0 : (bf >> d);
    stk = (d >= 8'd27) ? (bf != 27'd0) : (|(bf & ((27'd1 << d) - 27'd1)));
    s = sub ? 28'(ab) - 28'(bsh) - 28'(stk) : 28'(ab) + 28'(bsh);
    return fp_round_pack(hi[31], 64'(s), exp_t'(eb8) - 20'sd153, stk, FMT_F32);
  endfunction

  // fp_round_fmt: num::round_to(fmt, x) of golden/numerics/formats.h, what
  // every write of a float to L2 does: x rounded to nearest even into f32,
  // bf16 or f16 (gradual underflow, overflow to +-infinity), returned as
  // the f32 pattern holding the value. NaN becomes the canonical NaN;
  // infinities and zeros (-0 too) pass unchanged; for f32 every other value
  // is unchanged.
  function automatic logic [31:0] fp_round_fmt(logic [31:0] x, logic [1:0] fmt);
    logic [7:0] be;
    be = x[30:23];
    if (be == 8'hff) return (x[22:0] != 23'd0) ? NAN_BITS : x;  // NaN -> canonical; inf unchanged
    if (x[30:0] == 31'd0) return x;                              // +-0 unchanged
    // x = sig * 2^exp exactly (a subnormal keeps its raw mantissa: the
    // rounder normalises).
    return fp_round_pack(x[31], 64'({be != 8'd0, x[22:0]}),
                         (be == 8'd0) ? -20'sd149 : exp_t'(be) - 20'sd150, 1'b0, fmt);
  endfunction

  // fp_to_f32: a stored float element to the f32 the datapath computes
  // with, exactly as the simulator's read path does (sim/view.cc read_row):
  //   f32:  the 32 bits unchanged (a stored NaN is passed on as it is);
  //   bf16: the low 16 bits in the top half (num::bf16_value: NaNs too);
  //   f16:  num::f16_value of the low 16 bits: subnormals exact (normalised
  //         into f32 normals), +-inf, any NaN -> the canonical NaN.
  // fmt 3 (no format) reads as f32.
  function automatic logic [31:0] fp_to_f32(logic [31:0] bits, logic [1:0] fmt);
    logic [4:0] be;
    logic [9:0] m;
    be = bits[14:10];
    m = bits[9:0];
    case (fmt)
      FMT_BF16: return {bits[15:0], 16'd0};
      FMT_F16: begin
        if (be == 5'h1f) return (m != 10'd0) ? NAN_BITS : {bits[15], INF_MAG};
        // The value m * 2^-24 (subnormal) or (1024 + m) * 2^(be - 25); the
        // rounder packs it, exactly (every f16 value is an f32 normal or zero).
        return fp_round_pack(bits[15], 64'({be != 5'd0, m}), (be == 5'd0) ? -20'sd24 : exp_t'(be) - 20'sd25,
                             1'b0, FMT_F32);
      end
      default: return bits;  // FMT_F32
    endcase
  endfunction

  // fp_acc_round: num::acc_finish(acc, e_top, scale, fmt) of
  // golden/numerics/mac.h, the single rounding of a dot product
  // (docs/numerics.md, "MAC"): RNE_fmt(A * 2^(e_top - 16) * scale), with
  // A = acc the exact aligned integer sum. |A| times the scale's 24-bit
  // significand is formed exactly (88 bits) and rounded once into f32,
  // bf16 or f16, so a GEMV writing bf16 rounds once, not twice. Special
  // values, in the C++'s order: NaN scale -> NaN; infinite scale -> +-inf,
  // or NaN when A == 0; A == 0 or scale == +-0 -> +0; overflow -> inf;
  // subnormal results rounded once. Any e_top of the 16-bit port gives the
  // C++'s result (the exponent arithmetic is 20 bits wide).
  function automatic logic [31:0] fp_acc_round(logic signed [63:0] acc, logic signed [15:0] e_top,
                                               logic [31:0] scale, logic [1:0] fmt);
    logic [7:0] se;
    logic neg;
    logic [63:0] mag;
    logic [87:0] prod;
    exp_t x;
    se = scale[30:23];
    neg = acc[63] ^ scale[31];
    if (se == 8'hff && scale[22:0] != 23'd0) return NAN_BITS;
    if (se == 8'hff) return (acc == 64'sd0) ? NAN_BITS : {neg, INF_MAG};
    if (acc == 64'sd0 || scale[30:0] == 31'd0) return 32'd0;
    // |A| * significand(scale) * 2^(e_top - 16 + exponent of the scale's last bit).
    mag = acc[63] ? 64'd0 - acc : acc;
    prod = 88'(mag) * 88'({se != 8'd0, scale[22:0]});
    x = exp_t'(e_top) - 20'sd16 + ((se == 8'd0) ? -20'sd149 : exp_t'(se) - 20'sd150);
    // Into the rounder's 64 bits: a product of 2^64 or more drops its low 24
    // bits into the sticky. Its leading bit is then bit 40 or higher of the
    // 64, so the result's guard bit is bit 16 or higher: still exact.
    if (prod[87:64] == 24'd0) return fp_round_pack(neg, prod[63:0], x, 1'b0, fmt);
    return fp_round_pack(neg, prod[87:24], x + 20'sd24, |prod[23:0], fmt);
  endfunction

  // fp_acc_align: num::acc_align(p, x, e_top) of golden/numerics/mac.h,
  // the alignment of one block partial P_b onto the accumulator's grid
  // (docs/numerics.md, "MAC"): num::shift_rne(p, d) with d = x - e_top + 16
  // (kAccFrac guard bits), i.e. p * 2^d for d >= 0 and RNE(p * 2^d), ties
  // to even, for d < 0, at any distance (from 64 bits down the result is 0:
  // |p| <= 2^63 is at most half a unit there and a tie rounds to even 0).
  // Left shifts wrap modulo 2^64 as the C++'s unsigned shift does; the C++
  // leaves d >= 64 undefined (the engine never asks: e_top >= x so d <= 16),
  // and this gives 0 there.
  function automatic logic signed [63:0] fp_acc_align(logic signed [63:0] p, logic signed [15:0] x,
                                                      logic signed [15:0] e_top);
    exp_t d, s;
    logic neg, guard, rest, up;
    logic [63:0] mag, q;
    logic [5:0] sh;
    d = exp_t'(x) - exp_t'(e_top) + 20'sd16;
    s = -d;
    if (d >= 20'sd64) return '0;  // C++: undefined; never used
    if (d >= 20'sd0) return p <<< d[5:0];
    if (s >= 20'sd64) return '0;
    // Right shift of |p| (p = -2^63 gives 2^63, still 64 bits unsigned).
    neg = p[63];
    mag = neg ? 64'd0 - p : p;
    sh = 6'(s);  // 1 <= s <= 63 here
    q = mag >> sh;
    guard = mag[sh - 6'd1];
    rest = |(mag & ((64'd1 << (sh - 6'd1)) - 64'd1));
    up = guard & (rest | q[0]);
    q = q + {63'd0, up};
    return neg ? 64'd0 - q : q;
  endfunction

  // fp_bfp_quant: one block of the block-floating-point quantiser,
  // exp_q = num::bfp_quantize_block(x, cnt, B, mbits, mant) of
  // golden/numerics/bfp.h (docs/numerics.md, "Block floating point"), for
  // blocks of up to QB elements:
  //   E      = max over the elements i < cnt that are non-zero of
  //            floor(log2|x_i|) (from the bits; subnormals included)
  //   exp_q  = q = E - (mbits - 2), the block's LSB exponent
  //   mant_i = clamp(RNE(x_i / 2^q), +-(2^(mbits-1) - 1)), sign applied after
  // Elements i >= cnt are ignored and get mantissa 0 (so a smaller block is
  // the same call with the rest zero). A block whose counted elements are
  // all zero gives exp_q = kBfpZero (-32768), one holding a NaN or an
  // infinity kBfpPoison (32767); both with every mantissa 0. mbits must lie
  // in [2, 16], cnt in [0, QB] (a larger cnt reads as QB). The C++'s two
  // passes (the block maximum, then the mantissas) are a max tree feeding
  // QB rounding shifters.
  function automatic void fp_bfp_quant(input logic [QB-1:0][31:0] x, input logic [6:0] cnt,
                                       input logic [4:0] mbits, output logic signed [15:0] exp_q,
                                       output logic [QB-1:0][15:0] mant);
    // Per element: the normalised significand sig (leading one in bit 23)
    // and key = E + 150 (1..277) for a counted non-zero finite element, 0
    // otherwise; poison for a counted NaN or infinity.
    logic [QB-1:0][23:0] sig;
    logic [QB-1:0][8:0] key;
    logic [2*QB-2:0][8:0] t;  // the max tree, root t[0]
    logic poison;
    logic [8:0] kmax;
    logic [15:0] lim;  // 2^(mbits-1) - 1
    poison = 1'b0;
    for (int i = 0; i < QB; i++) begin
      logic [4:0] nb;  // bit length of a subnormal's mantissa
      logic act;
      act = 7'(i) < cnt;
      nb = 5'd0;
      for (int j = 0; j < 23; j++)
        if (x[i][j]) nb = 5'(j + 1);
      if (act && x[i][30:23] == 8'hff) poison = 1'b1;
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
    for (int i = 0; i < QB; i++) t[QB - 1 + i] = key[i];
    for (int i = QB - 2; i >= 0; i--) t[i] = (t[2 * i + 1] > t[2 * i + 2]) ? t[2 * i + 1] : t[2 * i + 2];
    kmax = t[0];
    lim = 16'((17'd1 << (mbits - 5'd1)) - 17'd1);
    // q = E - (mbits - 2) = kmax - 150 - mbits + 2; in [-163, 125] for mbits in [2, 16].
    if (poison) exp_q = 16'sh7fff;
    else if (kmax == 9'd0) exp_q = -16'sh8000;
    else exp_q = 16'(exp_t'(kmax) - 20'sd148 - exp_t'(mbits));
    // x_i / 2^q = sig_i * 2^(E_i - 23 - q): a right shift by
    // s_i = (E - E_i) + 25 - mbits >= 9, rounded to nearest even; from 25 on
    // the value is below half a unit and the result 0. The one element that
    // can round up to 2^(mbits-1) saturates to lim.
    for (int i = 0; i < QB; i++) begin
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
      mant[i] = (poison || kmax == 9'd0 || key[i] == 9'd0) ? 16'd0 : (x[i][31] ? 16'd0 - m : m);
    end
  endfunction
  // static_cast<float>(q) for a 32-bit integer: RNE into f32 (exact below 2^24).
  function automatic logic [31:0] int_to_f32(logic signed [31:0] q);
    logic [63:0] mag;
    mag = q[31] ? 64'd0 - 64'(q) : 64'(q);
    return fp_round_pack(q[31], mag, 20'sd0, 1'b0, FMT_F32);  // sig 0 gives +0
  endfunction

  // IEEE binary32 a / b, round to nearest even (C++ a / b on x86 SSE,
  // num::div_rn), subnormals in and out; every NaN result canonical. Both
  // significands are normalised to 24 bits, so the 64-bit quotient of
  // (sa << 40) / sb has 40 or 41 bits, far more than the rounder's guard
  // bit, and a non-zero remainder is the sticky bit. Combinational division
  // keeps the function short; silicon would iterate (one bit a clock) or
  // use a reciprocal table. Used by the DMA engine's INT8 quantiser and the
  // SFU (recip, and the divisions of div_one_plus_exp).
  function automatic logic [31:0] fp_div(logic [31:0] a, logic [31:0] b);
    logic nan_a, nan_b, inf_a, inf_b, zero_a, zero_b, neg;
    logic [23:0] sa, sb;
    logic [63:0] num, q, r;
    exp_t xa, xb;
    nan_a = a[30:23] == 8'hff && a[22:0] != 23'd0;
    nan_b = b[30:23] == 8'hff && b[22:0] != 23'd0;
    inf_a = a[30:23] == 8'hff && a[22:0] == 23'd0;
    inf_b = b[30:23] == 8'hff && b[22:0] == 23'd0;
    zero_a = a[30:0] == 31'd0;
    zero_b = b[30:0] == 31'd0;
    neg = a[31] ^ b[31];
    if (nan_a || nan_b || (inf_a && inf_b) || (zero_a && zero_b)) return NAN_BITS;
    if (inf_a || zero_b) return {neg, INF_MAG};
    if (zero_a || inf_b) return {neg, 31'd0};
    sa = {a[30:23] != 8'd0, a[22:0]};
    sb = {b[30:23] != 8'd0, b[22:0]};
    xa = (a[30:23] == 8'd0) ? -20'sd149 : exp_t'(a[30:23]) - 20'sd150;
    xb = (b[30:23] == 8'd0) ? -20'sd149 : exp_t'(b[30:23]) - 20'sd150;
    for (int i = 0; i < 23; i++)  // subnormals: leading one to bit 23
      if (!sa[23]) begin sa = sa << 1; xa = xa - 20'sd1; end
    for (int i = 0; i < 23; i++)
      if (!sb[23]) begin sb = sb << 1; xb = xb - 20'sd1; end
    num = 64'(sa) << 40;
    q = num / 64'(sb);
    r = num % 64'(sb);
    return fp_round_pack(neg, q, xa - xb - 20'sd40, r != 64'd0, FMT_F32);
  endfunction

  // 1/n of a row of n elements as num::inv_count gives it (recip(float(n)):
  // float(n) exact below 2^24, the quotient correctly rounded). The SFU
  // counts each row's elements and forms this itself (RMS beside its
  // reduction tree, RMSNORM / GTOPK / MAGMATCH in their scalar tails); every
  // n the ISA allows (1 .. 2^24 - 1, a descriptor's 24-bit cols) is checked
  // against the C++ by `n3 cosim --unit sfu-count` (n3_sfu_inv_count).
  function automatic logic [31:0] fp_inv_count(logic [31:0] n);
    return fp_div(32'h3f80_0000, int_to_f32(n));
  endfunction

  // num::rne_to_int of a finite f32 with |v| < 2^30: v rounded to the
  // nearest integer, ties to even (num::shift_rne of its significand).
  function automatic logic signed [31:0] rne_to_int(logic [31:0] v);
    logic [23:0] sig;
    exp_t x;
    logic [5:0] d;
    logic [31:0] q;
    logic guard, rest;
    sig = {v[30:23] != 8'd0, v[22:0]};
    x = (v[30:23] == 8'd0) ? -20'sd149 : exp_t'(v[30:23]) - 20'sd150;
    if (v[30:0] == 31'd0 || x < -20'sd25) q = 32'd0;  // below 1/2 (sig < 2^24): 0
    else if (x >= 20'sd0) q = 32'(sig) << 5'(x);
    else begin
      d = 6'(-x);  // 1..25
      q = 32'(sig) >> d;
      guard = sig[5'(d - 6'd1)];
      rest = |(sig & ((24'd1 << (d - 6'd1)) - 24'd1));
      q = q + {31'd0, guard & (rest | q[0])};
    end
    return v[31] ? 32'd0 - q : q;
  endfunction
endpackage
