// The DMA engine's element conversions (docs/rtl.md, "DMA engine"): what
// MEMCPY / MEMSET do to one element (sim/exec_dma.cc through sim/view.cc
// read_row / write_row / dequant and golden/numerics/formats.h), as
// combinational functions. Every rounding goes through n3_fp_pkg's one
// rounder (fp_round_pack, fp_round_fmt, fp_mul); this package adds only
// what the GEMV engine did not need: the correctly rounded division of the
// INT8 quantiser (num::div_rn), the integer conversions (static_cast<float>,
// num::rne_to_int) and the f16 encoding (num::f16_bits). Functions, not
// modules, for the reason n3_fp_pkg's header gives: the engine calls each in
// the branch of the conversion that needs it.
package n3_dma_pkg;
  import n3_fp_pkg::*;

  // Job kinds (the command's cmd_kind), cut by the driver from one
  // MEMCPY / MEMSET (rtl_bridge/dma_rtl.cc).
  localparam logic [1:0] JK_COPY = 2'd0;   // src elements -> dst elements (bits copied or converted)
  localparam logic [1:0] JK_QUANT = 2'd1;  // one INT8 scale group: float src -> codes, then the scale
  localparam logic [1:0] JK_FILL = 2'd2;   // MEMSET: the constant into every dst element

  localparam logic [31:0] F32_127 = 32'h42fe_0000;  // 127.0f, int8_scale's divisor

  function automatic logic is_float_dt(logic [3:0] t);
    return t == 4'(n3_isa_pkg::DTYPE_F32) || t == 4'(n3_isa_pkg::DTYPE_BF16) || t == 4'(n3_isa_pkg::DTYPE_F16);
  endfunction

  // Width of a stored element in nibbles (INT4 1, INT8 2, 16-bit 4, 32-bit 8).
  function automatic logic [3:0] elem_nibbles(logic [3:0] t);
    case (t)
      4'(n3_isa_pkg::DTYPE_INT4): return 4'd1;
      4'(n3_isa_pkg::DTYPE_INT8): return 4'd2;
      4'(n3_isa_pkg::DTYPE_BF16), 4'(n3_isa_pkg::DTYPE_F16): return 4'd4;
      default: return 4'd8;
    endcase
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
  // use a reciprocal table for the quantiser's two divisions.
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

  // num::int8_scale: NaN for a group holding NaN or infinity, 0 for an
  // all-zero group, else max|x| / 127 (RNE; 0 where it underflows).
  function automatic logic [31:0] int8_scale(logic [31:0] amax, logic bad);
    if (bad) return NAN_BITS;
    if (amax[30:0] == 31'd0) return 32'd0;
    return fp_div(amax, F32_127);
  endfunction

  // num::int8_code: 0 unless s > 0, else clamp(RNE(x / s), -127, 127), the
  // quotient rounded to f32 first (two roundings, as the C++ does).
  function automatic logic [7:0] int8_code(logic [31:0] x, logic [31:0] s);
    logic signed [31:0] v;
    if (s[31] || s[30:0] == 31'd0 || (s[30:23] == 8'hff && s[22:0] != 23'd0)) return 8'd0;
    v = rne_to_int(fp_div(x, s));
    if (v > 32'sd127) return 8'sd127;
    if (v < -32'sd127) return -8'sd127;
    return 8'(v);
  endfunction

  // num::f16_bits of a value already in f16 (fp_round_fmt(x, FMT_F16)):
  // the re-encoding of an f32 pattern that holds an f16 value, no rounding.
  function automatic logic [15:0] f16_encode(logic [31:0] v);
    logic [23:0] sig;
    exp_t e;
    if (v[30:23] == 8'hff) return (v[22:0] != 23'd0) ? 16'h7e00 : {v[31], 15'h7c00};
    if (v[30:0] == 31'd0) return {v[31], 15'd0};
    sig = {1'b1, v[22:0]};  // every non-zero f16 value is an f32 normal
    e = exp_t'(v[30:23]) - 20'sd127;
    if (e < -20'sd14) return {v[31], 15'(sig >> 5'(-20'sd1 - e))};  // subnormal: v / 2^-24
    return {v[31], 5'(e + 20'sd15), sig[22:13]};
  endfunction

  // What write_row stores for value x in a float dtype, in the element's low
  // bits: round_to(fmt, x) (f32: canonical NaN), bf16 its top half, f16
  // re-encoded.
  function automatic logic [31:0] store_float(logic [31:0] x, logic [3:0] t);
    logic [31:0] r;
    r = fp_round_fmt(x, 2'(t));
    case (t)
      4'(n3_isa_pkg::DTYPE_BF16): return {16'd0, r[31:16]};
      4'(n3_isa_pkg::DTYPE_F16): return {16'd0, f16_encode(r)};
      default: return r;
    endcase
  endfunction

  // read_row's value of stored element `raw` of a float, INT32 or scaled
  // INT4 / INT8 dtype: float formats exactly (fp_to_f32), INT32 RNE to f32,
  // scaled integers as sim::dequant: q * scale in f32 (fp_mul, NaN
  // canonical), TWO_LEVEL (q * block) * row_scale with the integer product
  // exact.
  function automatic logic [31:0] load_value(logic [31:0] raw, logic [3:0] t, logic [1:0] smode, logic [31:0] scale,
                                             logic [7:0] block);
    logic signed [31:0] q;
    case (t)
      4'(n3_isa_pkg::DTYPE_INT32): return int_to_f32(raw);
      4'(n3_isa_pkg::DTYPE_INT4), 4'(n3_isa_pkg::DTYPE_INT8): begin
        q = (t == 4'(n3_isa_pkg::DTYPE_INT4)) ? 32'(signed'(raw[3:0])) : 32'(signed'(raw[7:0]));
        if (smode == 2'(n3_isa_pkg::SCALE_MODE_TWO_LEVEL)) q = q * 32'(signed'({1'b0, block}));
        return fp_mul(int_to_f32(q), scale);
      end
      default: return fp_to_f32(raw, 2'(t));
    endcase
  endfunction
endpackage
