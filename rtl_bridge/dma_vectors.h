// Random and adversarial DMA instructions for `n3 cosim --unit dma`: each
// vector is one MEMCPY or MEMSET (resolved descriptors, a memory image) built
// from rtl::vector_rng(seed, index) alone, so a shard rebuilds exactly the
// vectors of the unsplit run. Vector i uses conversion i mod
// kNumDmaConversions, so any run of that many vectors covers every
// conversion the ISA allows (sim/exec_dma.cc).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "isa/isa.h"
#include "sim/view.h"

namespace n3::rtl {

// The adversarial classes (docs/rtl.md, `n3 cosim`).
extern const char* const kDmaClasses[];
extern const int kNumDmaClasses;
extern const int kNumDmaConversions;
// The conversion of number i ("f32->bf16", "int4.group->f16", "f32->int8.row", "copy.int8.two_level", "memset.f16", ...).
std::string dma_conversion_name(int i);

struct DmaVector {
  bool memset = false;
  sim::View dst, src;  // resolved operands (slot 1 each; src absent for MEMSET)
  isa::Dtype konst_type = isa::Dtype::F32;
  uint32_t konst = 0;
  struct Bytes {
    isa::Space space;
    uint64_t addr;
    std::vector<uint8_t> data;
  };
  std::vector<Bytes> image;  // every region the instruction may touch, before it (dst regions hold garbage)
  std::string conv;          // dma_conversion_name
  std::string cls;           // kDmaClasses
  double stall = 0;          // random stall probability on every channel (0: the vector feeds the cycle table)
};

DmaVector make_dma_vector(uint64_t seed, int64_t index);

}  // namespace n3::rtl
