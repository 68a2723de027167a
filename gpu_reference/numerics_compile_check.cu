// Proves that the numerics core compiles as CUDA device code: one kernel
// calls every function of golden/numerics/ (ops.h includes the rest). Built
// by cmake/cuda_check.cmake when nvcc is found (-fmad=false, sm_90); never
// launched by the build. The CUDA reference path uses the same headers.
#include "golden/numerics/ops.h"

namespace n3::num {

__global__ void numerics_compile_check(float* f, int16_t* m, int32_t* e, uint8_t* w, int8_t* q8, uint16_t* h,
                                       Formats fm, AttnScratch s, KvView k, KvView v) {
  const int i = static_cast<int>(threadIdx.x);
  const float x = f[i];
  // SFU and building blocks.
  float acc = exp_sfu(x) + tanh_sfu(x) + gelu_tanh_sfu(x) + sin_sfu(x) + cos_sfu(x) + recip(x) + sqrt_rn(x) +
              rsqrt_rn(x) + exp_df(x, 0.0f) + div_one_plus_exp(x, 1.0f, 0.0f) + div_rn(x, 3.0f);
  int n = 0;
  acc += exp_q(x, 0.0f, &n) + static_cast<float>(n);
  float p, pe;
  two_sum(x, 1.0f, &p, &pe);
  two_prod(x, 3.0f, &p, &pe);
  split(x, &p, &pe);
  const Reduced r = reduce_pio2(x);
  acc += r.hi + sin_kernel(r.hi, r.lo) + cos_kernel(r.hi, r.lo) + reduce_any(x).lo;
  // Formats.
  acc += round_to(Fmt::BF16, x) + scale2(x, 3) + bf16_value(bf16_bits(x)) + f16_value(f16_bits(x)) +
         static_cast<float>(rne_to_int(x)) + canon(x) + make_f32(false, 3, 1) +
         round_pack(false, 12345, -3, true, spec_f16());
  uint64_t hi, lo;
  mul_64x64(static_cast<uint64_t>(i), 77, &hi, &lo);
  acc += round_pack128(false, hi, lo, 0, false, spec_f32()) + static_cast<float>(shift_rne(-77, -3));
  h[i] = bf16_bits(x);
  acc += int8_quantize(f, 32, q8) + int8_scale(x, false) + int8_value(int8_code(x, 0.5f), 0.5f);
  round_to(fm.act, f + 64, 32);
  // BFP and MAC.
  const BfpView bv = bfp_quantize(f, 64, 32, 8, m, e);
  const BfpView bs = bfp_quantize_strided(f, 32, 2, 32, 16, m + 64, e + 2, f + 128);
  acc += bfp_value(bv, 3) + static_cast<float>(bfp_quantize_block(f, 32, 32, 8, m + 128));
  acc += dot_int4_row(w, 64, bv, 0.5f, Fmt::F32) + dot_int4_row_grouped(w, 64, bv, f, 32, Fmt::BF16) +
         dot_int4_row_two_level(w, 64, bv, w, 32, 0.5f, Fmt::F16) + dot_int8_bfp(q8, bv, 0.1f, Fmt::F32) +
         dot_int8_bfp_strided(q8, 2, bv, 1.0f, Fmt::BF16) +
         dot_bfp_bfp(bv, bs, 1.0f, Fmt::F32) + acc_finish(acc_align(5, 1, 2), 2, 1.0f, Fmt::F32) +
         static_cast<float>(int4_at(w, 3) + int4_block_partial(w, 0, 32, m) + block_count(64, 1, 32));
  // Reductions.
  acc += tree_sum(f, 64) + tree_max(f, 64) + tree_sumsq(f, 64) + tree_sumsq_dev(f, 64, 1.0f) +
         tree_dot(f, f + 64, 64) + nmax(x, 1.0f);
  // Operators.
  rmsnorm(f, f + 64, 64, 1e-6f, f + 128, fm.act);
  acc += rms(f, 64) + inv_count(64);
  match_magnitude(f, 64, 1.0f, 1e-5f, fm.act);
  softmax(f, 64, fm.score);
  tanh_vec(f, 64, fm.act);
  gelu_vec(f, 64, fm.act);
  softcap(f, 64, 30.0f, fm.logits);
  gaussian_topk(f, 64, 1.6448536f, fm.act);
  rope(f, 2, 32, 100, f + 256, fm.act);
  to_kv(f, 64, fm.kv);
  attend(f, k, v, 0, 7, 32, f + 512, fm, s);
  f[i] = acc;
}

}  // namespace n3::num
