// What the RTL GEMV and GEMM units (gemv_unit.cc, gemm_unit.cc) share in
// the SystemC model's MAC engines' places, in one class so the two bridges
// stream weights, compare and inject alike:
//   - the shadow memory the engine reads its operands from (shadow.h);
//   - the weight operand's stream: DDR tiles booked through the weight
//     buffers by an SC thread as the timing model books them, the engine's
//     driver taking rows only once their tile has landed (WeightFeed), a
//     tile's buffer slot released once the engine has taken its rows, so a
//     stalled stream stalls the RTL; L2 weights land row by row over one L2
//     port read; WBUF weights are there;
//   - the bit-for-bit comparison of the engine's results with the
//     functional core's, and the test hook that flips one result bit.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "rtl_bridge/shadow.h"
#include "rtl_bridge/weight_feed.h"
#include "sim/systemc/engines.h"

namespace n3::rtl {

// One MAC instruction run on an RTL engine.
struct MacInsnRecord {
  uint32_t pc = 0;
  uint64_t dyn = 0;
  std::string what;  // "gemv.mv [1,64]x[256,64]": mnemonic and shapes
  double rtl_cycles = 0;    // the RTL: first cycle to last result (the result write not included)
  double model_cycles = 0;  // the timing model for the same instruction and tile arrivals
  double stall_cycles = 0;  // cycles the RTL waited on the weight stream
};

// The per-instruction comparison after a run, every line prefixed `who`
// ("rtl gemv"): the histogram of |rtl - model| / rtl, the counts within 2 %
// and within one cycle, the worst instruction, and the totals.
void print_mac_comparison(const char* who, const char* engine, const std::vector<MacInsnRecord>& recs, std::FILE* out);

class RtlMacUnit : public sc::MacUnit {
 public:
  SC_HAS_PROCESS(RtlMacUnit);
  // `who` ("rtl gemv") prefixes messages; engine 2 (GEMV) or 3 (GEMM).
  RtlMacUnit(sc_core::sc_module_name n, sc::Context& c, int engine, std::string who);

 protected:
  // Starts the w operand's stream at `now` (DDR tiles not before
  // `tiles_from`), cut into tiles of `tile_bytes` (the timing model's cut).
  void start_stream(const sim::Issued& in, double now, double tiles_from, int64_t tile_bytes);
  // Returns once the stream's last tile is booked.
  void finish_stream();
  // The w rows' arrivals for the timing model's stream-end rule
  // (timing::mac_stream_end_ps), on the clock from `now`; empty for WBUF weights.
  std::vector<std::pair<double, int64_t>> arrivals(double now, double clk) const;
  bool ddr_stream() const { return ddr_stream_; }
  size_t tiles() const { return tiles_.size(); }
  // Landing of the first / last DDR tile (on chip: when the rows are ready).
  double first_landed_ps() const { return tiles_.empty() ? w_ready_ps_ : tiles_.front().landed_ps; }
  double last_landed_ps() const { return tiles_.empty() ? w_ready_ps_ : tiles_.back().landed_ps; }
  WeightFeed& feed() { return feed_; }

  // "" when every result in `out` (dst row-major) equals the functional
  // core's bit for bit, else the first difference named by instruction,
  // tensor and element. Bit for bit: both sides make every NaN the canonical
  // 0x7FC00000 (docs/numerics.md), so a NaN of another sign or payload is a
  // difference too.
  std::string compare(const sim::Issued& in, const std::vector<float>& out) const;
  // `env`=k flips the lowest bit of out[0] when `index` (the instructions
  // this unit ran before, from 0) is k, so a test can show that a
  // difference is caught and reported.
  static void inject(const char* env, size_t index, std::vector<float>& out);
  // The engine's results into the shadow, then through the debug transport
  // into the modelled memory.
  void store_results(const sim::Issued& in, const std::vector<float>& out);
  // The record of one instruction: the RTL ran from t0 to rtl_end (sampled
  // at falling edges: the last result was there half a clock before), the
  // model's prediction for the same arrivals ends at model_end.
  static MacInsnRecord record(const sim::Issued& in, double now, double t0, double rtl_end, double model_end,
                              double clk, int64_t weight_stall_cycles);
  // "[rows,cols]" of a view, for messages and records.
  static std::string shape(const sim::View& v);

  Shadow shadow_;
  const std::string who_;

 private:
  struct Tile {
    int slot = -1;
    int64_t begin = 0, bytes = 0;
    double landed_ps = 0;
    bool released = false;
  };
  struct Feed : WeightFeed {
    explicit Feed(RtlMacUnit& u) : u(u) {}
    void wait_rows(int64_t end) override { u.wait_rows(end); }
    void consumed_rows(int64_t end) override { u.consumed(end); }
    RtlMacUnit& u;
  };
  void feed_thread();
  void wait_rows(int64_t end);
  void consumed(int64_t end);

  Feed feed_;
  std::vector<Tile> tiles_;
  size_t booked_ = 0;
  bool ddr_stream_ = false, w_on_l2_ = false;
  int64_t per_row_ = 1, rows_ = 0;
  uint64_t stream_base_ = 0;
  double stream_start_ps_ = 0, w_ready_ps_ = 0, w_start_ps_ = 0;
  sc_core::sc_event feed_start_, booked_event_;
};

}  // namespace n3::rtl
