// Addresses in the simulator's messages (traps, memory errors).
#pragma once
#include <cstdint>
#include <string>

namespace n3::sim {

// An address as the program computed it: the register arithmetic is 64-bit
// two's complement, so a value with the top bit set is a negative address
// (r0 + imm=-512), shown as -0x200 (-512), not as 0xfffffffffffffe00.
// Non-negative addresses print as plain hex (0x100).
std::string address_text(uint64_t addr);

}  // namespace n3::sim
