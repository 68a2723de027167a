#include "tests/test_util.h"

#include "base/error.h"
#include "base/file_util.h"
#include "base/npy.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <vector>

namespace n3::test {

namespace fs = std::filesystem;

std::string source_dir() { return N3_SOURCE_DIR; }
std::string fixture(const std::string& rel) { return source_dir() + "/tests/fixtures/" + rel; }
std::string n3_binary() { return N3_BINARY; }

namespace {
// Every directory handed out is removed when the test binary exits.
struct TempDirs {
  std::vector<fs::path> dirs;
  ~TempDirs() {
    std::error_code ec;
    for (const auto& d : dirs) fs::remove_all(d, ec);
  }
};
TempDirs& temp_dirs() {
  static TempDirs t;
  return t;
}
}  // namespace

std::string temp_dir(const std::string& tag) {
  // Thread-safe: tests run n3 from several threads at once (Hardening.*).
  static std::mutex mu;
  static int counter = 0;
  std::lock_guard<std::mutex> lock(mu);
  fs::path p = fs::temp_directory_path() /
               ("n3test-" + std::to_string(::getpid()) + "-" + tag + "-" + std::to_string(counter++));
  fs::remove_all(p);
  fs::create_directories(p);
  temp_dirs().dirs.push_back(p);
  return p.string();
}

std::vector<std::string> sim_backends() {
#ifdef N3_HAVE_SYSTEMC
  return {"func", "systemc"};
#else
  return {"func"};
#endif
}

void expect_sims_match(const std::string& args, const std::string& dir, const std::string& ref) {
  for (const std::string& b : sim_backends()) {
    const RunResult r = run_n3("sim --backend " + b + " " + args + " --dump " + dir + "/" + b);
    ASSERT_EQ(r.status, 0) << b << ": " << r.err;
    const RunResult d = run_n3("diff " + dir + "/" + b + " " + ref + " --quiet");
    EXPECT_EQ(d.status, 0) << b << ": " << d.out << d.err;
  }
}

const std::string& tiny_n3w() {
  static const std::string path = [] {
    const std::string p = temp_dir("tiny_n3w") + "/tiny.n3w";
    const RunResult r = run_n3("synth -q --model " + source_dir() + "/configs/models/tiny.yaml --seed 1 -o " + p);
    if (r.status != 0) throw Error("n3 synth failed: " + r.err);
    return p;
  }();
  return path;
}

std::string tiny_run_io(const std::string& dir, int prompt, int steps) {
  std::vector<int32_t> ids, feed;
  for (int i = 0; i < prompt; ++i) ids.push_back((i * 37 + 5) % 256);
  for (int i = 0; i < steps; ++i) feed.push_back((i * 7 + 3) % 256);
  write_npy_i32(dir + "/ids.npy", ids);
  write_npy_i32(dir + "/feed.npy", feed);
  return " --model " + tiny_n3w() + " --ids " + dir + "/ids.npy --feed " + dir + "/feed.npy --dump-all --force";
}

std::string hw_variant(const std::string& tag, const std::vector<std::pair<std::string, std::string>>& values) {
  std::string s = read_file_text(source_dir() + "/configs/hw/kv260.yaml");
  for (const auto& [key, val] : values) {
    const std::string section = key.substr(0, key.find('.')) + ":\n", name = key.substr(key.find('.') + 1);
    const size_t sec = s.find("\n" + section);
    const size_t p = s.find("\n  " + name + ": {value: ", sec);
    if (sec == std::string::npos || p == std::string::npos) throw Error("hw_variant: no " + key + " in kv260.yaml");
    const size_t b = s.find("value: ", p) + 7, e = s.find(',', b);
    s.replace(b, e - b, val);
  }
  const std::string path = temp_dir(tag) + "/hw.yaml";
  write_file_atomic(path, s);
  return path;
}

std::string hw_without_prefetch(const std::string& tag) {
  return " --hw " + hw_variant(tag, {{"timing.wbuf_prefetch_tiles", "0"}});
}

RunResult run_n3(const std::string& args) {
  std::string base = temp_dir("run");
  std::string out = base + "/out", err = base + "/err";
  std::string cmd = n3_binary() + " " + args + " >" + out + " 2>" + err;
  int rc = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::ifstream fo(out), fe(err);
  std::stringstream so, se;
  so << fo.rdbuf();
  se << fe.rdbuf();
  r.out = so.str();
  r.err = se.str();
  fs::remove_all(base);
  return r;
}

double max_abs_err(const Tensor& a, const Tensor& b) {
  if (a.data.size() != b.data.size()) return std::numeric_limits<double>::infinity();
  double m = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    double d = std::fabs(double(a.data[i]) - double(b.data[i]));
    if (std::isnan(d)) return std::numeric_limits<double>::infinity();
    m = std::max(m, d);
  }
  return m;
}

double rel_max_err(const Tensor& a, const Tensor& b) {
  double mb = 0;
  for (float v : b.data) mb = std::max(mb, double(std::fabs(v)));
  return max_abs_err(a, b) / (mb > 0 ? mb : 1.0);
}

double cosine(const Tensor& a, const Tensor& b) {
  if (a.data.size() != b.data.size()) return -2;
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    ab += double(a.data[i]) * b.data[i];
    aa += double(a.data[i]) * a.data[i];
    bb += double(b.data[i]) * b.data[i];
  }
  if (aa == 0 && bb == 0) return 1.0;
  return ab / std::sqrt(aa * bb);
}

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) {
  if (value.empty()) return;
  if (const char* old = std::getenv(name)) old_ = old;
  ::setenv(name, value.c_str(), 1);
  set_ = true;
}

ScopedEnv::~ScopedEnv() {
  if (!set_) return;
  if (old_)
    ::setenv(name_, old_->c_str(), 1);
  else
    ::unsetenv(name_);
}

}  // namespace n3::test
