// Shared definitions of the floating-point and BFP leaves of the GEMV engine
// (docs/rtl.md, "Floating-point and BFP leaves"): the fmt codes, the exponent
// type and the special f32 patterns. The leaves are bit-exact with the
// numerics core (golden/numerics/), which docs/numerics.md specifies.
package n3_fp_pkg;
  // fmt: a float storage format, 2 bits wide, coded as the ISA's dtypes
  // (n3_isa_pkg: DTYPE_F32 = 0, DTYPE_BF16 = 1, DTYPE_F16 = 2). Code 3 is no
  // format; every leaf treats it as f32, as num::spec_of() does.
  localparam logic [1:0] FMT_F32 = 2'(n3_isa_pkg::DTYPE_F32);
  localparam logic [1:0] FMT_BF16 = 2'(n3_isa_pkg::DTYPE_BF16);
  localparam logic [1:0] FMT_F16 = 2'(n3_isa_pkg::DTYPE_F16);

  // Exponents inside the leaves: 20-bit two's complement. The widest range
  // is n3_fp_acc_round's (e_top over all of int16, plus the scale's exponent
  // and an 88-bit significand), within +-2^17.
  typedef logic signed [19:0] exp_t;

  // common.h kNaNBits / kInfBits: every NaN a leaf produces is this one.
  localparam logic [31:0] NAN_BITS = 32'h7fc0_0000;
  localparam logic [30:0] INF_MAG = 31'h7f80_0000;
endpackage
