#include "rtl_bridge/shadow.h"

#include <cinttypes>
#include <cstdio>
#include <vector>

#include "base/error.h"

namespace n3::rtl {

void Shadow::load(const sim::Memory& model, const sim::View& v, uint32_t pc) {
  if (!mem_)
    mem_ = std::make_unique<sim::Memory>(sim::Capacities{model.space(isa::Space::DDR).capacity(),
                                                         model.space(isa::Space::L2).capacity(),
                                                         model.space(isa::Space::WBUF).capacity()});
  copy(v, true, pc);
}

void Shadow::store(const sim::View& v, uint32_t pc) { copy(v, false, pc); }

void Shadow::copy(const sim::View& v, bool to_shadow, uint32_t pc) {
  if (!v.present()) return;
  require(mem_ != nullptr, who_ + ": the shadow memory is stored before it is loaded");
  std::vector<uint8_t> buf;
  auto one = [&](uint64_t addr, int64_t n) {
    if (n <= 0) return;
    buf.resize(static_cast<size_t>(n));
    if (!to_shadow) mem_->space(v.d.space).read(addr, buf.data(), uint64_t(n));
    debug(v.d.space, addr, buf.data(), n, !to_shadow, pc);
    if (to_shadow) mem_->space(v.d.space).write(addr, buf.data(), uint64_t(n));
  };
  for (int64_t r = 0; r < v.rows; ++r) {
    one(v.row_addr(r), v.row_bytes());
    if (v.scaled()) one(v.scale_addr(r), v.scale_bytes());
  }
}

void Shadow::debug(isa::Space space, uint64_t addr, uint8_t* data, int64_t n, bool write, uint32_t pc) {
  sc::XferExt x;
  x.engine = engine_;
  x.pc = pc;
  x.space = int(space);
  tlm::tlm_generic_payload t;
  t.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  t.set_address(addr);
  t.set_data_ptr(data);
  t.set_data_length(static_cast<unsigned>(n));
  t.set_streaming_width(static_cast<unsigned>(n));
  t.set_extension(&x);
  const unsigned got = space == isa::Space::DDR ? u_.ddr->transport_dbg(t) : u_.l2->transport_dbg(t);
  t.clear_extension(&x);
  char at[32];
  std::snprintf(at, sizeof at, "0x%" PRIx64, addr);
  require(got == unsigned(n), who_ + ": debug transport of " + std::to_string(n) + " bytes at " + at + " refused");
}

}  // namespace n3::rtl
