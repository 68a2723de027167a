// The program builder the lowering writes through: named L2 buffers from a
// bump allocator, descriptor and constant tables deduplicated by content,
// instructions per engine, and the synchronisation pass that gives every
// cross-engine hand-over a token (docs/compiler.md, "Scheduling").
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace n3::comp {

// A 2-D tensor in one memory space.
struct Buf {
  std::string space = "l2";  // l2 | ddr
  std::string dtype = "bf16";
  uint64_t base = 0;
  int64_t rows = 0, cols = 0, stride = 0;  // stride in bytes
  // INT4 weights: one F32 scale per row at scale_base. INT8 (the KV cache):
  // a record of scale_stride bytes per row, one F32 per `group` elements.
  uint64_t scale_base = 0;
  int64_t scale_stride = 0, group = 0;
  // What it holds (a weight's name, an activation buffer's): names its
  // descriptors, so listings and traces say which tensor an instruction touches.
  std::string name;
};

int64_t dtype_bytes(const std::string& dt);  // 4 or 2 (int4: 0, int32: 4)

// A view of `b` with other rows / cols / offset (same stride unless given).
Buf view(const Buf& b, int64_t rows, int64_t cols, uint64_t byte_offset = 0, int64_t stride = -1);

class Emitter {
 public:
  enum Engine { CTL = 0, DMA = 1, GEMV = 2, GEMM = 3, SFU = 4 };

  // Allocates an L2 buffer (16-byte aligned). `aligned_rows`: every row starts
  // 16-byte aligned (row stride padded), so a view from any row is a descriptor.
  Buf l2(int64_t rows, int64_t cols, const std::string& dtype, bool aligned_rows = false);
  uint64_t l2_high_water() const { return l2_top_; }
  // Activations that do not fit L2 spill to a DDR region from `base` up.
  void set_ddr_scratch(uint64_t base) { ddr_base_ = ddr_top_ = base; }
  Buf ddr_scratch(int64_t rows, int64_t cols, const std::string& dtype, bool aligned_rows = false);
  uint64_t ddr_scratch_bytes() const { return ddr_top_ - ddr_base_; }
  // Registers L2 bytes placed by someone else (resident weights) as a buffer
  // of this program, so views into them verify and order like any other.
  void reserve_l2(uint64_t base, uint64_t bytes) { allocs_.push_back({base, bytes}); }
  // Every allocation: (base, bytes).
  const std::vector<std::pair<uint64_t, uint64_t>>& l2_allocs() const { return allocs_; }

  // Descriptor name for a view; extra fields such as "row_reg=r5".
  std::string d(const Buf& b, const std::string& extra = "");
  std::string kf(float v);      // F32 constant
  std::string ki(int32_t v);    // INT32 constant
  void region(const std::string& line) { head_.push_back(".region " + line); }

  // One instruction; its operands' descriptor names give the bytes it touches.
  void op(Engine e, const std::string& text);
  void ctl(const std::string& text) { op(CTL, text); }
  // A comment line before the next instruction (the listing's section headers).
  void comment(const std::string& text);
  // Captures descriptor `desc` under `name` after the last emitted instruction.
  void capture(const std::string& name, const std::string& desc);

  // Lanes (docs/compiler.md, "Overlap across units"): the lowering emits the
  // same operator sequence once per row range of a chunk, each into its own
  // lane (begin_lanes, then lane(i) before each range's ops), and
  // merge_lanes() interleaves them step by step. A step is a run of one
  // engine's instructions ended by an engine change or a capture; step k of
  // every lane is emitted before step k + 1 of any, lane 0 first. So while
  // the SFU runs lane 0's row operators the GEMM array already has lane 1's
  // product in its queue, which the single sequence only gives it after the
  // SFU is done. The lanes must touch disjoint rows (the dependency pass
  // orders whatever they share); a capture is emitted once, from lane 0,
  // after every lane's step (it names the whole tensor), and comments come
  // from lane 0.
  void begin_lanes(int n);
  void lane(int i);
  void merge_lanes();
  // How many steps a lane may run ahead of the next (0: lockstep).
  void set_lane_skew(int steps) { skew_ = steps; }

  int size() const { return int(code_.size()); }
  // Adds the synchronisation tokens and sys.halt; returns the assembly text.
  // `chain`: order every engine hand-over (no overlap); otherwise tokens only
  // where two instructions of different engines touch the same bytes.
  std::string finish(bool chain = false);
  // Bytes each instruction reads / writes: (space, lo, hi, write).
  struct Access {
    int space;
    uint64_t lo, hi;
    bool write;
  };
  const std::vector<std::vector<Access>>& accesses() const { return acc_; }

 private:
  struct Insn {
    Engine e;
    std::string text;
    uint8_t wait, signal;
  };
  std::vector<std::string> head_, tensors_;
  std::map<std::string, std::string> descs_;
  std::map<std::string, int> desc_uses_;  // descriptors per Buf name
  std::map<std::string, std::string> consts_;
  void schedule_deps();
  std::vector<Access> accesses_of(const std::string& text) const;
  int skew_ = 0;
  // One recorded lane entry: an instruction (with the comments before it) or a capture.
  struct Rec {
    bool capture;
    Engine e;
    std::string text, desc;
    std::vector<std::string> comments;
  };
  std::vector<std::vector<Rec>> lanes_;
  std::vector<std::string> pending_comments_;
  int lane_ = -1;  // the lane being recorded; -1: emitting directly
  std::vector<Insn> code_;
  std::map<size_t, std::string> comments_;
  std::map<std::string, Access> range_;  // descriptor name -> the bytes it can reach
  std::vector<std::vector<Access>> acc_;   // per instruction
  uint64_t l2_top_ = 0;
  uint64_t ddr_base_ = 0, ddr_top_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> allocs_;
};

}  // namespace n3::comp
