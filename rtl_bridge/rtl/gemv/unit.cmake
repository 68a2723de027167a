# The GEMV engine (docs/rtl_gemv.md, "GEMV engine"): the floating-point and BFP
# leaves (rtl/fp/n3_fp_pkg.sv, functions), then its own sources. CORES and
# LANES come from the hardware file N3_RTL_HW (rtl_bridge/CMakeLists.txt).
n3_rtl_unit(gemv TOP n3_gemv_engine
  SOURCES ../fp/n3_fp_pkg.sv n3_gemv_pkg.sv n3_gemv_blocker.sv n3_gemv_core.sv n3_gemv_engine.sv
  PARAMS -GCORES=${N3_RTL_GEMV_CORES} -GLANES=${N3_RTL_GEMV_LANES}
  # Waveforms show the engine and its cores (their state and ports), not
  # the blockers' staging: keeps the traced C++ and its build small.
  --trace-depth 2)
