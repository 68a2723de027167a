#include <algorithm>
#include <chrono>
#include <map>

#include "base/error.h"
#include "gpu_reference/device_cuda.h"
#include "gpu_reference/model_cuda.h"
#include "runtime/numerics_select.h"

namespace n3 {

namespace {

class CudaDevice : public Device {
 public:
  explicit CudaDevice(const DeviceOptions& opt) : hw_(load_hw_config(opt.hw_path)) {
    const std::string problem = gpu::cuda_problem();
    require(problem.empty(), "backend 'cuda': " + problem);
    kv_policy();  // validate the policy now, not at the cap
    model_ = std::make_unique<gpu::CudaModel>(open_weights_for(opt.model, opt.numerics), opt.numerics, hw_);
  }
  std::string backend() const override { return "cuda"; }
  const ModelConfig& config() const override { return model_->config(); }
  const HwConfig& hw() const override { return hw_; }

  int open_sequence() override { return model_->new_sequence(); }
  void close_sequence(int s) override { model_->free_sequence(s); }

  // With a recorder that wants logits, every prompt row's logits are
  // computed and recorded (as `n3 golden` dumps them); the last is returned.
  Logits prefill(int s, const std::vector<int32_t>& ids, Recorder* rec) override {
    const auto t0 = std::chrono::steady_clock::now();
    make_room(s, ids.size());
    const bool all_rows = rec && rec->wants(Op::Logits);
    Tensor l = model_->forward(s, ids, Phase::Prefill, rec, !all_rows);
    Logits out;
    const int64_t V = l.shape[1], last = l.shape[0] - 1;
    out.values = Tensor({1, V}, std::vector<float>(l.row(last), l.row(last) + V));
    finish(t0, ids.size());
    return out;
  }

  Logits decode(const std::vector<int>& seqs, const std::vector<int32_t>& ids, Recorder* rec) override {
    require(seqs.size() == ids.size() && !seqs.empty(), "decode: one id per sequence is required");
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t V = config().vocab;
    Logits out;
    out.values = Tensor({int64_t(seqs.size()), V});
    // Sequences run one after another, each a replay of its decode graph.
    for (size_t i = 0; i < seqs.size(); ++i) {
      make_room(seqs[i], 1);
      Tensor l = model_->forward(seqs[i], {ids[i]}, Phase::Decode, rec, true);
      std::copy(l.data.begin(), l.data.end(), out.values.row(i));
    }
    finish(t0, seqs.size());
    return out;
  }

  int64_t position(int s) const override { return model_->position(s); }
  int64_t cached(int s) const override { return model_->cached(s); }
  const StepTiming& last_timing() const override { return timing_; }

 private:
  // The KV policy of the golden device (device_golden.cc), on the GPU cache.
  void make_room(int s, size_t n) {
    const int64_t cap = kv_capacity(), have = model_->cached(s);
    if (have + int64_t(n) <= cap) return;
    require(kv_policy() == KvPolicy::Evict, "KV cache full: " + std::to_string(have) + " + " + std::to_string(n) +
                                                " tokens exceed kv.cap_tokens = " + std::to_string(cap) + " of " +
                                                hw_.path + " (policy 'error'; set kv.policy: evict to slide)");
    const int64_t sinks = kv_sinks();
    require(sinks + int64_t(n) < cap, "KV cache: a chunk of " + std::to_string(n) + " tokens plus " +
                                          std::to_string(sinks) +
                                          " sinks does not fit kv.cap_tokens = " + std::to_string(cap));
    model_->evict(s, sinks, cap - sinks - int64_t(n));
  }
  void finish(std::chrono::steady_clock::time_point t0, size_t tokens) {
    timing_ = StepTiming{};
    timing_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    timing_.tokens = tokens;
  }

  HwConfig hw_;
  std::unique_ptr<gpu::CudaModel> model_;
  StepTiming timing_;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(const DeviceOptions& opt) { return std::make_unique<CudaDevice>(opt); }

}  // namespace n3
