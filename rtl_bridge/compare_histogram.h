// The per-instruction comparison every RTL bridge prints after a run
// (`rtl gemv:`, `rtl dma:`, `rtl sfu:`): a histogram of |model - rtl| / rtl
// over the instructions the RTL ran, in one place so the three units bin
// and label alike (docs/rtl.md shows the output).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace n3::rtl {

class CompareHistogram {
 public:
  // Label styles: GEMV's summary has always printed fixed "[0.000%, 0.250%)",
  // the DMA and SFU ones "%g" ("[0%, 0.25%)"); scripts and docs quote both.
  enum class Labels { Fixed, Short };
  CompareHistogram(std::vector<double> edges, Labels labels)
      : edges_(std::move(edges)), bins_(edges_.size() + 1, 0), labels_(labels) {}

  // Bins one instruction; returns its relative error (0 when rtl is 0).
  double add(double rtl_cycles, double model_cycles) {
    const double e = rtl_cycles > 0 ? std::fabs(model_cycles - rtl_cycles) / rtl_cycles : 0.0;
    size_t b = 0;
    while (b < edges_.size() && e >= edges_[b]) ++b;
    ++bins_[b];
    return e;
  }

  // One line per bin: "  <range>  <count>".
  void print(std::FILE* out) const {
    double lo = 0;
    for (size_t b = 0; b < bins_.size(); ++b) {
      std::string range;
      if (labels_ == Labels::Fixed) {
        auto pct = [](double x) { return std::to_string(x * 100).substr(0, 5) + "%"; };
        range = b < edges_.size() ? "[" + pct(lo) + ", " + pct(edges_[b]) + ")" : ">= " + pct(lo);
      } else {
        char buf[48];
        if (b < edges_.size())
          std::snprintf(buf, sizeof buf, "[%g%%, %g%%)", lo * 100, edges_[b] * 100);
        else
          std::snprintf(buf, sizeof buf, ">= %g%%", lo * 100);
        range = buf;
      }
      std::fprintf(out, "  %-22s %8lld\n", range.c_str(), static_cast<long long>(bins_[b]));
      if (b < edges_.size()) lo = edges_[b];
    }
  }

 private:
  std::vector<double> edges_;
  std::vector<int64_t> bins_;
  Labels labels_;
};

}  // namespace n3::rtl
