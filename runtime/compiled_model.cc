#include "runtime/compiled_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "base/error.h"
#include "compiler/residency.h"
#include "golden/dump_ops.h"
#include "golden/numerics/formats.h"
#include "runtime/numerics_select.h"

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

// The model's memory lives in CompiledModel between programs; each program's
// simulator borrows it for its run.
struct Restore {
  sim::FuncSim& s;
  sim::Memory& m;
  ~Restore() { std::swap(s.memory(), m); }
};

const char* dtype_of(const std::string& native) {
  return native == "f32" ? "float32" : native == "bf16" ? "bfloat16" : nullptr;
}

}  // namespace

CompiledModel::CompiledModel(std::shared_ptr<const WeightSource> w, const HwConfig& hw, const CompiledOptions& o)
    : w_(std::move(w)), cfg_(w_->config()) {
  plan(hw, o);
  sim::SpaceMemory& ddr = mem_->space(isa::Space::DDR);
  comp::write_weights(lay_, *w_, cfg_, [&](uint64_t a, const void* p, uint64_t n) { ddr.write(a, p, n); });
}

CompiledModel::CompiledModel(const ModelConfig& cfg, const HwConfig& hw, const CompiledOptions& o) : cfg_(cfg) {
  plan(hw, o);
}

CompiledModel::~CompiledModel() = default;

void CompiledModel::plan(const HwConfig& hw, const CompiledOptions& o) {
  require(o.max_chunk >= 0, "the prefill chunk must be >= 0 (0: the best modelled)");
  require(o.resident_bytes >= -1, "the resident-weight bytes must be -1 or more");
  f_ = hw.numerics.formats;
  hw_ = hw_limits(hw);
  hwc_ = hw;
  dump_all_ = o.dump_all;
  fit_ = comp::largest_chunk(cfg_, f_, hw_);  // larger chunks spill activations to DDR
  // No chunk given: the one with the best modelled prefill throughput
  // (runtime/schedule.h), spilling activations where that pays. kv.policy
  // evict bounds it: the sliding rings keep window + chunk - 1 rows.
  // No spilled candidate above the KV cap either: no prompt could run it whole.
  const int cap = o.evict ? std::max(1, int(hw_.kv_cap - cfg_.sliding_window + 1))
                          : int(std::max<int64_t>(1, std::min<int64_t>(256, hw_.kv_cap)));
  if (o.max_chunk == 0) {
    choice_ = choose_chunk(cfg_, hw, o.evict ? std::min(fit_, cap) : fit_, cap);
  } else {
    choice_ = ChunkChoice{};
    choice_.chunk = o.max_chunk;
    choice_.fit = fit_;
    choice_.why = "given (--chunk)";
  }
  lay_ = comp::plan_layout(cfg_, f_, hw_, choice_.chunk);
  sizes_ = comp::chunk_sizes(lay_.max_chunk);
  require(lay_.ddr_end <= hw_.ddr, "the DDR image needs " + std::to_string(lay_.ddr_end) +
                                       " bytes, more than the " + std::to_string(hw_.ddr) + " of " + hw.name);
  comp::ResidencyOptions ro;
  ro.max_bytes = o.resident_bytes;
  comp::plan_residency(lay_, cfg_, f_, hw_, ro);
  mem_ = std::make_unique<sim::Memory>(sim::Capacities{hw_.ddr, hw_.l2, hw_.wbuf});
}

void CompiledModel::reset() {
  pos_ = rows_ = 0;
}

void CompiledModel::seek(int64_t pos) {
  require(timing_only(), "only a timing-only model may seek (a real one needs the KV contents)");
  require(pos >= 0 && pos < hw_.kv_cap, "position " + std::to_string(pos) + " outside the KV cap of " +
                                            std::to_string(hw_.kv_cap) + " tokens");
  pos_ = rows_ = pos;
}

// The rings lie between the weights and the input region (comp::plan_layout).
void CompiledModel::save_kv(KvState* s) const {
  s->pos = pos_;
  s->rows = rows_;
  s->rings.resize(lay_.input - lay_.weights_end);
  mem_->space(isa::Space::DDR).read(lay_.weights_end, s->rings.data(), s->rings.size());
}

void CompiledModel::load_kv(const KvState& s) {
  pos_ = s.pos;
  rows_ = s.rows;
  // A fresh state carries no bytes: a sequence reads only the rows it wrote.
  if (!s.rings.empty()) mem_->space(isa::Space::DDR).write(lay_.weights_end, s.rings.data(), s.rings.size());
}

std::string CompiledModel::evict_problem(int64_t recent) const {
  for (int l = 0; l < cfg_.layers; ++l) {
    if (!cfg_.owns_kv(l) || cfg_.is_global(l)) continue;
    const int64_t w = cfg_.sliding_window, need = w + lay_.max_chunk - 1;
    if (lay_.rings[size_t(l)].rows < need)
      return "kv.policy evict needs the sliding KV rings to hold sliding_window + max chunk - 1 = " +
             std::to_string(need) + " positions, but kv.cap_tokens = " + std::to_string(hw_.kv_cap) +
             " limits them to " + std::to_string(lay_.rings[size_t(l)].rows);
    if (recent >= 0 && recent < w - 1)
      return "kv.policy evict would keep " + std::to_string(recent) +
             " recent rows, fewer than a sliding window of " + std::to_string(w) +
             " reads (kv.cap_tokens must be at least sliding_window + sink_tokens + the chunk's tokens - 1)";
  }
  return "";
}

void CompiledModel::evict(int64_t sinks, int64_t recent) {
  require(!timing_only(), "a timing-only model holds no KV rows to evict");
  const std::string problem = evict_problem(recent);
  require(problem.empty(), problem);
  if (sinks + recent >= rows_) return;
  sim::SpaceMemory& ddr = mem_->space(isa::Space::DDR);
  // Rows of data, and of scale records where the cache has them (INT8).
  const uint64_t row = uint64_t(cfg_.kv_dim()) * (f_.kv == num::KvFmt::INT8 ? 1 : 2);
  const uint64_t scale_row = uint64_t(cfg_.kv_heads) * 4;
  std::vector<uint8_t> keep;
  auto move = [&](uint64_t base, uint64_t bytes) {
    keep.resize(size_t(recent) * bytes);
    ddr.read(base + uint64_t(rows_ - recent) * bytes, keep.data(), keep.size());
    ddr.write(base + uint64_t(sinks) * bytes, keep.data(), keep.size());
  };
  for (int l = 0; l < cfg_.layers; ++l) {
    if (!cfg_.owns_kv(l) || !cfg_.is_global(l)) continue;
    const comp::Ring& r = lay_.rings[size_t(l)];
    move(r.k, row);
    move(r.v, row);
    if (r.k_scale) move(r.k_scale, scale_row), move(r.v_scale, scale_row);
  }
  rows_ = sinks + recent;
}

sim::SimOptions CompiledModel::sim_options() const {
  sim::SimOptions opt;
  opt.formats = f_;
  opt.caps = {hw_.ddr, hw_.l2, hw_.wbuf};
  opt.effects = !timing_only();
  opt.capture_all = dump_all_;
  return opt;
}

const comp::Compiled& CompiledModel::program(int T) {
  require(std::find(sizes_.begin(), sizes_.end(), T) != sizes_.end(),
          "no program for " + std::to_string(T) + " tokens (the set is the largest chunk and the powers of two below it)");
  auto it = progs_.find(T);
  if (it != progs_.end()) return it->second;
  comp::CompileOptions o;
  o.tokens = T;
  if (T == choice_.chunk) o.lanes = choice_.lanes;
  return progs_.emplace(T, comp::compile_forward(cfg_, lay_, f_, hw_, o)).first->second;
}

const comp::Compiled* CompiledModel::preload() {
  if (lay_.resident.empty()) return nullptr;
  if (!preload_) preload_ = std::make_unique<comp::Compiled>(comp::compile_preload(lay_, hw_));
  return preload_.get();
}

std::string CompiledModel::weight_image() const {
  require(!timing_only(), "a model without weights has no weight image");
  std::string bytes(lay_.weights_end, '\0');
  mem_->space(isa::Space::DDR).read(0, bytes.data(), bytes.size());
  return bytes;
}

double CompiledModel::run(sim::FuncSim& s, const comp::Compiled& c, const std::string& label) {
  if (runner_) return runner_(s, c, label);
  s.run();
  return -1;
}

Tensor CompiledModel::forward(const std::vector<int32_t>& ids, Phase ph, Recorder* rec) {
  const int64_t T = int64_t(ids.size());
  require(T >= 1, "a forward needs at least one token");
  Tensor logits({T, cfg_.vocab});
  double ps = 0;
  bool simulated = false;
  size_t at = 0;
  for (size_t b = 0; b < ids.size(); b += size_t(lay_.max_chunk)) {
    const int n = int(std::min(ids.size() - b, size_t(lay_.max_chunk)));
    for (int part : comp::cover(n, sizes_)) {
      const Tensor l = forward_program(std::vector<int32_t>(ids.begin() + long(at), ids.begin() + long(at) + part), ph, rec);
      std::memcpy(logits.row(int64_t(at)), l.ptr(), size_t(part) * size_t(cfg_.vocab) * sizeof(float));
      if (last_sim_ps_ >= 0) simulated = true, ps += last_sim_ps_;
      at += size_t(part);
    }
  }
  last_sim_ps_ = simulated ? ps : -1;
  return logits;
}

Tensor CompiledModel::read_logits(const sim::SpaceMemory& ddr, int64_t T) const {
  Tensor logits({T, cfg_.vocab});
  const size_t n = size_t(T * cfg_.vocab);
  if (f_.logits == num::Fmt::F32) {
    ddr.read(lay_.logits, logits.ptr(), n * 4);
    return logits;
  }
  // bf16 / f16 logits: two bytes an element, widened exactly.
  std::vector<uint16_t> h(n);
  ddr.read(lay_.logits, h.data(), n * 2);
  for (size_t i = 0; i < n; ++i)
    logits.data[i] = f_.logits == num::Fmt::BF16 ? num::bf16_value(h[i]) : num::f16_value(h[i]);
  return logits;
}

Tensor CompiledModel::forward_program(const std::vector<int32_t>& ids, Phase ph, Recorder* rec) {
  const int64_t T = int64_t(ids.size());
  for (int32_t id : ids) require(id >= 0 && id < cfg_.vocab, "token id " + std::to_string(id) + " out of range");
  require(rows_ + T <= hw_.kv_cap, "the sequence would pass the KV cap of " + std::to_string(hw_.kv_cap) + " tokens");
  if (!preloaded_) {  // once, before the first forward program
    preloaded_ = true;
    if (const comp::Compiled* pre = preload()) {
      sim::FuncSim s(pre->program, sim_options());
      std::swap(s.memory(), *mem_);
      const Restore back{s, *mem_};
      load_sim_ps_ = run(s, *pre, "preload");
    }
  }
  const comp::Compiled& c = program(int(T));
  sim::FuncSim s(c.program, sim_options());
  std::swap(s.memory(), *mem_);
  const Restore restore{s, *mem_};
  // Run-time inputs: pos0, the global rings' row, positions[T], ids[T].
  sim::SpaceMemory& ddr = s.memory().space(isa::Space::DDR);
  const std::vector<int32_t> in = comp::input_words(lay_, pos_, rows_, ids);
  ddr.write(lay_.input, in.data(), in.size() * 4);
  last_sim_ps_ = run(s, c, ph == Phase::Decode ? "decode" : "prefill");
  pos_ += T;
  rows_ += T;
  if (timing_only()) return Tensor({T, cfg_.vocab});
  Tensor logits = read_logits(ddr, T);
  if (rec)
    for (const sim::Capture& cap : s.captures()) {
      const std::optional<TensorId> id = parse_tensor_name(cap.name);
      if (!id || !rec->wants(id->op)) continue;
      const char* dt = dtype_of(cap.native_dtype);
      rec->record(ph, id->op, id->layer, golden_shape(id->op, cfg_, T, cap.rows, cap.cols), cap.data.data(),
                  dt ? dt : cap.native_dtype);
    }
  return logits;
}

}  // namespace n3
