// The transfer-level building blocks of the SystemC memory units and the
// interfaces the engines reach them through.
//
// A Timeline is one resource that moves one transfer at a time (a DDR
// channel, an AXI HP port, an L2 port): it keeps its booked [start, end)
// intervals, and a new transfer takes the earliest gap that holds it. A
// transfer booked for the future (an engine's result write, known when the
// instruction starts) therefore leaves the time before it free for others.
//
// The engines reach memory through TLM-2.0 sockets (loosely timed:
// b_transport with an annotated delay) and the weight buffers through
// WbufIf, so a Verilated AXI/DDR or L2 unit behind a TLM transactor can
// replace a model without touching the engines (docs/timing.md).
#pragma once
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace n3::sc {

struct Context;

struct Xfer {
  double start_ps, end_ps;  // first resource start; data available (latency included)
};

// One transfer request from an engine.
struct Req {
  int engine;           // initiator (isa::Engine)
  uint32_t pc;          // instruction it belongs to (trace slices)
  int space;            // isa::Space of the bytes (DDR, L2, WBUF)
  uint64_t addr;        // first byte (the view's first row; rows may be strided)
  int64_t bytes;
  int64_t ports;        // AXI HP ports it stripes over (DDR only)
  bool write;
  double not_before_ps; // earliest start
};

class Timeline {
 public:
  // Earliest s >= t0 such that [s, s + dur) overlaps no booking.
  double earliest(double t0, double dur) const;
  void book(double start, double dur);
  // Drops bookings that ended at or before t (they can no longer matter).
  void forget_before(double t);

 private:
  std::vector<std::pair<double, double>> iv_;  // disjoint, in time order
};

// Earliest common start s >= t0 at which every (timeline, duration) pair is
// free for its duration.
double earliest_common(const std::vector<std::pair<const Timeline*, double>>& need, double t0);

// A port-like resource as its own module: a timeline, its busy time and
// bytes, and an optional trace track.
class Port : public sc_core::sc_module {
 public:
  Port(sc_core::sc_module_name n, Context& c, const std::string& track_name);
  Timeline line;
  void book(const Req& r, double start, double dur, int64_t bytes);
  double busy_ps() const { return busy_; }
  uint64_t bytes() const { return bytes_; }
  void reset_counts() { busy_ = 0, bytes_ = 0; }
  const std::string& track_name() const { return track_name_; }

 private:
  Context& c_;
  std::string track_name_;
  int track_;
  double busy_ = 0;
  uint64_t bytes_ = 0;
};

// What a payload carries besides command, address and length: who asked,
// over how many HP ports, and (set by the target) when the transfer started.
// A timed payload's data pointer is null: the bytes live in the functional
// core (sim::FuncSim), which has already executed the instruction. The
// debug transport (transport_dbg) carries data: an RTL unit reads its
// operands and writes its results through it, from and to the functional
// core's memory of the payload's space.
struct XferExt : tlm::tlm_extension<XferExt> {
  int engine = 0;
  uint32_t pc = 0;
  int space = 0;
  int64_t ports = 1;
  double start_ps = 0;  // out: the first resource's start
  tlm::tlm_extension_base* clone() const override { return new XferExt(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const XferExt&>(e); }
};

// A memory target (DDR behind the HP ports, or the L2): a multi-initiator
// TLM target socket whose b_transport books the transfer. On entry the
// delay is how far after now the transfer may start; on return, how far
// after now its data are available.
class MemTarget : public sc_core::sc_module {
 public:
  MemTarget(sc_core::sc_module_name n, Context& c);
  tlm_utils::multi_passthrough_target_socket<MemTarget> socket;
  virtual Xfer transfer(const Req& r) = 0;
  // Conformance mode: b_transport waits until the transfer starts before it
  // returns (as a transactor driving RTL would), so the initiators must read
  // the delay against the time at return. Same cycles either way.
  void set_wait_for_start(bool w) { wait_for_start_ = w; }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  unsigned transport_dbg(int id, tlm::tlm_generic_payload& t);
  Context& mc_;
  bool wait_for_start_ = false;
};

// The weight buffers between the HP ports and the MAC engines: `tiles`
// slots used in turn by whichever engine streams weights. take() hands the
// next slot to the caller alone (waiting while another engine has taken it
// and not yet said until when it holds it) and says when it is free; hold()
// then books it until the tile has been consumed.
class WbufIf : public virtual sc_core::sc_interface {
 public:
  struct Slot {
    int index;
    double free_ps;     // the slot's previous tile is consumed at
    uint64_t takes = 0;  // how often the slot had been taken before (prefetch: see reclaim)
  };
  virtual int64_t tile_bytes() const = 0;
  virtual Slot take() = 0;  // may wait (call from a thread)
  // The weight prefetch (timing.wbuf_prefetch_tiles): take the next slot in
  // turn only if no engine has it taken now and its previous tile is
  // consumed by `free_by_ps` (false: nothing taken), and
  // park a prefetched tile there: the slot is free for any taker once the
  // tile has landed (a later take overwrites it, the prefetch is lost).
  // reclaim takes the parked slot for the engine that prefetched it when no
  // one has taken it since (`s.takes` unchanged); false: the tile is lost.
  virtual bool try_take(Slot* s, double free_by_ps) = 0;
  virtual void park(int slot, double landed_ps) = 0;
  virtual bool reclaim(const Slot& s) = 0;
  virtual void hold(int slot, int64_t bytes, double until_ps) = 0;
  // A held slot stays taken until `until_ps` if that is later (a tile whose
  // last row continues in the next tile: known once that one has landed).
  // No effect once the slot has been taken again.
  virtual void extend(int slot, double until_ps) = 0;
};

}  // namespace n3::sc
