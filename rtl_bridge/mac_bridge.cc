#include "rtl_bridge/mac_bridge.h"

#include <algorithm>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "rtl_bridge/compare_histogram.h"

namespace n3::rtl {

namespace {

using isa::Space;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

std::string RtlMacUnit::shape(const sim::View& v) {
  return "[" + std::to_string(v.rows) + "," + std::to_string(v.cols) + "]";
}

MacInsnRecord RtlMacUnit::record(const sim::Issued& in, double now, double t0, double rtl_end, double model_end,
                                 double clk, int64_t weight_stall_cycles) {
  MacInsnRecord rec;
  rec.pc = in.pc;
  rec.dyn = in.dyn;
  rec.what = isa::mnemonic(*in.def, *in.sub) + " " + shape(in.op("src")) + "x" + shape(in.op("w"));
  rec.rtl_cycles = (rtl_end - t0) / clk - 0.5;
  rec.model_cycles = (model_end - now) / clk;
  rec.stall_cycles = double(weight_stall_cycles);
  return rec;
}

RtlMacUnit::RtlMacUnit(sc_core::sc_module_name n, sc::Context& c, int engine, std::string who)
    : sc::MacUnit(n, c, engine), shadow_(*this, engine, who), who_(std::move(who)), feed_(*this) {
  SC_THREAD(feed_thread);
}

void RtlMacUnit::start_stream(const sim::Issued& in, double now, double tiles_from, int64_t tile_bytes) {
  const sim::View& w = in.op("w");
  per_row_ = timing::weight_row_bytes(w);
  rows_ = w.rows;
  tiles_.clear();
  booked_ = 0;
  ddr_stream_ = w.d.space == Space::DDR;
  w_ready_ps_ = w_start_ps_ = now;
  w_on_l2_ = w.d.space == Space::L2;
  if (!ddr_stream_) {
    // On chip: L2 weights arrive row by row over one L2 port read.
    if (w_on_l2_) {
      w_ready_ps_ = move(w, false, tiles_from, 1);
      w_start_ps_ = last_start_ps_;
    }
    return;
  }
  const int64_t all = timing::view_bytes(w);
  for (int64_t off = 0; off < all; off += tile_bytes) tiles_.push_back({-1, off, std::min(tile_bytes, all - off), 0, false});
  stream_base_ = w.d.base;
  stream_start_ps_ = tiles_from;
  feed_start_.notify(sc_core::SC_ZERO_TIME);
}

void RtlMacUnit::finish_stream() {
  while (booked_ < tiles_.size()) sc_core::wait(booked_event_);
}

std::vector<std::pair<double, int64_t>> RtlMacUnit::arrivals(double now, double clk) const {
  std::vector<std::pair<double, int64_t>> a;
  if (ddr_stream_)
    for (const Tile& t : tiles_) a.push_back({t.landed_ps, t.bytes});
  else if (w_on_l2_)
    a = timing::rows_landing(rows_, w_start_ps_, w_ready_ps_, rows_);
  for (auto& x : a) x.first = timing::on_clock(x.first, now, clk);
  return a;
}

void RtlMacUnit::feed_thread() {
  while (true) {
    sc_core::wait(feed_start_);
    for (size_t k = 0; k < tiles_.size(); ++k) {
      Tile& t = tiles_[k];
      const sc::WbufIf::Slot slot = wbuf->take();
      const double not_before = std::max(stream_start_ps_, slot.free_ps);
      c_.wait_until(not_before);  // lets other engines' transfers interleave with this stream
      t.slot = slot.index;
      t.landed_ps = ddr_move(t.bytes, false, not_before, c_.p.memory.hp_ports.value, stream_base_ + uint64_t(t.begin));
      ++booked_;
      booked_event_.notify(sc_core::SC_ZERO_TIME);
    }
  }
}

void RtlMacUnit::wait_rows(int64_t end) {
  if (end <= 0) return;
  if (!ddr_stream_) {
    if (w_on_l2_)
      c_.wait_until(w_start_ps_ + (w_ready_ps_ - w_start_ps_) * double(std::min(end, rows_)) / double(std::max<int64_t>(rows_, 1)));
    return;
  }
  const int64_t last_byte = std::min(end, rows_) * per_row_ - 1;
  size_t k = 0;
  while (k + 1 < tiles_.size() && tiles_[k + 1].begin <= last_byte) ++k;
  while (booked_ <= k) sc_core::wait(booked_event_);
  c_.wait_until(tiles_[k].landed_ps);
}

void RtlMacUnit::consumed(int64_t end) {
  const int64_t done = std::min(end, rows_) * per_row_;
  for (Tile& t : tiles_) {
    if (t.released || t.slot < 0 || t.begin + t.bytes > done) continue;
    wbuf->hold(t.slot, t.bytes, c_.now_ps());
    t.released = true;
  }
}

void RtlMacUnit::inject(const char* env, size_t index, std::vector<float>& out) {
  const char* k = std::getenv(env);
  if (!k || out.empty() || int64_t(index) != std::atoll(k)) return;
  const uint32_t u = bits_of(out[0]) ^ 1u;
  std::memcpy(&out[0], &u, 4);
}

std::string RtlMacUnit::compare(const sim::Issued& in, const std::vector<float>& out) const {
  const sim::View& y = in.op("dst");
  require(int64_t(out.size()) == y.numel(),
          who_ + ": the engine returned " + std::to_string(out.size()) + " results for dst " + shape(y));
  std::vector<float> ref(static_cast<size_t>(y.cols));
  for (int64_t r = 0; r < y.rows; ++r) {
    sim::read_row(c_.sim->memory(), y, r, ref.data());
    for (int64_t c = 0; c < y.cols; ++c) {
      const float a = out[static_cast<size_t>(r * y.cols + c)], b = ref[static_cast<size_t>(c)];
      if (bits_of(a) == bits_of(b)) continue;
      std::string name = c_.sim->program().name_of(isa::SymKind::Desc, y.slot);
      if (name.empty()) name = "desc " + std::to_string(y.slot);
      char buf[160];
      std::snprintf(buf, sizeof buf, "element [%" PRId64 ", %" PRId64 "]: rtl %.9g (0x%08x), functional %.9g (0x%08x)", r,
                    c, double(a), bits_of(a), double(b), bits_of(b));
      return who_ + ": instruction " + std::to_string(in.pc) + " (" + isa::mnemonic(*in.def, *in.sub) + ", dynamic #" +
             std::to_string(in.dyn) + "), dst '" + name + "' " + shape(y) + ", " + buf;
    }
  }
  return "";
}

void RtlMacUnit::store_results(const sim::Issued& in, const std::vector<float>& out) {
  const sim::View& y = in.op("dst");
  for (int64_t r = 0; r < y.rows; ++r) sim::write_row(shadow_.memory(), y, r, out.data() + r * y.cols);
  shadow_.store(y, in.pc);
}

void print_mac_comparison(const char* who, const char* engine, const std::vector<MacInsnRecord>& recs, std::FILE* out) {
  if (recs.empty()) {
    std::fprintf(out, "%s: no %s instructions ran\n", who, engine);
    return;
  }
  // Relative error of the model against the RTL, per instruction.
  CompareHistogram hist({0.0025, 0.005, 0.01, 0.02, 0.05, 0.1}, CompareHistogram::Labels::Fixed);
  double rtl = 0, model = 0, stall = 0, worst = 0;
  int64_t within = 0, one_cycle = 0, beyond = 0;
  const MacInsnRecord* w = nullptr;
  for (const MacInsnRecord& r : recs) {
    const double e = hist.add(r.rtl_cycles, r.model_cycles);
    if (e <= 0.02)
      ++within;
    else if (std::fabs(r.model_cycles - r.rtl_cycles) <= 1.0 + 1e-9)
      ++one_cycle;
    else
      ++beyond;
    rtl += r.rtl_cycles;
    model += r.model_cycles;
    stall += r.stall_cycles;
    if (!w || e > worst) worst = e, w = &r;
  }
  std::fprintf(out, "%s: %zu instructions, RTL %.0f cycles (%.0f waiting on weights), model %.0f cycles (%+.3f%%)\n",
               who, recs.size(), rtl, stall, model, rtl > 0 ? 100.0 * (model - rtl) / rtl : 0.0);
  std::fprintf(out, "%s: per-instruction |model - rtl| / rtl:\n", who);
  hist.print(out);
  std::fprintf(out, "%s: %lld within 2%%, %lld more within one cycle, %lld beyond both\n",
               who, static_cast<long long>(within), static_cast<long long>(one_cycle), static_cast<long long>(beyond));
  std::fprintf(out, "%s: worst %.3f%%: instruction %u (%s, dynamic #%llu): rtl %.0f, model %.0f cycles\n",
               who, 100.0 * worst, w->pc, w->what.c_str(), static_cast<unsigned long long>(w->dyn), w->rtl_cycles,
               w->model_cycles);
}

}  // namespace n3::rtl
