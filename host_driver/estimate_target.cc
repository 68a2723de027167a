#include "host_driver/estimate_target.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/error.h"
#include "host_driver/cli_util.h"

namespace n3::cli {

namespace {

// The cell as a number; NAN when empty (a point without that figure).
double number(const std::string& cell) {
  if (cell.empty()) return NAN;
  size_t used = 0;
  double v = NAN;
  try {
    v = std::stod(cell, &used);
  } catch (...) {
    used = 0;
  }
  return used == cell.size() ? v : NAN;
}

std::string g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

double parse_target_tok_s(const std::string& text) {
  const double v = number(text);
  require(std::isfinite(v) && v > 0, "--target-tok-s " + text + ": expected a positive number of tokens per second");
  return v;
}

TargetColumns target_columns(const std::string& phase, const std::vector<int64_t>& contexts, bool prefill) {
  if (phase == "prefill") {
    require(prefill, "--target-phase prefill: there is no prefill (--prompt 0)");
    return {"prefill_tok_s", "prefill_roofline_tok_s", "prefill_bound", "prefill"};
  }
  int64_t ctx = contexts.empty() ? 1 : contexts[0];
  if (phase != "decode") {
    require(phase.rfind("decode@", 0) == 0,
            "--target-phase " + phase + ": expected decode, decode@N (N one of --context) or prefill");
    const double n = number(phase.substr(7));
    bool listed = false;
    for (int64_t c : contexts) listed = listed || double(c) == n;
    require(listed, "--target-phase " + phase + ": the context is not one of --context's");
    ctx = int64_t(n);
  }
  const std::string at = "@" + std::to_string(ctx);
  return {"decode_tok_s" + at, "decode_roofline_tok_s" + at, "decode_bound" + at,
          "decode at context " + std::to_string(ctx)};
}

std::string target_answer(const std::string& csv, double tok_s, const std::string& phase) {
  std::vector<std::string> lines = split(csv, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  require(!lines.empty(), "--target-tok-s: the sweep has no rows");
  const std::vector<std::string> head = split(lines[0], ',');
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < head.size(); ++i)
      if (head[i] == name) return int(i);
    return -1;
  };
  // The phase's columns: decode@N from the CSV's own first context when none is named.
  std::vector<int64_t> contexts;
  for (const std::string& h : head)
    if (h.rfind("decode_tok_s@", 0) == 0) contexts.push_back(std::stoll(h.substr(13)));
  const TargetColumns c = target_columns(phase.empty() ? "decode" : phase, contexts, column("prefill_tok_s") >= 0);
  const int tok = column(c.tok_s), roof = column(c.roofline), bound = column(c.bound), cost = column("cost");
  require(tok >= 0 && roof >= 0 && bound >= 0, "--target-tok-s: the CSV has no column " + c.tok_s);
  require(cost >= 0, "--target-tok-s: the CSV has no cost column (a sweep CSV of this n3 has one)");
  // The swept keys sit between "point" and the first figure.
  const int first_figure = column("hand_bytes_per_token@" + std::to_string(contexts.empty() ? 1 : contexts[0]));
  struct Row {
    std::vector<std::string> cells;
    double tok, cost;
  };
  std::vector<Row> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    Row r{split(lines[i], ','), 0, 0};
    require(r.cells.size() == head.size(), "--target-tok-s: CSV row " + std::to_string(i) + " has " +
                                                 std::to_string(r.cells.size()) + " cells, the header " +
                                                 std::to_string(head.size()));
    r.tok = number(r.cells[size_t(tok)]);
    r.cost = number(r.cells[size_t(cost)]);
    require(!std::isnan(r.cost), "--target-tok-s: point " + r.cells[0] +
                                     " has no cost (the hardware file states no cost section: cost.* keys, "
                                     "docs/estimating.md)");
    rows.push_back(std::move(r));
  }
  // Cheapest reaching; ties: the faster, then the lower point index (the rows' order). Deterministic.
  const Row* best = nullptr;
  const Row* closest = nullptr;
  size_t reaching = 0;
  for (const Row& r : rows) {
    if (std::isnan(r.tok)) continue;
    if (r.tok >= tok_s) {
      ++reaching;
      if (!best || r.cost < best->cost || (r.cost == best->cost && r.tok > best->tok)) best = &r;
    }
    if (!closest || r.tok > closest->tok || (r.tok == closest->tok && r.cost < closest->cost)) closest = &r;
  }
  std::string s = "target: " + g(tok_s) + " tok/s, " + c.label + ", at the least cost (the hardware file's cost units)\n";
  auto describe = [&](const Row& r) {
    std::string at;
    for (int i = 1; i < (first_figure > 0 ? first_figure : 1); ++i)
      at += (at.empty() ? "" : " ") + head[size_t(i)] + "=" + r.cells[size_t(i)];
    std::string d = "point " + r.cells[0] + (at.empty() ? "" : " (" + at + ")") + "\n";
    d += "  " + c.label + ": " + g(r.tok) + " tok/s, roofline " + r.cells[size_t(roof)] + " tok/s, bound: " +
         r.cells[size_t(bound)] + "\n";
    d += "  cost " + g(r.cost) + " =";
    bool first = true;
    for (size_t i = 0; i < head.size(); ++i)
      if (head[i].rfind("cost_", 0) == 0) {
        d += std::string(first ? " " : " + ") + head[i].substr(5) + " " + g(number(r.cells[i]));
        first = false;
      }
    d += "\n  figures:";
    for (size_t i = 0; i < head.size(); ++i) {
      const std::string& h = head[i];
      const bool shown = h.rfind("decode_tok_s@", 0) == 0 || h == "prefill_tok_s" || h == "ttft_s" ||
                         h == "request_s" || h.rfind("decode_energy_j@", 0) == 0 || h == "prefill_energy_j";
      if (shown && !r.cells[i].empty()) d += " " + h + "=" + r.cells[i];
    }
    return d + "\n";
  };
  if (best) {
    s += "reached by " + std::to_string(reaching) + " of " + std::to_string(rows.size()) + " points; the cheapest: " +
         describe(*best);
  } else if (closest) {
    s += "no point of the " + std::to_string(rows.size()) + " reaches it; the closest: " + describe(*closest);
  } else {
    s += "no point of the " + std::to_string(rows.size()) + " was simulated (see the CSV's not_simulated column)\n";
  }
  return s;
}

}  // namespace n3::cli
