// The memory side of the NPU: the DDR controller behind the AXI HP ports,
// and the L2 scratchpad's ports. Both are transfer-level: a transfer
// reserves its resource for bytes / bandwidth and completes after the fixed
// latency, so time advances per transfer, never per burst or per cycle.
// Each is an sc_module so a Verilated AXI/DDR or L2 RTL unit can take its
// place behind the same reserve() call (docs/timing.md).
#pragma once
#include <systemc>

#include <algorithm>
#include <vector>

#include "sim/systemc/common.h"

namespace n3::sc {

struct Xfer {
  double start_ps, end_ps;  // channel start; data available (latency included)
};

// DDR behind `hp_ports` AXI HP ports at the AXI clock. One shared channel
// (the DDR controller): transfers queue on it in request order; a transfer
// striped over k ports moves at min(DDR peak x efficiency, k x port bandwidth),
// rounded up to whole bursts, then pays DDR latency plus the AXI -> core
// clock-domain crossing.
class DdrHp : public sc_core::sc_module {
 public:
  DdrHp(sc_core::sc_module_name n, Context& c);
  // Reserves a transfer starting no earlier than `not_before_ps`.
  Xfer reserve(int engine, int64_t bytes, int64_t ports, bool write, double not_before_ps);
  const std::vector<uint64_t>& port_bytes() const { return port_bytes_; }
  uint64_t bytes_read() const { return read_; }
  uint64_t bytes_written() const { return written_; }
  double busy_ps() const { return busy_; }
  void reset_counts() {
    std::fill(port_bytes_.begin(), port_bytes_.end(), 0);
    read_ = written_ = 0;
    busy_ = 0;
  }

 private:
  Context& c_;
  double free_ps_ = 0, busy_ = 0;
  std::vector<uint64_t> port_bytes_;
  uint64_t read_ = 0, written_ = 0;
  int64_t next_port_ = 0;
};

// The L2 scratchpad: `l2_ports` ports, each moving `l2_port_words` L2 words
// (one per bank it spans) per core clock; a transfer takes the port that
// frees first. Bank conflicts between ports are not modelled.
class L2 : public sc_core::sc_module {
 public:
  L2(sc_core::sc_module_name n, Context& c);
  Xfer reserve(int64_t bytes, double not_before_ps);
  uint64_t bytes() const { return bytes_; }
  void reset_counts() { bytes_ = 0; }

 private:
  Context& c_;
  // Per port, the booked [start, end) intervals in time order. A transfer
  // takes the earliest gap that holds it, so a write booked for the future
  // (an engine's result) does not block the port until then.
  std::vector<std::vector<std::pair<double, double>>> booked_;
  uint64_t bytes_ = 0;
};

}  // namespace n3::sc
