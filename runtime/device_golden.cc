#include "runtime/device_golden.h"

#include <map>

#include "base/error.h"
#include "golden/model.h"
#include "runtime/numerics_select.h"

namespace n3 {

namespace {

class GoldenDevice : public Device {
 public:
  explicit GoldenDevice(const DeviceOptions& opt)
      : Device(opt), model_(open_weights_for(opt.model, opt.numerics, hw_), make_kernels(opt.numerics, hw_)) {}
  std::string backend() const override { return "golden"; }
  const ModelConfig& config() const override { return model_.config(); }

  int open_sequence() override {
    seqs_.emplace(next_, model_.new_sequence());
    return next_++;
  }
  void close_sequence(int s) override { seqs_.erase(s); }
  int64_t position(int s) const override { return get(s).pos; }
  int64_t cached(int s) const override { return get(s).cached(); }

 protected:
  Tensor forward(int s, const std::vector<int32_t>& ids, Phase ph, Recorder* rec, bool last_only) override {
    return model_.forward(get(s), ids, ph, rec, last_only);
  }
  void evict(int s, int64_t sinks, int64_t recent) override { get(s).evict(sinks, recent, config().kv_dim()); }
  bool has_sequence(int s) const override { return seqs_.count(s) > 0; }

 private:
  Sequence& get(int s) { return const_cast<Sequence&>(static_cast<const GoldenDevice*>(this)->get(s)); }
  const Sequence& get(int s) const {
    auto it = seqs_.find(s);
    require(it != seqs_.end(), "backend golden: no open sequence " + std::to_string(s));
    return it->second;
  }

  GoldenModel model_;
  std::map<int, Sequence> seqs_;
  int next_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_golden_device(const DeviceOptions& opt) {
  return std::make_unique<GoldenDevice>(opt);
}

}  // namespace n3
