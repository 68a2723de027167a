// The compiled backends behind the Device API: `func` runs the compiled
// programs on the functional simulator, `systemc` on the SystemC timing
// model (runtime/device_systemc.h supplies its runner). Both are one class
// over a CompiledModel (runtime/compiled_model.h).
//
// Several sequences share the one DDR image by swapping: each sequence's KV
// rings are saved to host memory when another sequence runs and written back
// before it runs again (docs/runtime.md), so a batch gives each sequence the
// ids it gives alone.
#pragma once
#include <memory>
#include <string>

#include "runtime/compiled_model.h"
#include "runtime/device.h"

namespace n3 {

// True for a model YAML (shapes only, no weights).
bool is_model_yaml(const std::string& path);
// The model's shapes from a model YAML, a checkpoint directory or an .n3w file.
ModelConfig load_model_shapes(const std::string& path);
// `model` compiled for `hw`: with its weights (quantised as the hardware
// file's numerics say, checked against it), or with its shapes only.
std::unique_ptr<CompiledModel> open_compiled_model(const std::string& model, const HwConfig& hw,
                                                   const CompiledOptions& o, bool with_weights);

std::unique_ptr<Device> make_func_device(const DeviceOptions& opt);
// The compiled model on the runner a backend supplies; last_timing() carries
// its simulated time.
std::unique_ptr<Device> make_compiled_device(const DeviceOptions& opt, const std::string& backend,
                                             CompiledModel::Runner runner);

}  // namespace n3
