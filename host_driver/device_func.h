// The `func` backend: Gemma 3n compiled to ISA programs (compiler/) and run
// on the functional simulator (sim/). FuncModel is the host side: it owns the
// DDR image (weights, KV rings), selects the program for each chunk length,
// writes the run-time inputs, runs, and records the captured tensors under
// the golden model's names (golden/dump_ops.h).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/layout.h"
#include "compiler/lower.h"
#include "golden/dump.h"
#include "golden/hw_config.h"
#include "golden/weights.h"
#include "host_driver/device.h"
#include "sim/memory.h"

namespace n3 {

comp::HwLimits hw_limits(const HwConfig& hw);

class FuncModel {
 public:
  // max_chunk 0: the largest chunk that fits L2.
  FuncModel(std::shared_ptr<const WeightSource> w, const HwConfig& hw, int max_chunk, bool dump_all);
  ~FuncModel();
  const ModelConfig& config() const { return cfg_; }
  int max_chunk() const { return lay_.max_chunk; }
  // One forward over ids at the current position (T <= max_chunk); returns [T, V] logits.
  Tensor forward(const std::vector<int32_t>& ids, Phase ph, Recorder* rec);
  int64_t position() const { return pos_; }
  void reset() { pos_ = 0; }
  const comp::Compiled& program(int T);

 private:
  std::shared_ptr<const WeightSource> w_;
  ModelConfig cfg_;
  num::Formats f_;
  comp::HwLimits hw_;
  comp::Layout lay_;
  bool dump_all_;
  std::unique_ptr<sim::Memory> mem_;
  std::map<int, comp::Compiled> progs_;
  int64_t pos_ = 0;
};

std::unique_ptr<Device> make_func_device(const DeviceOptions& opt);

}  // namespace n3
