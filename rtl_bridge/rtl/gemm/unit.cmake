# The GEMM engine (docs/rtl_gemm.md): the floating-point and BFP leaves and
# the GEMV engine's blocker and codes (the activation quantiser is the same),
# then the array. ROWS, COLS and MPE come from the hardware file N3_RTL_HW,
# or from N3_RTL_GEMM_ROWS / _COLS (rtl_bridge/CMakeLists.txt) for a small
# array that simulates faster.
n3_rtl_unit(gemm TOP n3_gemm_engine
  SOURCES ../fp/n3_fp_pkg.sv ../gemv/n3_gemv_pkg.sv ../gemv/n3_gemv_blocker.sv n3_gemm_engine.sv
  PARAMS -GROWS=${N3_RTL_GEMM_ROWS} -GCOLS=${N3_RTL_GEMM_COLS} -GMPE=${N3_RTL_GEMM_MPE}
  --trace-depth 1)
