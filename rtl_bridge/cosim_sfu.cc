// `n3 cosim --unit sfu`: the RTL SFU (element pipeline and row operators)
// against the numerics core, bit for bit (rtl_bridge/sfu_vectors.h); a row
// operator's vector is a row, its results compared element by element. The shard's vectors are run
// function by function; consecutive vectors of one function that share dst's
// format, k and the stall setting (one block of kSfuBlock indices, or one
// vector for the k functions) are one command and one stream, as one CVO
// instruction's row would be. Streams without stalls feed the cycle table:
// per function, the stream's clocks (first element in to last result out)
// and the first element's latency, against the SystemC model's SFU formula
// (timing::sfu_cycles, SfuUnit::model's term after the setup, less the
// command's transfer: the beats + the function's sfu_latency_*_cycles).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include <systemc>

#include "base/error.h"
#include "rtl_bridge/cosim.h"
#include "rtl_bridge/sfu_rtl.h"
#include "rtl_bridge/sfu_vectors.h"
#include "sim/func_sim.h"
#include "sim/systemc/npu.h"
#include "sim/systemc/timing.h"

namespace n3::rtl {

namespace {

// The CVO instruction the model would time for a stream: element-wise
// a = dst = [1, elements]; a reduction of rows of one length a = [rows, cols],
// dst = [rows, 1]; rows of several lengths (the cosim's vectors) as one row
// each of their total (the beats: each row from a fresh beat, as the RTL's).
sim::Issued cvo_instruction(isa::CvoFunc f, size_t elements, const std::vector<int64_t>& rows) {
  sim::Issued in;
  in.def = isa::opcode_def(static_cast<uint32_t>(isa::Opcode::CVO));
  for (int i = 0; i < in.def->n_subops; ++i)
    if (in.def->subops[i].value == static_cast<uint32_t>(f)) in.sub = &in.def->subops[i];
  require(in.sub != nullptr, "cosim sfu: no CVO sub-function " + sfu_func_name(f));
  sim::View a, y;
  a.slot = y.slot = 1;
  a.rows = y.rows = 1;
  a.cols = y.cols = int64_t(elements);
  if (!rows.empty() && sfu_is_rowop(f)) {
    // A row operator: rows of one length (the multi-pass ones are timed a row at a time).
    a.rows = y.rows = int64_t(rows.size());
    a.cols = y.cols = rows.front();
    for (int64_t n : rows) require(n == rows.front(), "cosim sfu: a row operator's stream of rows of several lengths");
  } else if (!rows.empty()) {
    const int64_t lanes = N3_RTL_SFU_LANES;
    int64_t beats = 0;
    for (int64_t n : rows) beats += (n + lanes - 1) / lanes;
    const bool same = std::all_of(rows.begin(), rows.end(), [&](int64_t n) { return n == rows.front(); });
    // Rows of one length: the reduction itself; else one row of the beats' elements.
    a.rows = y.rows = same ? int64_t(rows.size()) : 1;
    a.cols = same ? rows.front() : beats * lanes;
    y.cols = 1;
  }
  in.views[static_cast<size_t>(isa::field_index(*in.def, "a"))] = a;
  in.views[static_cast<size_t>(isa::field_index(*in.def, "dst"))] = y;
  return in;
}


struct Harness : sc_core::sc_module {
  SC_HAS_PROCESS(Harness);
  Harness(sc_core::sc_module_name n, const CosimOptions& o, const HwConfig& hw, std::ostream& log, CosimReport& rep)
      : sc_module(n), o_(o), params_(timing::load_params(hw)), log_(log), rep_(rep), rtl_("sfu", hw, o.vcd) {
    SC_THREAD(main);
  }

  void main() {
    try {
      const std::vector<int64_t> idx = shard_indices(o_);
      for (int fi = 0; fi < kNumSfuFuncs; ++fi) {
        std::vector<SfuVector> group;
        std::vector<int64_t> group_idx;
        for (int64_t i : idx) {
          if (sfu_func_index(i) != fi) continue;
          const SfuVector v = make_sfu_vector(o_.seed, i);
          if (!group.empty() && !same_command(group.back(), v, group_idx.back(), i)) {
            stream(group, group_idx);
            group.clear();
            group_idx.clear();
          }
          group.push_back(v);
          group_idx.push_back(i);
        }
        if (!group.empty()) stream(group, group_idx);
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    sc_core::sc_stop();
  }

  static bool same_command(const SfuVector& a, const SfuVector& b, int64_t ia, int64_t ib) {
    // (A row operator's k and weight are drawn per block; ROPE's k is the row
    // length d. RMS's rows of any lengths share a command: the unit counts each.)
    return ia / kSfuBlock == ib / kSfuBlock && a.fmt == b.fmt && a.stall == b.stall && !sfu_reads_k(a.func) &&
           a.k == b.k && a.hasb == b.hasb;
  }

  void stream(const std::vector<SfuVector>& g, const std::vector<int64_t>& gi) {
    const SfuVector& v0 = g.front();
    std::vector<SfuElem> in;
    std::vector<int64_t> rows;
    const bool rowop = sfu_is_rowop(v0.func);
    std::vector<size_t> at;  // a row operator's vector's first result
    for (const SfuVector& v : g) {
      if (rowop) {
        at.push_back(in.size());
        const std::vector<SfuElem> e = sfu_row_elems(v);
        in.insert(in.end(), e.begin(), e.end());
        // SOFTCAP is element-wise: its rows stream as one.
        if (v.func != isa::CvoFunc::SOFTCAP) rows.push_back(static_cast<int64_t>(v.row.size()));
      } else if (sfu_is_reduction(v.func)) {
        for (uint32_t x : v.row) in.push_back({x, 0, 0});
        rows.push_back(static_cast<int64_t>(v.row.size()));
      } else {
        in.push_back({v.a, v.b, v.c});
      }
    }
    rtl_.set_stalls(v0.stall ? 0.3 : 0.0, uint64_t(gi.front()) * 0x9e3779b97f4a7c15ull + o_.seed);
    std::vector<uint32_t> out;
    const SfuRun run = rtl_.run(v0.func, v0.k, v0.fmt, in, out, rows, v0.hasb);
    static const std::string inject = [] {
      const char* e = std::getenv("N3_COSIM_SFU_INJECT");
      return std::string(e ? e : "");
    }();
    const std::string fname = sfu_func_name(v0.func);
    for (size_t j = 0; j < g.size(); ++j) {
      const SfuVector& v = g[j];
      ++rep_.run;
      ++rep_.classes[fname];
      ++rep_.classes[fname + "." + v.cls];
      if (rowop) rep_.classes[fname + ":elements"] += int64_t(v.row.size());
      uint32_t got = rowop ? 0 : out[j], want = 0;
      size_t el = 0;  // a row operator's first differing element
      if (rowop) {
        const std::vector<uint32_t> w = sfu_expected_row(v);
        if (j == 0 && inject == fname) out[at[j]] ^= 1;
        while (el + 1 < w.size() && out[at[j] + el] == w[el]) ++el;
        got = out[at[j] + el];
        want = w[el];
      } else {
        // The injected fault: the lowest bit of the named function's first result.
        if (j == 0 && inject == fname) got ^= 1;
        want = sfu_expected(v);
      }
      if (got == want) {
        ++rep_.classes[fname + ":pass"];
        continue;
      }
      ++rep_.mismatches;
      ++rep_.classes[fname + ":FAIL"];
      if (rep_.first_mismatch_index < 0 || gi[j] < rep_.first_mismatch_index) {
        rep_.first_mismatch_index = gi[j];
        char line[256];
        std::snprintf(line, sizeof line,
                      "vector %lld: %s (class %s, dst %s) a 0x%08x b 0x%08x c 0x%08x k 0x%08x: rtl 0x%08x numerics 0x%08x",
                      static_cast<long long>(gi[j]), fname.c_str(), v.cls, num::fmt_name(v.fmt), v.a, v.b, v.c, v.k, got,
                      want);
        rep_.first_mismatch = line;
        if (!v.row.empty()) {  // a reduction: a is the row
          char first[16];
          std::snprintf(first, sizeof first, "0x%08x", v.row.front());
          rep_.first_mismatch += " (a: a row of " + std::to_string(v.row.size()) + " elements, the first " + first + ")";
          if (rowop) rep_.first_mismatch += ", element " + std::to_string(el) + " of the row";
        }
      }
    }
    if (!v0.stall && sfu_passes(v0.func) > 1) {
      // A multi-pass row operator: its rows one after the other, each its
      // passes' beats + a fixed number of clocks, a fixed gap between rows
      // (the hardware file's sfu_row_gap_cycles): the per-row clocks beyond
      // the beats must come out whole, and so the same for every row.
      const int64_t rows_n = int64_t(rows.size()), gap = params_.timing.sfu_row_gap_cycles.value;
      const int64_t beyond = run.cycles - run.beats - (rows_n - 1) * gap, lat = beyond / rows_n;
      ++rep_.classes[fname + ":latency=" + std::to_string(lat)];
      if (beyond != lat * rows_n) {
        ++rep_.mismatches;
        ++rep_.classes[fname + ":FAIL"];
        if (rep_.first_mismatch_index < 0 || gi.front() < rep_.first_mismatch_index) {
          rep_.first_mismatch_index = gi.front();
          rep_.first_mismatch = "vector " + std::to_string(gi.front()) + ": " + fname + " stream of " +
                                std::to_string(rows_n) + " rows took " + std::to_string(run.cycles) + " clocks, beats " +
                                std::to_string(run.beats) + ": not a whole number of clocks a row beyond them";
        }
      }
      // The model: each row as one instruction of that row, the gaps between.
      double model = double(rows_n - 1) * double(gap);
      for (int64_t n : rows)
        model += timing::sfu_cycles(params_, cvo_instruction(v0.func, size_t(n), {n})) -
                 double(params_.timing.sfu_command_cycles.value);
      rep_.cycles[fname + " stream"].add(double(run.cycles), model);
      rep_.cycles[fname + " latency"].add(double(lat), timing::sfu_latency_cycles(params_, v0.func));
    } else if (!v0.stall) {
      // One element a clock a lane from the first in, each a fixed latency
      // later: a bubble or a stall of the unit's own is a mismatch.
      const int64_t want = run.beats + run.latency;
      ++rep_.classes[fname + ":latency=" + std::to_string(run.latency)];
      if (run.cycles != want) {
        ++rep_.mismatches;
        ++rep_.classes[fname + ":FAIL"];
        if (rep_.first_mismatch_index < 0 || gi.front() < rep_.first_mismatch_index) {
          rep_.first_mismatch_index = gi.front();
          rep_.first_mismatch = "vector " + std::to_string(gi.front()) + ": " + fname + " stream of " +
                                std::to_string(in.size()) + " elements took " + std::to_string(run.cycles) +
                                " clocks, not beats " + std::to_string(run.beats) + " + latency " +
                                std::to_string(run.latency) + " = " + std::to_string(want);
        }
      }
      // The stream is timed from its first element in: the model's term
      // less the command's transfer (which the cosim's command precedes).
      const double model =
          timing::sfu_cycles(params_, cvo_instruction(v0.func, in.size(), rows)) -
          double(params_.timing.sfu_command_cycles.value);
      rep_.cycles[fname + " stream"].add(double(run.cycles), model);
      rep_.cycles[fname + " latency"].add(double(run.latency), timing::sfu_latency_cycles(params_, v0.func));
    }
    if (rep_.run / 100000 != (rep_.run - int64_t(g.size())) / 100000)
      log_ << "cosim sfu: " << rep_.run << " vectors, " << rep_.mismatches << " mismatches\n";
  }

  const CosimOptions& o_;
  timing::Params params_;
  std::ostream& log_;
  CosimReport& rep_;
  SfuRtl rtl_;
  std::exception_ptr error_;
};

}  // namespace

CosimReport cosim_sfu(const CosimOptions& o, std::ostream& log) {
  const HwConfig hw = load_hw_config(o.hw);
  CosimReport rep;
  sc::quiet_reports();
  Harness h("cosim", o, hw, log, rep);
  sc_core::sc_start();
  if (h.error_) std::rethrow_exception(h.error_);
  rep.rtl_cycles = double(h.rtl_.total_cycles());
  return rep;
}

}  // namespace n3::rtl
