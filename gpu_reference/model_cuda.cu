// golden/model.cc on the GPU. The functions below carry model.cc's names and
// order (embed, per_layer_inputs, altup_project, predict, laurel, attention,
// mlp, correct, per_layer_mix, decoder_layer, final_logits) so the two read
// side by side; the elementwise steps model.cc writes between Kernels calls
// are fused into per-token kernels (kernels_layer.cuh) that perform the same
// float32 operations in the same order, and the linear layers sharing an
// input go in one GEMV launch (kernels_gemv.cuh). The weights and the BFP
// activation buffers' layout are model_cuda_weights.cu's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <cstring>
#include <map>

#include "gpu_reference/kernels_attention.cuh"
#include "gpu_reference/kernels_attention_int8.cuh"
#include "gpu_reference/kernels_gemv.cuh"
#include "gpu_reference/kernels_layer.cuh"
#include "gpu_reference/model_cuda.h"
#include "gpu_reference/model_cuda_weights.cuh"

namespace n3::gpu {

struct CudaModel::Impl {
  // One sequence: positions, the KV cache of every cache-owning layer, its decode graph.
  struct Seq {
    int64_t pos = 0;
    std::vector<int64_t> positions;
    DevBuf<int64_t> dpos;
    std::vector<DevBuf<float>> k, v;
    std::vector<DevBuf<int16_t>> kmant;
    std::vector<DevBuf<int32_t>> kexp, kemax, kpois;
    std::vector<DevBuf<int8_t>> k8, v8;  // numerics.kv_format = int8: codes and scales instead
    std::vector<DevBuf<float>> ks, vs;
    cudaGraphExec_t exec = nullptr;
    int graph_gen = -1;
    int64_t graph_bound = 0;  // attn_bound_ the graph was captured with

    KvDev kv(int l) {
      KvDev d;
      d.k = k[l].get();
      d.v = v[l].get();
      if (!kmant.empty() && kmant[l].size()) {
        d.kmant = kmant[l].get();
        d.kexp = kexp[l].get();
        d.kemax = kemax[l].get();
        d.kpois = kpois[l].get();
      }
      if (!k8.empty() && k8[l].size()) {
        d.k8 = k8[l].get();
        d.v8 = v8[l].get();
        d.ks = ks[l].get();
        d.vs = vs[l].get();
      }
      return d;
    }
    ~Seq() {
      if (exec) cudaGraphExecDestroy(exec);
    }
  };

  std::shared_ptr<const WeightSource> w_;
  ModelConfig cfg_;
  bool npu_;
  bool int8_kv_ = false;  // NPU numerics with numerics.kv_format = int8
  num::Formats f_;
  NpuOps npu_ops_;
  RefOps ref_ops_;
  int64_t kv_rows_;
  size_t smem_limit_ = 0;
  // The most cache rows a global layer's query may attend to in the kernels
  // being launched: sizes the attention's shared memory. A power of two above
  // the rows held, so a captured decode graph serves many steps.
  int attn_bound_ = 0;
  cudaStream_t s_ = nullptr;
  cudaEvent_t ev0_ = nullptr, ev1_ = nullptr;
  // The side stream that computes a layer's AltUp router and coefficients
  // (altup_coefs) beside the decode chain, forked and joined by events.
  cudaStream_t side_ = nullptr;
  cudaEvent_t fork_ev_ = nullptr, join_ev_ = nullptr;
  DevBuf<float> mc_;  // [T, S + S * S]: the next layer's router outputs and coefficients
  bool graphs_ = true;
  bool split_attn_ = true;  // decode: attention scores in a kernel of their own (N3_CUDA_ATTN_SPLIT=0: off)
  bool attn_pre_ = true;    // then V's blocks before the wait (N3_CUDA_ATTN_PRE=0: off)
  int again_ = 1;  // N3_CUDA_AGAIN=1: the idempotent per-token kernels run twice (their warm-cache time)
  // Elements of D a block of the sliced per-token kernels writes (N3_CUDA_ROW_SLICE; 0: one block a token).
  int row_slice_ = 256;
  GemvPlan gemv_plan_;  // N3_CUDA_GEMV_PERSIST, N3_CUDA_GEMV_BLOCKS
  DevBuf<float> scores_;    // [H, kv_rows_]: the decode token's attention scores
  int gen_ = 0;  // bumps whenever activation buffers move (captured graphs go stale)

  std::unique_ptr<const CudaWeights> wt_;  // uploaded once the device is checked

  // ---- activations, for up to cap_ tokens ----------------------------------
  int cap_ = 0;
  DevBuf<float> x0_, pli_, h_, pred_, corr_, u_, m_, m2_, an_, q_, k_, v_, mid_, ctx_, attn_, lr_, ag_, lo_, al_, xn_,
      graw_, g_, up_, act_, y_, o_, gin_, fraw_, f_pl_, addraw_, add_, xf_, logits_;
  QBuf qx0_, qan_, qmid_, qctx_, qxn_, qact_, qgin_, qf_, qh_, qxf_;
  DevBuf<int64_t> step_;
  DevBuf<int32_t> ids_;
  int64_t* step_h_ = nullptr;  // pinned staging
  int32_t* ids_h_ = nullptr;
  int64_t* pos_h_ = nullptr;
  float* logits_h_ = nullptr;
  size_t logits_h_n_ = 0;

  std::map<int, Seq> seqs_;
  int next_ = 0;

  Impl(std::shared_ptr<const WeightSource> w, const std::string& numerics, const HwConfig& hw)
      : w_(std::move(w)), cfg_(w_->config()), npu_(numerics == "npu") {
    require(numerics == "npu" || numerics == "reference",
            "--numerics must be 'npu' or 'reference' (is '" + numerics + "')");
    const std::string problem = cuda_problem();
    require(problem.empty(), "backend 'cuda': " + problem);
    f_ = hw.numerics.formats;
    const std::string fp = num::formats_problem(f_);
    require(fp.empty(), fp);
    int8_kv_ = npu_ && f_.kv == num::KvFmt::INT8;
    require(cfg_.altup_streams <= kMaxStreams, "cuda: at most 8 AltUp streams");
    require(cfg_.head_dim % 2 == 0 && cfg_.head_dim <= 512, "cuda: head_dim must be even and at most 512");
    npu_ops_ = NpuOps{f_, float(cfg_.rms_eps)};
    ref_ops_ = RefOps{cfg_.rms_eps};
    kv_rows_ = hw.kv.cap_tokens.value;
    if (const char* g = std::getenv("N3_CUDA_GRAPHS")) graphs_ = std::string(g) != "0";
    if (const char* g = std::getenv("N3_CUDA_ATTN_SPLIT")) split_attn_ = std::string(g) != "0";
    if (const char* g = std::getenv("N3_CUDA_ATTN_PRE")) attn_pre_ = std::string(g) != "0";
    if (const char* g = std::getenv("N3_CUDA_AGAIN")) again_ = std::string(g) == "1" ? 2 : 1;
    if (const char* g = std::getenv("N3_CUDA_ROW_SLICE")) row_slice_ = std::atoi(g);
    if (const char* g = std::getenv("N3_CUDA_GEMV_PERSIST")) gemv_plan_.persist = std::string(g) != "0";
    if (const char* g = std::getenv("N3_CUDA_GEMV_BLOCKS")) gemv_plan_.max_blocks = std::atoi(g);
    if (npu_) scores_.resize(size_t(cfg_.q_heads) * kv_rows_);
    N3_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
    N3_CUDA(cudaEventCreate(&ev0_));
    N3_CUDA(cudaEventCreate(&ev1_));
    N3_CUDA(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    N3_CUDA(cudaEventCreateWithFlags(&fork_ev_, cudaEventDisableTiming));
    N3_CUDA(cudaEventCreateWithFlags(&join_ev_, cudaEventDisableTiming));
    wt_ = std::make_unique<const CudaWeights>(*w_, npu_);
    const int hd = cfg_.head_dim;
    const size_t smem = std::max({attn_npu_smem(int(kv_rows_), hd, f_.bfp_block), size_t(kv_rows_) * 8 + 16,
                                  attn_group_smem(1, int(kv_rows_), hd), attn_group_int8_smem(1, int(kv_rows_), hd),
                                  attn_group_smem(1, int(std::min<int64_t>(kv_rows_, kPreMaxPositions)), hd, npu_)});
    cudaDeviceProp prop;
    N3_CUDA(cudaGetDeviceProperties(&prop, 0));
    smem_limit_ = prop.sharedMemPerBlockOptin - 1024;  // room for the kernels' static shared memory
    require(smem <= smem_limit_, "cuda: attention over kv.cap_tokens = " + std::to_string(kv_rows_) +
                                     " positions needs " + std::to_string(smem) +
                                     " bytes of shared memory (device has " +
                                     std::to_string(prop.sharedMemPerBlockOptin) + ")");
    attention_init(prop.sharedMemPerBlockOptin);
    attention_int8_init(prop.sharedMemPerBlockOptin);
    // The per-token kernels stage their vectors and weight vectors (and the
    // float32 AltUp router) in shared memory.
    {  // the largest: post_mlp (6 D + a float32 router + the S streams of a slice)
      const size_t D = size_t(cfg_.hidden), S = size_t(cfg_.altup_streams);
      const size_t need = 4 * ((6 + S) * D + S * (D / size_t(row_slices(cfg_.hidden, row_slice_))));
      require(need <= smem_limit_, "cuda: hidden size " + std::to_string(D) +
                                       " too large for the per-token kernels' shared memory (" + std::to_string(need) +
                                       " > " + std::to_string(smem_limit_) + " bytes)");
    }
    const size_t optin = prop.sharedMemPerBlockOptin;
    allow_smem(post_attention_kernel<NpuOps>, optin);
    allow_smem(post_attention_kernel<RefOps>, optin);
    allow_smem(altup_coefs_kernel<NpuOps>, optin);
    allow_smem(altup_coefs_kernel<RefOps>, optin);
    auto allow_streams = [optin](auto sm) {  // the S-bounded kernels, per stream bound
      constexpr int SM = decltype(sm)::value;
      allow_smem(predict_kernel<NpuOps, SM>, optin);
      allow_smem(predict_kernel<RefOps, SM>, optin);
      allow_smem(post_mlp_kernel<NpuOps, SM>, optin);
      allow_smem(post_mlp_kernel<RefOps, SM>, optin);
      allow_smem(per_layer_out_kernel<NpuOps, SM>, optin);
      allow_smem(per_layer_out_kernel<RefOps, SM>, optin);
    };
    allow_streams(std::integral_constant<int, 4>());
    allow_streams(std::integral_constant<int, kMaxStreams>());
    // The sparse MLP layers stage a gate row in shared memory (mlp_act_kernel).
    const int ffn_smem = ffn_max() * 4;
    require(size_t(ffn_smem) <= prop.sharedMemPerBlockOptin, "cuda: intermediate size too large for the top-k stage");
    N3_CUDA(cudaFuncSetAttribute(mlp_act_kernel<NpuOps>, cudaFuncAttributeMaxDynamicSharedMemorySize, ffn_smem));
    N3_CUDA(cudaFuncSetAttribute(mlp_act_kernel<RefOps>, cudaFuncAttributeMaxDynamicSharedMemorySize, ffn_smem));
    step_.resize(2);
    N3_CUDA(cudaMallocHost(&step_h_, 2 * sizeof(int64_t)));
    ensure(1);
  }

  ~Impl() {
    seqs_.clear();
    if (step_h_) cudaFreeHost(step_h_);
    if (ids_h_) cudaFreeHost(ids_h_);
    if (pos_h_) cudaFreeHost(pos_h_);
    if (logits_h_) cudaFreeHost(logits_h_);
    if (ev0_) cudaEventDestroy(ev0_);
    if (ev1_) cudaEventDestroy(ev1_);
    if (fork_ev_) cudaEventDestroy(fork_ev_);
    if (join_ev_) cudaEventDestroy(join_ev_);
    if (side_) cudaStreamDestroy(side_);
    if (s_) cudaStreamDestroy(s_);
  }

  // ---- buffers ----------------------------------------------------------------

  int ffn_max() const {
    int F = 0;
    for (int x : cfg_.ffn) F = std::max(F, x);
    return F;
  }

  void ensure(int T) {
    if (T <= cap_) return;
    const size_t D = cfg_.hidden, S = cfg_.altup_streams, LP = size_t(cfg_.layers) * cfg_.pl_dim, QD = cfg_.q_dim(),
                 KVD = cfg_.kv_dim(), R = cfg_.laurel_rank, F = ffn_max(), P = cfg_.pl_dim, V = cfg_.vocab;
    for (DevBuf<float>* b : {&x0_, &an_, &attn_, &lr_, &ag_, &lo_, &al_, &xn_, &y_, &o_, &gin_, &addraw_, &add_, &xf_})
      b->resize(T * D);
    for (DevBuf<float>* b : {&h_, &pred_, &corr_, &u_}) b->resize(S * T * D);
    pli_.resize(T * LP);
    m_.resize(T * S);
    m2_.resize(T * S);
    mc_.resize(T * (S + S * S));
    q_.resize(T * QD);
    ctx_.resize(T * QD);
    k_.resize(T * KVD);
    v_.resize(T * KVD);
    mid_.resize(T * R);
    for (DevBuf<float>* b : {&graw_, &g_, &up_, &act_}) b->resize(T * F);
    fraw_.resize(T * P);
    f_pl_.resize(T * P);
    logits_.resize(T * V);
    if (npu_) {
      qx0_.alloc(T, D, f_);
      qan_.alloc(T, D, f_);
      qmid_.alloc(T, R, f_);
      qctx_.alloc(T, QD, f_);
      qxn_.alloc(T, D, f_);
      qact_.alloc(T, F, f_);
      qgin_.alloc(T, D, f_);
      qf_.alloc(T, P, f_);
      qh_.alloc(int(S - 1) * T, D, f_);
      qxf_.alloc(T, D, f_);
    }
    ids_.resize(T);
    if (ids_h_) cudaFreeHost(ids_h_);
    if (pos_h_) cudaFreeHost(pos_h_);
    N3_CUDA(cudaMallocHost(&ids_h_, T * sizeof(int32_t)));
    N3_CUDA(cudaMallocHost(&pos_h_, std::max<int64_t>(T, kv_rows_) * sizeof(int64_t)));
    cap_ = T;
    ++gen_;
  }

  // ---- helpers ------------------------------------------------------------------

  template <class Fn>
  void with_ops(Fn&& fn) {
    if (npu_)
      fn(npu_ops_);
    else
      fn(ref_ops_);
  }

  struct Lin {
    const DevMatrix& w;
    const float* x;
    QAct q;
    float* y;
  };
  // The linear layers of one launch; all read T token rows of their input.
  // (logits: the LM head, written in the logits format).
  void linear(const char* name, std::initializer_list<Lin> jobs, int T, bool logits = false, int t_in0 = 0,
              float cap = 0) {
    std::vector<GemvSeg> segs;
    for (const Lin& j : jobs) {
      GemvSeg g;
      g.w = j.w;
      g.x = j.x;
      g.q = j.q;
      g.y = j.y;
      g.t_in0 = t_in0;
      g.out = npu_ ? (logits ? f_.logits : f_.act) : num::Fmt::F32;
      g.cap = cap;
      segs.push_back(g);
    }
    if (npu_)
      gemv_npu(segs, T, s_, name, gemv_plan_);
    else
      gemv_ref(segs, T, s_, name);
  }
  // Quantises a GEMV input that its producer could not quantise in place.
  void requantize(const float* x, int64_t ld, int rows, const QBuf& q, bool done_in_place) {
    if (npu_ && !done_in_place) quantize(x, ld, rows, q.q, s_);
  }

  struct Rec {
    Impl* m;
    Recorder* rec;
    Phase ph;
    void operator()(Op op, int layer, const Shape& shape, const float* dev) const {
      if (!rec || !rec->wants(op)) return;
      std::vector<float> host(static_cast<size_t>(numel(shape)));
      N3_CUDA(cudaMemcpyAsync(host.data(), dev, host.size() * 4, cudaMemcpyDeviceToHost, m->s_));
      N3_CUDA(cudaStreamSynchronize(m->s_));
      rec->record(ph, op, layer, shape, host.data());
    }
  };

  // ---- the graph (model.cc) ------------------------------------------------------

  // x0 = E[id] * sqrt(D)
  void embed(int T) {
    const float scale = std::sqrt(float(cfg_.hidden));
    with_ops([&](auto ops) {
      launch("embed_kernel", embed_kernel<decltype(ops)>, T, kRowThreads, 0, s_, ops, wt_->E, ids_.get(), scale,
             cfg_.hidden, x0_.get(), qx0_.q);
    });
    requantize(x0_.get(), cfg_.hidden, T, qx0_, qx0_.q.lane_quantised());
  }

  // pli = (RMSNorm((x0 W_plp^T) * D^-0.5, w_plpn) + E_pl[id] * sqrt(P)) / sqrt(2), [T, L, P];
  // altup_project: h0 = x0; h_k = (x0 W_ap[k-1]^T) rescaled to rms(x0).
  // Both read x0: their linear layers go in one launch.
  void per_layer_inputs_and_altup_project(int T) {
    const int D = cfg_.hidden, S = cfg_.altup_streams;
    const size_t TD = size_t(T) * D;
    float* h = h_.get();
    const QAct q = qx0_.q;
    if (S == 4) {
      linear("gemv plp+altup",
             {{wt_->plp, x0_.get(), q, pli_.get()},
              {wt_->ap[1], x0_.get(), q, h + TD},
              {wt_->ap[2], x0_.get(), q, h + 2 * TD},
              {wt_->ap[3], x0_.get(), q, h + 3 * TD}},
             T);
    } else {
      linear("gemv plp+altup", {{wt_->plp, x0_.get(), q, pli_.get()}}, T);
      for (int s = 1; s < S; ++s) linear("gemv altup", {{wt_->ap[s], x0_.get(), q, h + s * TD}}, T);
    }
    const float proj_scale = 1.0f / std::sqrt(float(D)), ple_scale = std::sqrt(float(cfg_.pl_dim)),
                mix = 1.0f / std::sqrt(2.0f);
    with_ops([&](auto ops) {
      launch("per_layer_inputs_kernel", per_layer_inputs_kernel<decltype(ops)>, T, kRowThreads, 0, s_, ops, ids_.get(),
             wt_->Epl, cfg_.vocab_pl, wt_->plp_norm, pli_.get(), cfg_.layers, cfg_.pl_dim, proj_scale, ple_scale, mix);
      launch("altup_project_kernel", altup_project_kernel<decltype(ops)>, T, kRowThreads, 0, s_, ops, x0_.get(), h, T,
             D, S);
    });
  }

  // Forks the side stream off s_ at this point of the chain (its input,
  // stream 0 of layer l's input, is written by then) for layer l's router
  // outputs and coefficients; layer l's predict joins it.
  void altup_coefs(int l, int T) {
    const LayerW& w = wt_->layers[l];
    const int D = cfg_.hidden, S = cfg_.altup_streams;
    N3_CUDA(cudaEventRecord(fork_ev_, s_));
    N3_CUDA(cudaStreamWaitEvent(side_, fork_ev_, 0));
    with_ops([&](auto ops) {
      launch_as(false, "altup_coefs_kernel", altup_coefs_kernel<decltype(ops)>, T, kRowThreads,
                4 * (3 * size_t(D) + router_stage_floats(w.router)), side_, ops, l == 0 ? x0_.get() : corr_.get(),
                mc_.get(), w.router, w.pred, w.router_norm, D, S, 1.0f / float(D));
    });
    N3_CUDA(cudaEventRecord(join_ev_, side_));
  }

  void decoder_layer(int l, Seq& sq, int T, const Rec& rec) {
    const LayerW& w = wt_->layers[l];
    const int D = cfg_.hidden, S = cfg_.altup_streams, F = cfg_.ffn[l], P = cfg_.pl_dim;
    const float inv_d = 1.0f / float(D), inv_sqrt2 = 1.0f / std::sqrt(2.0f);
    const bool owns = cfg_.owns_kv(l);
    const dim3 rows(row_slices(D, row_slice_), T);  // the sliced kernels' grid

    // predict: pred from the router outputs and coefficients that
    // altup_coefs computed on the side stream; an = RMSNorm(pred[0]).
    N3_CUDA(cudaStreamWaitEvent(s_, join_ev_, 0));
    with_ops([&](auto ops) {
      using O = decltype(ops);
      for (int rep = 0; rep < again_; ++rep)
        launch(rep ? "predict_kernel (again)" : "predict_kernel",
             S == 4 ? predict_kernel<O, 4> : predict_kernel<O, kMaxStreams>, rows, kRowThreads, 4 * 2 * size_t(D), s_,
             ops, h_.get(), mc_.get(), pred_.get(), m_.get(), an_.get(), qan_.q, w.in_norm, T, D, S);
    });
    rec(Op::Router, l, {T, S}, m_.get());
    rec(Op::Pred, l, {S, T, D}, pred_.get());
    rec(Op::InputNorm, l, {T, D}, an_.get());
    requantize(an_.get(), D, T, qan_, qan_.q.lane_quantised());

    // attention's projections and LAuReL's left matrix read an.
    const QAct qa = qan_.q;
    if (owns)
      linear("gemv qkv+ll",
             {{w.q, an_.get(), qa, q_.get()},
              {w.k, an_.get(), qa, k_.get()},
              {w.v, an_.get(), qa, v_.get()},
              {w.ll, an_.get(), qa, mid_.get()}},
             T);
    else
      linear("gemv qkv+ll", {{w.q, an_.get(), qa, q_.get()}, {w.ll, an_.get(), qa, mid_.get()}}, T);
    attention(l, sq, T, rec);
    // laurel's right matrix goes with o_proj.
    linear("gemv o+lr", {{w.o, ctx_.get(), qctx_.q, attn_.get()}, {w.lr, mid_.get(), qmid_.q, lr_.get()}}, T);
    rec(Op::AttnOut, l, {T, D}, attn_.get());

    // ag = a + RMSNorm(attn); lo = an + RMSNorm(lr); al = (ag + lo) / sqrt(2); xn = RMSNorm(al).
    with_ops([&](auto ops) {
      for (int rep = 0; rep < again_; ++rep)
        launch(rep ? "post_attention_kernel (again)" : "post_attention_kernel", post_attention_kernel<decltype(ops)>, rows, kRowThreads, 28 * size_t(D), s_, ops,
             attn_.get(), lr_.get(), pred_.get(), an_.get(), w.post_attn, w.laurel_norm, w.pre_ffn, ag_.get(),
             lo_.get(), al_.get(), xn_.get(), qxn_.q, D, inv_sqrt2);
    });
    rec(Op::Laurel, l, {T, D}, lo_.get());
    rec(Op::AttnGated, l, {T, D}, ag_.get());
    rec(Op::AttnLaurel, l, {T, D}, al_.get());
    requantize(xn_.get(), D, T, qxn_, qxn_.q.lane_quantised());

    mlp(l, w, T, F, rec);

    // o = al + RMSNorm(y); correct; gin = corr[0] * scale.
    with_ops([&](auto ops) {
      using O = decltype(ops);
      for (int rep = 0; rep < again_; ++rep)
        launch(rep ? "post_mlp_kernel (again)" : "post_mlp_kernel",
             S == 4 ? post_mlp_kernel<O, 4> : post_mlp_kernel<O, kMaxStreams>, rows, kRowThreads,
             4 * (6 * size_t(D) + router_stage_floats(w.router) + size_t(S) * (D / rows.x)), s_, ops, y_.get(),
             al_.get(), pred_.get(), o_.get(), m2_.get(), corr_.get(), gin_.get(), qgin_.q, w.post_ffn, w.router_norm,
             w.router, w.corr, cfg_.altup_correct_scale ? w.out_scale : nullptr, T, D, S, inv_d);
    });
    if (l + 1 < cfg_.layers) altup_coefs(l + 1, T);  // reads corr[0], final now
    rec(Op::FfnOut, l, {T, D}, o_.get());
    rec(Op::CorrRouter, l, {T, S}, m2_.get());
    rec(Op::Corr, l, {S, T, D}, corr_.get());
    requantize(gin_.get(), D, T, qgin_, qgin_.q.lane_quantised());

    // per_layer_mix: corr[1..] += RMSNorm(GELU(gin W_gate_pl^T) * pli[l]) W_proj_pl^T, w_post_pl).
    linear("gemv pl_gate", {{w.pl_gate, gin_.get(), qgin_.q, fraw_.get()}}, T);
    with_ops([&](auto ops) {
      launch("per_layer_gate_kernel", per_layer_gate_kernel<decltype(ops)>, T, kRowThreads, 0, s_, ops, fraw_.get(),
             pli_.get(), f_pl_.get(), qf_.q, P, cfg_.layers * P, l);
    });
    rec(Op::PleGate, l, {T, P}, f_pl_.get());
    requantize(f_pl_.get(), P, T, qf_, qf_.q.lane_quantised());
    linear("gemv pl_proj", {{w.pl_proj, f_pl_.get(), qf_.q, addraw_.get()}}, T);
    with_ops([&](auto ops) {
      using O = decltype(ops);
      for (int rep = 0; rep < again_; ++rep)
        launch(rep ? "per_layer_out_kernel (again)" : "per_layer_out_kernel",
             S == 4 ? per_layer_out_kernel<O, 4> : per_layer_out_kernel<O, kMaxStreams>, rows, kRowThreads,
             4 * (2 * size_t(D) + size_t(S) * (D / rows.x)), s_, ops,
             addraw_.get(), w.post_pl, add_.get(), corr_.get(), h_.get(), T, D, S);
    });
    rec(Op::PleOut, l, {T, D}, add_.get());
    rec(Op::LayerOut, l, {S, T, D}, h_.get());
  }

  // q/k/v norms, RoPE, the cache append, attend per (token, head).
  void attention(int l, Seq& sq, int T, const Rec& rec) {
    const LayerW& w = wt_->layers[l];
    const int H = cfg_.q_heads, KVH = cfg_.kv_heads, hd = cfg_.head_dim, R = cfg_.laurel_rank;
    const bool owns = cfg_.owns_kv(l);
    const float* freq = cfg_.is_global(l) ? wt_->freq_global : wt_->freq_local;
    const KvDev kv_own = owns ? sq.kv(l) : KvDev{};
    with_ops([&](auto ops) {
      using O = decltype(ops);
      // A block per head, a thread per element of it; the INT8 append is an
      // instance of its own (NPU numerics only).
      auto kernel = qkv_kernel<O, false>;
      if constexpr (std::is_same_v<O, NpuOps>)
        if (int8_kv_) kernel = qkv_kernel<O, true>;
      const int threads = std::min(kRowThreads, std::max(64, (hd + 31) / 32 * 32));
      launch("qkv_kernel", kernel, dim3(H + (owns ? 2 * KVH : 0), T), threads, 0, s_, ops,
             q_.get(), k_.get(), v_.get(),
             w.q_norm, w.k_norm, freq, H, KVH, hd, owns, step_.get(), kv_own, f_.bfp_block, f_.attn_mant_bits,
             mid_.get(), qmid_.q, R);
    });
    requantize(mid_.get(), R, T, qmid_, qmid_.q.lane_quantised());
    rec(Op::AttnQ, l, {T, H, hd}, q_.get());
    if (owns) {
      rec(Op::AttnK, l, {T, KVH, hd}, k_.get());
      rec(Op::AttnV, l, {T, KVH, hd}, v_.get());
    }
    // KV-shared layers read the (post-norm, post-RoPE) cache of their source layer.
    AttnArgs a;
    a.q = q_.get();
    a.kv = sq.kv(cfg_.kv_source(l));
    a.appends = owns;
    a.positions = sq.dpos.get();
    a.step = step_.get();
    a.T = T;
    a.H = H;
    a.KVH = KVH;
    a.hd = hd;
    a.window = cfg_.is_global(l) ? 0 : cfg_.sliding_window;
    a.ctx = ctx_.get();
    a.qctx = qctx_.q;
    if (npu_ && T == 1 && split_attn_) {
      a.scores = scores_.get();
      a.sld = int(kv_rows_);
      a.pre_v = attn_pre_;
    }
    const int nmax = int(a.window > 0 ? std::min<int64_t>(a.window, kv_rows_) : attn_bound_);
    for (int rep = 0; rep < again_; ++rep) {
      if (int8_kv_)
        attention_int8(a, f_, nmax, smem_limit_, s_);
      else
        gpu::attention(a, npu_, f_, nmax, smem_limit_, s_);
    }
    rec(Op::AttnCtx, l, {T, H * hd}, ctx_.get());
    requantize(ctx_.get(), H * hd, T, qctx_, qctx_.q.lane_quantised() && hd % 32 == 0);
  }

  // y = (GELU(topk(x W_gate^T)) * (x W_up^T)) W_down^T
  void mlp(int l, const LayerW& w, int T, int F, const Rec& rec) {
    const float topk_mult = cfg_.topk_multiplier(l);
    linear("gemv gate+up", {{w.gate, xn_.get(), qxn_.q, graw_.get()}, {w.up, xn_.get(), qxn_.q, up_.get()}}, T);
    QAct qa = qact_.q;  // sized for the widest layer; this layer's rows are F long
    if (npu_) {
      qa.n = F;
      qa.nb = ceil_div(F, qa.block);
    }
    with_ops([&](auto ops) {
      launch("mlp_act_kernel", mlp_act_kernel<decltype(ops)>, dim3(ceil_div(F, kRowThreads), T), kRowThreads,
             topk_mult > 0 ? size_t(F) * 4 : 0, s_, ops, graw_.get(), up_.get(), g_.get(), act_.get(), qa, F,
             topk_mult);
    });
    rec(Op::MlpGate, l, {T, F}, g_.get());
    rec(Op::MlpUp, l, {T, F}, up_.get());
    rec(Op::MlpAct, l, {T, F}, act_.get());
    if (npu_ && !qa.lane_quantised()) quantize(act_.get(), F, T, qa, s_);
    linear("gemv down", {{w.down, act_.get(), qa, y_.get()}}, T);
    rec(Op::MlpDown, l, {T, cfg_.hidden}, y_.get());
  }

  // x = RMSNorm(mean(h0, rescaled h_k W_unemb[k-1]^T)); logits = softcap(x E^T)
  void final_logits(int T, const Rec& rec, bool last_only) {
    const int D = cfg_.hidden, S = cfg_.altup_streams;
    const size_t TD = size_t(T) * D;
    float* h = h_.get();
    float* u = u_.get();
    requantize(h + TD, D, (S - 1) * T, qh_, false);
    if (S == 4) {
      linear("gemv unembed",
             {{wt_->unemb[1], h + TD, rows_from(qh_.q, 0), u + TD},
              {wt_->unemb[2], h + 2 * TD, rows_from(qh_.q, T), u + 2 * TD},
              {wt_->unemb[3], h + 3 * TD, rows_from(qh_.q, 2 * T), u + 3 * TD}},
             T);
    } else {
      for (int s = 1; s < S; ++s)
        linear("gemv unembed", {{wt_->unemb[s], h + s * TD, rows_from(qh_.q, (s - 1) * T), u + s * TD}}, T);
    }
    with_ops([&](auto ops) {
      launch("final_norm_kernel", final_norm_kernel<decltype(ops)>, T, kRowThreads, 0, s_, ops, h, u, wt_->final_norm,
             xf_.get(), qxf_.q, T, D, S);
    });
    rec(Op::Unembed, -1, {S, T, D}, u);
    rec(Op::FinalNorm, -1, {T, D}, xf_.get());
    requantize(xf_.get(), D, T, qxf_, qxf_.q.lane_quantised());
    const int rows = last_only ? 1 : T;
    const float cap = cfg_.softcap > 0 ? float(cfg_.softcap) : 0.0f;
    linear("gemv lm_head", {{wt_->E, xf_.get(), qxf_.q, logits_.get()}}, rows, true, T - rows, cap);
    rec(Op::Logits, -1, {rows, cfg_.vocab}, logits_.get());
  }

  // model.cc's forward, after the host has staged ids and positions.
  void run(Seq& sq, int T, Phase ph, Recorder* recorder, bool last_only) {
    const Rec rec{this, recorder, ph};
    const int D = cfg_.hidden, S = cfg_.altup_streams;
    embed(T);
    altup_coefs(0, T);  // reads x0
    rec(Op::Embed, -1, {T, D}, x0_.get());
    per_layer_inputs_and_altup_project(T);
    rec(Op::PerLayerInputs, -1, {T, cfg_.layers, cfg_.pl_dim}, pli_.get());
    rec(Op::AltupIn, -1, {S, T, D}, h_.get());
    for (int l = 0; l < cfg_.layers; ++l) decoder_layer(l, sq, T, rec);
    final_logits(T, rec, last_only);
  }

  // ---- sequences -------------------------------------------------------------------

  Seq& seq(int s) {
    auto it = seqs_.find(s);
    require(it != seqs_.end(), "cuda: no open sequence " + std::to_string(s));
    return it->second;
  }

  int new_sequence() {
    Seq& sq = seqs_[next_];
    const size_t rows = kv_rows_, KVD = cfg_.kv_dim(), KVH = cfg_.kv_heads;
    const int nbd = ceil_div(cfg_.head_dim, f_.bfp_block);
    sq.dpos.resize(rows);
    sq.k.resize(cfg_.layers);
    sq.v.resize(cfg_.layers);
    if (int8_kv_) {
      sq.k8.resize(cfg_.layers);
      sq.v8.resize(cfg_.layers);
      sq.ks.resize(cfg_.layers);
      sq.vs.resize(cfg_.layers);
    } else if (npu_) {
      sq.kmant.resize(cfg_.layers);
      sq.kexp.resize(cfg_.layers);
      sq.kemax.resize(cfg_.layers);
      sq.kpois.resize(cfg_.layers);
    }
    for (int l = 0; l < cfg_.layers; ++l) {
      if (!cfg_.owns_kv(l)) continue;
      if (int8_kv_) {  // the attention reads only the codes and scales
        sq.k8[l].resize(rows * KVD);
        sq.v8[l].resize(rows * KVD);
        sq.ks[l].resize(rows * KVH);
        sq.vs[l].resize(rows * KVH);
        continue;
      }
      sq.k[l].resize(rows * KVD);
      sq.v[l].resize(rows * KVD);
      if (npu_) {
        sq.kmant[l].resize(rows * KVH * nbd * f_.bfp_block);
        sq.kexp[l].resize(rows * KVH * nbd);
        sq.kemax[l].resize(rows * KVH);
        sq.kpois[l].resize(rows * KVH);
      }
    }
    return next_++;
  }

  // Moves rows [n - recent, n) to [sinks, sinks + recent) of one array.
  template <class T>
  void keep_rows(DevBuf<T>& b, size_t row_elems, int64_t sinks, int64_t recent, int64_t n) {
    if (!b.size()) return;
    DevBuf<T> tmp(size_t(recent) * row_elems);
    N3_CUDA(cudaMemcpyAsync(tmp.get(), b.get() + (n - recent) * row_elems, recent * row_elems * sizeof(T),
                            cudaMemcpyDeviceToDevice, s_));
    N3_CUDA(cudaMemcpyAsync(b.get() + sinks * row_elems, tmp.get(), recent * row_elems * sizeof(T),
                            cudaMemcpyDeviceToDevice, s_));
    N3_CUDA(cudaStreamSynchronize(s_));
  }

  void evict(int s, int64_t sinks, int64_t recent) {
    Seq& sq = seq(s);
    const int64_t n = sq.positions.size();
    if (sinks + recent >= n) return;
    const size_t KVD = cfg_.kv_dim(), KVH = cfg_.kv_heads;
    const int nbd = ceil_div(cfg_.head_dim, f_.bfp_block);
    for (int l = 0; l < cfg_.layers; ++l) {
      if (!cfg_.owns_kv(l)) continue;
      keep_rows(sq.k[l], KVD, sinks, recent, n);
      keep_rows(sq.v[l], KVD, sinks, recent, n);
      if (int8_kv_) {
        keep_rows(sq.k8[l], KVD, sinks, recent, n);
        keep_rows(sq.v8[l], KVD, sinks, recent, n);
        keep_rows(sq.ks[l], KVH, sinks, recent, n);
        keep_rows(sq.vs[l], KVH, sinks, recent, n);
      } else if (npu_) {
        keep_rows(sq.kmant[l], KVH * nbd * f_.bfp_block, sinks, recent, n);
        keep_rows(sq.kexp[l], KVH * nbd, sinks, recent, n);
        keep_rows(sq.kemax[l], KVH, sinks, recent, n);
        keep_rows(sq.kpois[l], KVH, sinks, recent, n);
      }
    }
    sq.positions.erase(sq.positions.begin() + sinks, sq.positions.begin() + (n - recent));
    std::copy(sq.positions.begin(), sq.positions.end(), pos_h_);
    N3_CUDA(cudaMemcpyAsync(sq.dpos.get(), pos_h_, sq.positions.size() * 8, cudaMemcpyHostToDevice, s_));
    N3_CUDA(cudaStreamSynchronize(s_));
  }

  void capture(Seq& sq) {
    cudaGraph_t g = nullptr;
    N3_CUDA(cudaStreamBeginCapture(s_, cudaStreamCaptureModeThreadLocal));
    try {
      run(sq, 1, Phase::Decode, nullptr, true);
    } catch (...) {
      cudaStreamEndCapture(s_, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    N3_CUDA(cudaStreamEndCapture(s_, &g));
    if (sq.exec) cudaGraphExecDestroy(sq.exec);
    sq.exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&sq.exec, g, 0);
    cudaGraphDestroy(g);
    N3_CUDA(e);
    sq.graph_gen = gen_;
  }

  double gpu_s_ = 0;
  std::map<std::string, std::pair<int, double>> prof_;  // kernel -> (launches, seconds)
  int prof_steps_ = 0;

  std::string profile_report() const {
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (const auto& [name, e] : prof_) {
      total += e.second;
      char buf[160];
      std::snprintf(buf, sizeof buf, "  %-26s %6.1f launches %9.1f us %6.2f us each", name.c_str(),
                    double(e.first) / std::max(prof_steps_, 1), 1e6 * e.second / std::max(prof_steps_, 1),
                    1e6 * e.second / std::max(e.first, 1));
      rows.push_back({e.second, buf});
    }
    std::sort(rows.rbegin(), rows.rend());
    char head[128];
    std::snprintf(head, sizeof head, "per step (%d steps), kernels one at a time: %.1f us in all\n", prof_steps_,
                  1e6 * total / std::max(prof_steps_, 1));
    std::string out = head;
    for (const auto& r : rows) out += r.second + "\n";
    return out;
  }

  Tensor forward(int s, const std::vector<int32_t>& ids, Phase ph, Recorder* rec, bool last_only) {
    Seq& sq = seq(s);
    const int T = int(ids.size());
    require(T > 0, "cuda: empty token chunk");
    for (size_t i = 0; i < ids.size(); ++i)
      require(ids[i] >= 0 && ids[i] < cfg_.vocab, "cuda: token id " + std::to_string(ids[i]) + " at index " +
                                                      std::to_string(i) + " is out of range [0, " +
                                                      std::to_string(cfg_.vocab) + ")");
    const int64_t row0 = sq.positions.size();
    require(row0 + T <= kv_rows_, "cuda: " + std::to_string(row0) + " + " + std::to_string(T) +
                                      " tokens exceed the KV cache of kv.cap_tokens = " + std::to_string(kv_rows_) +
                                      " rows");
    ensure(T);
    // Stage ids, step and the new positions (pinned buffers, async on the stream).
    for (int t = 0; t < T; ++t) {
      ids_h_[t] = ids[t];
      pos_h_[t] = sq.pos + t;
      sq.positions.push_back(sq.pos + t);
    }
    step_h_[0] = sq.pos;
    step_h_[1] = row0;
    N3_CUDA(cudaMemcpyAsync(ids_.get(), ids_h_, T * 4, cudaMemcpyHostToDevice, s_));
    N3_CUDA(cudaMemcpyAsync(step_.get(), step_h_, 16, cudaMemcpyHostToDevice, s_));
    N3_CUDA(cudaMemcpyAsync(sq.dpos.get() + row0, pos_h_, T * 8, cudaMemcpyHostToDevice, s_));
    LaunchProfile& prof = launch_profile();
    const bool graph = graphs_ && !rec && T == 1 && last_only && !prof.on;
    int64_t need = 512;
    while (need < row0 + T) need *= 2;
    need = std::min(need, kv_rows_);
    if (graph && (!sq.exec || sq.graph_gen != gen_ || sq.graph_bound < row0 + T)) {
      attn_bound_ = int(need);
      capture(sq);
      sq.graph_bound = need;
    } else if (!graph) {
      attn_bound_ = int(need);
    }
    N3_CUDA(cudaEventRecord(ev0_, s_));
    if (graph)
      N3_CUDA(cudaGraphLaunch(sq.exec, s_));
    else
      run(sq, T, ph, rec, last_only);
    N3_CUDA(cudaEventRecord(ev1_, s_));
    sq.pos += T;
    const int rows = last_only ? 1 : T;
    const size_t n = size_t(rows) * cfg_.vocab;
    if (logits_h_n_ < n) {
      if (logits_h_) cudaFreeHost(logits_h_);
      N3_CUDA(cudaMallocHost(&logits_h_, n * 4));
      logits_h_n_ = n;
    }
    N3_CUDA(cudaMemcpyAsync(logits_h_, logits_.get(), n * 4, cudaMemcpyDeviceToHost, s_));
    N3_CUDA(cudaStreamSynchronize(s_));
    float ms = 0;
    N3_CUDA(cudaEventElapsedTime(&ms, ev0_, ev1_));
    gpu_s_ = ms * 1e-3;
    if (prof.on) {
      for (const auto& m : prof.marks) {
        float k = 0;
        N3_CUDA(cudaEventElapsedTime(&k, prof.pool[m.second], prof.pool[m.second + 1]));
        auto& e = prof_[m.first];
        e.first += 1;
        e.second += k * 1e-3;
      }
      prof.marks.clear();
      prof.used = 0;
      ++prof_steps_;
    }
    return Tensor({rows, cfg_.vocab}, std::vector<float>(logits_h_, logits_h_ + n));
  }
};

// ---- CudaModel ---------------------------------------------------------------------

CudaModel::CudaModel(std::shared_ptr<const WeightSource> w, const std::string& numerics, const HwConfig& hw)
    : p_(std::make_unique<Impl>(std::move(w), numerics, hw)) {}
CudaModel::~CudaModel() = default;
const ModelConfig& CudaModel::config() const { return p_->cfg_; }
const char* CudaModel::numerics() const { return p_->npu_ ? "npu" : "reference"; }
int CudaModel::new_sequence() { return p_->new_sequence(); }
void CudaModel::free_sequence(int s) { p_->seqs_.erase(s); }
Tensor CudaModel::forward(int s, const std::vector<int32_t>& ids, Phase ph, Recorder* rec, bool last_only) {
  return p_->forward(s, ids, ph, rec, last_only);
}
int64_t CudaModel::position(int s) const { return p_->seq(s).pos; }
int64_t CudaModel::cached(int s) const { return int64_t(p_->seq(s).positions.size()); }
int64_t CudaModel::kv_capacity() const { return p_->kv_rows_; }
void CudaModel::evict(int s, int64_t sinks, int64_t recent) { p_->evict(s, sinks, recent); }
void CudaModel::use_graphs(bool on) { p_->graphs_ = on; }
void CudaModel::profile_kernels(bool on) {
  launch_profile().on = on;
  p_->prof_.clear();
  p_->prof_steps_ = 0;
}
std::string CudaModel::kernel_profile() const { return p_->profile_report(); }
double CudaModel::last_gpu_seconds() const { return p_->gpu_s_; }
size_t CudaModel::weight_bytes() const { return p_->wt_->matrix_bytes(); }

}  // namespace n3::gpu
