// The checks every SystemC trace must pass (issue 6): Chrome/Perfetto JSON
// with one named track per unit, every slice on a known track, no negative
// times, no overlapping slices on a track, every slice named. Failures are
// reported through GoogleTest; the summary lets a test check coverage.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace n3::test {

struct TraceSummary {
  size_t tracks = 0;
  uint64_t slices = 0;
  uint64_t instruction_slices = 0;  // slices on engine tracks
  uint64_t instructions = 0;  // aggregated slices count their "instructions"
  uint64_t transfers = 0;     // slices on memory tracks (cat "transfer"), aggregated: their "transfers"
  double end_us = 0;          // the latest slice end
};

inline TraceSummary check_trace(const nlohmann::json& j, bool aggregated, const std::string& what) {
  TraceSummary s;
  std::map<int, std::string> tracks;
  for (const nlohmann::json& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks[e["tid"].get<int>()] = e["args"]["name"];
  s.tracks = tracks.size();
  std::map<int, double> last_end;
  for (const nlohmann::json& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++s.slices;
    const int tid = e["tid"].get<int>();
    EXPECT_TRUE(tracks.count(tid)) << what << ": slice on unknown track " << tid;
    const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    EXPECT_GE(ts, 0.0) << what;
    EXPECT_GE(dur, 0.0) << what;
    if (last_end.count(tid)) {
      EXPECT_GE(ts + 1e-6, last_end[tid]) << what << ": overlap on " << tracks[tid];
    }
    last_end[tid] = ts + dur;
    s.end_us = std::max(s.end_us, ts + dur);
    const bool xfer = e.value("cat", "") == "transfer";
    if (!xfer) ++s.instruction_slices;
    (xfer ? s.transfers : s.instructions) += aggregated ? e["args"][xfer ? "transfers" : "instructions"].get<uint64_t>() : 1;
    EXPECT_FALSE(e["name"].get<std::string>().empty()) << what;
  }
  return s;
}

}  // namespace n3::test
