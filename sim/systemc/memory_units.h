// The memory side of the NPU, each unit its own sc_module behind a TLM-2.0
// target socket (MemTarget) or WbufIf (resources.h): the AXI HP ports and the DDR controller, the L2
// scratchpad's ports, and the weight buffers. All are transfer-level: a
// transfer books each resource it crosses for bytes / bandwidth in the
// earliest gap all of them share and completes after the fixed latency, so
// time advances per transfer, never per burst or per cycle (docs/timing.md).
#pragma once
#include <systemc>

#include <memory>
#include <vector>

#include "sim/systemc/common.h"
#include "sim/systemc/resources.h"

namespace n3::sc {

// DDR behind `hp_ports` AXI HP ports at the AXI clock. A transfer striped
// over k ports books the DDR controller's channel (bytes, rounded up to
// whole bursts, at DDR peak x efficiency) and k ports (their shares at the
// port width x AXI clock) from one common start; it completes when the
// slower of the two has moved it, plus DDR latency and the AXI -> core
// clock-domain crossing (cdc_sync_cycles core clocks in the async FIFO,
// timing::cdc_latency_ps).
// The k ports are those that free first (lowest index on ties).
class DdrHp : public MemTarget {
 public:
  DdrHp(sc_core::sc_module_name n, Context& c);
  Xfer transfer(const Req& r) override;
  std::vector<uint64_t> port_bytes() const;
  uint64_t bytes_read() const { return read_; }
  uint64_t bytes_written() const { return written_; }
  double busy_ps() const { return channel_.busy_ps(); }  // the DDR channel's
  void reset_counts();
  const Port& channel() const { return channel_; }
  const std::vector<std::unique_ptr<Port>>& hp() const { return hp_; }

 private:
  Context& c_;
  Port channel_;
  std::vector<std::unique_ptr<Port>> hp_;
  uint64_t read_ = 0, written_ = 0;
};

// The L2 scratchpad: `l2_ports` ports, each moving `l2_port_words` L2 words
// per core clock (a port spans that many banks); a transfer takes the port
// whose gap starts first. The pccx L2 is true dual-port URAM, so the ports
// never conflict on a bank; a design whose ports share banks would need a
// bank timeline here.
class L2 : public MemTarget {
 public:
  L2(sc_core::sc_module_name n, Context& c);
  Xfer transfer(const Req& r) override;
  uint64_t bytes() const;
  void reset_counts();
  const std::vector<std::unique_ptr<Port>>& ports() const { return ports_; }

 private:
  Context& c_;
  std::vector<std::unique_ptr<Port>> ports_;
};

// The weight buffers (memory.weight_fifos x weight_fifo_bytes) as
// timing.wbuf_tiles slots of equal size used in turn by the MAC engines'
// weight streams (2: double buffering: one slot fills from DDR while the
// MACs consume the other). The GEMV and the GEMM share them: a slot taken
// by one is not handed to the other until it is booked and consumed.
class WeightBuffer : public sc_core::sc_module, public WbufIf {
 public:
  WeightBuffer(sc_core::sc_module_name n, Context& c);
  int64_t tile_bytes() const override;
  Slot take() override;
  void hold(int slot, int64_t bytes, double until_ps) override;
  void extend(int slot, double until_ps) override;
  bool try_take(Slot* s, double free_by_ps) override;
  void park(int slot, double landed_ps) override;
  bool reclaim(const Slot& s) override;
  uint64_t bytes() const { return bytes_; }
  void reset_counts() { bytes_ = 0; }

 private:
  Context& c_;
  std::vector<double> free_at_;  // +inf while taken and not yet held
  std::vector<uint64_t> takes_;  // per slot, how often it was taken (a parked prefetch is valid while unchanged)
  size_t next_ = 0;
  sc_core::sc_event held_;
  uint64_t bytes_ = 0;
};

}  // namespace n3::sc
