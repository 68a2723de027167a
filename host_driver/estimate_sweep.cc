#include "host_driver/estimate_sweep.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/file_util.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "host_driver/cli_util.h"
#include "host_driver/estimate_report.h"
#include "runtime/device_compiled.h"
#include "sim/systemc/timing.h"

extern char** environ;

#ifndef N3_SOURCE_DIR
#define N3_SOURCE_DIR "."
#endif

namespace n3::cli {

namespace fs = std::filesystem;

namespace {

struct Axis {
  std::string key;
  std::vector<std::string> values;
};

// The point's overrides, the product's index read with the first axis slowest.
std::vector<HwOverride> point_overrides(const std::vector<Axis>& axes, size_t index) {
  std::vector<HwOverride> o(axes.size());
  for (size_t k = axes.size(); k-- > 0;) {
    o[k] = {axes[k].key, axes[k].values[index % axes[k].values.size()], "--sweep"};
    index /= axes[k].values.size();
  }
  return o;
}

Axis parse_axis(const std::string& text) {
  const size_t eq = text.find('=');
  require(eq != std::string::npos && eq > 0, "--sweep " + text + ": expected key=v1,v2,... (e.g. compute.gemv_cores=4,8)");
  Axis a{text.substr(0, eq), split(text.substr(eq + 1), ',')};
  require(!a.values.empty(), "--sweep " + text + ": no values (expected key=v1,v2,...)");
  // A value is a CSV cell and a --set argument as written: no blanks to trim
  // (" 8" would be a cell unlike the 8 a single run prints), and no repeats (two equal rows).
  std::set<std::string> seen;
  for (const std::string& v : a.values) {
    require(!v.empty(), "--sweep " + text + ": empty value");
    for (char ch : v)
      require(!std::isspace(static_cast<unsigned char>(ch)), "--sweep " + text + ": value '" + v + "' holds a blank");
    require(seen.insert(v).second, "--sweep " + text + ": value '" + v + "' is given twice");
  }
  parse_hw_override(a.key + "=" + a.values[0], "--sweep");  // the key is in the schema
  return a;
}

// The CPUs this process may run on (its affinity mask: a Slurm task or a
// cgroup's cpuset), not the machine's count, so --jobs 0 does not oversubscribe.
int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, int(std::thread::hardware_concurrency()));
}

std::string point_text(const std::vector<Axis>& axes, size_t p) {
  std::string at;
  for (const HwOverride& v : point_overrides(axes, p)) at += (at.empty() ? "" : " ") + v.key + "=" + v.value;
  return "--sweep point " + std::to_string(p) + " (" + at + ")";
}

// "i/n" with 1 <= i <= n.
std::pair<int, int> parse_shard(const std::string& s) {
  if (s.empty()) return {1, 1};
  int i = 0, n = 0;
  char tail = 0;
  require(std::sscanf(s.c_str(), "%d/%d%c", &i, &n, &tail) == 2 && n >= 1 && i >= 1 && i <= n,
          "--shard " + s + ": expected i/n with 1 <= i <= n");
  return {i, n};
}

// One worker: `n3 estimate ... --csv-row`, stdout and stderr into files of `dir`.
pid_t spawn_point(const SweepOptions& o, const std::vector<HwOverride>& point, const std::string& out,
                  const std::string& err) {
  std::vector<std::string> args = {"n3", "estimate", "--model", o.model, "--hw", o.hw, "--context", o.contexts,
                                   "--prompt", std::to_string(o.prompt), "--new", std::to_string(o.new_tokens),
                                   "--csv-row"};
  for (const std::string& s : o.sets) args.insert(args.end(), {"--set", s});
  for (const HwOverride& p : point) args.insert(args.end(), {"--set", p.key + "=" + p.value});
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  require(rc == 0, "--sweep: cannot start a worker process (errno " + std::to_string(rc) + ")");
  return pid;
}

// The temporary directory of one sweep's worker outputs, removed however the sweep ends.
struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "n3-sweep-XXXXXX").string();
    require(mkdtemp(t.data()) != nullptr, "--sweep: cannot create a temporary directory");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_csv(const std::string& text, const std::string& csv) {
  if (csv.empty()) std::fwrite(text.data(), 1, text.size(), stdout);
  else write_file_atomic(csv, text);
}

}  // namespace

std::string worker_message(const std::string& err) {
  std::string l = err.substr(0, err.find('\n'));
  const std::string prefix = "n3 estimate: error: ";
  if (l.rfind(prefix, 0) == 0) l = l.substr(prefix.size());
  return l.empty() ? "(no message)" : l;
}

int run_sweep(const SweepOptions& o) {
  std::vector<Axis> axes;
  std::set<std::string> seen;
  for (const std::string& s : o.sets) seen.insert(parse_hw_override(s, "--set").key);
  for (const std::string& s : o.sweeps) {
    axes.push_back(parse_axis(s));
    require(seen.insert(axes.back().key).second, "--sweep " + s + ": '" + axes.back().key + "' is set or swept twice");
  }
  const auto [shard, shards] = parse_shard(o.shard);
  size_t total = 1;
  for (const Axis& a : axes) total *= a.values.size();
  // Every point's hardware file through the one loader, before anything runs.
  const ModelConfig model = load_model_shapes(o.model);
  std::vector<HwOverride> sets;
  for (const std::string& s : o.sets) sets.push_back(parse_hw_override(s, "--set"));
  std::vector<size_t> points;
  // The figures' columns, from the hand calculation (a simulated point has
  // the same ones, estimate_figures): a shard without points still writes
  // the header its siblings do, so --merge takes it.
  std::string header;
  for (size_t p = 0; p < total; ++p) {
    std::vector<HwOverride> all = sets;
    for (const HwOverride& v : point_overrides(axes, p)) all.push_back(v);
    const HwConfig hw = timing::load_params(load_hw_config(o.hw, all));
    try {
      check_request(model, hw, o.req);
    } catch (const Error& x) {
      throw Error(point_text(axes, p) + ": " + x.what());
    }
    if (p == 0)
      for (const auto& [k, v] : estimate_figures(hand_estimate(model, hw, o.req))) header += (header.empty() ? "" : ",") + k;
    if (int(p % size_t(shards)) == shard - 1) points.push_back(p);
  }

  const int jobs = o.jobs > 0 ? o.jobs : usable_cpus();
  TempDir tmp;
  const auto t0 = std::chrono::steady_clock::now();
  std::map<pid_t, size_t> running;  // pid -> point
  std::map<size_t, std::string> rows;
  std::string failure;
  size_t next = 0, done = 0;
  const bool tty = isatty(2);
  auto file = [&](size_t p, const char* ext) { return tmp.path + "/" + std::to_string(p) + ext; };
  while (done < points.size()) {
    while (failure.empty() && next < points.size() && int(running.size()) < jobs) {
      running[spawn_point(o, point_overrides(axes, points[next]), file(points[next], ".csv"),
                          file(points[next], ".err"))] = points[next];
      ++next;
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 || !running.count(pid)) continue;
    const size_t p = running[pid];
    running.erase(pid);
    ++done;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      if (failure.empty()) failure = point_text(axes, p) + ": " + worker_message(read_file_text(file(p, ".err")));
      continue;
    }
    const std::vector<std::string> lines = split(read_file_text(file(p, ".csv")), '\n');
    require(lines.size() >= 2, "--sweep point " + std::to_string(p) + ": the worker wrote no CSV row");
    require(lines[0] == header, "--sweep point " + std::to_string(p) + ": the worker's columns differ");
    std::string row = std::to_string(p);
    for (const HwOverride& v : point_overrides(axes, p)) row += "," + v.value;
    rows[p] = row + "," + lines[1];
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // A terminal gets one line redrawn per point; a log (batch jobs) a line per tenth.
    if (tty) std::fprintf(stderr, "\rsweep: %zu/%zu points, %.1f s", done, points.size(), s);
    else if (done * 10 / points.size() != (done - 1) * 10 / points.size() && done < points.size())
      std::fprintf(stderr, "sweep: %zu/%zu points, %.1f s\n", done, points.size(), s);
  }
  if (tty) std::fprintf(stderr, "\n");
  require(failure.empty(), failure);
  std::string csv = "point";
  for (const Axis& a : axes) csv += "," + a.key;
  csv += "," + header + "\n";
  for (const auto& [p, row] : rows) csv += row + "\n";
  const std::string answer = o.answer ? o.answer(csv) : "";
  write_csv(csv, o.csv);
  std::fprintf(stderr, "sweep: %zu points (shard %d/%d of %zu) in %.1f s on %d workers\n", points.size(), shard, shards,
               total, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), jobs);
  const bool plotted = o.plot.empty() || plot_csv(o.csv, o.plot);
  std::fwrite(answer.data(), 1, answer.size(), stdout);
  // Exit 1, not 2: the input was good and the CSV (maybe hours of sweep) is
  // kept, but a script must see that the plots it asked for are missing.
  return plotted ? 0 : 1;
}

bool plot_csv(const std::string& csv, const std::string& dir) {
  std::string script = "tools/plot_estimate.py";
  if (!file_exists(script)) script = std::string(N3_SOURCE_DIR) + "/" + script;
  std::vector<std::string> args = {"python3", script, csv, dir};
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  // The script's list of written files goes to stderr: stdout is the CSV's when --csv is not given.
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);
  pid_t pid = 0;
  int status = 0;
  const int rc = posix_spawnp(&pid, "python3", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == 0 && waitpid(pid, &status, 0) >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  // The script has said why in one line (or python3 could not be started).
  std::fprintf(stderr, "n3 estimate: plots not written into %s (python3 %s %s); the CSV %s stands\n", dir.c_str(),
               script.c_str(), rc != 0 ? "could not be started" : "failed", csv.c_str());
  return false;
}

int merge_csvs(const std::vector<std::string>& files, const std::string& csv,
               const std::function<std::string(const std::string&)>& answer, const std::string& plot) {
  std::string header;
  struct Row {
    std::string text;
    size_t arg;  // index in files
  };
  std::map<size_t, Row> rows;
  for (size_t arg = 0; arg < files.size(); ++arg) {
    const std::string& f = files[arg];
    require(file_exists(f), "--merge " + f + ": no such file");
    const std::string text = read_file_text(f);
    const std::vector<std::string> lines = split(text, '\n');
    require(!lines.empty() && lines[0].rfind("point,", 0) == 0, "--merge " + f + ": not a sweep CSV");
    if (header.empty()) header = lines[0];
    require(lines[0] == header, "--merge " + f + ": its columns differ from " + files[0] + "'s");
    // A sweep writes every row whole, newline included: a file cut short (a
    // copy interrupted, a disk full) ends mid-row, and its last row would
    // merge as a short row with its point's figures lost.
    require(text.back() == '\n', "--merge " + f + ":" + std::to_string(lines.size() - (lines.back().empty() ? 1 : 0)) +
                                      ": the file is cut short (its last line has no newline)");
    const size_t fields = size_t(std::count(header.begin(), header.end(), ',')) + 1;
    for (size_t i = 1; i < lines.size(); ++i) {
      if (lines[i].empty()) continue;
      const std::string at = "--merge " + f + ":" + std::to_string(i + 1) + ": ";
      const size_t n = size_t(std::count(lines[i].begin(), lines[i].end(), ',')) + 1;
      require(n == fields, at + "the row has " + std::to_string(n) + " fields, the header " + std::to_string(fields));
      size_t used = 0;
      unsigned long p = 0;
      try {
        p = std::stoul(lines[i], &used);
      } catch (...) {
        used = 0;
      }
      require(used > 0 && lines[i][used] == ',' && std::isdigit(static_cast<unsigned char>(lines[i][0])),
              at + "no point index");
      const auto [it, fresh] = rows.emplace(p, Row{lines[i], arg});
      // (By argument, not name: a file given twice on the command line is two files.)
      require(fresh, at + "point " + std::to_string(p) +
                         (it->second.arg == arg ? " is given twice in this file"
                                                : " is also in " + files[it->second.arg] + " (in two files)"));
    }
  }
  // The CSV does not record the sweep's point count, so a shard that lost
  // only its last rows cannot be told here; every gap below the largest
  // index can, and is named.
  size_t expect = 0;
  for (const auto& [p, row] : rows) {
    require(p == expect, "--merge: point " + std::to_string(expect) + " is missing (a shard left out or cut short?)");
    ++expect;
  }
  std::string out = header + "\n";
  for (const auto& [p, row] : rows) out += row.text + "\n";
  const std::string text = answer ? answer(out) : "";
  write_csv(out, csv);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return plot.empty() || plot_csv(csv, plot) ? 0 : 1;
}

}  // namespace n3::cli
