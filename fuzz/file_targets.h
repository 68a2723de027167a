// Fuzz targets for the readers of untrusted files (checkpoints, weights
// files, .npy tensors, dump manifests, memory images, hardware and model
// YAML), as plain functions: libFuzzer calls them through fuzz/<name>_fuzz.cc
// (clang builds, docs/fuzzing.md) and the default test suite replays the
// checked-in corpora of tests/fuzz_corpus/<name>/ through them
// (tests/file_fuzz_corpus_test.cc). Property of every target: the input loads,
// or fails with an n3::Error of one non-empty line that names the input; any
// other exception, a crash, a sanitizer report, a leak, a hang or an
// allocation beyond the fuzzer's -malloc_limit_mb is a finding. A violated
// property aborts; each target returns whether the input loaded (the corpus
// test checks that the real seeds do).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/npy.h"
#include "base/rng.h"
#include "golden/dump.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "golden/n3w_file.h"
#include "golden/safetensors.h"
#include "sim/memory.h"

namespace n3::fuzz {

// The refusal half of the property: one line, naming the input.
inline void check_refusal(const Error& e, const std::string& what) {
  const std::string m = e.what();
  if (m.empty() || m.find('\n') != std::string::npos || m.find(what) == std::string::npos) {
    std::fprintf(stderr, "bad refusal message: %s\n", m.c_str());
    std::abort();
  }
}

// Runs `load`; an n3::Error is a refusal and must be well formed.
template <typename F>
bool loads(const std::string& what, F&& load) {
  try {
    load();
    return true;
  } catch (const Error& e) {
    check_refusal(e, what);
    return false;
  }
}

inline std::string as_text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// safetensors images (the HF checkpoint reader's per-shard parse). Every
// accepted entry's bytes lie inside the data section and match its shape.
inline bool fuzz_safetensors(const uint8_t* data, size_t size) {
  const std::string what = "fuzz.safetensors";
  std::map<std::string, SafetensorsEntry> es;
  if (!loads(what, [&] { es = parse_safetensors(data, size, what); })) return false;
  for (const auto& [name, e] : es) {
    if (e.nbytes && (e.data < data || e.data + e.nbytes > data + size)) std::abort();
    uint64_t n = 1;
    for (int64_t d : e.shape) n *= uint64_t(d);  // the reader checked this product does not overflow
    if (e.nbytes && n == 0) std::abort();
  }
  return true;
}

// model.safetensors.index.json (the sharded HF checkpoint's index). Every
// accepted shard name is a plain file name inside the checkpoint folder, each
// once, and a repeated key was refused.
inline bool fuzz_safetensors_index(const uint8_t* data, size_t size) {
  const std::string what = "fuzz/model.safetensors.index.json";
  std::vector<std::string> shards;
  if (!loads(what, [&] { shards = parse_safetensors_index(as_text(data, size), what); })) return false;
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string& f = shards[i];
    if (f.empty() || f == "." || f == ".." || f.find('/') != std::string::npos || f.find('\0') != std::string::npos)
      std::abort();
    if (i && !(shards[i - 1] < f)) std::abort();  // sorted, each once
  }
  return true;
}

// .n3w images. The header checksum would hide every structure check from
// mutations, so the harness first rewrites the recorded file size and, when
// the recorded data start lies in the image, the header checksum (the reader
// itself is unchanged; tensors keep their own checksums). A loaded file reads
// every tensor without leaving the image.
inline std::string n3w_fix_header(const uint8_t* data, size_t size) {
  std::string b = as_text(data, size);
  if (size >= kN3wHeaderBytes) {
    uint64_t n = size, start;
    std::memcpy(&b[48], &n, 8);
    std::memcpy(&start, &b[40], 8);
    if (start >= kN3wHeaderBytes && start <= size) {
      Xxh64 h;
      const uint64_t zero = 0;
      h.update(b.data(), 56);
      h.update(&zero, 8);
      h.update(b.data() + 64, start - 64);
      const uint64_t d = h.digest();
      std::memcpy(&b[56], &d, 8);
    }
  }
  return b;
}

inline bool fuzz_n3w(const uint8_t* data, size_t size) {
  const std::string b = n3w_fix_header(data, size);
  const std::string what = "fuzz.n3w";
  std::unique_ptr<WeightSource> w;
  if (!loads(what, [&] { w = parse_n3w(reinterpret_cast<const uint8_t*>(b.data()), b.size(), what); })) return false;
  for (const auto& s : weight_specs(w->config())) {
    if (!w->has(s.name)) std::abort();
    if (s.kind == WeightKind::Matrix) (void)w->matrix(s.name);
    else (void)w->vec(s.name);
  }
  return true;
}

// .npy images (every tensor n3 reads, and the files of a dump that n3 diff
// compares). An accepted array holds exactly its shape's bytes, copied from
// the input.
inline bool fuzz_npy(const uint8_t* data, size_t size) {
  const std::string what = "fuzz.npy";
  NpyArray a;
  if (!loads(what, [&] { a = parse_npy(data, size, what); })) return false;
  if (a.bytes.size() > size) std::abort();
  uint64_t n = 1;
  for (int64_t d : a.shape) n *= uint64_t(d);
  if (a.bytes.size() % (n ? n : 1) != 0 || (n == 0) != a.bytes.empty()) std::abort();
  return true;
}

// Dump manifests (manifest.json, as n3 diff reads them). Accepted file names
// never leave the dump directory.
inline bool fuzz_manifest(const uint8_t* data, size_t size) {
  const std::string what = "fuzz/manifest.json";
  Manifest m;
  if (!loads(what, [&] { m = parse_manifest(as_text(data, size), what); })) return false;
  for (const auto& e : m.tensors)
    if (e.file.find('/') != std::string::npos || e.file.find("..") != std::string::npos) std::abort();
  return true;
}

// Memory images (n3 sim --image), loaded into small memories: every region
// fits its space or the image is refused.
inline bool fuzz_image(const uint8_t* data, size_t size) {
  sim::Capacities c;
  c.ddr = 1 << 20;
  c.l2 = 1 << 18;
  c.wbuf = 1 << 16;
  sim::Memory mem(c);
  return loads("fuzz.img", [&] { sim::load_image_bytes(data, size, "fuzz.img", mem); });
}

// Hardware YAML. An accepted file emits a YAML that parses to a file that
// emits the same text (the emitter is what `n3 hw` prints and users edit).
inline bool fuzz_hw_yaml(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return false;
  const std::string what = "fuzz-hw.yaml";
  HwConfig hw;
  if (!loads(what, [&] { hw = parse_hw_config(as_text(data, size), what); })) return false;
  const std::string once = emit_hw_yaml(hw);
  if (emit_hw_yaml(parse_hw_config(once, "emitted.yaml")) != once) std::abort();
  return true;
}

// Model YAML (n3's strict form, and the lenient form of HF config.json, by
// the input's parity). An accepted config round-trips through the canonical
// YAML that .n3w headers hold.
inline bool fuzz_model_yaml(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return false;
  const std::string what = "fuzz-model.yaml";
  ModelConfig c;
  if (!loads(what, [&] { c = parse_model_config(as_text(data, size), what, (size & 1) != 0); })) return false;
  if (!(parse_model_config(model_config_to_yaml(c), "canonical.yaml", true) == c)) std::abort();
  return true;
}

}  // namespace n3::fuzz
