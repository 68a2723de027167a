# The GEMV engine (docs/rtl.md, "GEMV engine"): its own sources, then the
# floating-point and BFP leaves of rtl/fp/ (their package first; n3_fp_units
# is the fp unit's own cosim top, not part of the engine). CORES and LANES
# come from the hardware file N3_RTL_HW (rtl_bridge/CMakeLists.txt).
file(GLOB n3_gemv_fp_leaves RELATIVE ${N3_RTL_DIR}/gemv CONFIGURE_DEPENDS ${N3_RTL_DIR}/fp/*.sv)
list(FILTER n3_gemv_fp_leaves EXCLUDE REGEX "n3_fp_pkg\\.sv$|n3_fp_units\\.sv$")
n3_rtl_unit(gemv TOP n3_gemv_engine
  SOURCES ../fp/n3_fp_pkg.sv ${n3_gemv_fp_leaves} n3_gemv_pkg.sv n3_gemv_blocker.sv n3_gemv_core.sv n3_gemv_engine.sv
  PARAMS -GCORES=${N3_RTL_GEMV_CORES} -GLANES=${N3_RTL_GEMV_LANES}
  # Waveforms show the engine and its cores; the hundreds of floating-point
  # leaf instances below them would triple the Verilated C++ and its build.
  --trace-depth 2)
