// The operand copy an RTL unit in the SystemC model works on (docs/rtl.md
// "The bridge"): the functional core executes an instruction's effects
// when the unit starts it, so the RTL reads its operands from a shadow
// memory loaded before that, and its results are checked against, then
// written back to, the modelled memory. Every byte crosses the unit's own
// TLM sockets as debug transport (payloads that carry data), so the
// memories stay behind their target sockets as for the timing model.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "base/error.h"
#include "sim/systemc/engines.h"

namespace n3::rtl {

// The first result on which an RTL unit and the functional core differ (the
// run stops: a finding, exit 1, not bad input).
struct RtlMismatch : Error {
  explicit RtlMismatch(const std::string& what) : Error(what) {}
};

class Shadow {
 public:
  // `who` prefixes errors ("rtl gemv"); `engine` tags the payloads.
  Shadow(sc::EngineUnit& unit, int engine, std::string who) : u_(unit), engine_(engine), who_(std::move(who)) {}
  // The view's rows (data and scale records) from the modelled memory
  // `model` (sized after it on first use) into the shadow.
  void load(const sim::Memory& model, const sim::View& v, uint32_t pc);
  // The view's rows from the shadow into the modelled memory.
  void store(const sim::View& v, uint32_t pc);
  sim::Memory& memory() { return *mem_; }

 private:
  void copy(const sim::View& v, bool to_shadow, uint32_t pc);
  void debug(isa::Space space, uint64_t addr, uint8_t* data, int64_t n, bool write, uint32_t pc);
  sc::EngineUnit& u_;
  int engine_;
  std::string who_;
  std::unique_ptr<sim::Memory> mem_;
};

}  // namespace n3::rtl
