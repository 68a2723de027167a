#include "sim/memory.h"

#include "sim/address_text.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/file_util.h"

namespace n3::sim {

namespace {

constexpr char kMagic[8] = {'N', '3', 'M', 'E', 'M', 'I', 'M', 'G'};
constexpr uint32_t kImageVersion = 1;

uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t(7); }

// A field of the image file (unsigned, not a program's arithmetic): hex.
std::string hex_text(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

void put32(std::string& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
}
void put64(std::string& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

std::string region_header(isa::Space s, const std::string& name, uint64_t addr, uint64_t size) {
  std::string h;
  h.push_back(static_cast<char>(s));
  h.append(3, '\0');
  put32(h, static_cast<uint32_t>(name.size()));
  put64(h, addr);
  put64(h, size);
  h += name;
  h.append(pad8(name.size()) - name.size(), '\0');
  return h;
}

// Parses an image held in memory, calling fn for each region.
void parse_image(const uint8_t* p, uint64_t n, const std::string& path,
                 const std::function<void(isa::Space, const std::string&, uint64_t, const uint8_t*, uint64_t)>& fn) {
  require(n >= 16 && std::memcmp(p, kMagic, 8) == 0, path + ": not an n3 memory image (bad magic)");
  const uint32_t ver = get32(p + 8);
  require(ver == kImageVersion, path + ": memory image version " + std::to_string(ver) + ", this n3 reads version " +
                                    std::to_string(kImageVersion));
  const uint32_t count = get32(p + 12);
  uint64_t off = 16;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string who = path + ": region " + std::to_string(i);
    require(n - off >= 24, who + ": truncated header");
    const uint8_t sp = p[off];
    require(isa::valid_space(sp), who + ": reserved space " + std::to_string(sp));
    require(!p[off + 1] && !p[off + 2] && !p[off + 3], who + ": reserved bytes are not zero");
    const uint64_t name_len = get32(p + off + 4), addr = get64(p + off + 8), size = get64(p + off + 16);
    off += 24;
    require(name_len <= 4096 && pad8(name_len) <= n - off, who + ": truncated name");
    const std::string name(reinterpret_cast<const char*>(p + off), name_len);
    off += pad8(name_len);
    require(size <= n - off && pad8(size) <= n - off, who + " (" + name + "): truncated data");
    fn(static_cast<isa::Space>(sp), name, addr, p + off, size);
    off += pad8(size);
  }
  require(off == n, path + ": " + std::to_string(n - off) + " trailing bytes after the last region");
}

}  // namespace

std::string address_text(uint64_t addr) {
  char b[48];
  if (static_cast<int64_t>(addr) < 0) {
    const uint64_t mag = 0 - addr;  // |addr|, defined for INT64_MIN too (modulo 2^64)
    std::snprintf(b, sizeof b, "-0x%llx (-%llu)", static_cast<unsigned long long>(mag), static_cast<unsigned long long>(mag));
  } else {
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(addr));
  }
  return b;
}

void SpaceMemory::check(uint64_t addr, uint64_t n) const {
  if (!in_range(addr, n))
    throw Error(name_ + ": access [" + address_text(addr) + ", +" + std::to_string(n) + ") beyond capacity " +
                std::to_string(capacity_));
}

void SpaceMemory::read(uint64_t addr, void* dst, uint64_t n) const {
  check(addr, n);
  uint8_t* d = static_cast<uint8_t*>(dst);
  while (n) {
    const uint64_t pg = addr / kPageBytes, off = addr % kPageBytes;
    const uint64_t k = std::min(n, kPageBytes - off);
    auto it = pages_.find(pg);
    if (it == pages_.end()) std::memset(d, 0, k);
    else std::memcpy(d, it->second.get() + off, k);
    d += k;
    addr += k;
    n -= k;
  }
}

void SpaceMemory::write(uint64_t addr, const void* src, uint64_t n) {
  check(addr, n);
  const uint8_t* s = static_cast<const uint8_t*>(src);
  while (n) {
    const uint64_t pg = addr / kPageBytes, off = addr % kPageBytes;
    const uint64_t k = std::min(n, kPageBytes - off);
    auto& page = pages_[pg];
    if (!page) {
      page.reset(new uint8_t[kPageBytes]);
      std::memset(page.get(), 0, kPageBytes);
    }
    std::memcpy(page.get() + off, s, k);
    s += k;
    addr += k;
    n -= k;
  }
}

void SpaceMemory::for_each_page(const std::function<void(uint64_t, const uint8_t*)>& fn) const {
  std::map<uint64_t, const uint8_t*> sorted;
  for (const auto& [pg, data] : pages_) sorted.emplace(pg, data.get());
  for (const auto& [pg, data] : sorted) fn(pg * kPageBytes, data);
}

SpaceMemory& Memory::space(isa::Space s) {
  switch (s) {
    case isa::Space::DDR:
      return ddr_;
    case isa::Space::L2:
      return l2_;
    case isa::Space::WBUF:
      return wbuf_;
  }
  throw Error("memory: reserved space");
}

const SpaceMemory& Memory::space(isa::Space s) const { return const_cast<Memory*>(this)->space(s); }

void load_image(const std::string& path, Memory& mem) {
  MappedFile f(path);
  load_image_bytes(f.data(), f.size(), path, mem);
}

void load_image_bytes(const uint8_t* data, uint64_t size, const std::string& path, Memory& mem) {
  parse_image(data, size, path,
              [&](isa::Space s, const std::string& name, uint64_t addr, const uint8_t* data, uint64_t size) {
                SpaceMemory& m = mem.space(s);
                require(m.in_range(addr, size),
                        path + ": region '" + name + "' [" + hex_text(addr) + ", +" + std::to_string(size) +
                            ") does not fit " + m.name() + " (" + std::to_string(m.capacity()) + " bytes)");
                m.write(addr, data, size);
              });
}

std::vector<ImageRegion> read_image(const std::string& path) {
  MappedFile f(path);
  std::vector<ImageRegion> out;
  parse_image(f.data(), f.size(), path,
              [&](isa::Space s, const std::string& name, uint64_t addr, const uint8_t* data, uint64_t size) {
                out.push_back({s, name, addr, std::string(reinterpret_cast<const char*>(data), size)});
              });
  return out;
}

void write_image(const std::string& path, const std::vector<ImageRegion>& regions) {
  std::string b(kMagic, 8);
  put32(b, kImageVersion);
  put32(b, static_cast<uint32_t>(regions.size()));
  for (const ImageRegion& r : regions) {
    b += region_header(r.space, r.name, r.addr, r.bytes.size());
    b += r.bytes;
    b.append(pad8(r.bytes.size()) - r.bytes.size(), '\0');
  }
  write_file_atomic(path, b);
}

void save_image(const std::string& path, const Memory& mem,
                const std::function<std::string(isa::Space, uint64_t)>& name_of) {
  // Runs of consecutive allocated pages, per space.
  struct Run {
    isa::Space space;
    uint64_t addr;
    std::vector<const uint8_t*> pages;
  };
  std::vector<Run> runs;
  for (isa::Space s : {isa::Space::DDR, isa::Space::L2, isa::Space::WBUF}) {
    const SpaceMemory& m = mem.space(s);
    m.for_each_page([&](uint64_t addr, const uint8_t* data) {
      if (!runs.empty() && runs.back().space == s &&
          runs.back().addr + runs.back().pages.size() * SpaceMemory::kPageBytes == addr)
        runs.back().pages.push_back(data);
      else
        runs.push_back({s, addr, {data}});
    });
  }
  AtomicFile f(path);
  // Buffered: pages are small, one write(2) per MiB keeps syscalls few.
  std::string buf;
  auto put = [&](const char* p, size_t n) {
    buf.append(p, n);
    if (buf.size() >= (size_t(1) << 20)) {
      f.write(buf.data(), buf.size());
      buf.clear();
    }
  };
  std::string h(kMagic, 8);
  put32(h, kImageVersion);
  put32(h, static_cast<uint32_t>(runs.size()));
  put(h.data(), h.size());
  for (const Run& r : runs) {
    // The last page of a space may extend past its capacity: clip.
    const uint64_t cap = mem.space(r.space).capacity();
    uint64_t size = r.pages.size() * SpaceMemory::kPageBytes;
    if (r.addr + size > cap) size = cap - r.addr;
    const std::string rh = region_header(r.space, name_of(r.space, r.addr), r.addr, size);
    put(rh.data(), rh.size());
    uint64_t left = size;
    for (const uint8_t* pg : r.pages) {
      const uint64_t k = std::min<uint64_t>(left, SpaceMemory::kPageBytes);
      put(reinterpret_cast<const char*>(pg), size_t(k));
      left -= k;
    }
    const char zeros[8] = {};
    put(zeros, size_t(pad8(size) - size));
  }
  f.write(buf.data(), buf.size());
  f.commit();
}

}  // namespace n3::sim
