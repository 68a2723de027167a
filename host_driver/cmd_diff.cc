// n3 diff CANDIDATE REFERENCE [--tol ABS,REL] [--quiet]: compares two dump
// directories (golden/diff.h does the work) and prints the report that
// docs/dumps.md describes. Exit 0: all match; 1: some tensor differs; 2: bad input.
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "golden/diff.h"
#include "base/error.h"
#include "host_driver/cli.h"
#include "host_driver/cli_util.h"

namespace n3::cli {

namespace {

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  va_list ap, ap2;
  va_start(ap, f);
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, f, ap);
  va_end(ap);
  std::string s(static_cast<size_t>(n > 0 ? n : 0), '\0');
  std::vsnprintf(s.data(), s.size() + 1, f, ap2);
  va_end(ap2);
  return s;
}

// "[4,6,2048]": no spaces, so every report line splits on whitespace.
std::string compact(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// %.9g prints every float32 so that it reads back to the same bits.
std::string value(float v, uint32_t bits) { return fmt("%.9g (0x%08x)", v, bits); }

// Parses "ABS,REL"; both finite and non-negative.
DiffTolerance parse_tol(const std::string& s) {
  const std::string what = "--tol expects ABS,REL (two non-negative numbers), got '" + s + "'";
  const size_t comma = s.find(',');
  require(comma != std::string::npos && s.find(',', comma + 1) == std::string::npos, what);
  auto num = [&](const std::string& t) {
    require(!t.empty(), what);
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    require(*end == '\0' && std::isfinite(v) && v >= 0, what);
    return v;
  };
  return {num(s.substr(0, comma)), num(s.substr(comma + 1))};
}

std::string tol_str(const std::optional<DiffTolerance>& tol) {
  return tol ? fmt("abs=%.9g,rel=%.9g", tol->abs, tol->rel) : std::string("exact");
}

std::string first_divergence(const TensorDiff& t, const std::optional<DiffTolerance>& tol) {
  const ElementDiff& e = *t.worst;
  std::string s = "first divergence: " + t.name + " " + compact(t.shape) + " at " +
                  compact(e.index) + fmt(" (flat %lld): ", static_cast<long long>(e.flat)) +
                  "candidate=" + value(e.candidate, e.candidate_bits) +
                  " reference=" + value(e.reference, e.reference_bits) +
                  fmt(" abs_err=%.6g rel_err=%.6g ulp=%llu", e.abs_err, e.rel_err,
                      static_cast<unsigned long long>(e.ulp));
  if (tol) {
    const double bound = tol->abs + tol->rel * std::fabs(double(e.reference));
    s += fmt(" tol=%.6g", bound);
  }
  return s + fmt("; %lld of %lld elements mismatch", static_cast<long long>(t.mismatched),
                 static_cast<long long>(t.elements));
}

}  // namespace

int cmd_diff(const Args& a) {
  const std::string usage = "n3 diff CANDIDATE REFERENCE [--tol ABS,REL] [--quiet]";
  po::options_description desc("options");
  desc.add_options()
      ("candidate", po::value<std::string>(), "dump directory to check")
      ("reference", po::value<std::string>(), "dump directory to check against (e.g. n3 golden's)")
      ("tol", po::value<std::string>(),
       "ABS,REL: pass elements with |a-b| <= ABS + REL*|b| (NaN/Inf still need equal bits); "
       "default bit-exact")
      ("quiet,q", "print only the first divergence and the summary");
  po::positional_options_description pos;
  pos.add("candidate", 1).add("reference", 1);
  po::variables_map vm;
  if (!parse_args("diff", a, desc, pos, vm, usage)) return kExitOk;
  require(vm.count("candidate") && vm.count("reference"),
          "expected two dump directories: " + usage);

  DiffOptions opt;
  if (vm.count("tol")) opt.tol = parse_tol(vm["tol"].as<std::string>());
  const DiffResult r =
      diff_dumps(vm["candidate"].as<std::string>(), vm["reference"].as<std::string>(), opt);

  std::string out;
  if (!vm.count("quiet")) {
    size_t wn = 0, ws = 0;
    for (const TensorDiff& t : r.tensors) {
      wn = std::max(wn, t.name.size());
      ws = std::max(ws, compact(t.shape).size());
    }
    for (const TensorDiff& t : r.tensors)
      out += fmt("%-*s %-*s %-10s max_abs=%.6g max_rel=%.6g cosine=%.15g max_ulp=%llu "
                 "mismatched=%lld/%lld\n",
                 static_cast<int>(wn), t.name.c_str(), static_cast<int>(ws),
                 compact(t.shape).c_str(), diff_status_name(t.status), t.max_abs_err,
                 t.max_rel_err, t.cosine, static_cast<unsigned long long>(t.max_ulp),
                 static_cast<long long>(t.mismatched), static_cast<long long>(t.elements));
  }
  if (!r.ok()) out += first_divergence(r.tensors[r.first_differing], r.tol) + "\n";
  out += fmt("summary: %s compared=%zu identical=%d within-tol=%d differs=%d reference-only=%zu "
             "tol=%s",
             r.ok() ? "OK" : "DIFFERS", r.tensors.size(), r.count(DiffStatus::Identical),
             r.count(DiffStatus::WithinTol), r.count(DiffStatus::Differs),
             r.reference_only.size(), tol_str(r.tol).c_str());
  if (!r.ok()) out += " first=" + r.tensors[r.first_differing].name;
  std::cout << out << "\n" << std::flush;
  return r.ok() ? kExitOk : kExitDiffer;
}

}  // namespace n3::cli
