#include "sim/systemc/memory_units.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace n3::sc {

DdrHp::DdrHp(sc_core::sc_module_name n, Context& c) : MemTarget(n, c), c_(c), channel_("channel", c, "DDR") {
  for (int64_t i = 0; i < c.p.memory.hp_ports.value; ++i)
    hp_.push_back(std::make_unique<Port>(("hp" + std::to_string(i)).c_str(), c, "HP" + std::to_string(i)));
}

Xfer DdrHp::transfer(const Req& r) {
  const timing::Params& p = c_.p;
  const double now = c_.now_ps(), t0 = std::max(r.not_before_ps, now);
  const int64_t burst = p.timing.ddr_burst_bytes.value, moved = (r.bytes + burst - 1) / burst * burst;
  const double chan_ps = double(moved) / p.ddr_sustained_bytes_per_s() * 1e12;
  const double port_ps = double(moved) / double(r.ports) / p.hp_bytes_per_s(1) * 1e12;
  channel_.line.forget_before(now);
  for (auto& h : hp_) h->line.forget_before(now);
  // The r.ports ports whose gaps open first, then one start all of them and the channel share.
  std::vector<size_t> order(hp_.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::vector<double> first(hp_.size());
  for (size_t i = 0; i < hp_.size(); ++i) first[i] = hp_[i]->line.earliest(t0, port_ps);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  order.resize(static_cast<size_t>(r.ports));
  std::vector<std::pair<const Timeline*, double>> need{{&channel_.line, chan_ps}};
  for (size_t i : order) need.push_back({&hp_[i]->line, port_ps});
  const double s = earliest_common(need, t0);
  channel_.book(r, s, chan_ps, r.bytes);
  const int64_t per = r.bytes / r.ports, rest = r.bytes % r.ports;
  std::sort(order.begin(), order.end());
  for (size_t k = 0; k < order.size(); ++k) hp_[order[k]]->book(r, s, port_ps, per + (int64_t(k) < rest ? 1 : 0));
  (r.write ? written_ : read_) += static_cast<uint64_t>(r.bytes);
  return {s, s + std::max(chan_ps, port_ps) + timing::ddr_latency_ps(p)};
}

std::vector<uint64_t> DdrHp::port_bytes() const {
  std::vector<uint64_t> b;
  for (const auto& h : hp_) b.push_back(h->bytes());
  return b;
}

void DdrHp::reset_counts() {
  channel_.reset_counts();
  for (auto& h : hp_) h->reset_counts();
  read_ = written_ = 0;
}

L2::L2(sc_core::sc_module_name n, Context& c) : MemTarget(n, c), c_(c) {
  for (int64_t i = 0; i < c.p.timing.l2_ports.value; ++i)
    ports_.push_back(std::make_unique<Port>(("port" + std::to_string(i)).c_str(), c, "L2 port " + std::to_string(i)));
}

Xfer L2::transfer(const Req& r) {
  const double now = c_.now_ps(), dur = timing::l2_ps(c_.p, r.bytes), t0 = std::max(r.not_before_ps, now);
  size_t best = 0;
  double best_start = 0;
  for (size_t i = 0; i < ports_.size(); ++i) {
    ports_[i]->line.forget_before(now);
    const double s = ports_[i]->line.earliest(t0, dur);
    if (i == 0 || s < best_start) best = i, best_start = s;
  }
  ports_[best]->book(r, best_start, dur, r.bytes);
  return {best_start, best_start + dur};
}

uint64_t L2::bytes() const {
  uint64_t b = 0;
  for (const auto& p : ports_) b += p->bytes();
  return b;
}

void L2::reset_counts() {
  for (auto& p : ports_) p->reset_counts();
}

WeightBuffer::WeightBuffer(sc_core::sc_module_name n, Context& c)
    : sc_core::sc_module(n),
      c_(c),
      free_at_(static_cast<size_t>(c.p.timing.wbuf_tiles.value), 0.0),
      takes_(free_at_.size(), 0) {}

int64_t WeightBuffer::tile_bytes() const { return c_.p.weight_tile_bytes(); }

WbufIf::Slot WeightBuffer::take() {
  while (std::isinf(free_at_[next_])) sc_core::wait(held_);
  Slot s;
  try_take(&s, free_at_[next_]);
  return s;
}

bool WeightBuffer::try_take(Slot* s, double free_by_ps) {
  if (std::isinf(free_at_[next_]) || free_at_[next_] > free_by_ps) return false;
  *s = {int(next_), free_at_[next_], takes_[next_]++};
  free_at_[next_] = std::numeric_limits<double>::infinity();
  next_ = (next_ + 1) % free_at_.size();
  return true;
}

void WeightBuffer::park(int slot, double landed_ps) {
  free_at_[size_t(slot)] = landed_ps;
  held_.notify(sc_core::SC_ZERO_TIME);
}

bool WeightBuffer::reclaim(const Slot& s) {
  const size_t i = size_t(s.index);
  if (takes_[i] != s.takes + 1) return false;
  free_at_[i] = std::numeric_limits<double>::infinity();
  return true;
}

void WeightBuffer::hold(int slot, int64_t bytes, double until_ps) {
  free_at_[size_t(slot)] = until_ps;
  held_.notify(sc_core::SC_ZERO_TIME);
  bytes_ += static_cast<uint64_t>(bytes);
}

void WeightBuffer::extend(int slot, double until_ps) {
  double& f = free_at_[size_t(slot)];
  if (!std::isinf(f)) f = std::max(f, until_ps);
}

}  // namespace n3::sc
