// The execution units of the functional simulator, one per engine (the
// control engine lives in FuncSim itself). Each executes one dispatched
// instruction from its resolved operands: it checks shapes and dtypes
// (trapping through FuncSim::trap), reads all its inputs, computes through
// the numerics core, then writes its outputs. docs/isa.md gives the
// semantics; docs/sim.md the unit structure.
#pragma once
#include "sim/func_sim.h"

namespace n3::sim {

void exec_dma(FuncSim& m, const Issued& in);   // MEMCPY, MEMSET
void exec_gemv(FuncSim& m, const Issued& in);  // GEMV (MV, QK, PV) and GEMM (MV)
void exec_sfu(FuncSim& m, const Issued& in);   // CVO

}  // namespace n3::sim
