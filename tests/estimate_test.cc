// `n3 estimate` (docs/estimating.md): the simulated figures against the
// bench's engine and the hand calculation, --set as the file's own values,
// --sweep rows against single runs, shards merged back, bad inputs refused.
// The 27-point E4B sweep's timing is the opt-in N3_ESTIMATE_SWEEP=1 test
// (it prints its wall time; a timer in the default suite would be flaky on
// shared cores).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <sstream>

#include "base/file_util.h"
#include "base/error.h"
#include "base/npy.h"
#include "host_driver/estimate_sweep.h"
#include "tests/test_util.h"

namespace n3::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kTinyArgs = " --context 1,8 --prompt 16 --new 4";

std::string tiny() { return source_dir() + "/configs/models/tiny.yaml"; }
std::string e4b() { return source_dir() + "/configs/models/gemma3n-e4b.yaml"; }

json read_json(const std::string& path) { return json::parse(read_file_text(path)); }

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> v;
  std::istringstream in(line);
  for (std::string c; std::getline(in, c, ',');) v.push_back(c);
  if (!line.empty() && line.back() == ',') v.push_back("");
  return v;
}

void expect_refused(const std::string& args, const std::string& names, const std::string& csv = "") {
  SCOPED_TRACE(args);
  const RunResult r = run_n3(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be one line: " << r.err;
  EXPECT_EQ(r.out, "");
  if (!csv.empty()) {
    EXPECT_FALSE(fs::exists(csv));
  }
}

// configs/hw/kv260.yaml without some of its lines: a whole section ("energy:")
// or one key ("  static_mw:"), written as <temp dir of tag>/hw.yaml.
std::string hw_without(const std::string& tag, const std::vector<std::string>& drop) {
  std::string out;
  bool in_section = false;
  for (const std::string& l : lines_of(read_file_text(source_dir() + "/configs/hw/kv260.yaml"))) {
    if (!l.empty() && l[0] != ' ') in_section = false;
    bool skip = in_section;
    for (const std::string& d : drop)
      if (l.rfind(d, 0) == 0) {
        skip = true;
        in_section = d.back() == ':' && d[0] != ' ';
      }
    if (!skip) out += l + "\n";
  }
  const std::string path = temp_dir(tag) + "/hw.yaml";
  write_file_atomic(path, out);
  return path;
}

// The CSV's rows as cells, and one column's index.
std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> v;
  for (const std::string& l : lines_of(read_file_text(path))) v.push_back(cells(l));
  return v;
}
size_t col(const std::vector<std::string>& head, const std::string& name) {
  const auto it = std::find(head.begin(), head.end(), name);
  EXPECT_NE(it, head.end()) << name;
  return size_t(it - head.begin());
}

#ifdef N3_HAVE_SYSTEMC

// The estimate's decode token is the token `n3 sim --timing-only` times (the
// bench's engine: the compiled program on the SystemC model), and within the
// documented band of the hand calculation (bytes/token over the roofline
// bandwidth: 90 % to 100 %, docs/estimating.md) at contexts 1 and 4096; the per-layer times sum to
// the units' busy time.
TEST(Estimate, E4bDecodeIsTheSimulatorsTokenNearTheHandCalculation) {
  const std::string dir = temp_dir("est_e4b");
  write_npy_i32(dir + "/ids.npy", {2});
  const RunResult s = run_n3("sim --backend systemc --timing-only --model " + e4b() + " --ids " + dir +
                             "/ids.npy --stats " + dir + "/s.json");
  ASSERT_EQ(s.status, 0) << s.err;
  const RunResult r = run_n3("estimate --model " + e4b() + " --prompt 0 --json --context 1,4096");
  ASSERT_EQ(r.status, 0) << r.err;
  const json e = json::parse(r.out), st = read_json(dir + "/s.json");
  const double sim_cycles = st["runs"].back()["cycles"].get<double>();
  const double est_cycles = e["decode"][0]["sim_s"].get<double>() * st["core_mhz"].get<double>() * 1e6;
  EXPECT_NEAR(est_cycles, sim_cycles, 1e-6 * sim_cycles);
  ASSERT_EQ(e["decode"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(e["decode"][i]["context"].dump());
    const double tok_s = e["decode"][i]["tok_s"].get<double>();
    const double hand = e["hand_calculation"][i]["roofline_tok_s"].get<double>();
    EXPECT_GE(tok_s, 0.90 * hand);
    EXPECT_LE(tok_s, 1.00 * hand);
    EXPECT_EQ(e["decode"][i]["bound"], "DDR bandwidth");
  }
  // The longer KV window costs time.
  EXPECT_LT(e["decode"][1]["tok_s"].get<double>(), e["decode"][0]["tok_s"].get<double>());
  double layers = 0;
  for (const json& l : e["layers"]) layers += l["s"].get<double>();
  EXPECT_NEAR(layers, e["busy_total_s"].get<double>(), 1e-9 * layers);
  // kv260 gives energies: the decode token's DDR part is its bytes at the file's 160 pJ/B.
  ASSERT_FALSE(e["energy_per_token"].is_null());
  EXPECT_NEAR(e["energy_per_token"]["decode"][0]["ddr_j"].get<double>(),
              e["decode"][0]["ddr_bytes"].get<double>() * 160e-12, 1e-9);
}

// --set is the file's value: the same estimate as a hardware file written
// with that value, byte for byte (the hardware's path aside), and the same
// run twice gives the same bytes.
TEST(Estimate, SetEqualsTheFileValueAndRunsRepeat) {
  const std::string hw = hw_variant("est_set", {{"memory.ddr_peak_gbps", "38.4"}, {"compute.gemv_cores", "8"}});
  const std::string base = "estimate --model " + tiny() + kTinyArgs + " --json";
  const RunResult file = run_n3(base + " --hw " + hw);
  const RunResult set = run_n3(base + " --set memory.ddr_peak_gbps=38.4 --set compute.gemv_cores=8");
  const RunResult plain = run_n3(base);
  ASSERT_EQ(file.status, 0) << file.err;
  ASSERT_EQ(set.status, 0) << set.err;
  ASSERT_EQ(plain.status, 0) << plain.err;
  json a = json::parse(file.out), b = json::parse(set.out);
  a.erase("hw_path");
  b.erase("hw_path");
  EXPECT_EQ(a.dump(), b.dump());
  json c = json::parse(plain.out);
  c.erase("hw_path");
  EXPECT_NE(b.dump(), c.dump()) << "the override must change the figures";
  EXPECT_NE(json::parse(set.out)["hand_calculation"][0]["roofline_tok_s"],
            json::parse(plain.out)["hand_calculation"][0]["roofline_tok_s"]);
  EXPECT_EQ(run_n3(base).out, plain.out);
  const RunResult text = run_n3("estimate --model " + tiny() + kTinyArgs);
  ASSERT_EQ(text.status, 0) << text.err;
  for (const char* want : {"roofline tok/s: ", "time to first token", "whole request", "<- binds", "stalls on:",
                           "top operators", "DDR capacity used", "energy per token, mJ", "cost: ",
                           "accuracy of these numerics formats"})
    EXPECT_NE(text.out.find(want), std::string::npos) << want << " in\n" << text.out;
}

// --plot DIR: the script saved each PNG straight to DIR/<key>.png, following
// a symlink there and leaving a partial file when it failed. Now every plot
// is drawn into a unique temporary (mkstemp) and renamed only when all are
// drawn; on an error none is written and no temporary stays.
TEST(Estimate, PlotsAreWrittenAtomically) {
  const std::string dir = temp_dir("est_plot_atomic");
  fs::create_directories(dir + "/p");
  std::ofstream(dir + "/victim") << "keep me";
  fs::create_symlink(dir + "/victim", dir + "/p/compute.gemv_cores.png");
  const RunResult r = run_n3("estimate --model " + tiny() + kTinyArgs + " --sweep compute.gemv_cores=2,4 --csv " + dir +
                             "/a.csv --plot " + dir + "/p");
  ASSERT_EQ(r.status, 0) << r.err;
  if (r.err.find("matplotlib is not installed") != std::string::npos) GTEST_SKIP() << "no matplotlib: " << r.err;
  EXPECT_EQ(read_file_text(dir + "/victim"), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir + "/p/compute.gemv_cores.png")) << "the rename replaced the link";
  const std::vector<uint8_t> png = read_file_bytes(dir + "/p/compute.gemv_cores.png");
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(std::string(png.begin() + 1, png.begin() + 4), "PNG");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir + "/p")) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"compute.gemv_cores.png"}) << "no temporary is left";
  // A CSV whose figures do not parse: the script fails, no plot, no temporary.
  std::vector<std::string> rows = lines_of(read_file_text(dir + "/a.csv"));
  ASSERT_EQ(rows.size(), 3u);
  std::vector<std::string> c = cells(rows[2]);
  std::string bad = rows[0] + "\n" + rows[1] + "\n" + c[0] + "," + c[1];
  for (size_t i = 2; i < c.size(); ++i) bad += ",x";
  std::ofstream(dir + "/bad.csv") << bad << "\n";
  fs::create_directories(dir + "/q");
  const std::string cmd = "python3 " + source_dir() + "/tools/plot_estimate.py " + dir + "/bad.csv " + dir + "/q 2>" +
                          dir + "/err.txt";
  EXPECT_NE(std::system(cmd.c_str()), 0) << read_file_text(dir + "/err.txt");
  EXPECT_TRUE(fs::is_empty(dir + "/q")) << read_file_text(dir + "/err.txt");
  // It says why in one line naming the CSV, not in a traceback.
  const std::vector<std::string> err = lines_of(read_file_text(dir + "/err.txt"));
  ASSERT_EQ(err.size(), 1u) << read_file_text(dir + "/err.txt");
  EXPECT_NE(err[0].find("plot_estimate: " + dir + "/bad.csv: ValueError"), std::string::npos) << err[0];
}

// A plot that cannot be written (its name is taken by a folder): n3 estimate
// exits 1 with the script's one line and its own, the CSV stands, no
// temporary is left. (It printed a traceback and exited 0.)
TEST(Estimate, AFailedPlotExitsOneAndKeepsTheCsv) {
  const std::string dir = temp_dir("est_plot_fail");
  fs::create_directories(dir + "/p/compute.gemv_cores.png");
  const RunResult r = run_n3("estimate --model " + tiny() + kTinyArgs + " --sweep compute.gemv_cores=2,4 --csv " + dir +
                             "/a.csv --plot " + dir + "/p");
  if (r.err.find("matplotlib is not installed") != std::string::npos) GTEST_SKIP() << "no matplotlib: " << r.err;
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(lines_of(read_file_text(dir + "/a.csv")).size(), 3u) << "the CSV stands";
  EXPECT_NE(r.err.find("plot_estimate: " + dir + "/a.csv: IsADirectoryError"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("n3 estimate: plots not written into " + dir + "/p (python3 "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir + "/p")) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"compute.gemv_cores.png"}) << "no temporary is left";
}

// A sweep's CSV: the point index, every swept key, every figure of a single
// run; each row equals `n3 estimate --set ...` of its point; three shards
// merged give the unsharded CSV byte for byte.
TEST(Estimate, SweepRowsAreSingleRunsAndShardsMergeBack) {
  const std::string dir = temp_dir("est_sweep");
  const std::string base = "estimate --model " + tiny() + kTinyArgs;
  const std::string sweep = base + " --jobs 2 --sweep compute.gemv_cores=2,4,8 --sweep memory.ddr_peak_gbps=9.6,19.2" +
                            " --sweep timing.dispatch_cycles=1,4";
  const RunResult r = run_n3(sweep + " --csv " + dir + "/all.csv --plot " + dir + "/plots");
  ASSERT_EQ(r.status, 0) << r.err;
  // One plot per swept key, or the script's word that matplotlib is missing.
  if (r.err.find("matplotlib is not installed") == std::string::npos) {
    for (const char* k : {"compute.gemv_cores", "memory.ddr_peak_gbps", "timing.dispatch_cycles"})
      EXPECT_TRUE(fs::exists(dir + "/plots/" + k + ".png")) << k << "\n" << r.err;
  }
  const std::vector<std::string> rows = lines_of(read_file_text(dir + "/all.csv"));
  ASSERT_EQ(rows.size(), 13u);
  const std::vector<std::string> head = cells(rows[0]);
  ASSERT_GE(head.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(head.begin(), head.begin() + 4),
            (std::vector<std::string>{"point", "compute.gemv_cores", "memory.ddr_peak_gbps", "timing.dispatch_cycles"}));
  for (const char* col : {"decode_tok_s@1", "decode_tok_s@8", "decode_bound@1", "prefill_tok_s", "ttft_s", "request_s",
                          "hand_roofline_tok_s@1", "decode_energy_j@1", "prefill_energy_ddr_j", "cost",
                          "cost_ddr_bandwidth", "accuracy_logits_cosine", "not_simulated"})
    EXPECT_NE(std::find(head.begin(), head.end(), col), head.end()) << col;
  std::set<std::string> tok_s;
  const size_t tok_col = size_t(std::find(head.begin(), head.end(), "decode_tok_s@1") - head.begin());
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> c = cells(rows[i]);
    ASSERT_EQ(c.size(), head.size()) << rows[i];
    EXPECT_EQ(c[0], std::to_string(i - 1));
    const RunResult one = run_n3(base + " --csv-row --set compute.gemv_cores=" + c[1] + " --set memory.ddr_peak_gbps=" +
                                 c[2] + " --set timing.dispatch_cycles=" + c[3]);
    ASSERT_EQ(one.status, 0) << one.err;
    const std::vector<std::string> l = lines_of(one.out);
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(rows[0], "point,compute.gemv_cores,memory.ddr_peak_gbps,timing.dispatch_cycles," + l[0]);
    EXPECT_EQ(rows[i], c[0] + "," + c[1] + "," + c[2] + "," + c[3] + "," + l[1]);
    tok_s.insert(c[tok_col]);
  }
  EXPECT_GT(tok_s.size(), 1u) << "the swept keys must move decode tok/s";
  std::string shards;
  for (int i = 1; i <= 3; ++i) {
    const std::string f = dir + "/s" + std::to_string(i) + ".csv";
    const RunResult s = run_n3(sweep + " --shard " + std::to_string(i) + "/3 --csv " + f);
    ASSERT_EQ(s.status, 0) << s.err;
    EXPECT_LT(lines_of(read_file_text(f)).size(), rows.size());
    shards += " " + f;
  }
  const RunResult m = run_n3("estimate --merge" + shards + " --csv " + dir + "/merged.csv --plot " + dir + "/mp");
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(read_file_text(dir + "/merged.csv"), read_file_text(dir + "/all.csv"));
  // --plot draws the merged CSV as the sweep would (the cluster's last step).
  if (m.err.find("matplotlib is not installed") == std::string::npos) {
    EXPECT_TRUE(fs::exists(dir + "/mp/compute.gemv_cores.png")) << m.err;
  }
  expect_refused("estimate --merge" + shards + " --plot " + dir + "/mq", "--plot needs --csv");
  expect_refused("estimate --merge " + dir + "/s1.csv " + dir + "/s2.csv --csv " + dir + "/part.csv", "is missing",
                 dir + "/part.csv");
  expect_refused("estimate --merge " + dir + "/s1.csv " + dir + "/s1.csv --csv " + dir + "/dup.csv", "in two files",
                 dir + "/dup.csv");
}

// Energy per token: each part is the run's count at the file's rate (DDR and
// static checked against the figures beside them), the parts sum to the
// total; a file without an energy section says energy is absent, and one
// with part of it is refused naming the missing key.
TEST(Estimate, EnergyIsTheCountsAtTheFilesRatesOrAbsent) {
  const RunResult r = run_n3("estimate --model " + tiny() + kTinyArgs + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json e = json::parse(r.out);
  ASSERT_FALSE(e["energy_per_token"].is_null());
  std::vector<std::pair<json, json>> phases;  // (energy, phase)
  for (size_t i = 0; i < e["decode"].size(); ++i) phases.push_back({e["energy_per_token"]["decode"][i], e["decode"][i]});
  phases.push_back({e["energy_per_token"]["prefill"], e["prefill"]});
  for (const auto& [en, ph] : phases) {
    SCOPED_TRACE(en.dump());
    const double tokens = ph["tokens"].get<double>();
    double sum = 0;
    for (const char* k : {"ddr_j", "l2_j", "mac_j", "sfu_j", "static_j"}) {
      EXPECT_GT(en[k].get<double>(), 0.0) << k;
      sum += en[k].get<double>();
    }
    EXPECT_NEAR(sum, en["total_j"].get<double>(), 1e-12 * sum);
    EXPECT_NEAR(en["ddr_j"].get<double>(), ph["ddr_bytes"].get<double>() * 160e-12 / tokens, 1e-9 * sum);
    EXPECT_NEAR(en["static_j"].get<double>(), 1.5 * ph["sim_s"].get<double>() / tokens, 1e-9 * sum);
  }
  // Twice the DDR energy per byte: the DDR part doubles, the others stay.
  const RunResult x2 = run_n3("estimate --model " + tiny() + kTinyArgs + " --json --set energy.ddr_pj_per_byte=320");
  ASSERT_EQ(x2.status, 0) << x2.err;
  const json e2 = json::parse(x2.out);
  EXPECT_DOUBLE_EQ(e2["energy_per_token"]["decode"][0]["ddr_j"].get<double>(),
                   2 * e["energy_per_token"]["decode"][0]["ddr_j"].get<double>());
  EXPECT_DOUBLE_EQ(e2["energy_per_token"]["decode"][0]["mac_j"].get<double>(),
                   e["energy_per_token"]["decode"][0]["mac_j"].get<double>());

  const std::string none = hw_without("est_noenergy", {"energy:"});
  const RunResult a = run_n3("estimate --model " + tiny() + kTinyArgs + " --hw " + none);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.out.find("energy per token: absent (the hardware file gives no per-operation or per-byte energies)"),
            std::string::npos) << a.out;
  const RunResult aj = run_n3("estimate --model " + tiny() + kTinyArgs + " --json --hw " + none);
  ASSERT_EQ(aj.status, 0) << aj.err;
  EXPECT_TRUE(json::parse(aj.out)["energy_per_token"].is_null());
  const RunResult ar = run_n3("estimate --model " + tiny() + kTinyArgs + " --csv-row --hw " + none);
  ASSERT_EQ(ar.status, 0) << ar.err;
  const std::vector<std::string> l = lines_of(ar.out);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(cells(l[1])[col(cells(l[0]), "decode_energy_j@1")], "");
  EXPECT_EQ(cells(l[1])[col(cells(l[0]), "prefill_energy_static_j")], "");
  expect_refused("estimate --model " + tiny() + " --prompt 0 --hw " + hw_without("est_partial", {"  static_mw:"}),
                 "energy.ddr_pj_per_byte is given without energy.static_mw");
}

// --target-tok-s: the cheapest point (the CSV's cost column) among those
// whose decode tok/s reaches the target, recomputed here from the rows; the
// CSV is the one a sweep without a target writes; the answer from the merged
// shards is the same; a target no point reaches names the fastest point.
TEST(Estimate, TargetPicksTheCheapestReachingPointOfTheCsv) {
  const std::string dir = temp_dir("est_target");
  const std::string sweep = "estimate --model " + tiny() + " --context 1 --prompt 8 --new 2 --jobs 2" +
                            " --sweep compute.gemv_cores=1,4 --sweep memory.ddr_peak_gbps=4.8,19.2" +
                            " --sweep compute.sfu_elems_per_clk=1,4";
  const RunResult plain = run_n3(sweep + " --csv " + dir + "/plain.csv");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out, "");
  const std::vector<std::vector<std::string>> rows = csv_rows(dir + "/plain.csv");
  ASSERT_EQ(rows.size(), 9u);
  const std::vector<std::string>& head = rows[0];
  const size_t tok = col(head, "decode_tok_s@1"), cost = col(head, "cost"), bound = col(head, "decode_bound@1");
  std::vector<double> speeds;
  for (size_t i = 1; i < rows.size(); ++i) {
    speeds.push_back(std::stod(rows[i][tok]));
    // The cost is the file's rates times the point's amounts (kv260's cost section).
    EXPECT_NEAR(std::stod(rows[i][col(head, "cost_ddr_bandwidth")]), 0.5 * std::stod(rows[i][2]), 1e-9);
    EXPECT_NEAR(std::stod(rows[i][col(head, "cost_gemv_macs")]), 0.00035 * 32 * std::stod(rows[i][1]), 1e-12);
    double parts = 0;
    for (size_t c = 0; c < head.size(); ++c)
      if (head[c].rfind("cost_", 0) == 0) parts += std::stod(rows[i][c]);
    EXPECT_NEAR(parts, std::stod(rows[i][cost]), 1e-6);
  }
  std::vector<double> sorted = speeds;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_LT(sorted[3], sorted[4]) << "the swept keys must spread decode tok/s";
  const double target = 0.5 * (sorted[3] + sorted[4]);  // half the points reach it
  size_t want = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (speeds[i - 1] < target) continue;
    const double c = std::stod(rows[i][cost]);
    if (want == 0 || c < std::stod(rows[want][cost]) ||
        (c == std::stod(rows[want][cost]) && speeds[i - 1] > speeds[want - 1]))
      want = i;
  }
  ASSERT_NE(want, 0u);
  const std::string t = std::to_string(target);
  const RunResult r = run_n3(sweep + " --csv " + dir + "/t.csv --target-tok-s " + t);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file_text(dir + "/t.csv"), read_file_text(dir + "/plain.csv"));
  EXPECT_NE(r.out.find("reached by 4 of 8 points; the cheapest: point " + rows[want][0] + " (compute.gemv_cores=" +
                       rows[want][1] + " memory.ddr_peak_gbps=" + rows[want][2] + " compute.sfu_elems_per_clk=" +
                       rows[want][3] + ")\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bound: " + rows[want][bound] + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(run_n3(sweep + " --csv " + dir + "/t2.csv --target-tok-s " + t).out, r.out) << "deterministic";
  // The shards merged answer as the whole sweep.
  std::string shards;
  for (int i = 1; i <= 2; ++i) {
    const std::string f = dir + "/s" + std::to_string(i) + ".csv";
    ASSERT_EQ(run_n3(sweep + " --shard " + std::to_string(i) + "/2 --csv " + f).status, 0);
    shards += " " + f;
  }
  const RunResult m = run_n3("estimate --merge" + shards + " --csv " + dir + "/m.csv --target-tok-s " + t);
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(m.out, r.out);

  // No point reaches 10x the fastest: the closest is the fastest, and what binds it.
  size_t fastest = 1;
  for (size_t i = 1; i < rows.size(); ++i)
    if (speeds[i - 1] > speeds[fastest - 1]) fastest = i;
  const RunResult n = run_n3(sweep + " --csv " + dir + "/n.csv --target-tok-s " + std::to_string(10 * sorted.back()));
  ASSERT_EQ(n.status, 0) << n.err;
  EXPECT_NE(n.out.find("no point of the 8 reaches it; the closest: point " + rows[fastest][0] + " "), std::string::npos)
      << n.out;
  EXPECT_NE(n.out.find("bound: " + rows[fastest][bound] + "\n"), std::string::npos) << n.out;
}

// Scenario keys move the bytes as the formats say: an int8 KV cache reads
// half the KV bytes of f16 (bf16 the same as f16) and its token moves fewer
// DDR bytes; per-group weight scales add 4 bytes per group (a group as wide
// as every row adds none), are not lowered by the compiler (hand calculation
// only, said so) and a sweep over both keeps one header; each row carries
// the measured accuracy of its formats or "not measured".
TEST(Estimate, ScenarioKeysMoveTheBytesAndCarryTheirAccuracy) {
  const std::string base = "estimate --model " + tiny() + " --context 8 --prompt 0 --csv-row";
  auto figures = [&](const std::string& sets) {
    const RunResult r = run_n3(base + sets);
    EXPECT_EQ(r.status, 0) << sets << ": " << r.err;
    const std::vector<std::string> l = lines_of(r.out);
    std::map<std::string, std::string> m;
    if (l.size() != 2) return m;
    const std::vector<std::string> h = cells(l[0]), v = cells(l[1]);
    for (size_t i = 0; i < h.size() && i < v.size(); ++i) m[h[i]] = v[i];
    return m;
  };
  auto f16 = figures(""), bf16 = figures(" --set numerics.kv_format=bf16"), i8 = figures(" --set numerics.kv_format=int8");
  const double kv = std::stod(f16["kv_read_bytes_per_token@8"]);
  ASSERT_GT(kv, 0.0);
  EXPECT_EQ(bf16["kv_read_bytes_per_token@8"], f16["kv_read_bytes_per_token@8"]);
  EXPECT_DOUBLE_EQ(std::stod(i8["kv_read_bytes_per_token@8"]), kv / 2);
  EXPECT_LT(std::stoull(i8["decode_ddr_bytes@8"]), std::stoull(f16["decode_ddr_bytes@8"]));
  EXPECT_NE(i8["accuracy_logits_cosine"].find("gemma3n-dev prefill vs HF transformers=0.999976"), std::string::npos);
  EXPECT_NE(f16["accuracy_logits_cosine"].find("=0.999971"), std::string::npos);
  EXPECT_EQ(figures(" --set numerics.act_mantissa_bits=10")["accuracy_logits_cosine"], "not measured");

  auto row = figures(" --set numerics.weight_scale=per_group --set numerics.weight_group=32");
  auto whole = figures(" --set numerics.weight_scale=per_group --set numerics.weight_group=65536");
  EXPECT_EQ(whole["hand_bytes_per_token@8"], f16["hand_bytes_per_token@8"]) << "one group per row: the per-row bytes";
  EXPECT_GT(std::stod(row["hand_bytes_per_token@8"]), std::stod(f16["hand_bytes_per_token@8"]));
  EXPECT_EQ(row["decode_tok_s@8"], "");
  EXPECT_NE(row["not_simulated"].find("the compiler lowers numerics.weight_scale = per_row only"), std::string::npos);
  EXPECT_EQ(f16["not_simulated"], "");

  const std::string dir = temp_dir("est_scen");
  const RunResult s = run_n3("estimate --model " + tiny() + " --context 8 --prompt 0 --jobs 2 --csv " + dir +
                             "/s.csv --sweep numerics.weight_scale=per_row,per_group --sweep numerics.kv_format=f16,int8");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(lines_of(read_file_text(dir + "/s.csv")).size(), 5u);
}

// A Slurm array with more tasks than points: the shards past the last point
// write the header alone (the same as their siblings', made from the hand
// calculation before any point runs) and every split merges back to the
// unsharded CSV byte for byte.
TEST(Estimate, ShardsBeyondThePointCountMerge) {
  const std::string dir = temp_dir("est_empty_shard");
  const std::string sweep = "estimate --model " + tiny() + " --context 1 --prompt 4 --new 2 --jobs 2" +
                            " --sweep compute.gemv_cores=4,8";
  ASSERT_EQ(run_n3(sweep + " --csv " + dir + "/all.csv").status, 0);
  const std::string all = read_file_text(dir + "/all.csv");
  for (int n : {3, 5}) {
    std::string shards;
    for (int i = 1; i <= n; ++i) {
      const std::string f = dir + "/s" + std::to_string(i) + "of" + std::to_string(n) + ".csv";
      const RunResult s = run_n3(sweep + " --shard " + std::to_string(i) + "/" + std::to_string(n) + " --csv " + f);
      ASSERT_EQ(s.status, 0) << s.err;
      if (i > 2) {
        EXPECT_EQ(read_file_text(f), lines_of(all)[0] + "\n") << "an empty shard: the header alone";
      }
      shards += " " + f;
    }
    const RunResult m = run_n3("estimate --merge" + shards + " --csv " + dir + "/m" + std::to_string(n) + ".csv");
    ASSERT_EQ(m.status, 0) << m.err;
    EXPECT_EQ(read_file_text(dir + "/m" + std::to_string(n) + ".csv"), all);
  }
}

// Issue 22 review: a shard CSV cut in half merged with exit 0, its last row
// short of fields and its point lost. A merge now takes whole rows only:
// every row has the header's fields, a file ends in a newline, a point
// appears once, and no point below the largest is missing; each refusal is
// one line naming the file and line, and no merged CSV is written.
TEST(Estimate, MergeRefusesCutShortOrBrokenShards) {
  const std::string dir = temp_dir("est_merge_cut");
  ASSERT_EQ(run_n3("estimate --model " + tiny() + " --context 1 --prompt 4 --new 2 --jobs 2" +
                   " --sweep compute.gemv_cores=4,8,16 --csv " + dir + "/all.csv")
                .status,
            0);
  const std::vector<std::string> l = lines_of(read_file_text(dir + "/all.csv"));
  ASSERT_EQ(l.size(), 4u);
  const std::string h = l[0] + "\n", a = dir + "/a.csv", b = dir + "/b.csv", m = dir + "/m.csv";
  auto put = [](const std::string& f, const std::string& t) { std::ofstream(f, std::ios::binary | std::ios::trunc) << t; };
  auto merge = [&] { return "estimate --merge " + a + " --merge " + b + " --csv " + m; };
  put(a, h + l[1] + "\n");
  // The whole rows merge (or every refusal below could be an unrelated one).
  put(b, h + l[2] + "\n" + l[3] + "\n");
  ASSERT_EQ(run_n3(merge()).status, 0);
  fs::remove(m);
  // Cut in the middle of its last row: no newline at the end.
  put(b, h + l[2] + "\n" + l[3].substr(0, l[3].size() / 2));
  expect_refused(merge(), b + ":3: the file is cut short (its last line has no newline)", m);
  // A short row that does end in a newline.
  const size_t fields = size_t(std::count(l[0].begin(), l[0].end(), ',')) + 1;
  const std::string cut = l[3].substr(0, l[3].find(',', l[3].size() / 2));
  put(b, h + l[2] + "\n" + cut + "\n");
  expect_refused(merge(),
                 b + ":3: the row has " + std::to_string(std::count(cut.begin(), cut.end(), ',') + 1) +
                     " fields, the header " + std::to_string(fields),
                 m);
  // A point twice in one file, and across files.
  put(b, h + l[2] + "\n" + l[3] + "\n" + l[3] + "\n");
  expect_refused(merge(), b + ":4: point 2 is given twice in this file", m);
  put(b, h + l[1] + "\n" + l[2] + "\n" + l[3] + "\n");
  expect_refused(merge(), b + ":2: point 0 is also in " + a + " (in two files)", m);
  // A gap below the largest point: the row of point 1 lost.
  put(b, h + l[3] + "\n");
  expect_refused(merge(), "--merge: point 1 is missing", m);
}

// A point the compiler cannot lower (L2 smaller than one token's
// activations, a DDR image larger than memory.ddr_bytes) is a row of the
// hand calculation with empty simulated cells and the compiler's reason, as
// docs/estimating.md promises; the other points stand, --target-tok-s skips
// it; a single run prints the hand calculation and the reason (exit 0).
TEST(Estimate, PointsTheCompilerCannotLowerAreRowsWithAReason) {
  const std::string dir = temp_dir("est_unlowered");
  const std::string base = "estimate --model " + tiny() + " --context 1 --prompt 4 --new 2";
  const std::string sweep = base + " --jobs 2 --sweep memory.l2_bytes=1024,1048576 --sweep memory.ddr_bytes=4096,1073741824";
  const RunResult r = run_n3(sweep + " --csv " + dir + "/s.csv");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::vector<std::string>> rows = csv_rows(dir + "/s.csv");
  ASSERT_EQ(rows.size(), 5u);
  const size_t tok = col(rows[0], "decode_tok_s@1"), why = col(rows[0], "not_simulated"),
               hand = col(rows[0], "hand_roofline_tok_s@1");
  for (size_t i = 1; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    const bool lowered = i == 4;  // the large L2 and the large DDR
    EXPECT_EQ(rows[i][tok].empty(), !lowered);
    EXPECT_FALSE(rows[i][hand].empty());
    EXPECT_EQ(rows[i][why].find("the compiler does not lower this design point: ") == 0, !lowered) << rows[i][why];
    const RunResult one = run_n3(base + " --csv-row --set memory.l2_bytes=" + rows[i][1] + " --set memory.ddr_bytes=" +
                                 rows[i][2]);
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_EQ(lines_of(read_file_text(dir + "/s.csv"))[i], rows[i][0] + "," + rows[i][1] + "," + rows[i][2] + "," +
                                                              lines_of(one.out)[1]);
  }
  const RunResult t = run_n3(sweep + " --csv " + dir + "/t.csv --target-tok-s 0.001");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("reached by 1 of 4 points; the cheapest: point 3 "), std::string::npos) << t.out;
  const RunResult single = run_n3(base + " --set memory.ddr_bytes=4096");
  ASSERT_EQ(single.status, 0) << single.err;
  EXPECT_NE(single.out.find("simulation: not available (the compiler does not lower this design point: the DDR image "
                            "needs"),
            std::string::npos)
      << single.out;
}

// The on-chip L2 the compiled programs use: the activations' high-water and
// the resident weights above it, within memory.l2_bytes, in the text and the
// JSON; the hand figure is labelled as such, not as the estimate.
TEST(Estimate, ReportsL2ResidencyAndLabelsTheHandFigure) {
  const RunResult j = run_n3("estimate --model " + tiny() + kTinyArgs + " --json");
  ASSERT_EQ(j.status, 0) << j.err;
  const json l2 = json::parse(j.out)["l2"];
  ASSERT_TRUE(l2.is_object()) << j.out;
  EXPECT_GT(l2["activations_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(l2["resident_weights"].get<uint64_t>(), 0u);
  EXPECT_EQ(l2["used_bytes"].get<uint64_t>(),
            l2["activations_bytes"].get<uint64_t>() + l2["resident_bytes"].get<uint64_t>());
  EXPECT_LE(l2["used_bytes"].get<uint64_t>(), l2["capacity_bytes"].get<uint64_t>());
  const RunResult t = run_n3("estimate --model " + tiny() + kTinyArgs);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("L2 (on-chip) used: " + std::to_string(l2["used_bytes"].get<uint64_t>()) + " of " +
                       std::to_string(l2["capacity_bytes"].get<uint64_t>()) + " bytes"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("hand roofline tok/s (min of the two above, not simulated): "), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("estimate tok/s"), std::string::npos) << t.out;
}

// --jobs 0 is one worker per CPU the process may run on (its affinity mask,
// as a Slurm task's or a cgroup's), not per CPU of the machine.
TEST(Estimate, DefaultJobsFollowTheAffinityMask) {
  const std::string dir = temp_dir("est_jobs");
  const std::string cmd = "taskset -c 0 " + n3_binary() + " estimate --model " + tiny() +
                          " --context 1 --prompt 0 --sweep compute.gemv_cores=4,8 --csv " + dir + "/s.csv 2>" + dir +
                          "/err";
  if (std::system("taskset -c 0 true 2>/dev/null") != 0) GTEST_SKIP() << "no taskset";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file_text(dir + "/err");
  EXPECT_NE(read_file_text(dir + "/err").find(" on 1 workers\n"), std::string::npos) << read_file_text(dir + "/err");
}

#endif  // N3_HAVE_SYSTEMC

// A bad key or value of --set or --sweep: one line naming it, exit 2, no output, no CSV.
TEST(Estimate, BadSetAndSweepAreRefusedInOneLine) {
  const std::string dir = temp_dir("est_bad");
  const std::string base = "estimate --model " + tiny() + " --prompt 4 --new 2 ";
  const std::string csv = dir + "/out.csv";
  expect_refused(base + "--set compute.gemv_core=8", "unknown hardware parameter 'compute.gemv_core'");
  expect_refused(base + "--set compute.gemv_cores=0", "--set compute.gemv_cores=0: 'compute.gemv_cores' must be positive");
  expect_refused(base + "--set compute.gemv_cores=2.5", "'compute.gemv_cores' must be an integer");
  expect_refused(base + "--set kv.policy=drop", "'kv.policy' must be one of error, evict");
  expect_refused(base + "--set kv.sink_tokens=9000", "--set kv.sink_tokens=9000: kv.sink_tokens = 9000 must be less");
  expect_refused(base + "--set gemv_cores", "--set gemv_cores: expected key=value");
  std::ofstream(dir + "/afile") << "x";
  expect_refused(base + "--sweep compute.gemv_cores=2,4 --csv " + csv + " --plot " + dir + "/afile",
                 "--plot " + dir + "/afile: is not a directory", csv);
  expect_refused(base + "--jobs -1 --sweep compute.gemv_cores=2,4 --csv " + csv, "--jobs must not be negative", csv);
  expect_refused(base + "--set memory.ddr_efficiency=1e-300", "'memory.ddr_efficiency' must be in [0.001, 1]");
  expect_refused(base + "--set cost.ddr_gbps=1e307 --set memory.ddr_peak_gbps=1e6",
                 "the cost of the DDR bandwidth overflows a double");
  expect_refused(base + "--sweep compute.gemv_cores=4,x --csv " + csv, "'compute.gemv_cores' must be a number (is 'x')",
                 csv);
  expect_refused(base + "--sweep compute.nope=1,2 --csv " + csv, "unknown hardware parameter 'compute.nope'", csv);
  expect_refused(base + "--sweep compute.gemv_cores=4,,8 --csv " + csv, "empty value", csv);
  expect_refused(base + "--sweep compute.gemv_cores= --csv " + csv, "--sweep compute.gemv_cores=: no values", csv);
  expect_refused(base + "--sweep compute.gemv_cores= ", "--sweep compute.gemv_cores=: no values");
  expect_refused(base + "--sweep 'compute.gemv_cores=4, 8' --csv " + csv, "value ' 8' holds a blank", csv);
  expect_refused(base + "--sweep compute.gemv_cores=4,8,4 --csv " + csv, "value '4' is given twice", csv);
  expect_refused(base + "--context 1,1", "--context 1,1: context 1 is given twice");
  expect_refused(base + "--context '1, 8'", "--context 1, 8: expected positive token counts");
  expect_refused(base + "--context 1,1 --sweep compute.gemv_cores=4,8 --csv " + csv, "context 1 is given twice", csv);
  expect_refused(base + "--sweep compute.gemv_cores=4,8 --sweep compute.gemv_cores=2 --csv " + csv, "swept twice", csv);
  expect_refused(base + "--sweep memory.hp_ports=4,1 --set timing.dma_hp_ports=2 --csv " + csv,
                 "timing.dma_hp_ports = 2 must be in [1, memory.hp_ports = 1]", csv);
  // A rule between two keys names the override that broke it, not the
  // file's line of the other key.
  expect_refused(base + "--set memory.hp_ports=2",
                 "--set memory.hp_ports=2: timing.dma_hp_ports = 4 must be in [1, memory.hp_ports = 2]");
  expect_refused(base + "--set kv.cap_tokens=2", "--set kv.cap_tokens=2: kv.sink_tokens = 4 must be less than");
  expect_refused(base + "--sweep memory.hp_ports=8,2 --csv " + csv,
                 "--sweep memory.hp_ports=2: timing.dma_hp_ports = 4 must be in [1, memory.hp_ports = 2]", csv);
  expect_refused(base + "--sweep compute.gemv_cores=4,8 --shard 4/3 --csv " + csv, "--shard 4/3", csv);
  expect_refused(base + "--context 1,0", "--context 1,0");
  // Positions past the KV cap or the model's positions: refused before any simulation, naming the option and the cap.
  expect_refused(base + "--set kv.cap_tokens=64 --context 1,100",
                 "--context 100: 100 tokens pass the KV cap (kv.cap_tokens = 64 of ");
  expect_refused(base + "--context 1,5000", "--context 5000: 5000 tokens pass the model's max_position_embeddings = 4096");
  expect_refused("estimate --model " + tiny() + " --set kv.cap_tokens=64 --prompt 60 --new 10",
                 "--prompt 60 --new 10 (the last decode step's context): 69 tokens pass the KV cap");
  expect_refused(base + "--context 100 --sweep kv.cap_tokens=8192,64 --csv " + csv,
                 "--sweep point 1 (kv.cap_tokens=64): --context 100: 100 tokens pass the KV cap", csv);
  // Rates within physical reason (the one schema's range, files and --set alike): no inf or nan figures.
  expect_refused(base + "--set memory.ddr_peak_gbps=1e-300", "'memory.ddr_peak_gbps' must be in [0.001, 1e6]");
  expect_refused(base + "--set clocks.core_mhz=1e9", "'clocks.core_mhz' must be in [0.001, 1e6]");
  expect_refused(base + "--sweep compute.gemv_cores=4,8 --plot " + dir + "/p", "--plot needs --csv");
  // --target-tok-s: checked before any point runs; no answer, no CSV.
  const std::string sw = base + "--sweep compute.gemv_cores=4,8 --csv " + csv;
  expect_refused(base + "--target-tok-s 5", "--target-tok-s 5 picks among a sweep's points");
  expect_refused(sw + " --target-tok-s 0", "--target-tok-s 0: expected a positive number", csv);
  expect_refused(sw + " --target-tok-s fast", "--target-tok-s fast: expected a positive number", csv);
  expect_refused(sw + " --target-tok-s inf", "--target-tok-s inf: expected a positive number", csv);
  expect_refused(base + "--sweep compute.gemv_cores=4,8 --target-tok-s 5", "write the CSV with --csv FILE");
  expect_refused(sw + " --target-tok-s 5 --shard 1/2", "needs every point", csv);
  expect_refused(sw + " --target-tok-s 5 --target-phase decode@9", "--target-phase decode@9", csv);
  expect_refused(sw + " --target-tok-s 5 --target-phase encode", "--target-phase encode", csv);
  expect_refused(sw + " --target-phase prefill", "--target-phase goes with --target-tok-s", csv);
  expect_refused("estimate --model " + tiny() + " --prompt 0 --sweep compute.gemv_cores=4,8 --csv " + csv +
                     " --target-tok-s 5 --target-phase prefill",
                 "there is no prefill", csv);
  expect_refused(sw + " --target-tok-s 5 --hw " + hw_without("est_nocost", {"cost:"}), "states no cost section", csv);
  expect_refused(base + "--sweep cost.ddr_gbps=1,2 --csv " + csv + " --hw " + hw_without("est_nocost2", {"cost:"}),
                 "cost.ddr_gbps is given without", csv);
}

// A failed sweep worker's message is quoted without its own prefix: the
// sweep's one line reads "n3 estimate: error: --sweep point N (...): why",
// not "...: n3 estimate: error: why".
TEST(Estimate, SweepQuotesAWorkersMessageWithoutItsPrefix) {
  EXPECT_EQ(cli::worker_message("n3 estimate: error: the DDR image needs 9 bytes\nsecond line\n"),
            "the DDR image needs 9 bytes");
  EXPECT_EQ(cli::worker_message("terminate called\n"), "terminate called");
  EXPECT_EQ(cli::worker_message(""), "(no message)");
}

// The acceptance figure: a 27-point sweep (3 keys x 3 values) of E4B
// decode plus a 128-token prefill on kv260 variants; prints the wall time (the
// bar is under a minute on 2 free cores), checks the columns and that each
// row is a single run of its point. Opt-in: minutes of CPU.
TEST(Estimate, E4bSweep27Points) {
  if (!opt_in("N3_ESTIMATE_SWEEP")) GTEST_SKIP() << "set N3_ESTIMATE_SWEEP=1 to run the 27-point E4B sweep";
  const std::string dir = temp_dir("est_e4b_sweep");
  const std::string base = "estimate --model " + e4b() + " --prompt 128 --new 128";
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_n3(base + " --jobs 2 --sweep memory.ddr_peak_gbps=19.2,38.4,76.8 --sweep memory.hp_ports=4,8,16" +
                             " --sweep compute.gemv_cores=4,8,16 --csv " + dir + "/e4b.csv --plot " + dir + "/plots");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.err;
  std::printf("E4B 27-point sweep (decode @1 + 128-token prefill + request, CSV and plots): %.1f s wall, 2 workers\n",
              wall);
  if (r.err.find("matplotlib is not installed") == std::string::npos)
    for (const char* k : {"memory.ddr_peak_gbps", "memory.hp_ports", "compute.gemv_cores"})
      EXPECT_TRUE(fs::exists(dir + "/plots/" + k + ".png")) << k;
  const std::vector<std::string> rows = lines_of(read_file_text(dir + "/e4b.csv"));
  ASSERT_EQ(rows.size(), 28u);
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> c = cells(rows[i]);
    const RunResult one = run_n3(base + " --csv-row --set memory.ddr_peak_gbps=" + c[1] + " --set memory.hp_ports=" +
                                 c[2] + " --set compute.gemv_cores=" + c[3]);
    ASSERT_EQ(one.status, 0) << one.err;
    const std::vector<std::string> l = lines_of(one.out);
    ASSERT_EQ(l.size(), 2u);
    // The columns: the point, the swept keys in order, then every figure of a single estimate.
    EXPECT_EQ(rows[0], "point,memory.ddr_peak_gbps,memory.hp_ports,compute.gemv_cores," + l[0]);
    EXPECT_EQ(c[0], std::to_string(i - 1));
    EXPECT_EQ(rows[i], c[0] + "," + c[1] + "," + c[2] + "," + c[3] + "," + l[1]);
  }
}

}  // namespace
}  // namespace n3::test
