// n3 diff: the library (golden/diff.h) on dumps written by DumpCollector, and
// the command line's exit statuses and report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <sstream>

#include "golden/diff.h"
#include "golden/dump.h"
#include "base/error.h"
#include "base/file_util.h"
#include "base/npy.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

struct Spec {
  int layers = 2, tokens = 3, hidden = 8, vocab = 16;
  int feed = 0;         // decode steps
  bool extra = false;   // also dump optional ops (embed, attn.q)
};

// Deterministic values: an integer hash scaled to [-4, 4), never zero.
float value(int tensor, int64_t i) {
  uint32_t h = static_cast<uint32_t>(tensor) * 2654435761u ^ static_cast<uint32_t>(i) * 40503u;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return (static_cast<int>(h % 2048) - 1024) / 256.0f + 1.0f / 512;
}

std::vector<float> fill(int tensor, const Shape& s) {
  std::vector<float> v(static_cast<size_t>(numel(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = value(tensor, static_cast<int64_t>(i));
  return v;
}

// Records one prefill pass (all tokens at once) and `feed` single-token decode
// steps, the way a backend would, and writes the dump.
std::string make_dump(const Spec& s, const std::string& tag) {
  DumpCollector c(s.extra);
  c.set_meta("backend", "test");
  auto pass = [&](Phase ph, int T, int salt) {
    const Shape td{T, s.hidden}, streams{4, T, s.hidden}, q{T, 2, 4}, logits{T, s.vocab};
    c.record(ph, Op::Embed, -1, td, fill(salt, td).data(), "float32");
    for (int l = 0; l < s.layers; ++l) {
      c.record(ph, Op::AttnQ, l, q, fill(salt + 10 + l, q).data(), "bfloat16");
      c.record(ph, Op::LayerOut, l, streams, fill(salt + 100 + l, streams).data(), "float32");
    }
    c.record(ph, Op::Logits, -1, logits, fill(salt + 1, logits).data(), "float32");
  };
  pass(Phase::Prefill, s.tokens, 0);
  for (int f = 0; f < s.feed; ++f) pass(Phase::Decode, 1, 1000 * (f + 1));
  const std::string dir = test::temp_dir(tag);
  prepare_output_dir(dir, false);
  c.write(dir);
  return dir;
}

// A copy of dump `src` to edit.
std::string copy_dump(const std::string& src, const std::string& tag) {
  const std::string dir = test::temp_dir(tag);
  std::filesystem::copy(src, dir, std::filesystem::copy_options::recursive);
  return dir;
}

void edit_tensor(const std::string& dir, const std::string& name,
                 const std::function<void(Tensor&)>& f) {
  const std::string path = dir + "/" + name + ".npy";
  Tensor t = read_npy_f32(path);
  f(t);
  write_npy(path, t);
}

void edit_manifest(const std::string& dir, const std::function<void(nlohmann::json&)>& f) {
  nlohmann::json j = nlohmann::json::parse(read_file_text(dir + "/manifest.json"));
  f(j);
  write_file_atomic(dir + "/manifest.json", j.dump(1));
}

void drop_tensor(const std::string& dir, const std::string& name) {
  edit_manifest(dir, [&](nlohmann::json& j) {
    auto& ts = j["tensors"];
    for (auto it = ts.begin(); it != ts.end(); ++it)
      if ((*it)["name"] == name) {
        ts.erase(it);
        return;
      }
    FAIL() << name << " not in manifest";
  });
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Expects diff_dumps to refuse the pair with an n3::Error mentioning `needle`.
void expect_bad_input(const std::string& cand, const std::string& ref, const std::string& needle) {
  try {
    diff_dumps(cand, ref);
    ADD_FAILURE() << "diff_dumps accepted bad input (expected an error mentioning " << needle << ")";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

// Shared fixture dumps: a reference and a bit-identical candidate, each with
// decode steps so both phases are covered.
class DiffLib : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Spec s;
    s.feed = 2;
    ref_ = new std::string(make_dump(s, "ref"));
    cand_ = new std::string(make_dump(s, "cand"));
  }
  static void TearDownTestSuite() {
    delete ref_;
    delete cand_;
  }
  static std::string* ref_;
  static std::string* cand_;
};
std::string* DiffLib::ref_ = nullptr;
std::string* DiffLib::cand_ = nullptr;

TEST(DiffUlp, CountsRepresentableStepsAcrossZero) {
  const float denorm = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1u);
  EXPECT_EQ(ulp_distance(std::nextafter(1.0f, 2.0f), 1.0f), 1u);
  EXPECT_EQ(ulp_distance(-denorm, denorm), 2u);
  EXPECT_EQ(ulp_distance(-0.0f, 0.0f), 0u);  // as numpy.testing.nulp_diff counts
  EXPECT_EQ(ulp_distance(-1.0f, 1.0f), 2u * 0x3f800000u);
  EXPECT_EQ(ulp_distance(-std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::infinity()),
            2u * 0x7f800000u);
}

TEST(DiffUlp, UnravelsRowMajor) {
  EXPECT_EQ(unravel_index(0, {4, 3, 8}), (Shape{0, 0, 0}));
  EXPECT_EQ(unravel_index(8 * 3 + 2 * 8 + 5, {4, 3, 8}), (Shape{1, 2, 5}));
  EXPECT_EQ(unravel_index(95, {4, 3, 8}), (Shape{3, 2, 7}));
}

TEST_F(DiffLib, IdenticalDumpsMatchBitForBit) {
  DiffResult r = diff_dumps(*cand_, *ref_);
  EXPECT_TRUE(r.ok());
  // logits, layers.0..1, and the same in decode, in the reference's order.
  ASSERT_EQ(r.tensors.size(), 6u);
  const char* order[] = {"layers.0", "layers.1", "logits",
                         "decode_layers.0", "decode_layers.1", "decode_logits"};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(r.tensors[i].name, order[i]);
    EXPECT_EQ(r.tensors[i].status, DiffStatus::Identical) << r.tensors[i].name;
    EXPECT_EQ(r.tensors[i].max_ulp, 0u);
    EXPECT_EQ(r.tensors[i].max_abs_err, 0.0);
    EXPECT_DOUBLE_EQ(r.tensors[i].cosine, 1.0);
    EXPECT_FALSE(r.tensors[i].worst.has_value());
  }
  EXPECT_EQ(r.tensors[3].shape, (Shape{4, 2, 8}));  // decode steps concatenated
  EXPECT_EQ(r.count(DiffStatus::Identical), 6);
  EXPECT_TRUE(r.reference_only.empty());
}

TEST_F(DiffLib, OneUlpChangeIsNamedFirstInCanonicalOrder) {
  const std::string c = copy_dump(*cand_, "ulp");
  const int64_t flat = 4 * 3 * 8 - 3;  // stream 3, token 2, column 5 of [4, 3, 8]
  float before = 0, after = 0;
  edit_tensor(c, "layers.1", [&](Tensor& t) {
    before = t.data[flat];
    after = t.data[flat] = std::nextafter(before, std::numeric_limits<float>::infinity());
  });
  // A larger change later in canonical order must not be the one named.
  edit_tensor(c, "logits", [](Tensor& t) { t.data[0] += 1.0f; });
  DiffResult r = diff_dumps(c, *ref_);
  ASSERT_FALSE(r.ok());
  const TensorDiff& t = r.tensors[r.first_differing];
  EXPECT_EQ(t.name, "layers.1");
  EXPECT_EQ(t.status, DiffStatus::Differs);
  EXPECT_EQ(t.mismatched, 1);
  EXPECT_EQ(t.max_ulp, 1u);
  ASSERT_TRUE(t.worst.has_value());
  EXPECT_EQ(t.worst->flat, flat);
  EXPECT_EQ(t.worst->index, (Shape{3, 2, 5}));
  EXPECT_EQ(t.worst->ulp, 1u);
  EXPECT_EQ(t.worst->candidate, after);
  EXPECT_EQ(t.worst->reference, before);
  EXPECT_EQ(t.worst->abs_err, std::fabs(double(after) - double(before)));
  EXPECT_EQ(t.worst->rel_err, t.worst->abs_err / std::fabs(double(before)));
  EXPECT_EQ(r.count(DiffStatus::Differs), 2);
  EXPECT_EQ(r.tensors[0].status, DiffStatus::Identical);
}

TEST_F(DiffLib, ToleranceAcceptsOneUlpButNotTwoUlpAtTightRel) {
  const std::string c = copy_dump(*cand_, "tol");
  edit_tensor(c, "decode_layers.0", [](Tensor& t) {
    t.data[5] = std::nextafter(t.data[5], std::numeric_limits<float>::infinity());
  });
  DiffOptions loose;
  loose.tol = DiffTolerance{0, 1.2e-7};  // one ulp relative is at most 2^-23 = 1.19e-7
  DiffResult r = diff_dumps(c, *ref_, loose);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.tensors[3].status, DiffStatus::WithinTol);
  EXPECT_EQ(r.tensors[3].mismatched, 0);
  EXPECT_EQ(r.tensors[3].max_ulp, 1u);
  EXPECT_EQ(r.count(DiffStatus::WithinTol), 1);

  DiffOptions tight;
  tight.tol = DiffTolerance{0, 1e-9};
  DiffResult r2 = diff_dumps(c, *ref_, tight);
  EXPECT_FALSE(r2.ok());
  EXPECT_EQ(r2.tensors[r2.first_differing].name, "decode_layers.0");
}

TEST_F(DiffLib, WorstElementIsTheLargestError) {
  const std::string c = copy_dump(*cand_, "worst");
  edit_tensor(c, "layers.0", [](Tensor& t) {
    t.data[3] += 0.25f;
    t.data[40] += 2.0f;
    t.data[70] -= 0.5f;
  });
  DiffResult r = diff_dumps(c, *ref_);
  ASSERT_FALSE(r.ok());
  const TensorDiff& t = r.tensors[0];
  EXPECT_EQ(t.mismatched, 3);
  ASSERT_TRUE(t.worst.has_value());
  EXPECT_EQ(t.worst->flat, 40);
  EXPECT_NEAR(t.max_abs_err, 2.0, 1e-5);
  EXPECT_EQ(t.worst->abs_err, t.max_abs_err);
}

TEST_F(DiffLib, NanMatchesOnlyTheSameBits) {
  const std::string r = copy_dump(*ref_, "nanref");
  const std::string same = copy_dump(*cand_, "nansame");
  const std::string other = copy_dump(*cand_, "nanother");
  edit_tensor(r, "logits", [](Tensor& t) { t.data[7] = from_bits(0x7fc00000); });
  edit_tensor(same, "logits", [](Tensor& t) { t.data[7] = from_bits(0x7fc00000); });
  edit_tensor(other, "logits", [](Tensor& t) { t.data[7] = from_bits(0x7fc00001); });

  DiffResult ok = diff_dumps(same, r);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.tensors[2].status, DiffStatus::Identical);

  DiffOptions huge;
  huge.tol = DiffTolerance{1e30, 1e30};
  DiffResult bad = diff_dumps(other, r, huge);
  ASSERT_FALSE(bad.ok());
  const TensorDiff& t = bad.tensors[bad.first_differing];
  EXPECT_EQ(t.name, "logits");
  ASSERT_TRUE(t.worst.has_value());
  EXPECT_EQ(t.worst->flat, 7);
  EXPECT_EQ(t.worst->candidate_bits, 0x7fc00001u);
  EXPECT_EQ(t.worst->reference_bits, 0x7fc00000u);
  EXPECT_TRUE(std::isinf(t.worst->abs_err));
  EXPECT_TRUE(std::isinf(t.max_rel_err));
}

TEST_F(DiffLib, InfMatchesOnlyTheSameInf) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::string r = copy_dump(*ref_, "infref");
  const std::string neg = copy_dump(*cand_, "infneg");
  const std::string big = copy_dump(*cand_, "infbig");
  const std::string same = copy_dump(*cand_, "infsame");
  edit_tensor(r, "layers.1", [&](Tensor& t) { t.data[9] = inf; });
  edit_tensor(neg, "layers.1", [&](Tensor& t) { t.data[9] = -inf; });
  edit_tensor(big, "layers.1", [&](Tensor& t) { t.data[9] = std::numeric_limits<float>::max(); });
  edit_tensor(same, "layers.1", [&](Tensor& t) { t.data[9] = inf; });
  DiffOptions huge;
  huge.tol = DiffTolerance{1e30, 1e30};  // abs + rel*|inf| is inf: must not excuse an Inf
  EXPECT_TRUE(diff_dumps(same, r, huge).ok());
  EXPECT_TRUE(diff_dumps(same, r).ok());
  EXPECT_FALSE(diff_dumps(neg, r, huge).ok());
  EXPECT_FALSE(diff_dumps(big, r, huge).ok());
}

TEST_F(DiffLib, SignedZerosDifferInBitsButNotInValue) {
  const std::string r = copy_dump(*ref_, "zref");
  const std::string c = copy_dump(*cand_, "zcand");
  edit_tensor(r, "layers.0", [](Tensor& t) { t.data[1] = 0.0f; });
  edit_tensor(c, "layers.0", [](Tensor& t) { t.data[1] = -0.0f; });
  DiffResult exact = diff_dumps(c, r);
  ASSERT_FALSE(exact.ok());
  EXPECT_EQ(exact.tensors[0].worst->ulp, 0u);
  EXPECT_EQ(exact.tensors[0].worst->abs_err, 0.0);
  DiffOptions zero;
  zero.tol = DiffTolerance{0, 0};
  DiffResult tol = diff_dumps(c, r, zero);
  EXPECT_TRUE(tol.ok());
  EXPECT_EQ(tol.tensors[0].status, DiffStatus::WithinTol);
}

TEST_F(DiffLib, MissingAlwaysPresentTensorIsBadInput) {
  const std::string c = copy_dump(*cand_, "nolayer");
  drop_tensor(c, "layers.1");
  expect_bad_input(c, *ref_, "layers.1");
  const std::string d = copy_dump(*cand_, "nodecode");
  drop_tensor(d, "decode_logits");
  expect_bad_input(d, *ref_, "decode_logits");
}

TEST_F(DiffLib, ShapeMismatchIsBadInput) {
  Spec s;
  s.feed = 2;
  s.tokens = 4;
  const std::string c = make_dump(s, "t4");
  expect_bad_input(c, *ref_, "shape");
}

TEST_F(DiffLib, NpyShapeDisagreeingWithManifestIsBadInput) {
  const std::string c = copy_dump(*cand_, "npyshape");
  Tensor t({3, 4, 8}, fill(0, {3, 4, 8}));  // same element count as [4, 3, 8]
  write_npy(c + "/layers.0.npy", t);
  expect_bad_input(c, *ref_, "layers.0.npy");
}

TEST_F(DiffLib, CandidateTensorMissingFromReferenceIsBadInput) {
  Spec s;
  s.feed = 2;
  s.extra = true;
  const std::string c = make_dump(s, "extra");
  expect_bad_input(c, *ref_, "embed");
}

TEST_F(DiffLib, ReferenceOnlyTensorsAreSkipped) {
  Spec s;
  s.feed = 2;
  s.extra = true;
  const std::string r = make_dump(s, "extraref");
  DiffResult res = diff_dumps(*cand_, r);
  EXPECT_TRUE(res.ok());
  EXPECT_EQ(res.tensors.size(), 6u);
  // embed, layers.{0,1}.attn.q per phase
  ASSERT_EQ(res.reference_only.size(), 6u);
  EXPECT_EQ(res.reference_only[0], "embed");
  EXPECT_EQ(res.reference_only[1], "layers.0.attn.q");
}

TEST_F(DiffLib, MalformedOrMissingManifestIsBadInput) {
  const std::string c = copy_dump(*cand_, "badjson");
  write_file_atomic(c + "/manifest.json", "{\"format\": \"n3-dump\", \"tensors\": [");
  expect_bad_input(c, *ref_, "manifest.json");
  const std::string v = copy_dump(*cand_, "badversion");
  edit_manifest(v, [](nlohmann::json& j) { j["version"] = 7; });
  expect_bad_input(v, *ref_, "version");
  const std::string s = copy_dump(*cand_, "badshape");
  edit_manifest(s, [](nlohmann::json& j) { j["tensors"][0]["shape"] = "four"; });
  expect_bad_input(s, *ref_, "malformed");
  const std::string dup = copy_dump(*cand_, "dup");
  edit_manifest(dup, [](nlohmann::json& j) { j["tensors"].push_back(j["tensors"][0]); });
  expect_bad_input(dup, *ref_, "twice");
  const std::string none = test::temp_dir("nomanifest");
  expect_bad_input(none, *ref_, "manifest.json");
  expect_bad_input(*cand_, none + "/absent", "absent");
}

TEST_F(DiffLib, IncompleteReferenceIsBadInput) {
  const std::string r = copy_dump(*ref_, "refgap");
  drop_tensor(r, "layers.0");
  const std::string c = copy_dump(*cand_, "candgap");
  drop_tensor(c, "layers.0");
  expect_bad_input(c, r, "layers");
}

TEST_F(DiffLib, TruncatedNpyIsBadInput) {
  const std::string c = copy_dump(*cand_, "trunc");
  const std::string path = c + "/decode_logits.npy";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  expect_bad_input(c, *ref_, "truncated");
  const std::string m = copy_dump(*cand_, "nonpy");
  std::filesystem::remove(m + "/logits.npy");
  expect_bad_input(m, *ref_, "logits.npy");
}

TEST(DiffTensor, ComparesInMemoryAndRefusesShapeMismatch) {
  Tensor a({2, 3}, {1, 2, 3, 4, 5, 6}), b({2, 3}, {1, 2, 3, 4, 5, 6.5f});
  TensorDiff d = diff_tensor("t", a, b);
  EXPECT_EQ(d.status, DiffStatus::Differs);
  EXPECT_EQ(d.worst->index, (Shape{1, 2}));
  EXPECT_DOUBLE_EQ(d.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(d.max_rel_err, 0.5 / 6.5);
  DiffOptions o;
  o.tol = DiffTolerance{0.5, 0};
  EXPECT_EQ(diff_tensor("t", a, b, o).status, DiffStatus::WithinTol);
  EXPECT_THROW(diff_tensor("t", Tensor({3, 2}, a.data), b), Error);
}

// --- the command line ---

class DiffCli : public DiffLib {};

TEST_F(DiffCli, IdenticalDumpsExitZeroWithOneLinePerTensor) {
  test::RunResult r = test::run_n3("diff " + *cand_ + " " + *ref_);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> ls = lines(r.out);
  ASSERT_EQ(ls.size(), 7u) << r.out;
  const char* order[] = {"layers.0", "layers.1", "logits",
                         "decode_layers.0", "decode_layers.1", "decode_logits"};
  for (int i = 0; i < 6; ++i) {
    std::istringstream f(ls[i]);
    std::string name, shape, status;
    f >> name >> shape >> status;
    EXPECT_EQ(name, order[i]);
    EXPECT_EQ(status, "identical");
    EXPECT_NE(ls[i].find("max_ulp=0"), std::string::npos) << ls[i];
  }
  EXPECT_EQ(ls[0].substr(0, 24), "layers.0        [4,3,8] ");
  EXPECT_EQ(ls[6].rfind("summary: OK compared=6 identical=6 within-tol=0 differs=0", 0), 0u)
      << ls[6];
}

TEST_F(DiffCli, OneUlpChangeExitsOneNamingTensorElementAndUlp) {
  const std::string c = copy_dump(*cand_, "cliulp");
  edit_tensor(c, "layers.1", [](Tensor& t) {
    t.data[10] = std::nextafter(t.data[10], -std::numeric_limits<float>::infinity());
  });
  test::RunResult r = test::run_n3("diff " + c + " " + *ref_);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("layers.1 "), std::string::npos);
  EXPECT_NE(r.out.find("first divergence: layers.1 [4,3,8] at [0,1,2] (flat 10): "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" ulp=1;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DIFFERS"), std::string::npos);
  EXPECT_NE(r.out.find("first=layers.1\n"), std::string::npos) << r.out;

  test::RunResult again = test::run_n3("diff " + c + " " + *ref_);
  EXPECT_EQ(again.out, r.out);  // deterministic, byte for byte

  test::RunResult q = test::run_n3("diff --quiet " + c + " " + *ref_);
  EXPECT_EQ(q.status, 1);
  std::vector<std::string> ls = lines(q.out);
  ASSERT_EQ(ls.size(), 2u) << q.out;
  EXPECT_EQ(ls[0].rfind("first divergence: layers.1", 0), 0u);
  EXPECT_EQ(ls[1].rfind("summary: DIFFERS", 0), 0u);

  test::RunResult t = test::run_n3("diff " + c + " " + *ref_ + " --tol 0,1.2e-7");
  EXPECT_EQ(t.status, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("within-tol"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("tol=abs=0,rel=1.2e-07"), std::string::npos) << t.out;
}

TEST_F(DiffCli, QuietIdenticalPrintsOnlyTheSummary) {
  test::RunResult r = test::run_n3("diff -q " + *cand_ + " " + *ref_);
  EXPECT_EQ(r.status, 0);
  std::vector<std::string> ls = lines(r.out);
  ASSERT_EQ(ls.size(), 1u) << r.out;
  EXPECT_EQ(ls[0].rfind("summary: OK", 0), 0u);
}

// Issue 22 review: a manifest calling a float32 .npy float64 still diffed
// (exit 0); "tensors": {"a": 1} ended in nlohmann's "cannot use at() with
// number"; a shape of 2^63 was "must be an integer". Each is now one line
// naming the manifest (and the .npy, for the dtype), exit 2, no stdout.
TEST_F(DiffCli, ManifestDtypeAndEntryKindsAreRefusedInOneLine) {
  auto edited = [&](const char* tag, const std::function<void(nlohmann::json&)>& f) {
    const std::string d = copy_dump(*cand_, tag);
    edit_manifest(d, f);
    return d;
  };
  auto set_dtype = [](nlohmann::json& j) {
    for (auto& t : j["tensors"])
      if (t["name"] == "layers.0") t["dtype"] = "float64";
  };
  const std::string f64 = edited("clif64", set_dtype);
  const std::string obj = edited("cliobj", [](nlohmann::json& j) { j["tensors"] = {{"a", 1}}; });
  const std::string num = edited("clinum", [](nlohmann::json& j) { j["tensors"][0] = 1; });
  const std::string big = edited("clibig", [](nlohmann::json& j) { j["tensors"][0]["shape"][0] = 9223372036854775808ull; });
  const std::pair<std::string, std::string> cases[] = {
      {f64 + " " + *ref_,
       f64 + "/manifest.json: tensor layers.0 has dtype 'float64', but " + f64 + "/layers.0.npy holds float32 (npy descr f4)"},
      {*cand_ + " " + f64, f64 + "/manifest.json: tensor layers.0 has dtype 'float64'"},  // the reference side too
      {obj + " " + *ref_, obj + "/manifest.json: malformed manifest: 'tensors' must be a list of objects (is object)"},
      {num + " " + *ref_, num + "/manifest.json: malformed manifest: tensor #0 is not an object (is 1)"},
      {big + " " + *ref_, big + "/manifest.json: malformed manifest: tensor layers.0: shape is out of range (is 9223372036854775808; at most 2^63 - 1)"},
  };
  for (const auto& [args, needle] : cases) {
    test::RunResult r = test::run_n3("diff " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    std::vector<std::string> ls = lines(r.err);
    ASSERT_EQ(ls.size(), 1u) << args << ": " << r.err;
    EXPECT_NE(ls[0].find(needle), std::string::npos) << ls[0];
  }
}

TEST_F(DiffCli, BadInputExitsTwoWithOneLineOnStderr) {
  const std::string nolayer = copy_dump(*cand_, "clinolayer");
  drop_tensor(nolayer, "layers.0");
  const std::string badjson = copy_dump(*cand_, "clibadjson");
  write_file_atomic(badjson + "/manifest.json", "{{");
  const std::string trunc = copy_dump(*cand_, "clitrunc");
  std::filesystem::resize_file(trunc + "/logits.npy", 20);
  Spec s;
  s.feed = 2;
  s.hidden = 16;
  const std::string wide = make_dump(s, "cliwide");
  const std::string& ref = *ref_;
  const std::pair<std::string, std::string> cases[] = {
      {nolayer + " " + ref, "layers.0"},
      {badjson + " " + ref, "manifest.json"},
      {trunc + " " + ref, "logits.npy"},
      {wide + " " + ref, "shape"},
      {ref + " " + ref + "/missing", "missing"},
      {ref + " " + ref + " --tol 1e-3", "--tol"},
      {ref + " " + ref + " --tol=-1,0", "--tol"},
      {ref, "two dump directories"},
  };
  for (const auto& [args, needle] : cases) {
    test::RunResult r = test::run_n3("diff " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    std::vector<std::string> ls = lines(r.err);
    ASSERT_EQ(ls.size(), 1u) << args << ": " << r.err;
    EXPECT_EQ(ls[0].rfind("n3 diff: error: ", 0), 0u) << ls[0];
    EXPECT_NE(ls[0].find(needle), std::string::npos) << ls[0];
  }
}

}  // namespace
}  // namespace n3
