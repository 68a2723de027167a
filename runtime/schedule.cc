#include "runtime/schedule.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <cstdio>
#include <functional>
#include <map>

#include "base/error.h"
#include "compiler/layout.h"
#include "isa/dis.h"
#include "sim/func_sim.h"
#include "sim/systemc/timing.h"
#ifdef N3_HAVE_SYSTEMC
#include "sim/systemc/npu.h"
#include "sim/systemc/report.h"
#endif

namespace n3 {

namespace {

constexpr int kSfu = int(isa::Engine::SFU), kGemv = int(isa::Engine::GEMV), kGemm = int(isa::Engine::GEMM),
              kDma = int(isa::Engine::DMA), kCtl = int(isa::Engine::CTL);

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// A functional core's options with arithmetic off (no weights needed: every
// duration depends on operand views only, docs/timing.md).
sim::SimOptions timing_options(const HwConfig& hw) {
  sim::SimOptions o;
  o.formats = hw.numerics.formats;
  o.caps = sim_capacities(hw);
  o.effects = false;
  o.hazards = false;  // the compiler's verifier proved the order; the count needs no proof
  o.capture_all = false;
  o.captures = false;  // only counted: no tensor is read back
  return o;
}

// The input region as the host writes it for `tokens` tokens at pos0.
void write_input(sim::FuncSim& s, const comp::Layout& lay, int tokens, int64_t pos0) {
  const std::vector<int32_t> in = comp::input_words(lay, pos0, pos0, std::vector<int32_t>(size_t(tokens), 0));
  s.memory().space(isa::Space::DDR).write(lay.input, in.data(), in.size() * 4);
}

}  // namespace

comp::HwLimits hw_limits(const HwConfig& hw) {
  comp::HwLimits h;
  h.ddr = uint64_t(hw.memory.ddr_bytes.value);
  h.l2 = uint64_t(hw.memory.l2_bytes.value);
  h.wbuf = uint64_t(hw.weight_buffer_bytes());
  h.kv_cap = hw.kv.cap_tokens.value;
  h.ddr_latency_bytes = hw.ddr_latency_bytes();
  h.source = hw.path;
  return h;
}

sim::Capacities sim_capacities(const HwConfig& hw) {
  const comp::HwLimits h = hw_limits(hw);
  return {h.ddr, h.l2, h.wbuf};
}

std::vector<std::pair<std::string, double>> ProgramWork::resources() const {
  return {{"SFU", sfu_s}, {"GEMV", gemv_s}, {"GEMM", gemm_s}, {"DDR", ddr_s}};
}

std::string ProgramWork::binding() const {
  const auto r = resources();
  return std::max_element(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
}

double ProgramWork::bound_s() const {
  double b = 0;
  for (const auto& [n, s] : resources()) b = std::max(b, s);
  return b;
}

// The bytes of a GEMV's or GEMM's weights the prefetch may stream before it starts:
// at most timing.wbuf_prefetch_tiles tiles, and only weights inside the
// program's read-only `weights` region (MacUnit::prefetch).
static double prefetch_bytes(const isa::Program& prog, const HwConfig& hw, const sim::Issued& in) {
  const sim::View& w = in.op("w");
  if (hw.timing.wbuf_prefetch_tiles.value == 0 || !w.slot || w.d.space != isa::Space::DDR) return 0;
  const int64_t bytes = timing::view_bytes(w);
  const uint64_t lo = w.d.base, hi = lo + uint64_t(bytes);
  for (const isa::Region& r : prog.regions)
    if (r.role == isa::RegionRole::Weights && r.space == isa::Space::DDR && lo >= r.base && hi <= r.base + r.size)
      return double(std::min(bytes, hw.timing.wbuf_prefetch_tiles.value * hw.weight_tile_bytes()));
  return 0;
}

ProgramWork program_work(const comp::Compiled& c, const comp::Layout& lay, const HwConfig& hw, int tokens,
                         int64_t pos0) {
  const timing::Params p = timing::load_params(hw);
  ProgramWork w;
  w.tokens = tokens;
  const double hz = hw.clocks.core_mhz.value * 1e6, clk = 1.0 / hz;
  const double roof = hw.ddr_roofline_bytes_per_s(), lat = timing::ddr_latency_ps(p) * 1e-12;
  const double dma_rate = hw.ddr_bytes_per_s(p.timing.dma_hp_ports.value);
  sim::FuncSim s(c.program, timing_options(hw));
  write_input(s, lay, tokens, pos0);
  w.pos0 = pos0;
  auto ddr_of = [](const sim::View& v) {
    return v.slot && v.d.space == isa::Space::DDR ? double(timing::view_bytes(v)) : 0.0;
  };
  // The overlap model: in-order dispatch into each unit's queue of
  // timing.queue_depth (an instruction enters once the one `depth` ahead of
  // it on its unit was taken), each unit taking its next instruction when
  // free, starting it once the tokens it waits for are signalled.
  const size_t depth = size_t(std::max<int64_t>(1, p.timing.queue_depth.value));
  double dispatched = 0;                                       // when the dispatcher issued the last instruction
  std::array<double, 5> unit_free{};                           // when each unit is next free
  std::array<std::deque<double>, 5> taken;                     // take times of each unit's last `depth` instructions
  std::array<std::array<std::deque<double>, 5>, 5> tokens_at;  // [from][to]: signal times, first in first out
  while (!s.halted()) {
    const sim::FuncSim::Next n = s.peek();
    if (n.engine == kCtl) {
      s.exec_control();
      w.serial_s += double(p.timing.ctl_cycles.value) * clk;
      dispatched += double(p.timing.ctl_cycles.value) * clk;
      continue;
    }
    const sim::Issued& in = s.dispatch();
    double ddr = 0;
    for (const sim::View& v : in.views) ddr += ddr_of(v);
    w.ddr_bytes += ddr;
    double own = 0, mem = ddr > 0 ? lat : 0;  // the unit's clocks; the memory's time for its operands
    if (n.engine == kSfu) {
      w.sfu_work += double(timing::sfu_work(p, in));
      own = (double(p.timing.sfu_setup_cycles.value) + timing::sfu_cycles(p, in)) * clk;
      mem += ddr / dma_rate;
      // Its L2 operands over the L2 ports (a wide SFU can outrun them: hbm-server's 16 lanes).
      double l2 = 0;
      for (const sim::View& v : in.views)
        if (v.slot && v.d.space == isa::Space::L2) l2 += timing::l2_ps(p, timing::view_bytes(v)) * 1e-12;
      mem = std::max(mem, l2 / double(p.timing.l2_ports.value));
    } else if (n.engine == kGemv || n.engine == kGemm) {
      const double macs = double(timing::insn_macs(in));
      const double wb = ddr_of(in.op("w"));
      w.weight_bytes += wb;
      if (n.engine == kGemm) {
        w.gemm_macs += macs;
        own = timing::gemm_cycles(p, in).total() * clk;
      } else {
        w.gemv_macs += macs;
        own = timing::gemv_cycles(p, timing::gemv_shape(in, hw.numerics.formats.bfp_block)).total() * clk;
      }
      mem += ddr / roof;
    } else if (n.engine == kDma) {
      own = timing::dma_cycles(p, in) * clk;
      mem += ddr / dma_rate;
    }
    const double dur = std::max(own, mem);
    w.serial_s += dur;
    const int e = n.engine;
    std::deque<double>& q = taken[size_t(e)];
    if (q.size() >= depth) dispatched = std::max(dispatched, q[q.size() - depth]);
    double start = std::max(dispatched, unit_free[size_t(e)]);
    // A GEMV's or GEMM's weight prefetch may start once it is queued and the previous
    // instruction's last tile is in flight (its last DDR latency).
    const double open = std::max(dispatched, unit_free[size_t(e)] - lat);
    q.push_back(start);
    if (q.size() > depth) q.pop_front();
    for (int f = 0; f < 5; ++f)
      if (((isa::wait_bits(in.word) >> f) & 1) && !tokens_at[size_t(f)][size_t(e)].empty()) {
        start = std::max(start, tokens_at[size_t(f)][size_t(e)].front());
        tokens_at[size_t(f)][size_t(e)].pop_front();
      }
    // The weight prefetch (timing.wbuf_prefetch_tiles; the SystemC
    // MacUnit::prefetch): from `open` until its tokens, up to that many
    // tiles of its read-only weights stream at the roofline, and its
    // own stream is that much shorter.
    const double pre_s = e == kGemv || e == kGemm ? std::min(start - open, prefetch_bytes(c.program, hw, in) / roof) : 0.0;
    const double took = pre_s > 0 ? std::max(own, mem - pre_s) : dur;
    unit_free[size_t(e)] = start + took;
    for (int g = 0; g < 5; ++g)
      if ((isa::signal_bits(in.word) >> g) & 1) tokens_at[size_t(e)][size_t(g)].push_back(start + took);
    w.overlap_s = std::max(w.overlap_s, start + took);
    s.exec_head(n.engine);
  }
  w.sfu_s = w.sfu_work / (double(hw.compute.sfu_elems_per_clk.value) * hz);
  w.gemv_s = w.gemv_macs / (double(hw.gemv_macs_per_clk_total()) * hz);
  w.gemm_s = w.gemm_macs / (double(hw.gemm_macs_per_clk_total()) * hz);
  w.ddr_s = w.ddr_bytes / roof;
  return w;
}

int best_chunk(const std::vector<ChunkCandidate>& cands) {
  double best = 0;
  for (const ChunkCandidate& c : cands)
    if (c.skipped.empty()) best = std::max(best, c.modelled_tok_s());
  for (const ChunkCandidate& c : cands)
    if (c.skipped.empty() && c.modelled_tok_s() >= best * (1 - kChunkGain)) return c.chunk;
  return 0;
}

ChunkChoice choose_chunk(const ModelConfig& cfg, const HwConfig& hw, int fit, int cap) {
  ChunkChoice ch;
  ch.fit = ch.chunk = fit;
  try {
    hw.require_timing();
  } catch (const Error& e) {
    ch.why = std::string("the largest chunk that fits L2 (no modelled choice: ") + e.what() + ")";
    return ch;
  }
  const comp::HwLimits lim = hw_limits(hw);
  const num::Formats& f = hw.numerics.formats;
  std::vector<int> sizes{fit};
  for (int t = 2; t <= std::min(cap, 256); t *= 2)
    if (t > fit) sizes.push_back(t);
  double best = 0;
  bool falling = false;
  for (int T : sizes) {
    if (T > cap && T != fit) continue;
    ChunkCandidate c;
    c.chunk = T;
    // Modelled throughput rises while a larger chunk amortises the weights
    // and falls once spill traffic and per-token work grow: past two
    // candidates in a row below the best so far, larger ones are not
    // compiled (E4B: 256 would cost 0.5 s of compile time). One dip is
    // passed over: the first chunk with lanes (comp::default_lanes) pays
    // every product once per lane on few rows and can model below the L2
    // fit where the larger chunks do not (E4B on lpddr5x-edge: 13, 16, 32).
    auto below = [&](size_t back) {
      if (ch.candidates.size() < back) return false;
      const ChunkCandidate& k = ch.candidates[ch.candidates.size() - back];
      return k.skipped.empty() && k.modelled_tok_s() < best * (1 - kChunkGain);
    };
    if (falling || (below(1) && below(2))) {
      falling = true;
      c.skipped = "not evaluated: throughput already falls at the smaller chunks";
      ch.candidates.push_back(c);
      continue;
    }
    try {
      // The candidate's own plan, no resident weights (they move a few KB of
      // a large model's traffic; the chosen plan gets its residency after).
      const comp::Layout lay = comp::plan_layout(cfg, f, lim, T);
      if (lay.ddr_end > lim.ddr) {
        c.skipped = "its DDR image (" + std::to_string(lay.ddr_end) + " bytes) passes memory.ddr_bytes";
      } else {
        comp::CompileOptions o;
        o.tokens = T;
        const comp::Compiled prog = comp::compile_forward(cfg, lay, f, lim, o);
        c.spill_bytes = prog.spill_bytes;
        c.work = program_work(prog, lay, hw, T, 0);
      }
    } catch (const Error& e) {
      c.skipped = e.what();
    }
    best = std::max(best, c.modelled_tok_s());
    ch.candidates.push_back(c);
  }
  const int pick = best_chunk(ch.candidates);
  if (pick > 0) ch.chunk = pick;
  // The chosen chunk with three row lanes where each gets at least
  // kMinLaneRows rows, kept where it models faster: three keep the SFU
  // busier through the FFN's products on kv260; where per-instruction costs
  // weigh more, as on hbm-server, two win. Tried on the chosen chunk alone
  // (each try is a compile and a model run: E4B's compile-time budget).
  for (ChunkCandidate& k : ch.candidates) {
    if (k.chunk != ch.chunk || !k.skipped.empty() || comp::default_lanes(k.chunk) < 2 || k.chunk < 3 * kMinLaneRows)
      continue;
    const comp::Layout lay = comp::plan_layout(cfg, f, lim, k.chunk);
    comp::CompileOptions o;
    o.tokens = k.chunk;
    o.lanes = 3;
    const comp::Compiled prog = comp::compile_forward(cfg, lay, f, lim, o);
    const ProgramWork w = program_work(prog, lay, hw, k.chunk, 0);
    if (w.modelled_s() < k.work.modelled_s()) {
      k.work = w;
      k.spill_bytes = prog.spill_bytes;
      ch.lanes = k.lanes = 3;
    }
  }
  ch.why = "the smallest candidate within " + fmt("%.0f", kChunkGain * 100) +
           " % of the best modelled prefill tok/s (each program's instructions at peak rates, overlapping as its tokens allow, no faster than its bound)";
  return ch;
}

std::string chunk_choice_text(const ChunkChoice& c) {
  std::string s = "prefill chunk " + std::to_string(c.chunk) + ": " + c.why + "\n";
  if (c.candidates.empty()) return s;
  s += "  chunk  spill MB  modelled tok/s  bound tok/s  binds  (SFU / GEMV / GEMM / DDR tok/s)\n";
  for (const ChunkCandidate& k : c.candidates) {
    char b[256];
    if (!k.skipped.empty()) {
      s += "  " + std::to_string(k.chunk) + "  skipped: " + k.skipped + "\n";
      continue;
    }
    const auto r = k.work.resources();
    auto ts = [&](double sec) { return sec > 0 ? k.chunk / sec : 0.0; };
    std::snprintf(b, sizeof b, "  %5d  %8.1f  %14.1f  %11.1f  %5s  (%.1f / %.1f / %.1f / %.1f)%s\n", k.chunk,
                  double(k.spill_bytes) / 1e6, k.modelled_tok_s(), k.bound_tok_s(), k.work.binding().c_str(),
                  ts(r[0].second), ts(r[1].second), ts(r[2].second), ts(r[3].second), k.chunk == c.chunk ? "  <- chosen" : "");
    s += b;
    if (k.lanes > 0) s.insert(s.size() - 1, "  (" + std::to_string(k.lanes) + " lanes)");
  }
  return s;
}

nlohmann::ordered_json chunk_choice_json(const ChunkChoice& c) {
  nlohmann::ordered_json j;
  j["chunk"] = c.chunk;
  j["largest_in_l2"] = c.fit;
  j["rule"] = c.why;
  j["candidates"] = nlohmann::ordered_json::array();
  for (const ChunkCandidate& k : c.candidates) {
    nlohmann::ordered_json e;
    e["chunk"] = k.chunk;
    if (!k.skipped.empty()) {
      e["skipped"] = k.skipped;
    } else {
      e["spill_bytes"] = k.spill_bytes;
      e["lanes"] = k.lanes > 0 ? k.lanes : comp::default_lanes(k.chunk);
      e["modelled_tok_s"] = k.modelled_tok_s();
      e["bound_tok_s"] = k.bound_tok_s();
      e["binding"] = k.work.binding();
      for (const auto& [n, sec] : k.work.resources()) e["bound_s"][n] = sec;
      e["serial_s"] = k.work.serial_s;
      e["overlap_s"] = k.work.overlap_s;
    }
    j["candidates"].push_back(e);
  }
  return j;
}

#ifdef N3_HAVE_SYSTEMC
namespace {

const char* engine_label(int e) { return isa::name_of(static_cast<isa::Engine>(e)); }

std::string insn_text(const comp::Compiled& c, const std::vector<std::string>& sec, uint32_t pc) {
  std::string d = isa::disassemble_word(c.program.code[pc], &c.program, pc);
  d = d.substr(0, d.find(' '));
  const std::string where = pc < sec.size() && !sec[pc].empty() ? " (" + sec[pc] + ")" : "";
  return "pc " + std::to_string(pc) + " " + d + where;
}

// The binding unit's gaps: between its instructions' slices (and before the
// first). The instruction after a gap waited for the latest-ending slice
// among the engines its wait bits name that signals this unit; when none
// ended at the gap's end it waited for its dispatch (the control unit, a
// full queue). Every gap is attributed, and the idle time summed by what it
// waited for (layer numbers dropped), so one long gap does not hide the many
// short ones that add up.
void find_gaps(ScheduleReport& r, const sc::Report& rep, const comp::Compiled& c, int unit, int top) {
  const std::vector<std::string> sec = sc::sections_from_asm(c.text, c.program.code.size());
  std::vector<std::vector<const sc::SliceReport*>> by(size_t(isa::kNumEngines));
  for (const sc::SliceReport& s : rep.slices)
    if (s.kind == 0 && s.track < isa::kNumEngines) by[size_t(s.track)].push_back(&s);
  for (auto& v : by)
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->start_ps < b->start_ps; });
  const double eps = 1;  // ps
  // The producer a gap before `next` waited for (null: none at the gap's end).
  auto producer = [&](const sc::SliceReport* next) -> const sc::SliceReport* {
    const uint8_t wait = isa::wait_bits(c.program.code[next->pc]);
    const sc::SliceReport* from = nullptr;
    for (int e = 0; e < isa::kNumEngines; ++e) {
      if (!((wait >> e) & 1)) continue;
      const auto& v = by[size_t(e)];
      // One engine's slices follow each other: their ends grow with their starts.
      auto it = std::upper_bound(v.begin(), v.end(), next->start_ps + eps,
                                 [](double t, const sc::SliceReport* s) { return t < s->start_ps + s->dur_ps; });
      for (int k = 0; it != v.begin() && k < 64; ++k) {
        const sc::SliceReport* s = *--it;
        if (!((isa::signal_bits(c.program.code[s->pc]) >> unit) & 1)) continue;
        if (!from || s->start_ps + s->dur_ps > from->start_ps + from->dur_ps) from = s;
        break;
      }
    }
    return from && from->start_ps + from->dur_ps + eps >= next->start_ps ? from : nullptr;
  };
  auto kind = [&](const sc::SliceReport* s) {
    std::string d = isa::disassemble_word(c.program.code[s->pc], &c.program, s->pc);
    std::string where = s->pc < sec.size() ? sec[s->pc] : "";
    if (where.rfind("layers.", 0) == 0) where = where.substr(where.find('.', 7) + 1);
    return std::string(engine_label(s->track)) + " " + d.substr(0, d.find(' ')) + (where.empty() ? "" : " (" + where + ")");
  };
  std::vector<IdleGap> all;
  std::map<std::string, double> sum;
  double end = 0;
  auto add = [&](double from, double to, const sc::SliceReport* next) {
    IdleGap g;
    g.start_s = from * 1e-12;
    g.len_s = (to - from) * 1e-12;
    if (!next) {
      g.next = "end of program";
      g.waits_for = "the other units' last work";
    } else {
      g.next = insn_text(c, sec, next->pc);
      const sc::SliceReport* p = producer(next);
      g.waits_for = p ? std::string(engine_label(p->track)) + " " + insn_text(c, sec, p->pc)
                      : "dispatch (no token at the gap's end: the control unit or a full queue held it)";
      sum[p ? kind(p) : "dispatch"] += g.len_s;
    }
    if (!next) sum["end of program"] += g.len_s;
    all.push_back(g);
  };
  for (const sc::SliceReport* s : by[size_t(unit)]) {
    r.unit_busy_s += s->dur_ps * 1e-12;
    if (s->start_ps > end + eps) add(end, s->start_ps, s);
    end = std::max(end, s->start_ps + s->dur_ps);
  }
  if (rep.total_ps > end + eps) add(end, rep.total_ps, nullptr);
  std::stable_sort(all.begin(), all.end(), [](const IdleGap& a, const IdleGap& b) { return a.len_s > b.len_s; });
  if (int(all.size()) > top) all.resize(size_t(top));
  r.gaps = all;
  for (const auto& [k, v] : sum) r.idle_by_cause.push_back({k, v});
  std::stable_sort(r.idle_by_cause.begin(), r.idle_by_cause.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (int(r.idle_by_cause.size()) > top) r.idle_by_cause.resize(size_t(top));
}

}  // namespace
#endif

ScheduleReport schedule_report(const comp::Compiled& c, const comp::Layout& lay, const HwConfig& hw, int tokens,
                               bool simulate, int top) {
  ScheduleReport r;
  r.program = tokens == 1 ? "decode" : "prefill_" + std::to_string(tokens);
  r.work = program_work(c, lay, hw, tokens, 0);
#ifdef N3_HAVE_SYSTEMC
  if (simulate) {
    const timing::Params p = timing::load_params(hw);
    sc::RunOptions o;
    o.trace = true;
    sim::FuncSim s(c.program, timing_options(hw));
    write_input(s, lay, tokens, 0);
    const sc::Report rep = sc::run_npu(s, p, o);
    r.sim_s = rep.total_ps * 1e-12;
    const std::string b = r.work.binding();
    const bool gemm_program = r.work.gemm_macs > 0;
    const int unit = b == "SFU" ? kSfu : b == "GEMV" ? kGemv : b == "GEMM" ? kGemm : gemm_program ? kGemm : kGemv;
    r.unit = engine_label(unit);
    find_gaps(r, rep, c, unit, top);
  }
#else
  (void)simulate;
  (void)top;
#endif
  return r;
}

std::string schedule_report_text(const ScheduleReport& r) {
  const ProgramWork& w = r.work;
  std::string s = r.program + ": binds " + w.binding() + ", bound " + fmt("%.6f", w.bound_s()) + " s (SFU " +
                  fmt("%.6f", w.sfu_s) + ", GEMV " + fmt("%.6f", w.gemv_s) + ", GEMM " + fmt("%.6f", w.gemm_s) +
                  ", DDR " + fmt("%.6f", w.ddr_s) + "); serial model " + fmt("%.6f", w.serial_s) + " s";
  if (r.sim_s < 0) return s + "; not simulated (no SystemC in this build)\n";
  s += "; simulated " + fmt("%.6f", r.sim_s) + " s, " + fmt("%.1f", 100 * r.achieved()) + " % of the bound; " + r.unit +
       " busy " + fmt("%.1f", 100 * r.unit_busy_s / r.sim_s) + " %\n";
  for (const auto& [k, v] : r.idle_by_cause)
    s += "  " + r.unit + " idle " + fmt("%.1f", 100 * v / r.sim_s) + " % of the time waiting for " + k + "\n";
  for (const IdleGap& g : r.gaps)
    s += "  " + r.unit + " idle " + fmt("%.1f", g.len_s * 1e6) + " us at " + fmt("%.1f", g.start_s * 1e6) +
         " us before " + g.next + ": waits for " + g.waits_for + "\n";
  return s;
}

nlohmann::ordered_json schedule_report_json(const ScheduleReport& r) {
  nlohmann::ordered_json j;
  j["program"] = r.program;
  j["tokens"] = r.work.tokens;
  j["binding"] = r.work.binding();
  j["bound_s"] = r.work.bound_s();
  for (const auto& [n, sec] : r.work.resources()) j["resources_s"][n] = sec;
  j["sfu_element_passes"] = r.work.sfu_work;
  j["gemv_macs"] = r.work.gemv_macs;
  j["gemm_macs"] = r.work.gemm_macs;
  j["ddr_bytes"] = r.work.ddr_bytes;
  j["serial_s"] = r.work.serial_s;
  if (r.sim_s >= 0) {
    j["simulated_s"] = r.sim_s;
    j["achieved"] = r.achieved();
    j["unit"] = r.unit;
    j["unit_busy_s"] = r.unit_busy_s;
    for (const auto& [k, v] : r.idle_by_cause) j["idle_by_cause_s"][k] = v;
    for (const IdleGap& g : r.gaps)
      j["gaps"].push_back({{"start_s", g.start_s}, {"len_s", g.len_s}, {"next", g.next}, {"waits_for", g.waits_for}});
  }
  return j;
}

}  // namespace n3
