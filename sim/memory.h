// Architectural memories of the NPU: DDR, the L2 scratchpad and the weight
// buffers, each a flat byte space of a configured capacity. Storage is
// sparse (64 KiB pages allocated on first write; unwritten bytes read as 0),
// so a multi-GB DDR costs only what a program touches.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "isa/isa.h"

namespace n3::sim {

class SpaceMemory {
 public:
  static constexpr uint64_t kPageBytes = 64 * 1024;

  SpaceMemory(std::string name, uint64_t capacity) : name_(std::move(name)), capacity_(capacity) {}
  const std::string& name() const { return name_; }
  uint64_t capacity() const { return capacity_; }
  // True when [addr, addr + n) lies inside the space.
  bool in_range(uint64_t addr, uint64_t n) const { return addr <= capacity_ && n <= capacity_ - addr; }
  // Callers check in_range() first (the simulator traps); these throw n3::Error otherwise.
  void read(uint64_t addr, void* dst, uint64_t n) const;
  void write(uint64_t addr, const void* src, uint64_t n);
  // Visits every allocated page in address order: (page address, bytes).
  void for_each_page(const std::function<void(uint64_t, const uint8_t*)>& fn) const;
  uint64_t allocated_bytes() const { return pages_.size() * kPageBytes; }

 private:
  void check(uint64_t addr, uint64_t n) const;
  std::string name_;
  uint64_t capacity_;
  std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
};

struct Capacities {
  uint64_t ddr = 0, l2 = 0, wbuf = 0;
};

class Memory {
 public:
  explicit Memory(const Capacities& c) : ddr_("ddr", c.ddr), l2_("l2", c.l2), wbuf_("wbuf", c.wbuf) {}
  SpaceMemory& space(isa::Space s);
  const SpaceMemory& space(isa::Space s) const;

 private:
  SpaceMemory ddr_, l2_, wbuf_;
};

// Memory image files (--mem-in / --mem-out), docs/sim.md "Memory images":
//   header 16 bytes: magic "N3MEMIMG", u32 version (1), u32 region count
//   per region: u8 space (isa.yaml enum space), 3 zero bytes, u32 name length,
//   u64 address, u64 size, the name (padded with zeros to a multiple of 8),
//   the bytes (padded with zeros to a multiple of 8). Little-endian.
// Loading writes every region into its space (checked against capacities).
void load_image(const std::string& path, Memory& mem);
// The same on an image in memory (`path` names it in errors): what
// load_image does once the file is mapped, and what the fuzz target feeds.
void load_image_bytes(const uint8_t* data, uint64_t size, const std::string& path, Memory& mem);
// Writes every allocated page, coalesced into runs, atomically (path.tmp,
// then rename). `name_of(space, addr)` names a run ("" for none).
void save_image(const std::string& path, const Memory& mem,
                const std::function<std::string(isa::Space, uint64_t)>& name_of);

// A region as an in-memory image builder sees it (tests, tools).
struct ImageRegion {
  isa::Space space = isa::Space::DDR;
  std::string name;
  uint64_t addr = 0;
  std::string bytes;
};
void write_image(const std::string& path, const std::vector<ImageRegion>& regions);
std::vector<ImageRegion> read_image(const std::string& path);

}  // namespace n3::sim
