#include "runtime/device_golden.h"

#include <chrono>
#include <map>

#include "base/error.h"
#include "golden/model.h"
#include "runtime/numerics_select.h"

namespace n3 {

namespace {

class GoldenDevice : public Device {
 public:
  explicit GoldenDevice(const DeviceOptions& opt)
      : hw_(load_hw_config(opt.hw_path)),
        model_(open_weights_for(opt.model, opt.numerics, hw_), make_kernels(opt.numerics, hw_)) {
    kv_policy();  // validate the policy now, not at the cap
  }
  std::string backend() const override { return "golden"; }
  const ModelConfig& config() const override { return model_.config(); }
  const HwConfig& hw() const override { return hw_; }

  int open_sequence() override {
    seqs_.emplace(next_, model_.new_sequence());
    return next_++;
  }
  void close_sequence(int s) override { seqs_.erase(s); }

  Logits prefill(int s, const std::vector<int32_t>& ids, Recorder* rec) override {
    const auto t0 = std::chrono::steady_clock::now();
    Sequence& seq = get(s);
    make_room(seq, ids.size());
    Logits out;
    out.values = model_.forward(seq, ids, Phase::Prefill, rec, /*last_only=*/true);
    finish(t0, ids.size());
    return out;
  }

  Logits decode(const std::vector<int>& seqs, const std::vector<int32_t>& ids, Recorder* rec) override {
    require(seqs.size() == ids.size() && !seqs.empty(), "decode: one id per sequence is required");
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t V = config().vocab;
    Logits out;
    out.values = Tensor({int64_t(seqs.size()), V});
    // The golden backend runs the batch one sequence after another.
    for (size_t i = 0; i < seqs.size(); ++i) {
      Sequence& seq = get(seqs[i]);
      make_room(seq, 1);
      Tensor l = model_.forward(seq, {ids[i]}, Phase::Decode, rec, true);
      std::copy(l.data.begin(), l.data.end(), out.values.row(i));
    }
    finish(t0, seqs.size());
    return out;
  }

  int64_t position(int s) const override { return cget(s).pos; }
  int64_t cached(int s) const override { return cget(s).cached(); }
  const StepTiming& last_timing() const override { return timing_; }

 private:
  Sequence& get(int s) { return const_cast<Sequence&>(cget(s)); }
  const Sequence& cget(int s) const {
    auto it = seqs_.find(s);
    require(it != seqs_.end(), "no open sequence " + std::to_string(s));
    return it->second;
  }
  // Applies the KV policy before `n` new rows are stored.
  void make_room(Sequence& seq, size_t n) {
    const int64_t cap = kv_capacity();
    if (seq.cached() + int64_t(n) <= cap) return;
    require(kv_policy() == KvPolicy::Evict,
            "KV cache full: " + std::to_string(seq.cached()) + " + " + std::to_string(n) +
                " tokens exceed kv.cap_tokens = " + std::to_string(cap) + " of " + hw_.path +
                " (policy 'error'; set kv.policy: evict to slide)");
    const int64_t sinks = kv_sinks();
    require(sinks + int64_t(n) < cap, "KV cache: a chunk of " + std::to_string(n) + " tokens plus " +
                                          std::to_string(sinks) + " sinks does not fit kv.cap_tokens = " +
                                          std::to_string(cap));
    seq.evict(sinks, cap - sinks - int64_t(n), config().kv_dim());
  }
  void finish(std::chrono::steady_clock::time_point t0, size_t tokens) {
    timing_ = StepTiming{};
    timing_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    timing_.tokens = tokens;
  }

  HwConfig hw_;
  GoldenModel model_;
  std::map<int, Sequence> seqs_;
  int next_ = 0;
  StepTiming timing_;
};

}  // namespace

std::unique_ptr<Device> make_golden_device(const DeviceOptions& opt) {
  return std::make_unique<GoldenDevice>(opt);
}

}  // namespace n3
