# The floating-point and BFP leaves of the GEMV engine (docs/rtl_fp.md,
# "Floating-point and BFP leaves"): combinational functions of n3_fp_pkg,
# bit-exact with the numerics core; n3_fp_units puts them side by side for
# `n3 cosim --unit fp`.
n3_rtl_unit(fp TOP n3_fp_units SOURCES n3_fp_pkg.sv n3_fp_units.sv)
