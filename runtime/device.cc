#include "runtime/device.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "base/error.h"

namespace n3 {


std::string logits_dtype(const HwConfig& hw, const std::string& numerics) {
  if (numerics != "npu") return "float32";
  switch (hw.numerics.formats.logits) {
    case num::Fmt::BF16: return "bfloat16";
    case num::Fmt::F16: return "float16";
    default: return "float32";
  }
}

PromptTimes run_prompt(Device& dev, int seq, const std::vector<int32_t>& ids, size_t chunk,
                       const std::vector<int32_t>& feed, Recorder* rec, const std::function<void(size_t)>& on_step) {
  PromptTimes t;
  // Checked for the whole run before its first chunk, so a prompt too long
  // for the model is refused at once, not after the chunks that fit.
  dev.check_positions(seq, int64_t(ids.size() + feed.size()), "prompt + feed");
  const size_t step = chunk > 0 ? chunk : ids.size();
  for (size_t b = 0; b < ids.size(); b += step) {
    dev.prefill(seq, std::vector<int32_t>(ids.begin() + long(b), ids.begin() + long(std::min(ids.size(), b + step))), rec);
    t.prefill_s += dev.last_timing().wall_s;
  }
  for (size_t i = 0; i < feed.size(); ++i) {
    dev.decode({seq}, {feed[i]}, rec);
    t.decode_s += dev.last_timing().wall_s;
    if (on_step) on_step(i);
  }
  return t;
}

void set_run_meta(DumpCollector& rec, const Device& dev, const std::string& model) {
  rec.set_meta("backend", dev.backend());
  rec.set_meta("numerics", dev.numerics());
  rec.set_meta("model", model);
  rec.set_meta("hw", dev.hw().name);
  if (dev.numerics() == "npu") rec.set_meta("formats", num::formats_to_string(dev.hw().numerics.formats));
}

Device::Device(const DeviceOptions& opt) : hw_(load_hw_config(opt.hw_path)), numerics_(opt.numerics) {
  require(numerics_ == "npu" || numerics_ == "reference",
          "--numerics must be 'npu' or 'reference' (is '" + numerics_ + "')");
}

int64_t Device::kv_capacity() const { return hw_.kv.cap_tokens.value; }

KvPolicy Device::kv_policy() const { return hw_.kv.policy.value; }

int64_t Device::kv_sinks() const { return hw_.kv.sink_tokens.value; }

void Device::check_ids(const std::vector<int32_t>& ids, const char* what) const {
  const int64_t V = config().vocab;
  for (int32_t id : ids)
    require(id >= 0 && id < V, std::string(what) + ": token id " + std::to_string(id) + " is out of range [0, " +
                                   std::to_string(V) + ") for this model");
}

void Device::check_positions(int seq, int64_t n, const char* what) const {
  const int64_t at = position(seq), max = config().max_positions;
  require(at + n <= max, std::string(what) + ": " + std::to_string(n) + " tokens at position " + std::to_string(at) +
                             " go past the model's max_position_embeddings = " + std::to_string(max));
}

void Device::make_room(int seq, int64_t n) {
  const int64_t cap = kv_capacity(), have = cached(seq);
  if (have + n <= cap) return;
  require(kv_policy() == KvPolicy::Evict,
          "KV cache full: " + std::to_string(have) + " + " + std::to_string(n) + " tokens exceed kv.cap_tokens = " +
              std::to_string(cap) + " of " + hw_.path + " (policy 'error'; set kv.policy: evict to slide)");
  const int64_t sinks = kv_sinks();
  require(sinks + n < cap, "KV cache: a chunk of " + std::to_string(n) + " tokens plus " + std::to_string(sinks) +
                               " sinks does not fit kv.cap_tokens = " + std::to_string(cap));
  evict(seq, sinks, cap - sinks - n);
}

void Device::finish(std::chrono::steady_clock::time_point t0, int64_t tokens, double sim_ps) {
  timing_ = StepTiming{};
  timing_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  timing_.tokens = tokens;
  if (sim_ps >= 0) {
    timing_.sim_seconds = sim_ps * 1e-12;
    timing_.sim_cycles = int64_t(std::llround(sim_ps * 1e-6 * hw_.clocks.core_mhz.value));
  }
}

Logits Device::prefill(int seq, const std::vector<int32_t>& ids, Recorder* rec) {
  require(has_sequence(seq), "backend " + backend() + ": no open sequence " + std::to_string(seq));
  require(!ids.empty(), "prefill: no prompt ids");
  check_ids(ids, "prefill");
  check_positions(seq, int64_t(ids.size()), "prefill");
  const auto t0 = std::chrono::steady_clock::now();
  make_room(seq, int64_t(ids.size()));
  const bool all_rows = rec && rec->wants(Op::Logits);
  const Tensor l = forward(seq, ids, Phase::Prefill, rec, !all_rows);
  const int64_t V = l.shape[1], last = l.shape[0] - 1;
  Logits out;
  out.dtype = logits_dtype(hw_, numerics_);
  out.values = Tensor({1, V}, std::vector<float>(l.row(last), l.row(last) + V));
  finish(t0, int64_t(ids.size()), last_sim_ps());
  return out;
}

Logits Device::decode(const std::vector<int>& seqs, const std::vector<int32_t>& ids, Recorder* rec) {
  require(seqs.size() == ids.size() && !seqs.empty(), "decode: one id per sequence is required");
  for (size_t i = 0; i < seqs.size(); ++i) {
    require(has_sequence(seqs[i]), "backend " + backend() + ": no open sequence " + std::to_string(seqs[i]));
    require(std::count(seqs.begin(), seqs.end(), seqs[i]) == 1,
            "decode: sequence " + std::to_string(seqs[i]) + " appears twice in one batch");
  }
  check_ids(ids, "decode");
  for (int seq : seqs) check_positions(seq, 1, "decode");
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t V = config().vocab;
  Logits out;
  out.dtype = logits_dtype(hw_, numerics_);
  out.values = Tensor({int64_t(seqs.size()), V});
  double sim_ps = 0;
  bool simulated = false;
  // Every backend runs a batch one sequence after another: each step of a
  // sequence is the same computation as when it runs alone.
  for (size_t i = 0; i < seqs.size(); ++i) {
    make_room(seqs[i], 1);
    const Tensor l = forward(seqs[i], {ids[i]}, Phase::Decode, rec, true);
    std::memcpy(out.values.row(int64_t(i)), l.row(l.shape[0] - 1), size_t(V) * sizeof(float));
    if (last_sim_ps() >= 0) simulated = true, sim_ps += last_sim_ps();
  }
  finish(t0, int64_t(seqs.size()), simulated ? sim_ps : -1);
  return out;
}

}  // namespace n3
