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
    : sc_core::sc_module(n), c_(c), booked_(static_cast<size_t>(c.p.l2_ports)) {}

Xfer L2::reserve(int64_t bytes, double not_before_ps) {
  const double now = c_.now_ps(), dur = timing::l2_ps(c_.p, bytes);
  const double t0 = std::max(not_before_ps, now);
  size_t best = 0;
  double best_start = 0;
  for (size_t p = 0; p < booked_.size(); ++p) {
    auto& v = booked_[p];
    v.erase(v.begin(), std::find_if(v.begin(), v.end(), [&](const auto& iv) { return iv.second > now; }));
    double s = t0;
    for (const auto& [a, b] : v) {
      if (b <= s) continue;
      if (a >= s + dur) break;
      s = b;
    }
    if (p == 0 || s < best_start) best = p, best_start = s;
  }
  auto& v = booked_[best];
  v.insert(std::upper_bound(v.begin(), v.end(), std::make_pair(best_start, best_start + dur)),
           {best_start, best_start + dur});
  bytes_ += static_cast<uint64_t>(bytes);
  return {best_start, best_start + dur};
}

}  // namespace n3::sc
