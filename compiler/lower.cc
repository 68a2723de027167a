#include "compiler/lower.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "compiler/emit.h"
#include "base/error.h"
#include "golden/dump_ops.h"
#include "golden/weight_names.h"
#include "isa/asm.h"
#include "isa/verify.h"

namespace n3::comp {

namespace {

std::string num(int64_t v) { return std::to_string(v); }
// The LM head's vocabulary slices (Lowering::final_logits): up to 8, none
// narrower than 16384 logits (a small vocabulary stays one product).
constexpr int64_t kVocabSlices = 8, kVocabSliceMin = 16384;
// Chunks from this many tokens get the overlap buffers (a second score
// buffer, GELU out of place); comp::default_lanes gives them two lanes.
constexpr int kOverlapTokens = 16;
// The same contiguous bytes seen as [rows, cols].
Buf reshape(const Buf& b, int64_t rows, int64_t cols) { return view(b, rows, cols, 0, cols * dtype_bytes(b.dtype)); }

// The L2 buffers of a T-token program, allocated once and reused by every
// layer (their live ranges within a layer are disjoint or nested, and no
// value outlives a layer except the streams, which alternate between H and P).
// Tensors carrying the residual (H, P, ag, al, o) are in the stream format.
struct Bufs {
  Buf x0f, x0, plf, pli, posf, ang_local, ang_global, H, P, rms, rn, m, acc, an, mid, lo, q, k, v, s, ctx,
      attn, ag, tmpf, al, xn, g, u, h, y, o, diff, gin, f, add, x, s2;
  std::vector<Buf> c, cc;
};

// Allocates every buffer in L2, except those `spill` names, which go to DDR
// (Emitter::ddr_scratch); `sizes` (optional) receives (name, bytes) in order.
// `overlap`: allocate the overlap buffers (h, s2); -1: overlap_bufs() decides.
Bufs alloc_bufs(Emitter& e, const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int T,
                const std::set<std::string>& spill = {}, std::vector<std::pair<std::string, uint64_t>>* sizes = nullptr,
                int overlap = -1);

// Whether a T-token program gets the overlap buffers: every chunk of
// kOverlapTokens or more, where the lanes run. They count in its L2 need
// like any buffer (spilled with the rest where the chunk does not fit):
// without them the lanes meet at every gate capture and score buffer
// (measured, E2B on hbm-server, a 128-token program that fits L2 only
// without them: 57.8 % of its bound against 66.2 % with them, spilled).
bool overlap_bufs(const ModelConfig&, const num::Formats&, const HwLimits&, int T) { return T >= kOverlapTokens; }

Bufs alloc_bufs(Emitter& e, const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int T,
                const std::set<std::string>& spill, std::vector<std::pair<std::string, uint64_t>>* sizes, int overlap) {
  if (overlap < 0) overlap = overlap_bufs(cfg, f, hw, T) ? 1 : 0;
  auto A = [&](const std::string& name, int64_t rows, int64_t cols, const std::string& dt, bool aligned = false) {
    Buf b = spill.count(name) ? e.ddr_scratch(rows, cols, dt, aligned) : e.l2(rows, cols, dt, aligned);
    b.name = name;
    if (sizes) sizes->push_back({name, uint64_t(rows * b.stride)});
    return b;
  };
  const std::string act = num::fmt_name(f.act), st = num::fmt_name(f.stream), sc = num::fmt_name(f.score);
  const int64_t D = cfg.hidden, S = cfg.altup_streams, LP = int64_t(cfg.layers) * cfg.pl_dim;
  int64_t F = 0;
  for (int v : cfg.ffn) F = std::max<int64_t>(F, v);
  int64_t ring_max = 1;
  for (int l = 0; l < cfg.layers; ++l)
    ring_max = std::max<int64_t>(ring_max, cfg.is_global(l) ? hw.kv_cap : cfg.sliding_window + T);
  ring_max = std::min<int64_t>(ring_max, hw.kv_cap);
  Bufs b;
  b.x0f = A("x0f", T, D, "f32");
  b.x0 = A("x0", T, D, act);
  // Per-layer inputs as [T * L, Ppad]: every (token, layer) row 16-byte aligned, any P.
  const int64_t Ppad = (cfg.pl_dim + 7) / 8 * 8;
  b.plf = A("plf", T * cfg.layers, Ppad, "f32");
  b.pli = A("pli", T * cfg.layers, Ppad, act);
  (void)LP;
  b.posf = A("posf", T, 1, "f32");
  b.ang_local = A("ang_local", T, cfg.head_dim / 2, "f32");
  b.ang_global = A("ang_global", T, cfg.head_dim / 2, "f32");
  b.H = A("H", S * T, D, st, true);  // stream i starts at row i * T: aligned for any D
  b.P = A("P", S * T, D, st, true);
  b.rms = A("rms", T, 1, "f32");
  b.rn = A("rn", T, D, act);
  b.m = A("m", T, S, act);
  for (int64_t i = 0; i < S * S; ++i) b.c.push_back(A("c" + std::to_string(i), T, 1, act));
  for (int64_t i = 0; i < S; ++i) b.cc.push_back(A("cc" + std::to_string(i), T, 1, act));
  b.acc = A("acc", T, D, "f32");
  b.an = A("an", T, D, act);
  b.mid = A("mid", T, cfg.laurel_rank, act);
  b.lo = A("lo", T, D, act);
  b.q = A("q", T, cfg.q_dim(), act);
  b.k = A("k", T, cfg.kv_dim(), act);
  b.v = A("v", T, cfg.kv_dim(), act);
  b.s = A("s", cfg.q_heads, ring_max, sc);
  b.ctx = A("ctx", T, cfg.q_dim(), act);
  b.attn = A("attn", T, D, act);
  b.ag = A("ag", T, D, st);
  b.tmpf = A("tmpf", T, D, "f32");
  b.al = A("al", T, D, st);
  b.xn = A("xn", T, D, act);
  b.g = A("g", T, F, act);
  b.u = A("u", T, F, act);
  // The overlap buffers (overlap_bufs): GELU out of place where lanes may
  // run, as an in-place GELU of one lane's rows would wait for the gate's
  // capture, taken after every lane's gate product (Lowering::oproj_to_end);
  // and a second score buffer, the attention loop alternating two
  // (Lowering::attention).
  if (overlap) {
    b.h = A("h", T, F, act);
    b.s2 = A("s2", cfg.q_heads, ring_max, sc);
  }
  b.y = A("y", T, D, act);
  b.o = A("o", T, D, st);
  b.diff = A("diff", T, D, "f32");
  b.gin = A("gin", T, D, act);
  b.f = A("f", T, cfg.pl_dim, act);
  b.add = A("add", T, D, act);
  b.x = A("x", T, D, act);
  return b;
}

// The buffers of a T-token program that go to DDR: none when all fit the L2;
// otherwise the largest first (ties: by name) until the rest fits.
std::set<std::string> spill_plan(const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int T) {
  Emitter dry;
  std::vector<std::pair<std::string, uint64_t>> sizes;
  alloc_bufs(dry, cfg, f, hw, T, {}, &sizes);
  std::set<std::string> spill;
  if (dry.l2_high_water() <= hw.l2) return spill;
  std::stable_sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  for (const auto& [name, bytes] : sizes) {
    spill.insert(name);
    Emitter e;
    alloc_bufs(e, cfg, f, hw, T, spill);
    if (e.l2_high_water() <= hw.l2) return spill;
  }
  return spill;
}

Bufs make_bufs(Emitter& e, const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, const Layout& lay, int T) {
  e.set_ddr_scratch(lay.spill);
  return alloc_bufs(e, cfg, f, hw, T, spill_plan(cfg, f, hw, T));
}

class Lowering {
 public:
  Lowering(const ModelConfig& cfg, const Layout& lay, const num::Formats& f, const HwLimits& hw,
           const CompileOptions& opt)
      : cfg_(cfg), lay_(lay), f_(f), hw_(hw), opt_(opt), T_(opt.tokens), tn_(opt.tokens), b_(make_bufs(e_, cfg, f, hw, lay, opt.tokens)) {
    require(cfg.altup_streams == 4, "compiler: AltUp with " + num(cfg.altup_streams) + " streams is not lowered (4)");
    require(T_ >= 1 && T_ <= lay.max_chunk, "compiler: chunk " + num(T_) + " exceeds the memory plan's " + num(lay.max_chunk));
    mv_ = T_ > 1 ? "gemm.mv" : "gemv.mv";
    mv_engine_ = T_ > 1 ? Emitter::GEMM : Emitter::GEMV;
    lanes_ = opt.lanes > 0 ? opt.lanes : default_lanes(T_, opt.chain);
    require(lanes_ >= 1 && (lanes_ == 1 || T_ >= 8 * lanes_),
            "compiler: " + num(lanes_) + " lanes for a chunk of " + num(T_) + " (each lane needs at least 8 rows)");
    for (const Resident& r : lay.resident) {
      e_.reserve_l2(r.l2_base, r.data_bytes);
      if (r.scale_bytes) e_.reserve_l2(r.l2_scale_base, r.scale_bytes);
    }
  }

  Compiled run();

 private:
  // DDR views of weights.
  // DDR views of weights, or of their L2 copies where the residency plan holds them.
  Buf w(const std::string& name) {
    const Placed& p = lay_.at(name);
    ++uses_[name];
    Buf b;
    b.space = "ddr";
    b.dtype = p.int4 ? "int4" : "f32";
    b.base = p.base;
    b.rows = p.rows;
    b.cols = p.cols;
    b.stride = int64_t(p.row_bytes());
    b.scale_base = p.scale_base;
    b.name = name;
    if (const Resident* r = lay_.resident_of(name)) {
      b.space = "l2";
      b.base = r->l2_base;
      b.scale_base = r->l2_scale_base;
    }
    return b;
  }
  // pli as [T * L, P] rows, and layer l's [T, P] slice (the current lane's rows of it).
  Buf pl_rows(const Buf& b) const { return view(b, T_ * cfg_.layers, cfg_.pl_dim); }
  Buf pli_layer(int l) const {
    return view(b_.pli, tn_, cfg_.pl_dim, (uint64_t(t0_) * cfg_.layers + uint64_t(l)) * b_.pli.stride,
                b_.pli.stride * cfg_.layers);
  }
  // Stream i of H or P: rows i T .. i T + T - 1, of which the current lane's.
  Buf stream(const Buf& s, int i) const { return view(s, tn_, s.cols, (uint64_t(i) * T_ + uint64_t(t0_)) * s.stride); }
  // The current lane's rows t0_ .. t0_ + tn_ - 1 of a [T, X] activation (all T outside lanes).
  Buf R(const Buf& b) const {
    require(b.rows == T_, "compiler: a lane row view of a buffer of " + num(b.rows) + " rows");
    return view(b, tn_, b.cols, uint64_t(t0_) * uint64_t(b.stride));
  }
  // Emits body() once per lane, each on its rows of the chunk, interleaved
  // step by step (Emitter::merge_lanes): the overlap across units.
  template <class F>
  void lanes(F&& body) {
    if (lanes_ == 1) return body();
    e_.begin_lanes(lanes_);
    e_.set_lane_skew(opt_.lane_skew);
    for (int i = 0; i < lanes_; ++i) {
      e_.lane(i);
      t0_ = lane_row(i);
      tn_ = lane_row(i + 1) - t0_;
      body();
    }
    t0_ = 0;
    tn_ = T_;
    e_.merge_lanes();
  }
  // Lane i's first row: multiples of 8, so every row view of every buffer
  // (strides of whole 2- or 4-byte elements) starts 16-byte aligned.
  int lane_row(int i) const { return i == lanes_ ? T_ : i * T_ / lanes_ / 8 * 8; }

  void mv(const Buf& dst, const Buf& src, const Buf& wt) {
    e_.op(mv_engine_, mv_ + " dst=" + e_.d(dst) + " src=" + e_.d(src) + " w=" + e_.d(wt));
  }
  void cvo1(const char* fn, const Buf& dst, const Buf& a) {
    e_.op(Emitter::SFU, std::string("cvo.") + fn + " dst=" + e_.d(dst) + " a=" + e_.d(a));
  }
  void cvok(const char* fn, const Buf& dst, const Buf& a, float k) {
    e_.op(Emitter::SFU, std::string("cvo.") + fn + " dst=" + e_.d(dst) + " a=" + e_.d(a) + " k=" + e_.kf(k));
  }
  void cvo2(const char* fn, const Buf& dst, const Buf& a, const Buf& b) {
    e_.op(Emitter::SFU, std::string("cvo.") + fn + " dst=" + e_.d(dst) + " a=" + e_.d(a) + " b=" + e_.d(b));
  }
  void rmsnorm(const Buf& dst, const Buf& a, const Buf* wt) {
    e_.op(Emitter::SFU, "cvo.rmsnorm dst=" + e_.d(dst) + " a=" + e_.d(a) + " b=" + (wt ? e_.d(*wt) : std::string("-")) +
                            " k=" + e_.kf(float(cfg_.rms_eps)));
  }
  void rmsnorm_w(const Buf& x, const std::string& wname) {
    const Buf wt = w(wname);
    rmsnorm(x, x, &wt);
  }
  void copy(const Buf& dst, const Buf& src, const std::string& dx = "", const std::string& sx = "") {
    e_.op(Emitter::DMA, "memcpy dst=" + e_.d(dst, dx) + " src=" + e_.d(src, sx));
  }
  void zero(const Buf& dst) { e_.op(Emitter::DMA, "memset dst=" + e_.d(dst) + " k=" + e_.kf(0.0f)); }
  // Every materialised tensor is named in the symbol table with its dump name
  // (golden/dump_ops.h; layer -1 outside the layers); the simulator captures
  // the always-present ones unless asked for all (SimOptions).
  void cap(Op op, int layer, const Buf& b, const std::string& extra = "") {
    e_.capture(tensor_name(op, layer, false), e_.d(b, extra));
  }
  void li(int rd, int64_t v) {
    require(v >= INT32_MIN && v <= INT32_MAX, "compiler: immediate out of range");
    e_.ctl("alui.add rd=r" + num(rd) + " rs1=r0 imm=" + num(v));
  }

  void embed_and_inputs();
  void router(int l, const Buf& x, const Buf& m);
  void layer(int l);
  void predict_to_qkv(int l);
  void qkv(int l);
  void attention(int l);
  void oproj_to_end(int l);
  Buf ring_buf(int src, bool v) const;
  void final_logits();

  const ModelConfig& cfg_;
  const Layout& lay_;
  const num::Formats& f_;
  const HwLimits& hw_;
  const CompileOptions& opt_;
  const int T_;
  int lanes_ = 1;   // row ranges of a chunk emitted interleaved (CompileOptions::lanes)
  int t0_ = 0, tn_; // the current lane's rows: t0_ .. t0_ + tn_ - 1
  Emitter e_;
  Bufs b_;
  std::map<std::string, int> uses_;
  std::string mv_;
  Emitter::Engine mv_engine_;
};

// Registers: r1 pos0, r2 window start, r3 window length, r4 T, r5 row offset
// of a token's heads, r6 token id, r7 per-layer-input row, r8 input region,
// r9 token index, r10 query row, r11 the token's first per-layer-input row,
// r12 the global KV rings' row of the chunk's first token. Sliding rings are
// indexed by position (pos0 + t); global rings by row, which equals the
// position until the host evicts rows (kv.policy: evict keeps the first
// sinks and the most recent rows, compacted: docs/runtime.md), so a global
// layer attends rows 0 .. r12 + t, exactly the rows the host kept.
void Lowering::embed_and_inputs() {
  const int64_t D = cfg_.hidden, LP = int64_t(cfg_.layers) * cfg_.pl_dim;
  const uint64_t in = lay_.input;
  e_.ctl("alui.add rd=r8 rs1=r0 imm=" + num(int64_t(in >> 16)));
  e_.ctl("alui.shl rd=r8 rs1=r8 imm=16");
  e_.ctl("alui.or rd=r8 rs1=r8 imm=" + num(int64_t(in & 0xffff)));
  e_.ctl("ldst.lw space=ddr rd=r1 rs1=r8 imm=0");
  e_.ctl("ldst.lw space=ddr rd=r12 rs1=r8 imm=4");
  li(4, T_);
  const ModelWeightNames& wn = model_weight_names();
  const Buf E = w(wn.embed), Epl = w(wn.embed_per_layer);
  const int64_t ids_off = 16 + 4 * int64_t(lay_.max_chunk);
  for (int t = 0; t < T_; ++t) {
    li(9, t);
    e_.ctl("ldst.lw space=ddr rd=r6 rs1=r8 imm=" + num(ids_off + 4 * t));
    copy(view(b_.x0f, 1, D), view(E, 1, D), "row_reg=r9", "row_reg=r6");
    e_.ctl("alui.sltu rd=r7 rs1=r6 imm=" + num(cfg_.vocab_pl));  // HF: ids past the table use row 0
    e_.ctl("alu.mul rd=r7 rs1=r7 rs2=r6");
    li(11, int64_t(t) * cfg_.layers);
    copy(view(b_.plf, cfg_.layers, cfg_.pl_dim), view(Epl, 1, LP), "row_reg=r11", "row_reg=r7");
  }
  cvok("scale", b_.x0, b_.x0f, std::sqrt(float(D)));
  cap(Op::Embed, -1, b_.x0);
  // pli = (RMSNorm((x0 W^T) D^-0.5) + E_pl[id] sqrt(P)) / sqrt(2)
  const Buf wp = w(wn.per_layer_model_projection);
  const Placed& wpp = lay_.at(wn.per_layer_model_projection);
  const int64_t P = cfg_.pl_dim;
  for (int l = 0; l < cfg_.layers; ++l) {  // one block of W per layer: aligned views for any P
    Buf wl = view(wp, P, wp.cols, uint64_t(l) * wpp.block_stride);
    wl.scale_base = wp.scale_base + uint64_t(l) * wpp.scale_block_stride;
    mv(pli_layer(l), b_.x0, wl);
  }
  const Buf rows = pl_rows(b_.pli), frows = pl_rows(b_.plf);
  cvok("scale", rows, rows, 1.0f / std::sqrt(float(D)));
  rmsnorm_w(rows, wn.per_layer_projection_norm);
  cvok("scale", frows, frows, std::sqrt(float(cfg_.pl_dim)));
  cvo2("add", frows, rows, frows);
  cvok("scale", rows, frows, 1.0f / std::sqrt(2.0f));
  cap(Op::PerLayerInputs, -1, rows);
  // RoPE angle tables from the run-time positions: one per theta.
  Buf pos;
  pos.space = "ddr";
  pos.dtype = "int32";
  pos.base = in + 16;
  pos.rows = T_;
  pos.cols = 1;
  pos.stride = 4;
  copy(b_.posf, pos);
  const Buf invl = w(rope_table_name(cfg_.rope_local)), invg = w(rope_table_name(cfg_.rope_global));
  cvo2("mul", b_.ang_local, b_.posf, invl);
  cvo2("mul", b_.ang_global, b_.posf, invg);
  // AltUp: h0 = x0, h_k = (x0 W_k^T) rescaled to rms(x0).
  copy(stream(b_.H, 0), b_.x0);
  cvo1("rms", b_.rms, b_.x0);
  for (int s = 1; s < cfg_.altup_streams; ++s) {  // in the activation format, then into the stream
    mv(b_.x, b_.x0, w(wn.altup_projection(s)));
    e_.op(Emitter::SFU, "cvo.magmatch dst=" + e_.d(b_.x) + " a=" + e_.d(b_.x) + " b=" + e_.d(b_.rms) +
                            " k=" + e_.kf(1e-5f));
    copy(stream(b_.H, s), b_.x);
  }
  cap(Op::AltupIn, -1, b_.H);
}

// m = tanh((RMSNorm(x, w_rn) / D) W_router^T)
void Lowering::router(int l, const Buf& x, const Buf& m) {
  const LayerWeightNames n = layer_weight_names(l);
  const Buf rw = w(n.router_norm), rn = R(b_.rn), mr = R(m);
  rmsnorm(rn, x, &rw);
  cvok("scale", rn, rn, 1.0f / float(cfg_.hidden));
  mv(mr, rn, w(n.router));
  cvo1("tanh", mr, mr);
}

// The ring of layer `src` as a DDR view (K or V).
Buf Lowering::ring_buf(int src, bool v) const {
  const int64_t KVH = cfg_.kv_heads, hd = cfg_.head_dim, KVD = cfg_.kv_dim();
  const std::string kvd = num::kv_fmt_name(f_.kv);
  const Ring& r = lay_.rings[size_t(src)];
  Buf b;
  b.space = "ddr";
  b.dtype = kvd;
  b.base = v ? r.v : r.k;
  b.rows = r.rows;
  b.cols = KVD;
  b.stride = KVD * dtype_bytes(kvd);
  if (r.k_scale) {  // INT8: one scale per token and KV head
    b.scale_base = v ? r.v_scale : r.k_scale;
    b.scale_stride = 4 * KVH;
    b.group = hd;
  }
  b.name = "kv." + std::to_string(src) + (v ? ".v" : ".k");
  return b;
}

// Q (and K, V where the layer owns its ring) for the current lane's rows: products, norms, RoPE.
void Lowering::qkv(int l) {
  const int64_t H = cfg_.q_heads, KVH = cfg_.kv_heads, hd = cfg_.head_dim;
  const LayerWeightNames n = layer_weight_names(l);
  const Buf ang = R(cfg_.is_global(l) ? b_.ang_global : b_.ang_local);
  const Buf an = R(b_.an);
  mv(R(b_.q), an, w(n.q));
  const Buf qh = reshape(R(b_.q), tn_ * H, hd);
  rmsnorm_w(qh, n.q_norm);
  cvo2("rope", qh, qh, ang);
  cap(Op::AttnQ, l, b_.q);
  if (cfg_.owns_kv(l)) {
    mv(R(b_.k), an, w(n.k));
    const Buf kh = reshape(R(b_.k), tn_ * KVH, hd);
    rmsnorm_w(kh, n.k_norm);
    cvo2("rope", kh, kh, ang);
    mv(R(b_.v), an, w(n.v));
    const Buf vh = reshape(R(b_.v), tn_ * KVH, hd);
    rmsnorm(vh, vh, nullptr);
  }
}

// The KV ring write and the per-token attention of the whole chunk (not in
// lanes: every query reads the ring rows of all earlier tokens, and the
// loop's registers and score buffer are shared).
void Lowering::attention(int l) {
  const int64_t H = cfg_.q_heads, hd = cfg_.head_dim;
  const std::string row0 = cfg_.is_global(l) ? "r12" : "r1";  // first row of the chunk in this layer's ring
  if (cfg_.owns_kv(l)) {
    // KV write: ring rows row0 .. row0 + T - 1 (modulo the ring), converted to the cache format.
    copy(ring_buf(l, false), b_.k, "row_reg=" + row0 + " dyn_reg=r4 ring=1");
    copy(ring_buf(l, true), b_.v, "row_reg=" + row0 + " dyn_reg=r4 ring=1");
    cap(Op::AttnK, l, ring_buf(l, false), "row_reg=" + row0 + " dyn_reg=r4 ring=1");
    cap(Op::AttnV, l, ring_buf(l, true), "row_reg=" + row0 + " dyn_reg=r4 ring=1");
  }
  const int src = cfg_.kv_source(l);
  require(cfg_.is_global(src) == cfg_.is_global(l), "compiler: layer " + num(l) + " reads the KV ring of layer " +
                                                        num(src) + ", which has the other attention type");
  // One register set (window start, window length, the token's head row)
  // and score buffer per token, alternating between two where the program
  // has the second buffer (overlap_bufs): token t's QK^T is emitted before token
  // t - 1's softmax and PV, so the GEMV computes the next token's scores
  // while the SFU runs this token's softmax. Registers are read at dispatch,
  // so a set is rewritten only after the instructions that use it dispatched.
  struct Set {
    std::string start, len, head, kw, vw, qt, ct, s;
  };
  auto make_set = [&](const std::string& start, const std::string& len, const std::string& head, const Buf& sb) {
    Set x{start, len, head, "", "", "", "", ""};
    const std::string win = "row_reg=" + start + " dyn_reg=" + len + " ring=1";
    x.kw = e_.d(ring_buf(src, false), win);
    x.vw = e_.d(ring_buf(src, true), win);
    x.qt = e_.d(view(b_.q, H, hd, 0, hd * dtype_bytes(b_.q.dtype)), "row_reg=" + head);
    x.ct = e_.d(view(b_.ctx, H, hd, 0, hd * dtype_bytes(b_.ctx.dtype)), "row_reg=" + head);
    x.s = e_.d(sb, "dyn_reg=" + len + " dyn_dim=cols");
    return x;
  };
  std::vector<Set> sets{make_set("r2", "r3", "r5", b_.s)};
  if (b_.s2.rows > 0) sets.push_back(make_set("r13", "r14", "r15", b_.s2));
  auto rest = [&](const Set& x) {
    e_.op(Emitter::SFU, "cvo.softmax dst=" + x.s + " a=" + x.s);
    e_.op(Emitter::GEMV, "gemv.pv dst=" + x.ct + " src=" + x.s + " w=" + x.vw);
  };
  for (int t = 0; t < T_; ++t) {
    const Set& x = sets[size_t(t) % sets.size()];
    // Causal; local layers see kv > q - window: the window is a ring range.
    e_.ctl("alui.add rd=r10 rs1=" + row0 + " imm=" + num(t));
    if (cfg_.is_global(l)) {
      e_.ctl("alui.add rd=" + x.start + " rs1=r0 imm=0");
    } else {
      e_.ctl("alui.add rd=" + x.start + " rs1=r10 imm=" + num(1 - int64_t(cfg_.sliding_window)));
      e_.ctl("alui.max rd=" + x.start + " rs1=" + x.start + " imm=0");
    }
    e_.ctl("alu.sub rd=" + x.len + " rs1=r10 rs2=" + x.start);
    e_.ctl("alui.add rd=" + x.len + " rs1=" + x.len + " imm=1");
    e_.ctl("alui.add rd=" + x.head + " rs1=r0 imm=" + num(int64_t(t) * H));
    e_.op(Emitter::GEMV, "gemv.qk dst=" + x.s + " src=" + x.qt + " w=" + x.kw);
    if (sets.size() == 1) rest(x);
    else if (t > 0) rest(sets[size_t(t - 1) % sets.size()]);
  }
  if (sets.size() > 1) rest(sets[size_t(T_ - 1) % sets.size()]);
  cap(Op::AttnCtx, l, b_.ctx);
}

// One decoder layer: everything but the attention loop runs per lane
// (row-independent operators on the lane's rows), the KV write and the
// attention loop once for the chunk.
void Lowering::layer(int l) {
  e_.comment("layer " + num(l) + (cfg_.is_global(l) ? " (global" : " (local") + std::string(cfg_.owns_kv(l) ? ", owns its KV ring)" : ", reads layer " + num(cfg_.kv_source(l)) + "'s ring)"));
  lanes([&] { predict_to_qkv(l); });
  attention(l);
  lanes([&] { oproj_to_end(l); });
}

void Lowering::predict_to_qkv(int l) {
  const int64_t S = cfg_.altup_streams;
  const LayerWeightNames n = layer_weight_names(l);
  e_.comment("AltUp predict: router, coefficients, pred[p] = h[p] + sum_q c[S p + q] h[q]");
  router(l, stream(b_.H, 0), b_.m);
  cap(Op::Router, l, b_.m);
  const Buf pw = w(n.pred), acc = R(b_.acc);
  for (int64_t i = 0; i < S * S; ++i) mv(R(b_.c[size_t(i)]), R(b_.m), view(pw, 1, S, uint64_t(i) * pw.stride));
  for (int pp = 0; pp < S; ++pp) {
    zero(acc);
    for (int qq = 0; qq < S; ++qq) cvo2("mac", acc, R(b_.c[size_t(pp * S + qq)]), stream(b_.H, qq));
    cvo2("add", stream(b_.P, pp), stream(b_.H, pp), acc);
  }
  cap(Op::Pred, l, b_.P);
  const Buf a = stream(b_.P, 0), an = R(b_.an), lo = R(b_.lo);
  e_.comment("input norm, LAuReL");
  const Buf inw = w(n.in_norm);
  rmsnorm(an, a, &inw);
  cap(Op::InputNorm, l, b_.an);
  // LAuReL
  mv(R(b_.mid), an, w(n.ll));
  mv(lo, R(b_.mid), w(n.lr));
  rmsnorm_w(lo, n.laurel_norm);
  cvo2("add", lo, lo, an);
  cap(Op::Laurel, l, b_.lo);
  e_.comment("attention: Q/K/V, norms, RoPE, KV ring write, per-token windowed QK / softmax / PV, o_proj");
  qkv(l);
}

void Lowering::oproj_to_end(int l) {
  const int64_t S = cfg_.altup_streams;
  const LayerWeightNames n = layer_weight_names(l);
  const Buf a = stream(b_.P, 0), attn = R(b_.attn), ag = R(b_.ag), tmpf = R(b_.tmpf), al = R(b_.al);
  mv(attn, R(b_.ctx), w(n.o));
  cap(Op::AttnOut, l, b_.attn);
  e_.comment("post-attention norm, residual, LAuReL mix");
  // Out of place in lanes, into an (read for the last time by LAuReL and
  // Q/K/V, same format), for the reason the FFN's norm is below.
  const Buf an = lanes_ > 1 ? R(b_.an) : attn;
  const Buf pa = w(n.post_attn);
  rmsnorm(an, attn, &pa);
  cvo2("add", ag, an, a);
  cap(Op::AttnGated, l, b_.ag);
  cvo2("add", tmpf, ag, R(b_.lo));
  cvok("scale", al, tmpf, 1.0f / std::sqrt(2.0f));
  cap(Op::AttnLaurel, l, b_.al);
  e_.comment("FFN");
  const int64_t F = cfg_.ffn[size_t(l)];
  const Buf gF = view(b_.g, T_, F, 0, F * dtype_bytes(b_.g.dtype)), uF = view(b_.u, T_, F, 0, F * dtype_bytes(b_.u.dtype));
  const Buf g = R(gF), u = R(uF), xn = R(b_.xn), y = R(b_.y), o = R(b_.o);
  const Buf pre = w(n.pre_ffn);
  rmsnorm(xn, al, &pre);
  mv(g, xn, w(n.gate));
  if (const float topk = cfg_.topk_multiplier(l); topk > 0) cvok("gtopk", g, g, topk);
  cap(Op::MlpGate, l, gF);
  mv(u, xn, w(n.up));
  cap(Op::MlpUp, l, uF);
  const bool apart = lanes_ > 1 && b_.h.rows == T_;
  const Buf hF = apart ? view(b_.h, T_, F, 0, F * dtype_bytes(b_.h.dtype)) : gF, h = R(hF);
  cvo1("gelu", h, g);
  cvo2("mul", h, h, u);
  cap(Op::MlpAct, l, hF);
  mv(y, h, w(n.down));
  cap(Op::MlpDown, l, b_.y);
  // In lanes the norm goes out of place, into xn (free once the products
  // read it, same format): y's capture is taken after every lane's product,
  // and an in-place norm of lane 0 would wait for it.
  const Buf yn = lanes_ > 1 ? xn : y;
  const Buf pf = w(n.post_ffn);
  rmsnorm(yn, y, &pf);
  cvo2("add", o, yn, al);
  cap(Op::FfnOut, l, b_.o);
  e_.comment("AltUp correct: corr[p] = pred[p] + (m2 W_corr^T + 1)[p] (o - pred[0])");
  router(l, o, b_.m);
  cap(Op::CorrRouter, l, b_.m);
  const Buf cw = w(n.corr), diff = R(b_.diff);
  for (int pp = 0; pp < S; ++pp) {
    const Buf cc = R(b_.cc[size_t(pp)]);
    mv(cc, R(b_.m), view(cw, 1, S, uint64_t(pp) * cw.stride));
    cvok("addk", cc, cc, 1.0f);
  }
  cvo2("sub", diff, o, a);
  for (int pp = 0; pp < S; ++pp) {
    cvo2("mul", tmpf, diff, R(b_.cc[size_t(pp)]));
    cvo2("add", stream(b_.H, pp), stream(b_.P, pp), tmpf);
  }
  cap(Op::Corr, l, b_.H);
  e_.comment("per-layer input mix");
  const Buf gin = R(b_.gin), f = R(b_.f), add = R(b_.add);
  if (cfg_.altup_correct_scale) cvo2("mul", gin, stream(b_.H, 0), w(n.out_scale));
  else copy(gin, stream(b_.H, 0));  // the gate's input is an activation, not a stream
  mv(f, gin, w(n.pl_gate));
  cvo1("gelu", f, f);
  cvo2("mul", f, f, pli_layer(l));
  cap(Op::PleGate, l, b_.f);
  mv(add, f, w(n.pl_proj));
  rmsnorm_w(add, n.post_pl);
  cap(Op::PleOut, l, b_.add);
  for (int s = 1; s < S; ++s) cvo2("add", stream(b_.H, s), stream(b_.H, s), add);
  cap(Op::LayerOut, l, b_.H);
}

// Per lane: the LM head of one lane's rows runs while the SFU softcaps the other's.
void Lowering::final_logits() {
  const int64_t S = cfg_.altup_streams;
  const Buf rms = R(b_.rms), x = R(b_.x), acc = R(b_.acc);
  cvo1("rms", rms, stream(b_.H, 0));
  copy(stream(b_.P, 0), stream(b_.H, 0));
  for (int s = 1; s < S; ++s) {  // in the activation format, then into the stream buffer
    mv(x, stream(b_.H, s), w(model_weight_names().altup_unembed_projection(s)));
    e_.op(Emitter::SFU, "cvo.magmatch dst=" + e_.d(x) + " a=" + e_.d(x) + " b=" + e_.d(rms) + " k=" + e_.kf(1e-5f));
    copy(stream(b_.P, s), x);
  }
  cap(Op::Unembed, -1, b_.P);
  zero(acc);
  for (int s = 0; s < S; ++s) cvo2("add", acc, acc, stream(b_.P, s));
  cvok("scale", x, acc, 1.0f / float(S));  // S = 4: x * 0.25 == x / 4 exactly
  rmsnorm_w(x, model_weight_names().final_norm);
  cap(Op::FinalNorm, -1, b_.x);
  Buf lg;
  lg.space = "ddr";
  lg.dtype = num::fmt_name(f_.logits);
  lg.base = lay_.logits;
  lg.rows = T_;
  lg.cols = cfg_.vocab;
  lg.stride = cfg_.vocab * dtype_bytes(lg.dtype);
  lg.name = "logits";
  // The LM head in vocabulary slices, each softcapped as soon as its product
  // lands: the SFU's softcap of one slice overlaps the next slice's product,
  // and the program ends one slice's softcap after the last product instead
  // of the whole vocabulary's. Each logit is its own dot product: the bits do
  // not depend on the slicing.
  const int64_t V = cfg_.vocab, slices = std::clamp<int64_t>(V / kVocabSliceMin, 1, kVocabSlices);
  const int64_t per = ((V + slices - 1) / slices + 63) / 64 * 64;
  for (int64_t c0 = 0; c0 < V; c0 += per) {
    const int64_t n = std::min(per, V - c0);
    const Buf ls = view(R(lg), tn_, n, uint64_t(c0 * dtype_bytes(lg.dtype)));
    Buf es = w(model_weight_names().embed);
    es.scale_base += uint64_t(4 * c0);
    es = view(es, n, es.cols, uint64_t(c0 * es.stride));
    mv(ls, x, es);
    if (cfg_.softcap > 0) cvok("softcap", ls, ls, float(cfg_.softcap));
  }
  cap(Op::Logits, -1, lg);
}

Compiled Lowering::run() {
  e_.region("weights space=ddr role=weights base=0x0 size=0x" + [&] {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(std::max<uint64_t>(lay_.weights_end, 16)));
    return std::string(b);
  }());
  e_.comment("embedding, per-layer inputs, RoPE angles, AltUp projections");
  embed_and_inputs();
  for (int l = 0; l < cfg_.layers; ++l) layer(l);
  e_.comment("unembed, final norm, LM head, softcap");
  lanes([&] { final_logits(); });
  Compiled c;
  c.l2_high_water = e_.l2_high_water();
  c.spill_bytes = e_.ddr_scratch_bytes();
  for (const std::string& n : spill_plan(cfg_, f_, hw_, T_)) c.spilled.push_back(n);
  c.l2_allocs = e_.l2_allocs();
  c.instructions = e_.size() + 1;
  c.text = e_.finish(opt_.chain);
  c.accesses = e_.accesses();
  c.program = isa::assemble(c.text, "compiled.s");
  c.weight_uses = uses_;
  for (const Resident& r : lay_.resident) {
    c.resident.push_back({r.l2_base, r.data_bytes});
    if (r.scale_bytes) c.resident.push_back({r.l2_scale_base, r.scale_bytes});
  }
  return c;
}

}  // namespace

Compiled compile_forward(const ModelConfig& cfg, const Layout& lay, const num::Formats& f, const HwLimits& hw,
                         const CompileOptions& opt) {
  Lowering low(cfg, lay, f, hw, opt);
  Compiled c = low.run();
  const std::vector<std::string> bad = verify_compiled(c, hw);
  require(bad.empty(), "compiler: the compiled program fails verification: " + (bad.empty() ? "" : bad[0]));
  require(c.l2_high_water <= hw.l2, "compiler: the " + std::to_string(opt.tokens) + "-token program needs " +
                                        std::to_string(c.l2_high_water) + " bytes of L2, more than the " +
                                        std::to_string(hw.l2) + " the hardware has");
  require(c.spill_bytes <= lay.spill_bytes, "compiler: the " + std::to_string(opt.tokens) + "-token program spills " +
                                             std::to_string(c.spill_bytes) + " bytes, more than the plan's " +
                                             std::to_string(lay.spill_bytes));
  require(c.l2_high_water <= lay.l2_resident_base,
          "compiler: the " + std::to_string(opt.tokens) + "-token program needs " + std::to_string(c.l2_high_water) +
              " bytes of L2, but resident weights hold L2 from " + std::to_string(lay.l2_resident_base));
  return c;
}

uint64_t l2_bytes_for(const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int tokens, bool spill) {
  Emitter e;
  alloc_bufs(e, cfg, f, hw, tokens, spill ? spill_plan(cfg, f, hw, tokens) : std::set<std::string>{});
  return e.l2_high_water();
}

uint64_t spill_bytes_for(const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int tokens) {
  Emitter e;
  alloc_bufs(e, cfg, f, hw, tokens, spill_plan(cfg, f, hw, tokens));
  return e.ddr_scratch_bytes();
}

int default_lanes(int tokens, bool chain) { return !chain && tokens >= kOverlapTokens ? 2 : 1; }

int largest_chunk(const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int cap) {
  require(l2_bytes_for(cfg, f, hw, 1) <= hw.l2,
          (hw.source.empty() ? std::string("the hardware file") : hw.source) + ": memory.l2_bytes (" +
              std::to_string(hw.l2) + ") is less than the " + std::to_string(l2_bytes_for(cfg, f, hw, 1)) +
              " bytes of L2 even a one-token program of this model needs (compiler)");
  int best = 1;
  for (int t = 2; t <= cap; ++t)
    if (l2_bytes_for(cfg, f, hw, t) <= hw.l2) best = t;
    else break;
  return best;
}

std::vector<int> chunk_sizes(int max_chunk) {
  require(max_chunk >= 1, "chunk_sizes: the largest chunk must be at least 1");
  std::vector<int> s{max_chunk};
  int p = 1;
  while (p * 2 < max_chunk) p *= 2;
  for (; p >= 1; p /= 2)
    if (p < max_chunk) s.push_back(p);
  return s;
}

std::vector<int> cover(int n, const std::vector<int>& sizes) {
  std::vector<int> out;
  for (int s : sizes)
    while (n >= s) out.push_back(s), n -= s;
  require(n == 0, "cover: the program sizes do not include 1");
  return out;
}

}  // namespace n3::comp
