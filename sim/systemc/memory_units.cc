#include "sim/systemc/memory_units.h"

#include <algorithm>

namespace n3::sc {

DdrHp::DdrHp(sc_core::sc_module_name n, Context& c)
    : sc_core::sc_module(n), c_(c), port_bytes_(static_cast<size_t>(c.p.hp_ports), 0) {}

Xfer DdrHp::reserve(int /*engine*/, int64_t bytes, int64_t ports, bool write, double not_before_ps) {
  const double start = std::max({free_ps_, not_before_ps, c_.now_ps()});
  const double occ = timing::ddr_occupancy_ps(c_.p, bytes, ports);
  free_ps_ = start + occ;
  busy_ += occ;
  (write ? written_ : read_) += static_cast<uint64_t>(bytes);
  // Striped over `ports` ports, starting where the last transfer left off.
  const int64_t per = bytes / ports, rest = bytes % ports;
  for (int64_t i = 0; i < ports; ++i) {
    const size_t port = static_cast<size_t>((next_port_ + i) % c_.p.hp_ports);
    port_bytes_[port] += static_cast<uint64_t>(per + (i < rest ? 1 : 0));
  }
  next_port_ = (next_port_ + ports) % c_.p.hp_ports;
  return {start, start + occ + timing::ddr_latency_ps(c_.p)};
}

L2::L2(sc_core::sc_module_name n, Context& c)
    : sc_core::sc_module(n), c_(c), free_ps_(static_cast<size_t>(c.p.l2_ports), 0.0) {}

Xfer L2::reserve(int64_t bytes, double not_before_ps) {
  auto it = std::min_element(free_ps_.begin(), free_ps_.end());
  const double start = std::max({*it, not_before_ps, c_.now_ps()});
  *it = start + timing::l2_ps(c_.p, bytes);
  bytes_ += static_cast<uint64_t>(bytes);
  return {start, *it};
}

}  // namespace n3::sc
