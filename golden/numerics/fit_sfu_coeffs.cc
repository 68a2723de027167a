// Provenance of the SFU polynomial coefficients in sfu.h / sfu_trig.h. Not
// part of the build (the core is header-only); run by hand:
//   g++ -O2 -std=c++17 golden/numerics/fit_sfu_coeffs.cc -o /tmp/fit && /tmp/fit
// Method: for each kernel g(t) on [lo, hi], fit by least squares on Chebyshev-distributed
// points in long double (near-minimax), then round the coefficients to float32 one at a
// time from the lowest order up, refitting the higher ones after each
// rounding so they absorb its error. Prints the float32 hex constants and the
// kernel's max abs error after rounding.
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

using LD = long double;

static std::vector<LD> solve(std::vector<std::vector<LD>> a, std::vector<LD> b) {
  const size_t n = b.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    std::swap(a[c], a[p]);
    std::swap(b[c], b[p]);
    for (size_t r = c + 1; r < n; ++r) {
      const LD f = a[r][c] / a[c][c];
      for (size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<LD> x(n);
  for (size_t i = n; i-- > 0;) {
    LD s = b[i];
    for (size_t k = i + 1; k < n; ++k) s -= a[i][k] * x[k];
    x[i] = s / a[i][i];
  }
  return x;
}

static void fit(const char* name, std::function<LD(LD)> g, LD lo, LD hi, int deg) {
  // Discrete least squares on N Chebyshev-distributed points, in the scaled
  // variable u = t / S (S = max|t|) for conditioning; normal equations.
  const int N = 4000;
  const LD S = std::fmax(std::fabs(lo), std::fabs(hi));
  std::vector<LD> ts(N), gs(N);
  for (int i = 0; i < N; ++i) {
    ts[i] = (lo + hi) / 2 + (hi - lo) / 2 * std::cos(M_PIl * (2 * i + 1) / (2 * N));
    gs[i] = g(ts[i]);
  }
  std::vector<float> fixed;
  for (int k = 0; k <= deg; ++k) {
    const int m = deg - k + 1;  // unknowns left: coefficients k..deg (scaled)
    std::vector<std::vector<LD>> a(m, std::vector<LD>(m, 0));
    std::vector<LD> b(m, 0);
    for (int i = 0; i < N; ++i) {
      const LD u = ts[i] / S;
      LD rest = gs[i];
      for (int j = 0; j < k; ++j) rest -= LD(fixed[j]) * std::pow(ts[i], LD(j));
      std::vector<LD> phi(m);
      for (int j = 0; j < m; ++j) phi[j] = std::pow(u, LD(k + j));
      for (int r = 0; r < m; ++r) {
        b[r] += phi[r] * rest;
        for (int c = 0; c < m; ++c) a[r][c] += phi[r] * phi[c];
      }
    }
    fixed.push_back(static_cast<float>(solve(a, b)[0] / std::pow(S, LD(k))));
  }
  LD err = 0;
  for (int i = 0; i <= 20000; ++i) {
    const LD t = lo + (hi - lo) * i / 20000;
    LD p = 0;
    for (int j = deg; j >= 0; --j) p = p * t + fixed[j];
    err = std::fmax(err, std::fabs(p - g(t)));
  }
  std::printf("%s (deg %d on [%Lg, %Lg], max abs err %.3Le):\n", name, deg, lo, hi, err);
  for (int j = 0; j <= deg; ++j) std::printf("  c%d = %af  // %.9g\n", j, fixed[j], fixed[j]);
}

int main() {
  // exp(r) = 1 + r + r^2 * E(r), |r| <= ln2/2 (+ margin for the rounded n).
  fit("exp E(r)", [](LD r) { return r == 0 ? 0.5L : (std::exp(r) - 1 - r) / (r * r); }, -0.3467L, 0.3467L, 5);
  // tanh(x) = x + x^3 * T(x^2), |x| < 0.55.
  fit("tanh T(t)", [](LD t) { LD x = std::sqrt(t); return t == 0 ? -1.0L / 3 : (std::tanh(x) - x) / (t * x); },
      0.0L, 0.3025L, 6);
  // sin(r) = r + r^3 * S(r^2), |r| <= pi/4.
  fit("sin S(t)", [](LD t) { LD x = std::sqrt(t); return t == 0 ? -1.0L / 6 : (std::sin(x) - x) / (t * x); },
      0.0L, 0.6169L, 4);
  // cos(r) = 1 - r^2/2 + r^4 * C(r^2), |r| <= pi/4.
  fit("cos C(t)", [](LD t) { LD x = std::sqrt(t); return t == 0 ? 1.0L / 24 : (std::cos(x) - 1 + t / 2) / (t * t); },
      0.0L, 0.6169L, 4);
  return 0;
}
