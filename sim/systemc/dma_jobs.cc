// The DMA engine's jobs (timing::dma_jobs): how a MEMCPY / MEMSET is cut
// into runs the engine executes one at a time (docs/rtl_dma.md).
// The RTL engine's descriptor walk (rtl_bridge/rtl/dma/n3_dma_walk.sv)
// cuts the same jobs in hardware (the driver, rtl_bridge/dma_rtl.cc,
// checks the count; the cosim, their cycles); DmaUnit times these with
// timing::dma_job_cycles, so the model and the RTL cut an instruction the
// same way.
#include <algorithm>

#include "base/error.h"
#include "isa/isa.h"
#include "isa/verify.h"
#include "sim/systemc/timing.h"

namespace n3::timing {

using isa::Dtype;
using isa::ScaleMode;

namespace {

bool scaled_type(Dtype t) { return t == Dtype::INT4 || t == Dtype::INT8; }
int64_t elem_bytes(Dtype t) { return isa::dtype_bits(t) / 8; }  // 0 for INT4
std::string shape(const sim::View& v) { return "[" + std::to_string(v.rows) + ", " + std::to_string(v.cols) + "]"; }
void check(bool ok, const std::string& why) {
  if (!ok) throw Error("dma: " + why);
}
uint64_t ea(const sim::View& v, uint64_t a) { return dma_engine_addr(v.d.space, a); }

// Byte copies (same dtype): data bytes or scale records, bits unchanged.
DmaJob bytes_job(uint64_t from, uint64_t to, int64_t n) {
  DmaJob j;
  j.kind = DmaJob::Copy;
  j.sdt = j.ddt = Dtype::INT8;
  j.n = static_cast<uint32_t>(n);
  j.saddr = from;
  j.daddr = to;
  return j;
}

}  // namespace

std::vector<DmaJob> dma_jobs(const sim::Issued& in) {
  std::vector<DmaJob> jobs;
  const sim::View& dst = in.op("dst");
  if (in.def->opcode == isa::Opcode::MEMSET) {
    // sim/exec_dma.cc memset_op: an F32 constant into a float dst, an INT32 one into INT32.
    check((dst.is_float() && in.konst_type == Dtype::F32) || (dst.d.dtype == Dtype::INT32 && in.konst_type == Dtype::INT32),
          "cannot fill " + isa::dtype_text(dst.d.dtype) + " with a " + isa::dtype_text(in.konst_type) + " constant");
    for (int64_t r = 0; r < dst.rows; ++r) {
      DmaJob j;
      j.kind = DmaJob::Fill;
      j.sdt = j.ddt = dst.d.dtype;
      j.n = static_cast<uint32_t>(dst.cols);
      j.daddr = ea(dst, dst.row_addr(r));
      j.konst = in.konst;
      jobs.push_back(j);
    }
    return jobs;
  }
  check(in.def->opcode == isa::Opcode::MEMCPY, "not a DMA instruction");
  const sim::View& src = in.op("src");
  const Dtype s = src.d.dtype, d = dst.d.dtype;
  check(s == d || dst.is_float() || (d == Dtype::INT8 && src.is_float()),
        "no conversion from " + isa::dtype_text(s) + " to " + isa::dtype_text(d));
  check(dst.numel() == src.numel(), "src " + shape(src) + " and dst " + shape(dst) + " hold different element counts");
  check(dst.numel() < (int64_t(1) << 32), "more than 2^32 elements");
  if (s == d && scaled_type(s)) {
    // exec_dma copy_scaled: each row's bytes, then its scale record.
    check(dst.rows == src.rows && dst.cols == src.cols && dst.d.scale_mode == src.d.scale_mode &&
              dst.d.group == src.d.group && dst.d.cols == src.d.cols,
          "copying scaled " + isa::dtype_text(s) + " needs equal shapes and scale layouts");
    for (int64_t r = 0; r < src.rows; ++r) {
      jobs.push_back(bytes_job(ea(src, src.row_addr(r)), ea(dst, dst.row_addr(r)), src.row_bytes()));
      if (src.scale_bytes()) jobs.push_back(bytes_job(ea(src, src.scale_addr(r)), ea(dst, dst.scale_addr(r)), src.scale_bytes()));
    }
    return jobs;
  }
  if (s != d && d == Dtype::INT8) {
    // exec_dma quantize_int8: per row, per scale group one job; the record's
    // entries past the last group are zeros (an INT32 fill).
    check(dst.rows == src.rows && dst.cols == src.cols, "quantising to INT8 needs equal shapes");
    check(dst.d.scale_mode != ScaleMode::TWO_LEVEL, "dst: INT8 data takes ROW or GROUP scales");
    const int64_t g = isa::scale_group(dst.d), es = elem_bytes(s), sb = dst.scale_bytes();
    for (int64_t r = 0; r < src.rows; ++r) {
      int64_t k = 0;
      for (int64_t lo = 0; lo < src.cols; lo += g, ++k) {
        DmaJob j;
        j.kind = DmaJob::Quant;
        j.sdt = s;
        j.ddt = d;
        j.n = static_cast<uint32_t>(std::min(g, src.cols - lo));
        j.saddr = ea(src, src.row_addr(r) + static_cast<uint64_t>(lo * es));
        j.daddr = ea(dst, dst.row_addr(r) + static_cast<uint64_t>(lo));
        j.qaddr = ea(dst, dst.scale_addr(r) + static_cast<uint64_t>(4 * k));
        jobs.push_back(j);
      }
      if (sb > 4 * k) {
        DmaJob z;
        z.kind = DmaJob::Fill;
        z.sdt = z.ddt = Dtype::INT32;
        z.n = static_cast<uint32_t>((sb - 4 * k) / 4);
        z.daddr = ea(dst, dst.scale_addr(r) + static_cast<uint64_t>(4 * k));
        jobs.push_back(z);
      }
    }
    return jobs;
  }
  // Element runs in row-major order (copy_raw, convert_to_float): a run
  // ends where a src row, a dst row or (scaled src) a src scale group ends.
  const int64_t N = src.numel(), g = src.scaled() ? isa::scale_group(src.d) : src.cols;
  for (int64_t e = 0; e < N;) {
    const int64_t rs = e / src.cols, cs = e % src.cols, rd = e / dst.cols, cd = e % dst.cols;
    const int64_t len = std::min({src.cols - cs, dst.cols - cd, g - cs % g});
    DmaJob j;
    j.kind = DmaJob::Copy;
    j.sdt = s;
    j.ddt = d;
    j.n = static_cast<uint32_t>(len);
    if (s == Dtype::INT4) {
      j.saddr = ea(src, src.row_addr(rs) + static_cast<uint64_t>(cs / 2));
      j.snib = cs % 2 != 0;
    } else {
      j.saddr = ea(src, src.row_addr(rs) + static_cast<uint64_t>(cs * elem_bytes(s)));
    }
    j.daddr = ea(dst, dst.row_addr(rd) + static_cast<uint64_t>(cd * elem_bytes(d)));
    if (s != d && src.scaled()) {
      j.smode = src.d.scale_mode;
      const uint64_t rec = src.scale_addr(rs);
      j.scaddr = ea(src, rec + (src.d.scale_mode == ScaleMode::GROUP ? static_cast<uint64_t>(4 * (cs / g)) : 0));
      j.bkaddr = ea(src, rec + 4 + static_cast<uint64_t>(cs / g));
    }
    jobs.push_back(j);
    e += len;
  }
  return jobs;
}

}  // namespace n3::timing
