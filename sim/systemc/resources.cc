#include "sim/systemc/resources.h"

#include <algorithm>

#include "sim/systemc/common.h"

namespace n3::sc {

double Timeline::earliest(double t0, double dur) const {
  double s = t0;
  for (const auto& [a, b] : iv_) {
    if (b <= s) continue;
    if (a >= s + dur) break;
    s = b;
  }
  return s;
}

void Timeline::book(double start, double dur) {
  if (dur <= 0) return;
  const std::pair<double, double> iv{start, start + dur};
  iv_.insert(std::upper_bound(iv_.begin(), iv_.end(), iv), iv);
}

void Timeline::forget_before(double t) {
  // Disjoint and sorted by start, so also sorted by end.
  iv_.erase(iv_.begin(), std::find_if(iv_.begin(), iv_.end(), [&](const auto& iv) { return iv.second > t; }));
}

double earliest_common(const std::vector<std::pair<const Timeline*, double>>& need, double t0) {
  // Each pass moves s to the latest of the resources' earliest gaps; it
  // stops when all agree. s only grows and bookings are finite, so it ends.
  double s = t0;
  while (true) {
    double next = s;
    for (const auto& [tl, dur] : need) next = std::max(next, tl->earliest(s, dur));
    if (next == s) return s;
    s = next;
  }
}

MemTarget::MemTarget(sc_core::sc_module_name n, Context& c) : sc_core::sc_module(n), socket("socket"), mc_(c) {
  socket.register_b_transport(this, &MemTarget::b_transport);
  socket.register_transport_dbg(this, &MemTarget::transport_dbg);
}

unsigned MemTarget::transport_dbg(int /*id*/, tlm::tlm_generic_payload& t) {
  XferExt* x = nullptr;
  t.get_extension(x);
  if (!x || !t.get_data_ptr() || !mc_.sim) return 0;
  sim::SpaceMemory& m = mc_.sim->memory().space(static_cast<isa::Space>(x->space));
  const uint64_t n = t.get_data_length();
  if (!m.in_range(t.get_address(), n)) {
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  if (t.is_write())
    m.write(t.get_address(), t.get_data_ptr(), n);
  else
    m.read(t.get_address(), t.get_data_ptr(), n);
  t.set_response_status(tlm::TLM_OK_RESPONSE);
  return static_cast<unsigned>(n);
}

void MemTarget::b_transport(int /*id*/, tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
  XferExt* x = nullptr;
  t.get_extension(x);
  if (!x) {
    t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const double now = sc_core::sc_time_stamp().to_seconds() * 1e12;
  const Req r{x->engine, x->pc, x->space, t.get_address(), int64_t(t.get_data_length()), x->ports,
              t.is_write(), now + delay.to_seconds() * 1e12};
  const Xfer done = transfer(r);
  x->start_ps = done.start_ps;
  double at = now;
  if (wait_for_start_ && done.start_ps > now) {
    sc_core::wait(sc_core::sc_time(done.start_ps - now, sc_core::SC_PS));
    at = sc_core::sc_time_stamp().to_seconds() * 1e12;
  }
  delay = sc_core::sc_time(std::max(0.0, done.end_ps - at), sc_core::SC_PS);
  t.set_response_status(tlm::TLM_OK_RESPONSE);
}

Port::Port(sc_core::sc_module_name n, Context& c, const std::string& track_name)
    : sc_core::sc_module(n), c_(c), track_name_(track_name), track_(c.add_track(track_name)) {}

void Port::book(const Req& r, double start, double dur, int64_t bytes) {
  line.book(start, dur);
  busy_ += dur;
  bytes_ += static_cast<uint64_t>(bytes);
  if (c_.record_slices && dur > 0) c_.slices.push_back({track_, r.pc, start, dur, r.write ? uint8_t(2) : uint8_t(1), r.engine});
}

}  // namespace n3::sc
