// Where an RTL MAC engine's w-operand rows come from (the GEMV and GEMM
// drivers, gemv_rtl.h, gemm_rtl.h). The SystemC bridge implements it with
// the weight buffers and DDR model (mac_bridge.h); cosim with everything
// present or random stalls. A driver calls wait_rows from one SC thread of
// its own, with non-decreasing `end`, and consumed_rows from the thread that
// called run(), increasing, as soon as the engine has taken rows [0, end)
// whole into its own storage (before their results).
#pragma once
#include <cstdint>

namespace n3::rtl {

class WeightFeed {
 public:
  virtual ~WeightFeed() = default;
  virtual void wait_rows(int64_t end) = 0;      // blocks the calling SC thread until w rows [0, end) (with their scale records) have landed
  virtual void consumed_rows(int64_t end) = 0;  // the engine is done with w rows [0, end): their buffer space may be reused
};

}  // namespace n3::rtl
