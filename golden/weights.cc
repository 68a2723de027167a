#include "golden/weights.h"

#include <algorithm>
#include <cstring>

namespace n3 {

const char* wdtype_name(WDType t) {
  switch (t) {
    case WDType::F32: return "float32";
    case WDType::BF16: return "bfloat16";
    case WDType::F16: return "float16";
    case WDType::INT4: return "int4";
  }
  return "?";
}

int64_t MatrixRef::row_bytes() const {
  switch (dtype) {
    case WDType::F32: return cols * 4;
    case WDType::BF16:
    case WDType::F16: return cols * 2;
    case WDType::INT4: return (cols + 1) / 2;
  }
  return 0;
}

float bf16_to_f32(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t f32_to_bf16_rne(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, u;
  if (exp == 0) {
    if (man == 0) {
      u = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400u));
      u = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | man << 13;
  } else {
    u = sign | (exp + 112) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void dequant_row(const MatrixRef& m, int64_t r, float* out) {
  const uint8_t* p = m.data + r * m.row_bytes();
  switch (m.dtype) {
    case WDType::F32:
      std::memcpy(out, p, m.cols * 4);
      return;
    case WDType::BF16:
      for (int64_t i = 0; i < m.cols; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = bf16_to_f32(h);
      }
      return;
    case WDType::F16:
      for (int64_t i = 0; i < m.cols; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = f16_to_f32(h);
      }
      return;
    case WDType::INT4: {
      // Per scale group, a 16-entry table of q * scale: the same products as
      // q * s element by element, without a division or a branch per element.
      const float* s = m.scales + r * m.groups_per_row();
      for (int64_t g0 = 0, gi = 0; g0 < m.cols; g0 += m.group, ++gi) {
        float lut[16];
        for (int q = 0; q < 16; ++q) lut[q] = float(q >= 8 ? q - 16 : q) * s[gi];
        const int64_t g1 = std::min(m.cols, g0 + m.group);
        int64_t i = g0;
        if (i & 1) {
          out[i] = lut[p[i >> 1] >> 4];
          ++i;
        }
        for (; i + 1 < g1; i += 2) {
          const uint8_t b = p[i >> 1];
          out[i] = lut[b & 0xf];
          out[i + 1] = lut[b >> 4];
        }
        if (i < g1) out[i] = lut[p[i >> 1] & 0xf];
      }
      return;
    }
  }
}

void linear_ref(const MatrixRef& m, const float* x, int64_t T, float* y) {
  const int64_t in = m.cols, outn = m.rows;
  // Small matrices are not worth waking threads for.
#pragma omp parallel if (outn * in * T >= (1 << 18))
  {
    std::vector<float> w(static_cast<size_t>(in));
#pragma omp for schedule(static)
    for (int64_t o = 0; o < outn; ++o) {
      dequant_row(m, o, w.data());
      for (int64_t t = 0; t < T; ++t) {
        const float* xt = x + t * in;
        double acc = 0;
        for (int64_t i = 0; i < in; ++i) acc += double(xt[i]) * double(w[i]);
        y[t * outn + o] = static_cast<float>(acc);
      }
    }
  }
}

}  // namespace n3
