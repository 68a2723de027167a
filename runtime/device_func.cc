#include "runtime/device_func.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "compiler/lower.h"
#include "compiler/residency.h"
#include "golden/dump_ops.h"
#include "base/error.h"
#include "runtime/numerics_select.h"
#include "sim/func_sim.h"

namespace n3 {

namespace {

// Golden shape of a captured tensor (captures are [rows, cols] views).
Shape golden_shape(Op op, const ModelConfig& c, int64_t T, int64_t rows, int64_t cols) {
  const int64_t S = c.altup_streams;
  switch (op) {
    case Op::PerLayerInputs: return {T, c.layers, c.pl_dim};
    case Op::AltupIn: case Op::Pred: case Op::Corr: case Op::LayerOut: case Op::Unembed: return {S, T, c.hidden};
    case Op::AttnQ: return {T, c.q_heads, c.head_dim};
    case Op::AttnK: case Op::AttnV: return {T, c.kv_heads, c.head_dim};
    default: return {rows, cols};
  }
}

// The model's memory lives in FuncModel between programs; each program's
// simulator borrows it for its run.
struct Restore {
  sim::FuncSim& s;
  sim::Memory& m;
  ~Restore() { std::swap(s.memory(), m); }
};

bool parse_capture(const std::string& name, Op* op, int* layer) {
  std::string rest = name;
  *layer = -1;
  if (name.rfind("layers.", 0) == 0) {
    const size_t dot = name.find('.', 7);
    *layer = std::stoi(name.substr(7, dot == std::string::npos ? std::string::npos : dot - 7));
    rest = dot == std::string::npos ? "" : name.substr(dot + 1);
  }
  for (int i = 0; i < int(Op::kCount); ++i) {
    const OpDef& d = op_def(Op(i));
    if ((d.scope == OpScope::Layer) == (*layer >= 0) && rest == d.name) {
      *op = Op(i);
      return true;
    }
  }
  return false;
}

}  // namespace

comp::HwLimits hw_limits(const HwConfig& hw) {
  comp::HwLimits h;
  h.ddr = uint64_t(hw.memory.ddr_bytes.value);
  h.l2 = uint64_t(hw.memory.l2_bytes.value);
  h.wbuf = uint64_t(hw.weight_buffer_bytes());
  h.kv_cap = hw.kv.cap_tokens.value;
  h.ddr_latency_bytes = hw.ddr_latency_bytes();
  return h;
}

FuncModel::FuncModel(std::shared_ptr<const WeightSource> w, const HwConfig& hw, int max_chunk, bool dump_all,
                     int64_t resident_bytes)
    : w_(std::move(w)), cfg_(w_->config()), f_(hw.numerics.formats), hw_(hw_limits(hw)), dump_all_(dump_all) {
  plan(max_chunk, resident_bytes);
  sim::SpaceMemory& ddr = mem_->space(isa::Space::DDR);
  comp::write_weights(lay_, *w_, cfg_, [&](uint64_t a, const void* p, uint64_t n) { ddr.write(a, p, n); });
}

FuncModel::FuncModel(const ModelConfig& cfg, const HwConfig& hw, int max_chunk, int64_t resident_bytes)
    : cfg_(cfg), f_(hw.numerics.formats), hw_(hw_limits(hw)), dump_all_(false) {
  plan(max_chunk, resident_bytes);
}

void FuncModel::plan(int max_chunk, int64_t resident_bytes) {
  const int fit = comp::largest_chunk(cfg_, f_, hw_);  // larger chunks spill activations to DDR
  lay_ = comp::plan_layout(cfg_, f_, hw_, max_chunk > 0 ? max_chunk : fit);
  sizes_ = comp::chunk_sizes(lay_.max_chunk);
  comp::ResidencyOptions ro;
  ro.max_bytes = resident_bytes;
  require(lay_.ddr_end <= hw_.ddr, "func: the DDR image needs " + std::to_string(lay_.ddr_end) +
                                       " bytes, more than the hardware's " + std::to_string(hw_.ddr));
  comp::plan_residency(lay_, cfg_, f_, hw_, ro);
  sim::Capacities caps{hw_.ddr, hw_.l2, hw_.wbuf};
  mem_ = std::make_unique<sim::Memory>(caps);
}

FuncModel::~FuncModel() = default;

void FuncModel::seek(int64_t pos) {
  require(timing_only(), "func: only a timing-only model may seek (a real one needs the KV contents)");
  require(pos >= 0 && pos < hw_.kv_cap, "func: position " + std::to_string(pos) + " outside the KV cap of " +
                                            std::to_string(hw_.kv_cap) + " tokens");
  pos_ = pos;
}

sim::SimOptions FuncModel::sim_options() const {
  sim::SimOptions opt;
  opt.formats = f_;
  opt.caps = {hw_.ddr, hw_.l2, hw_.wbuf};
  opt.effects = !timing_only();
  opt.capture_all = dump_all_;
  return opt;
}

const comp::Compiled& FuncModel::program(int T) {
  require(std::find(sizes_.begin(), sizes_.end(), T) != sizes_.end(),
          "func: no program for " + std::to_string(T) + " tokens (the set is the largest chunk and the powers of two below it)");
  auto it = progs_.find(T);
  if (it != progs_.end()) return it->second;
  comp::CompileOptions o;
  o.tokens = T;
  return progs_.emplace(T, comp::compile_forward(cfg_, lay_, f_, hw_, o)).first->second;
}

Tensor FuncModel::forward(const std::vector<int32_t>& ids, Phase ph, Recorder* rec) {
  const int64_t T = int64_t(ids.size());
  require(T >= 1 && T <= lay_.max_chunk, "func: chunk of " + std::to_string(T) + " tokens (max " +
                                             std::to_string(lay_.max_chunk) + ")");
  const std::vector<int> parts = comp::cover(int(T), sizes_);
  if (parts.size() == 1) return forward_program(ids, ph, rec);
  Tensor logits({T, cfg_.vocab});
  double ps = 0;
  size_t at = 0;
  for (int n : parts) {
    const Tensor l = forward_program(std::vector<int32_t>(ids.begin() + long(at), ids.begin() + long(at) + n), ph, rec);
    std::memcpy(logits.row(int64_t(at)), l.ptr(), size_t(n) * size_t(cfg_.vocab) * 4);
    ps += last_sim_ps_ < 0 ? 0 : last_sim_ps_;
    at += size_t(n);
  }
  if (last_sim_ps_ >= 0) last_sim_ps_ = ps;
  return logits;
}

Tensor FuncModel::forward_program(const std::vector<int32_t>& ids, Phase ph, Recorder* rec) {
  const int64_t T = int64_t(ids.size());
  for (int32_t id : ids) require(id >= 0 && id < cfg_.vocab, "func: token id " + std::to_string(id) + " out of range");
  require(pos_ + T <= hw_.kv_cap, "func: the sequence would pass the KV cap of " + std::to_string(hw_.kv_cap) + " tokens");
  if (!lay_.resident.empty() && !preload_) {  // once, before the first forward program
    preload_ = std::make_unique<comp::Compiled>(comp::compile_preload(lay_, hw_));
    sim::FuncSim s(preload_->program, sim_options());
    std::swap(s.memory(), *mem_);
    const Restore back{s, *mem_};
    if (runner_) {
      load_sim_ps_ = runner_(s, *preload_);
    } else {
      s.run();
    }
  }
  const comp::Compiled& c = program(int(T));
  sim::FuncSim s(c.program, sim_options());
  std::swap(s.memory(), *mem_);
  const Restore restore{s, *mem_};
  // Run-time inputs: pos0, positions[T], ids[T].
  sim::SpaceMemory& ddr = s.memory().space(isa::Space::DDR);
  const std::vector<int32_t> in = comp::input_words(lay_, pos_, ids);
  ddr.write(lay_.input, in.data(), in.size() * 4);
  if (runner_) {
    last_sim_ps_ = runner_(s, c);
  } else {
    s.run();
    last_sim_ps_ = -1;
  }
  Tensor logits({T, cfg_.vocab});
  ddr.read(lay_.logits, logits.ptr(), uint64_t(T * cfg_.vocab) * 4);
  pos_ += T;
  if (rec && !timing_only())
    for (const sim::Capture& cap : s.captures()) {
      Op op;
      int layer;
      if (!parse_capture(cap.name, &op, &layer) || !rec->wants(op)) continue;
      rec->record(ph, op, layer, golden_shape(op, cfg_, T, cap.rows, cap.cols), cap.data.data(),
                  cap.native_dtype == "f32" ? "float32" : cap.native_dtype == "bf16" ? "bfloat16" : cap.native_dtype);
    }
  return logits;
}

namespace {

// One sequence at a time: the DDR image holds one set of KV rings. The
// backend name prefixes its messages; the runner decides which simulator
// executes the programs (func: the functional simulator; systemc: the timing
// model, whose simulated time last_timing() reports).
class FuncDevice : public Device {
 public:
  FuncDevice(const DeviceOptions& opt, std::string backend, FuncModel::Runner runner)
      : hw_(load_hw_config(opt.hw_path)), backend_(std::move(backend)) {
    require(opt.numerics == "npu", "backend " + backend_ + ": only --numerics npu (the NPU's arithmetic)");
    model_ = std::make_unique<FuncModel>(open_weights_for(opt.model, "npu", hw_), hw_, 0, opt.dump_all);
    if (runner) model_->set_runner(std::move(runner));
  }
  std::string backend() const override { return backend_; }
  const ModelConfig& config() const override { return model_->config(); }
  const HwConfig& hw() const override { return hw_; }
  int open_sequence() override {
    require(open_ < 0, "backend " + backend_ + ": one sequence at a time (the DDR image holds one KV ring set)");
    model_->reset();
    open_ = next_++;
    return open_;
  }
  void close_sequence(int s) override {
    if (s == open_) open_ = -1;
  }
  Logits prefill(int s, const std::vector<int32_t>& ids, Recorder* rec) override {
    check(s);
    const auto t0 = std::chrono::steady_clock::now();
    Tensor last;
    const size_t step = size_t(model_->max_chunk());
    double sim_ps = 0;
    for (size_t b = 0; b < ids.size(); b += step) {
      std::vector<int32_t> part(ids.begin() + long(b), ids.begin() + long(std::min(ids.size(), b + step)));
      last = model_->forward(part, Phase::Prefill, rec);
      sim_ps += model_->last_sim_ps();
    }
    Logits out;
    const int64_t V = config().vocab;
    out.values = Tensor({1, V});
    std::memcpy(out.values.ptr(), last.row(last.shape[0] - 1), size_t(V) * 4);
    done(t0, int64_t(ids.size()), sim_ps);
    return out;
  }
  Logits decode(const std::vector<int>& seqs, const std::vector<int32_t>& ids, Recorder* rec) override {
    require(seqs.size() == 1 && ids.size() == 1, "backend " + backend_ + ": decode one sequence at a time");
    check(seqs[0]);
    const auto t0 = std::chrono::steady_clock::now();
    Logits out;
    out.values = model_->forward(ids, Phase::Decode, rec);
    done(t0, 1, model_->last_sim_ps());
    return out;
  }
  int64_t position(int s) const override { return s == open_ ? model_->position() : 0; }
  int64_t cached(int s) const override { return position(s); }
  const StepTiming& last_timing() const override { return timing_; }

 private:
  void check(int s) const { require(s == open_, "backend " + backend_ + ": unknown sequence " + std::to_string(s)); }
  void done(std::chrono::steady_clock::time_point t0, int64_t n, double sim_ps) {
    timing_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    timing_.tokens = n;
    if (model_->last_sim_ps() >= 0) {
      timing_.sim_seconds = sim_ps * 1e-12;
      timing_.sim_cycles = int64_t(std::llround(sim_ps * 1e-6 * hw_.clocks.core_mhz.value));
    }
  }
  HwConfig hw_;
  std::string backend_;
  std::unique_ptr<FuncModel> model_;
  int open_ = -1, next_ = 0;
  StepTiming timing_;
};

}  // namespace

std::unique_ptr<Device> make_func_device(const DeviceOptions& opt) {
  return std::make_unique<FuncDevice>(opt, "func", nullptr);
}

std::unique_ptr<Device> make_compiled_device(const DeviceOptions& opt, const std::string& backend,
                                             FuncModel::Runner runner) {
  return std::make_unique<FuncDevice>(opt, backend, std::move(runner));
}

}  // namespace n3
