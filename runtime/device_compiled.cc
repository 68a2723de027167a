#include "runtime/device_compiled.h"

#include <algorithm>
#include <map>

#include "base/error.h"
#include "runtime/numerics_select.h"

namespace n3 {

bool is_model_yaml(const std::string& path) {
  auto ends = [&](const std::string& e) {
    return path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

ModelConfig load_model_shapes(const std::string& path) {
  return is_model_yaml(path) ? load_model_config(path) : open_weights(path)->config();
}

std::unique_ptr<CompiledModel> open_compiled_model(const std::string& model, const HwConfig& hw,
                                                   const CompiledOptions& o, bool with_weights) {
  if (with_weights) return std::make_unique<CompiledModel>(open_weights_for(model, "npu", hw), hw, o);
  return std::make_unique<CompiledModel>(load_model_shapes(model), hw, o);
}

namespace {

class CompiledDevice : public Device {
 public:
  CompiledDevice(const DeviceOptions& opt, std::string backend, CompiledModel::Runner runner)
      : Device(opt), backend_(std::move(backend)) {
    require(opt.numerics == "npu", "backend " + backend_ + ": only --numerics npu (the NPU's arithmetic)");
    CompiledOptions co{opt.max_chunk, opt.resident_bytes, opt.dump_all};
    co.evict = kv_policy() == KvPolicy::Evict;
    model_ = open_compiled_model(opt.model, hw_, co, !opt.timing_only);
    if (runner) model_->set_runner(std::move(runner));
    if (kv_policy() == KvPolicy::Evict) {
      const std::string problem = model_->evict_problem(-1);
      require(problem.empty(), hw_.path + ": backend " + backend_ + ": " + problem);
    }
  }
  std::string backend() const override { return backend_; }
  const ModelConfig& config() const override { return model_->config(); }
  const CompiledModel& model() const { return *model_; }

  int open_sequence() override {
    states_[next_] = KvState{};
    return next_++;
  }
  void close_sequence(int s) override {
    states_.erase(s);
    if (s == active_) active_ = -1;
  }
  int64_t position(int s) const override { return s == active_ ? model_->position() : state(s).pos; }
  int64_t cached(int s) const override { return s == active_ ? model_->rows() : state(s).rows; }

 protected:
  // Compiled programs compute every row's logits; the base keeps what it needs.
  Tensor forward(int s, const std::vector<int32_t>& ids, Phase ph, Recorder* rec, bool) override {
    activate(s);
    return model_->forward(ids, ph, rec);
  }
  void evict(int s, int64_t sinks, int64_t recent) override {
    activate(s);
    model_->evict(sinks, recent);
  }
  bool has_sequence(int s) const override { return states_.count(s) > 0; }
  double last_sim_ps() const override { return model_->last_sim_ps(); }

 private:
  const KvState& state(int s) const {
    auto it = states_.find(s);
    require(it != states_.end(), "backend " + backend_ + ": no open sequence " + std::to_string(s));
    return it->second;
  }
  // Puts sequence s's KV state into the image, saving the one there.
  void activate(int s) {
    if (s == active_) return;
    if (active_ >= 0) model_->save_kv(&states_.at(active_));
    KvState& st = states_.at(s);
    model_->load_kv(st);
    st.rings = {};  // the image holds them now
    active_ = s;
  }

  std::string backend_;
  std::unique_ptr<CompiledModel> model_;
  std::map<int, KvState> states_;
  int next_ = 0, active_ = -1;
};

}  // namespace

std::unique_ptr<Device> make_func_device(const DeviceOptions& opt) {
  require(!opt.timing_only, "backend func: --timing-only needs the SystemC timing model (--backend systemc)");
  return std::make_unique<CompiledDevice>(opt, "func", nullptr);
}

std::unique_ptr<Device> make_compiled_device(const DeviceOptions& opt, const std::string& backend,
                                             CompiledModel::Runner runner) {
  return std::make_unique<CompiledDevice>(opt, backend, std::move(runner));
}

}  // namespace n3
