// The numeric formats of one NPU design point: plain data carried by the
// hardware file's `numerics:` section, validated once, then trusted by every
// kernel (golden model, simulators, CUDA path). docs/numerics.md explains each
// field; the defaults are the kv260 design point.
#pragma once
#include <cstdint>
#include <string>

#include "golden/numerics/formats.h"

namespace n3::num {

enum class KvFmt : uint8_t { F16 = 0, BF16 = 1, INT8 = 2 };
// INT4 weight scales: one float per output row; one float per group of
// `weight_group` inputs; or two-level (LPBQ-like): unsigned integer block
// scales of `block_scale_bits` per group under one float per row.
enum class WScale : uint8_t { PerRow = 0, PerGroup = 1, TwoLevel = 2 };

// Accumulator guard bits below the top block (docs/numerics.md, "MAC"), and the
// longest dot product the 64-bit accumulator is proven not to overflow for.
constexpr int kAccFrac = 16;
constexpr int64_t kMaxDotLen = 65536;

struct Formats {
  Fmt act = Fmt::BF16;          // activations in L2 (pccx RTL: BF16)
  Fmt stream = Fmt::F32;        // the residual-carrying AltUp streams in L2 (bf16 misses the E2B bar)
  KvFmt kv = KvFmt::F16;        // KV cache (pccx: FP16)
  Fmt score = Fmt::F32;         // attention scores and probabilities in L2
  Fmt logits = Fmt::F32;        // logits written to the host
  int bfp_block = 32;           // elements sharing one exponent
  int act_mant_bits = 12;       // BFP mantissa incl. sign, activations x INT4 weights (8 misses the accuracy bar)
  int attn_mant_bits = 16;      // BFP mantissa incl. sign, q.k and p.v operands
  WScale weight_scale = WScale::PerRow;
  int weight_group = 128;       // PerGroup / TwoLevel: inputs per group
  int block_scale_bits = 4;     // TwoLevel: bits of the unsigned block scales

  bool operator==(const Formats& o) const {
    return act == o.act && stream == o.stream && kv == o.kv && score == o.score && logits == o.logits &&
           bfp_block == o.bfp_block && act_mant_bits == o.act_mant_bits &&
           attn_mant_bits == o.attn_mant_bits && weight_scale == o.weight_scale &&
           weight_group == o.weight_group && block_scale_bits == o.block_scale_bits;
  }
};

// Bytes of one stored K or V element (INT8's per-token scales aside).
inline int kv_elem_bytes(KvFmt f) { return f == KvFmt::INT8 ? 1 : 2; }

inline const char* fmt_name(Fmt f) { return f == Fmt::BF16 ? "bf16" : f == Fmt::F16 ? "f16" : "f32"; }
inline const char* kv_fmt_name(KvFmt f) { return f == KvFmt::BF16 ? "bf16" : f == KvFmt::INT8 ? "int8" : "f16"; }
inline const char* wscale_name(WScale w) {
  return w == WScale::PerGroup ? "per_group" : w == WScale::TwoLevel ? "two_level" : "per_row";
}

inline bool parse_fmt(const std::string& s, Fmt* f) {
  if (s == "f32") *f = Fmt::F32;
  else if (s == "bf16") *f = Fmt::BF16;
  else if (s == "f16") *f = Fmt::F16;
  else return false;
  return true;
}
inline bool parse_kv_fmt(const std::string& s, KvFmt* f) {
  if (s == "f16") *f = KvFmt::F16;
  else if (s == "bf16") *f = KvFmt::BF16;
  else if (s == "int8") *f = KvFmt::INT8;
  else return false;
  return true;
}
inline bool parse_wscale(const std::string& s, WScale* w) {
  if (s == "per_row") *w = WScale::PerRow;
  else if (s == "per_group") *w = WScale::PerGroup;
  else if (s == "two_level") *w = WScale::TwoLevel;
  else return false;
  return true;
}

// Sets one field from its hardware-file key (the part after "numerics.") and
// textual value. Returns "" or a message naming the key and the allowed values.
inline std::string set_formats_field(Formats& f, const std::string& key, const std::string& v) {
  auto as_int = [&](int* out) -> std::string {
    try {
      size_t used = 0;
      const int x = std::stoi(v, &used);
      if (used != v.size()) throw 0;
      *out = x;
      return "";
    } catch (...) {
      return "numerics." + key + ": '" + v + "' is not an integer";
    }
  };
  const std::string fmts = "numerics." + key + ": '" + v + "' is not one of ";
  if (key == "act_format") return parse_fmt(v, &f.act) ? "" : fmts + "f32, bf16, f16";
  if (key == "stream_format") return parse_fmt(v, &f.stream) ? "" : fmts + "f32, bf16, f16";
  if (key == "kv_format") return parse_kv_fmt(v, &f.kv) ? "" : fmts + "f16, bf16, int8";
  if (key == "score_format") return parse_fmt(v, &f.score) ? "" : fmts + "f32, bf16, f16";
  if (key == "logits_format") return parse_fmt(v, &f.logits) ? "" : fmts + "f32, bf16, f16";
  if (key == "weight_scale") return parse_wscale(v, &f.weight_scale) ? "" : fmts + "per_row, per_group, two_level";
  if (key == "bfp_block") return as_int(&f.bfp_block);
  if (key == "act_mantissa_bits") return as_int(&f.act_mant_bits);
  if (key == "attn_mantissa_bits") return as_int(&f.attn_mant_bits);
  if (key == "weight_group") return as_int(&f.weight_group);
  if (key == "block_scale_bits") return as_int(&f.block_scale_bits);
  return "numerics." + key + ": unknown key";
}

// "" when the combination is implementable, else a message naming the
// offending fields. The bounds keep every accumulator inside 63 bits for dot
// products up to kMaxDotLen (docs/numerics.md, "Accumulator widths").
inline std::string formats_problem(const Formats& f) {
  const int b = f.bfp_block;
  if (b < 8 || b > 64 || (b & (b - 1)) != 0)
    return "numerics.bfp_block = " + std::to_string(b) + ": must be a power of two in [8, 64]";
  if (f.act_mant_bits < 2 || f.act_mant_bits > 16)
    return "numerics.act_mantissa_bits = " + std::to_string(f.act_mant_bits) + ": must be in [2, 16]";
  if (f.attn_mant_bits < 2 || f.attn_mant_bits > 16)
    return "numerics.attn_mantissa_bits = " + std::to_string(f.attn_mant_bits) + ": must be in [2, 16]";
  if (f.score == Fmt::BF16)
    return "numerics.score_format = bf16: attention scores reach the hundreds (no 1/sqrt(d) scale in "
           "Gemma 3n) where bf16's step is 2, which changes softmax weights by up to e^1; use f32 or f16";
  if (f.kv == KvFmt::INT8 && f.score != Fmt::F32)
    return "numerics.kv_format = int8 with numerics.score_format = " + std::string(fmt_name(f.score)) +
           ": int8 V folds its per-token scale into the probabilities (p_t * s_t, "
           "stored in the score format), and those products fall below f16's range";
  if (f.weight_scale != WScale::PerRow) {
    if (f.weight_group < b || f.weight_group % b != 0)
      return "numerics.weight_group = " + std::to_string(f.weight_group) + " with weight_scale = " +
             wscale_name(f.weight_scale) + ": must be a positive multiple of numerics.bfp_block = " +
             std::to_string(b);
  }
  if (f.weight_scale == WScale::TwoLevel && (f.block_scale_bits < 1 || f.block_scale_bits > 8))
    return "numerics.block_scale_bits = " + std::to_string(f.block_scale_bits) +
           " with weight_scale = two_level: must be in [1, 8]";
  return "";
}

inline std::string formats_to_string(const Formats& f) {
  std::string s = std::string("act=") + fmt_name(f.act) + " stream=" + fmt_name(f.stream) + " kv=" + kv_fmt_name(f.kv) +
                  " score=" + fmt_name(f.score) + " logits=" + fmt_name(f.logits) +
                  " bfp_block=" + std::to_string(f.bfp_block) +
                  " act_mant=" + std::to_string(f.act_mant_bits) +
                  " attn_mant=" + std::to_string(f.attn_mant_bits) +
                  " weight_scale=" + wscale_name(f.weight_scale);
  if (f.weight_scale != WScale::PerRow) s += " weight_group=" + std::to_string(f.weight_group);
  if (f.weight_scale == WScale::TwoLevel) s += " block_scale_bits=" + std::to_string(f.block_scale_bits);
  return s;
}

}  // namespace n3::num
