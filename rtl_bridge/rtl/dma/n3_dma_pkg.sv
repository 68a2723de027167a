// The DMA engine's element conversions (docs/rtl_dma.md): what
// MEMCPY / MEMSET do to one element (sim/exec_dma.cc through sim/view.cc
// read_row / write_row / dequant and golden/numerics/formats.h), as
// combinational functions. Every rounding goes through n3_fp_pkg's one
// rounder (fp_round_pack, fp_round_fmt, fp_mul); this package adds only
// what the GEMV engine did not need: the f16 encoding (num::f16_bits) and
// the INT8 quantiser's pieces (the correctly rounded division fp_div and the
// integer conversions int_to_f32 / rne_to_int are n3_fp_pkg's, shared with
// the SFU). Functions, not
// modules, for the reason n3_fp_pkg's header gives: the engine calls each in
// the branch of the conversion that needs it.
package n3_dma_pkg;
  import n3_fp_pkg::*;

  // Job kinds (n3_dma_core's cmd_kind), cut by the walk (n3_dma_walk)
  // from one MEMCPY / MEMSET.
  localparam logic [1:0] JK_COPY = 2'd0;   // src elements -> dst elements (bits copied or converted)
  localparam logic [1:0] JK_QUANT = 2'd1;  // one INT8 scale group: float src -> codes, then the scale
  localparam logic [1:0] JK_FILL = 2'd2;   // MEMSET: the constant into every dst element

  // Engine addresses: {space, 40-bit byte address}; the bridge maps spaces.
  localparam int DMA_AW = 48;

  // One job, cut by the walk (n3_dma_walk) and queued by the core
  // (n3_dma_core): its command port and its queue entry, declared once.
  typedef struct packed {
    logic [1:0] kind;               // JK_*
    logic [1:0] smode;              // src scale mode (INT4 / INT8 sources of a conversion)
    logic [3:0] sdt;                // src dtype (n3_isa_pkg dtype code)
    logic [3:0] ddt;                // dst dtype; equal to sdt: bits copied
    logic [31:0] n;                 // elements, >= 1
    logic [31:0] konst;             // JK_FILL: f32 or INT32 bits
    logic [DMA_AW-1:0] saddr;       // byte address of the first src element
    logic [DMA_AW-1:0] scaddr;      // the f32 scale of the run (ROW / GROUP / TWO_LEVEL row scale)
    logic [DMA_AW-1:0] bkaddr;      // TWO_LEVEL: the run's 8-bit block scale
    logic [DMA_AW-1:0] daddr;       // byte address of the first dst element
    logic [DMA_AW-1:0] qaddr;       // JK_QUANT: where the group's f32 scale goes
    logic snib;                     // INT4: the first element is the byte's high nibble
  } dma_job_t;

  // log2 of an element's width in nibbles (1, 2, 4 or 8): widths and column
  // offsets divide and multiply by shifts.
  function automatic logic [1:0] nibbles_log2(logic [3:0] nib);
    case (nib)
      4'd1: return 2'd0;
      4'd2: return 2'd1;
      4'd4: return 2'd2;
      default: return 2'd3;
    endcase
  endfunction

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
