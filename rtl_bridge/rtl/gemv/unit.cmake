# The GEMV engine (docs/rtl_gemv.md, "GEMV engine"): the floating-point and BFP
# leaves (rtl/fp/n3_fp_pkg.sv, functions), then its own sources. CORES and
# LANES come from the hardware file N3_RTL_HW (rtl_bridge/CMakeLists.txt).
set(n3_gemv_sources ../fp/n3_fp_pkg.sv n3_gemv_pkg.sv n3_gemv_blocker.sv n3_gemv_core.sv n3_gemv_engine.sv)
# Verilator unrolls loops of up to 64 iterations by default; the per-lane
# loops that write the weight buffer must unroll (a delayed assignment to an
# array in a loop that is not is an error), so from 128 lanes it is told to.
function(n3_gemv_unroll lanes out)
  set(${out} "" PARENT_SCOPE)
  if(lanes GREATER 64)
    math(EXPR n "2 * ${lanes}")
    set(${out} --unroll-count ${n} PARENT_SCOPE)
  endif()
endfunction()
n3_gemv_unroll(${N3_RTL_GEMV_LANES} n3_gemv_unroll_args)
n3_rtl_unit(gemv TOP n3_gemv_engine
  SOURCES ${n3_gemv_sources}
  PARAMS -GCORES=${N3_RTL_GEMV_CORES} -GLANES=${N3_RTL_GEMV_LANES} ${n3_gemv_unroll_args}
  # Waveforms show the engine and its cores (their state and ports), not
  # the blockers' staging: keeps the traced C++ and its build small.
  --trace-depth 2)
# The engine lints clean at every shipped design point, not only the one
# built: RtlLint.gemv_at_<file> lints it with the cores and lanes of
# configs/hw/<file>.yaml (lint only; simulated at the built point).
function(n3_gemv_lint_at hw)
  set(N3_RTL_HW ${CMAKE_SOURCE_DIR}/configs/hw/${hw}.yaml)  # this function's scope only
  n3_rtl_hw_value(gemv_cores cores)
  n3_rtl_hw_value(gemv_macs_per_clk lanes)
  n3_gemv_unroll(${lanes} unroll)
  set(files ${n3_gemv_sources})
  list(TRANSFORM files PREPEND ${N3_RTL_DIR}/gemv/)
  set(args n3_gemv_engine -GCORES=${cores} -GLANES=${lanes} ${unroll} ${N3_ISA_GEN_DIR}/n3_isa_pkg.sv ${files})
  string(REPLACE "-" "_" tag "${hw}")
  string(REPLACE ";" "|" joined "${args}")
  set_property(GLOBAL APPEND PROPERTY N3_RTL_UNITS "gemv_at_${tag}=${joined}")
endfunction()
n3_gemv_lint_at(lpddr5x-edge)
n3_gemv_lint_at(hbm-server)
