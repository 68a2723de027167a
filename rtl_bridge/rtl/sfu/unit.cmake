# The SFU (docs/rtl_sfu.md, "SFU element pipeline", "SFU row operators"): the element-wise CVO
# functions as step programs (n3_sfu_pkg.sv) over n3_fp_pkg's f32 functions,
# the fused row operators' passes, element programs and scalar tails
# (n3_sfu_row_pkg.sv),
# LANES elements a clock. LANES comes from the hardware file N3_RTL_HW
# (compute.sfu_elems_per_clk, rtl_bridge/CMakeLists.txt).
n3_rtl_unit(sfu TOP n3_sfu
  SOURCES ../fp/n3_fp_pkg.sv n3_sfu_pkg.sv n3_sfu_row_pkg.sv n3_sfu.sv
  PARAMS -GLANES=${N3_RTL_SFU_LANES})
# The SFU's 1/n of a row (n3_fp_pkg::fp_inv_count) on ports, for the
# exhaustive `n3 cosim --unit sfu-count`.
n3_rtl_unit(sfu_count DIR sfu TOP n3_sfu_inv_count
  SOURCES ../fp/n3_fp_pkg.sv n3_sfu_inv_count.sv)
