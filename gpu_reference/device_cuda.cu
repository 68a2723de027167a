#include "gpu_reference/device_cuda.h"

#include <set>

#include "base/error.h"
#include "gpu_reference/model_cuda.h"
#include "runtime/numerics_select.h"

namespace n3 {

namespace {

// The argument checks, KV policy, batching and timing are the Device base's
// (runtime/device.cc); this backend runs one sequence's forward on the GPU.
class CudaDevice : public Device {
 public:
  explicit CudaDevice(const DeviceOptions& opt) : Device(opt) {
    const std::string problem = gpu::cuda_problem();
    require(problem.empty(), "backend 'cuda': " + problem);
    // The same weights check as every backend: the hardware file decides the INT4 scale layout.
    model_ = std::make_unique<gpu::CudaModel>(open_weights_for(opt.model, opt.numerics, hw_), opt.numerics, hw_);
  }
  std::string backend() const override { return "cuda"; }
  const ModelConfig& config() const override { return model_->config(); }

  int open_sequence() override {
    const int s = model_->new_sequence();
    open_.insert(s);
    return s;
  }
  void close_sequence(int s) override {
    if (open_.erase(s)) model_->free_sequence(s);
  }
  int64_t position(int s) const override { return model_->position(s); }
  int64_t cached(int s) const override { return model_->cached(s); }

 protected:
  // Single-token steps without a recorder replay the sequence's decode graph.
  Tensor forward(int s, const std::vector<int32_t>& ids, Phase ph, Recorder* rec, bool last_only) override {
    return model_->forward(s, ids, ph, rec, last_only);
  }
  void evict(int s, int64_t sinks, int64_t recent) override { model_->evict(s, sinks, recent); }
  bool has_sequence(int s) const override { return open_.count(s) > 0; }

 private:
  std::unique_ptr<gpu::CudaModel> model_;
  std::set<int> open_;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(const DeviceOptions& opt) { return std::make_unique<CudaDevice>(opt); }

}  // namespace n3
