// n3_fp_to_f32: a stored float element to the f32 the datapath computes
// with, exactly as the simulator's read path does (sim/view.cc read_row):
//   f32:  the 32 bits unchanged (a stored NaN is passed on as it is);
//   bf16: the low 16 bits in the top half (num::bf16_value: NaNs too);
//   f16:  num::f16_value of the low 16 bits: subnormals exact (normalised
//         into f32 normals), +-inf, any NaN -> the canonical NaN.
// fmt 3 (no format) reads as f32. Combinational.
module n3_fp_to_f32 (
  input  logic [31:0] bits,
  input  logic [1:0]  fmt,
  output logic [31:0] y
);
  import n3_fp_pkg::*;

  // f16: the value m * 2^-24 (subnormal) or (1024 + m) * 2^(be - 25); the
  // rounder packs it, exactly (every f16 value is an f32 normal or zero).
  logic [4:0] be;
  logic [9:0] m;
  logic [10:0] sig;
  exp_t exp;
  logic [31:0] h;
  assign be = bits[14:10];
  assign m = bits[9:0];
  assign sig = {be != 5'd0, m};
  assign exp = (be == 5'd0) ? -20'sd24 : exp_t'(be) - 20'sd25;

  n3_fp_round_pack #(.W(11)) u_pack (
    .neg(bits[15]), .sig(sig), .exp(exp), .sticky(1'b0), .fmt(FMT_F32), .y(h)
  );

  always_comb begin
    case (fmt)
      FMT_BF16: y = {bits[15:0], 16'd0};
      FMT_F16:
        if (be == 5'h1f) y = (m != 10'd0) ? NAN_BITS : {bits[15], INF_MAG};
        else y = h;
      default: y = bits;  // FMT_F32
    endcase
  end
endmodule
