// `n3 cosim --unit sfu-count`: the SFU's 1/n of a row of n elements
// (n3_sfu_row_pkg::inv_count, which n3_sfu forms from its count of a row's
// elements for RMS, RMSNORM, GTOPK and MAGMATCH) against num::inv_count, bit
// for bit. Vector i is the row length n = i + 1, so `--vectors 16777215`
// checks every length the ISA allows (a descriptor's cols is 24 bits; the
// default suite does, tests/rtl_sfu_test.cc). The lengths go through the
// Verilated n3_sfu_inv_count kLanes at a time (one SystemC step lets them
// settle). N3_COSIM_SFU_COUNT_INJECT=<n> flips the lowest bit of the RTL's
// 1/n for length n, to show a wrong result is caught.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <Vn3_sfu_inv_count.h>
#include <systemc.h>
#include <verilated.h>
#include <verilated_fst_c.h>
#pragma GCC diagnostic pop

#include <cstdlib>
#include <memory>
#include <string>

#include "base/error.h"
#include "golden/numerics/ops.h"
#include "rtl_bridge/cosim.h"
#include "rtl_bridge/waveform.h"

namespace n3::rtl {
namespace {

constexpr int kLanes = 64;  // n3_sfu_inv_count's W (its default)

struct Bench {
  sc_core::sc_signal<sc_dt::sc_bv<kLanes * 32>> n{"n"}, inv{"inv"};
  Vn3_sfu_inv_count top{"n3_sfu_inv_count"};
  Bench() {
    top.n(n);
    top.inv(inv);
  }
};

}  // namespace

CosimReport cosim_sfu_count(const CosimOptions& o, std::ostream& log) {
  static bool elaborated = false;
  require(!elaborated, "n3 cosim --unit sfu-count: SystemC elaborates once per process (run one unit per n3 cosim)");
  elaborated = true;
  // n is int_to_f32's signed 32-bit input.
  require(o.vectors <= 0x7fffffffll, "n3 cosim --unit sfu-count: --vectors is a row length, at most 2^31 - 1");
  const char* inj = std::getenv("N3_COSIM_SFU_COUNT_INJECT");
  const int64_t inject = inj && *inj ? std::atoll(inj) : -1;
  Waveform wave(o.vcd);  // before the model: it turns Verilator's tracing on
  auto bench = std::make_unique<Bench>();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  wave.open([&](VerilatedFstC* f) { bench->top.trace(f, 99); });

  CosimReport r;
  log << "cosim sfu-count: row lengths " << (o.shard + 1) << " .. " << o.vectors << " (shard " << o.shard << "/"
      << o.shards << ")\n";
  const int64_t stride = o.shards;
  const int64_t total = o.vectors > o.shard ? (o.vectors - o.shard + stride - 1) / stride : 0;
  const int64_t step = total >= 2000000 ? total / 8 : 0;
  int64_t done = 0;
  for (int64_t i0 = o.shard; i0 < o.vectors; i0 += int64_t(kLanes) * stride) {
    // This evaluation's lengths: up to kLanes of the shard's indices.
    int64_t len[kLanes];
    int used = 0;
    sc_dt::sc_bv<kLanes * 32> in;
    for (int64_t i = i0; used < kLanes && i < o.vectors; i += stride) {
      len[used] = i + 1;
      in.set_word(used++, uint32_t(i + 1));
    }
    bench->n.write(in);
    sc_core::sc_start(1, sc_core::SC_NS);
    const sc_dt::sc_bv<kLanes * 32>& out = bench->inv.read();
    for (int l = 0; l < used; ++l) {
      uint32_t got = out.get_word(l);
      if (len[l] == inject) got ^= 1u;
      const uint32_t want = num::f2u(num::inv_count(len[l]));
      const bool pow2 = (len[l] & (len[l] - 1)) == 0;
      ++r.classes[pow2 ? "inv_count.power_of_two" : "inv_count.other"];
      ++r.run;
      if (got == want) continue;
      if (r.mismatches++ == 0 || len[l] - 1 < r.first_mismatch_index) {
        char line[160];
        std::snprintf(line, sizeof line, "vector %lld: inv_count(%lld): rtl 0x%08x, numerics 0x%08x",
                      static_cast<long long>(len[l] - 1), static_cast<long long>(len[l]), got, want);
        r.first_mismatch_index = len[l] - 1;
        r.first_mismatch = line;
      }
    }
    done += used;
    if (step && done / step != (done - used) / step)
      log << "cosim sfu-count: " << done << "/" << total << " lengths, " << r.mismatches << " mismatches\n";
  }
  wave.close();
  bench->top.final();
  return r;
}

}  // namespace n3::rtl
