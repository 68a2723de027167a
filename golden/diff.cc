#include "golden/diff.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "golden/dump.h"
#include "golden/dump_ops.h"
#include "base/error.h"
#include "base/file_util.h"
#include "base/npy.h"

namespace n3 {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Float bits as an integer ordered like the floats: non-negative floats keep
// their bits, negative ones map to INT32_MIN - bits (sign-magnitude to two's
// complement), so -0 and +0 both map to 0 and neighbours differ by 1.
int64_t ordered_bits(uint32_t u) {
  const int32_t i = static_cast<int32_t>(u);
  return i < 0 ? int64_t{std::numeric_limits<int32_t>::min()} - i : i;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// What decides the worst element: see TensorDiff::worst.
struct Rank {
  bool fails;
  double share, abs_err;
  uint64_t ulp;
  bool operator>(const Rank& o) const {
    if (fails != o.fails) return fails;
    if (share != o.share) return share > o.share;
    if (abs_err != o.abs_err) return abs_err > o.abs_err;
    return ulp > o.ulp;
  }
};

// The comparison itself, over `n` float32 values read from raw bytes (the
// .npy bodies, or a Tensor's data), in one sequential pass so every sum is
// taken in the same order on every run.
TensorDiff compare(const std::string& name, const Shape& shape, const uint8_t* cand,
                   const uint8_t* ref, const DiffOptions& opt) {
  TensorDiff d;
  d.name = name;
  d.shape = shape;
  d.elements = numel(shape);
  double ab = 0, aa = 0, bb = 0;
  Rank worst_rank{false, -1, -1, 0};
  int64_t worst_flat = -1;
  double worst_rel = 0;
  for (int64_t i = 0; i < d.elements; ++i) {
    float a, b;
    std::memcpy(&a, cand + 4 * i, 4);
    std::memcpy(&b, ref + 4 * i, 4);
    const bool finite = std::isfinite(a) && std::isfinite(b);
    if (finite) {
      ab += double(a) * double(b);
      aa += double(a) * double(a);
      bb += double(b) * double(b);
    }
    if (bits_of(a) == bits_of(b)) continue;
    ++d.differing_bits;
    double abs_err = kInf, rel_err = kInf;
    if (finite) {
      abs_err = std::fabs(double(a) - double(b));
      const double mb = std::fabs(double(b));
      rel_err = mb > 0 ? abs_err / mb : (abs_err > 0 ? kInf : 0);
    }
    const uint64_t ulp = ulp_distance(a, b);
    Rank r{true, 0, abs_err, ulp};
    if (opt.tol) {
      const double bound = opt.tol->abs + opt.tol->rel * std::fabs(double(b));
      r.fails = !finite || abs_err > bound;
      r.share = !finite ? kInf : abs_err == 0 ? 0 : bound > 0 ? abs_err / bound : kInf;
    }
    if (r.fails) ++d.mismatched;
    d.max_abs_err = std::max(d.max_abs_err, abs_err);
    d.max_rel_err = std::max(d.max_rel_err, rel_err);
    d.max_ulp = std::max(d.max_ulp, ulp);
    if (worst_flat < 0 || r > worst_rank) {
      worst_rank = r;
      worst_flat = i;
      worst_rel = rel_err;
    }
  }
  if (aa == 0 && bb == 0)
    d.cosine = 1;
  else if (aa == 0 || bb == 0)
    d.cosine = 0;
  else
    d.cosine = ab / std::sqrt(aa * bb);

  if (worst_flat >= 0) {
    ElementDiff e;
    e.flat = worst_flat;
    e.index = unravel_index(worst_flat, shape);
    std::memcpy(&e.candidate, cand + 4 * worst_flat, 4);
    std::memcpy(&e.reference, ref + 4 * worst_flat, 4);
    e.candidate_bits = bits_of(e.candidate);
    e.reference_bits = bits_of(e.reference);
    e.abs_err = worst_rank.abs_err;
    e.rel_err = worst_rel;
    e.ulp = worst_rank.ulp;
    d.worst = e;
  }
  d.status = d.differing_bits == 0 ? DiffStatus::Identical
             : d.mismatched == 0  ? DiffStatus::WithinTol
                                  : DiffStatus::Differs;
  return d;
}

// One side of the comparison: its manifest and a name -> entry index.
struct Dump {
  std::string dir, manifest_path;
  Manifest m;
  std::map<std::string, size_t> by_name;
};

Dump open_dump(const std::string& dir, const char* role) {
  Dump d;
  d.dir = dir;
  d.manifest_path = dir + "/manifest.json";
  require(is_directory(dir), std::string(role) + " " + dir + ": not a directory");
  d.m = read_manifest(dir);
  for (size_t i = 0; i < d.m.tensors.size(); ++i) {
    const ManifestEntry& e = d.m.tensors[i];
    require(!e.name.empty() && !e.file.empty(),
            d.manifest_path + ": tensor #" + std::to_string(i) + " has an empty name or file");
    require(e.phase == "prefill" || e.phase == "decode",
            d.manifest_path + ": tensor " + e.name + " has unknown phase '" + e.phase + "'");
    require(d.by_name.emplace(e.name, i).second,
            d.manifest_path + ": tensor " + e.name + " is listed twice");
  }
  return d;
}

bool always_present(const ManifestEntry& e) {
  return e.op == manifest_op(Op::Logits) || e.op == manifest_op(Op::LayerOut);
}

// The reference defines which tensors every candidate must hold, so it must
// itself be a whole dump: prefill logits and layers 0..L-1, and, when it has
// decode tensors, decode_logits and decode_layers 0..L-1 too.
void check_reference_complete(const Dump& r) {
  const std::string& p = r.manifest_path;
  std::map<std::string, std::set<int>> layers;  // phase -> layer_out layers
  std::set<std::string> logits;                 // phases with logits
  for (const ManifestEntry& e : r.m.tensors) {
    if (!always_present(e)) continue;
    const bool decode = e.phase == "decode";
    const bool is_logits = e.op == manifest_op(Op::Logits);
    if (!is_logits)
      require(e.layer >= 0, p + ": tensor " + e.name + " has op layer_out but no layer");
    const std::string want = is_logits ? tensor_name(Op::Logits, -1, decode)
                                       : tensor_name(Op::LayerOut, e.layer, decode);
    require(e.name == want, p + ": tensor " + e.name + " (op " + e.op + ", layer " +
                                std::to_string(e.layer) + ", " + e.phase +
                                ") should be named " + want);
    if (is_logits)
      logits.insert(e.phase);
    else
      layers[e.phase].insert(e.layer);
  }
  require(logits.count("prefill"), p + ": reference has no logits tensor (not a whole dump)");
  const std::set<int>& pre = layers["prefill"];
  require(!pre.empty() && *pre.rbegin() + 1 == static_cast<int>(pre.size()),
          p + ": reference layers.N tensors are not exactly layers 0..L-1 (not a whole dump)");
  const bool has_decode = logits.count("decode") || layers.count("decode");
  if (has_decode) {
    require(logits.count("decode"), p + ": reference has decode_layers but no decode_logits");
    require(layers["decode"] == pre, p + ": reference decode_layers.N do not match its layers.N");
  }
}

// Maps a tensor's .npy and checks it against its manifest entry; the body is
// copied out once (parse_npy) and the map released.
NpyArray load(const Dump& d, const ManifestEntry& e) {
  const std::string path = d.dir + "/" + e.file;
  require(file_exists(path), path + ": missing (tensor " + e.name + " of " + d.manifest_path + ")");
  NpyArray a;
  {
    MappedFile f(path);
    a = parse_npy(f.data(), f.size(), path);
  }
  // The manifest says what the .npy holds; a disagreement (a hand-edited
  // manifest, or a file swapped under it) is a broken dump, not a diff.
  const std::map<std::string, std::string> numpy_name = {
      {"f2", "float16"}, {"f4", "float32"}, {"f8", "float64"}, {"i1", "int8"},  {"i2", "int16"}, {"i4", "int32"},
      {"i8", "int64"},   {"u1", "uint8"},   {"u2", "uint16"},  {"u4", "uint32"}, {"u8", "uint64"}, {"b1", "bool"}};
  const std::string npy_dtype = numpy_name.count(a.dtype) ? numpy_name.at(a.dtype) : a.dtype;
  require(npy_dtype == e.dtype, d.manifest_path + ": tensor " + e.name + " has dtype '" + e.dtype + "', but " + path +
                                    " holds " + npy_dtype + " (npy descr " + a.dtype + ")");
  require(a.dtype == "f4", path + ": expected float32 data, found npy dtype " + a.dtype);
  require(a.shape == e.shape, path + ": npy shape " + shape_str(a.shape) +
                                  " disagrees with the manifest's " + shape_str(e.shape) +
                                  " for tensor " + e.name);
  return a;
}

}  // namespace

const char* diff_status_name(DiffStatus s) {
  switch (s) {
    case DiffStatus::Identical: return "identical";
    case DiffStatus::WithinTol: return "within-tol";
    case DiffStatus::Differs: return "DIFFERS";
  }
  return "?";
}

int DiffResult::count(DiffStatus s) const {
  int n = 0;
  for (const TensorDiff& t : tensors) n += t.status == s;
  return n;
}

uint64_t ulp_distance(float a, float b) {
  const int64_t ia = ordered_bits(bits_of(a)), ib = ordered_bits(bits_of(b));
  return static_cast<uint64_t>(ia > ib ? ia - ib : ib - ia);
}

Shape unravel_index(int64_t flat, const Shape& shape) {
  Shape idx(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] <= 0) continue;
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  return idx;
}

TensorDiff diff_tensor(const std::string& name, const Tensor& candidate, const Tensor& reference,
                       const DiffOptions& opt) {
  require(candidate.shape == reference.shape,
          name + ": candidate shape " + shape_str(candidate.shape) + " differs from reference " +
              shape_str(reference.shape));
  require(candidate.size() == numel(candidate.shape) && reference.size() == numel(reference.shape),
          name + ": tensor data does not match its shape");
  return compare(name, candidate.shape, reinterpret_cast<const uint8_t*>(candidate.ptr()),
                 reinterpret_cast<const uint8_t*>(reference.ptr()), opt);
}

DiffResult diff_dumps(const std::string& candidate, const std::string& reference,
                      const DiffOptions& opt) {
  if (opt.tol)
    require(std::isfinite(opt.tol->abs) && std::isfinite(opt.tol->rel) && opt.tol->abs >= 0 &&
                opt.tol->rel >= 0,
            "tolerance must be finite and non-negative");
  const Dump c = open_dump(candidate, "candidate");
  const Dump r = open_dump(reference, "reference");
  check_reference_complete(r);

  // Every check that needs no tensor data comes first, so bad input is found
  // before any long comparison.
  for (const ManifestEntry& e : c.m.tensors) {
    auto it = r.by_name.find(e.name);
    require(it != r.by_name.end(), "candidate tensor " + e.name + " (" + c.manifest_path +
                                       ") is not in reference " + r.manifest_path);
    const Shape& rs = r.m.tensors[it->second].shape;
    require(e.shape == rs, "tensor " + e.name + ": candidate shape " + shape_str(e.shape) + " (" +
                               c.manifest_path + ") differs from reference shape " +
                               shape_str(rs) + " (" + r.manifest_path + ")");
  }
  for (const ManifestEntry& e : r.m.tensors)
    require(!always_present(e) || c.by_name.count(e.name),
            c.manifest_path + ": candidate lacks always-present tensor " + e.name +
                " (listed in reference " + r.manifest_path + ")");

  DiffResult res;
  res.tol = opt.tol;
  for (const ManifestEntry& re : r.m.tensors) {
    auto it = c.by_name.find(re.name);
    if (it == c.by_name.end()) {
      res.reference_only.push_back(re.name);
      continue;
    }
    // Tensors are loaded one pair at a time: a dump can be far larger than memory.
    const NpyArray ca = load(c, c.m.tensors[it->second]);
    const NpyArray ra = load(r, re);
    res.tensors.push_back(compare(re.name, re.shape, ca.bytes.data(), ra.bytes.data(), opt));
    if (res.first_differing < 0 && res.tensors.back().status == DiffStatus::Differs)
      res.first_differing = static_cast<int>(res.tensors.size()) - 1;
  }
  return res;
}

}  // namespace n3
