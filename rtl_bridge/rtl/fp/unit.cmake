# The floating-point and BFP leaves of the GEMV engine (docs/rtl.md,
# "Floating-point and BFP leaves"): combinational, bit-exact with the
# numerics core; n3_fp_units puts them side by side for `n3 cosim --unit fp`.
n3_rtl_unit(fp TOP n3_fp_units SOURCES
  n3_fp_pkg.sv
  n3_fp_round_pack.sv
  n3_fp_acc_round.sv
  n3_acc_align.sv
  n3_fp_mul.sv
  n3_fp_add.sv
  n3_fp_round_fmt.sv
  n3_fp_to_f32.sv
  n3_bfp_quant.sv
  n3_fp_units.sv)
