// n3 compile --model M --hw H.yaml -o DIR: compiles Gemma 3n into ISA
// programs (decode, one token; prefill at the largest chunk that fits L2 and
// every power of two below it, the set the host covers any prompt with:
// comp::chunk_sizes) and a report of the memory plan (DDR footprint against capacity,
// L2 high-water against size). M may be a model YAML: the plan and programs
// need shapes only. Exits 2 when either memory does not fit.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "compiler/layout.h"
#include "compiler/lower.h"
#include "compiler/residency.h"
#include "base/error.h"
#include "base/file_util.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "base/npy.h"
#include "sim/memory.h"
#include "host_driver/cli_util.h"
#include "runtime/device_func.h"
#include "runtime/numerics_select.h"
#include "isa/program.h"

namespace n3::cli {

namespace {
uint64_t hw_l2_resident(const comp::Layout& lay, const comp::HwLimits& lim) { return lim.l2 - lay.l2_resident_base; }

// Where everything the programs touch lives, for running them on their own
// (`n3 sim --program`): every placed weight, the KV rings, the run-time
// input region and its layout, the logits and spill regions, L2 residents.
nlohmann::ordered_json memory_map(const comp::Layout& lay) {
  nlohmann::ordered_json m;
  auto placed = [](const comp::Placed& p) {
    nlohmann::ordered_json j = {{"name", p.name}, {"rows", p.rows}, {"cols", p.cols},
                                {"dtype", p.int4 ? "int4" : "f32"}, {"base", p.base}};
    if (p.int4) j["scale_base"] = p.scale_base;
    if (p.blocks > 1) j["blocks"] = p.blocks, j["block_stride"] = p.block_stride, j["scale_block_stride"] = p.scale_block_stride;
    return j;
  };
  m["ddr"]["weights"] = {{"base", 0}, {"bytes", lay.weights_end}};
  for (const auto& [n, p] : lay.tensors) m["ddr"]["tensors"].push_back(placed(p));
  for (const auto& [n, p] : lay.consts) m["ddr"]["constants"].push_back(placed(p));
  for (size_t l = 0; l < lay.rings.size(); ++l)
    if (lay.rings[l].rows)
      m["ddr"]["kv_rings"].push_back({{"layer", l}, {"k", lay.rings[l].k}, {"v", lay.rings[l].v}, {"rows", lay.rings[l].rows}});
  m["ddr"]["input"] = {{"base", lay.input}, {"bytes", lay.input_bytes},
                       {"layout", "int32: [0] pos0, [1..3] 0, [4 .. 4+max_chunk) positions, [4+max_chunk ..) ids"},
                       {"max_chunk", lay.max_chunk}};
  m["ddr"]["logits"] = {{"base", lay.logits}, {"bytes", lay.logits_bytes}, {"layout", "f32 [T, vocab], T of the program"}};
  m["ddr"]["spill"] = {{"base", lay.spill}, {"bytes", lay.spill_bytes}};
  m["ddr"]["end"] = lay.ddr_end;
  m["l2"]["resident_base"] = lay.l2_resident_base;
  for (const comp::Resident& r : lay.resident)
    m["l2"]["resident"].push_back({{"name", r.name}, {"l2_base", r.l2_base}, {"bytes", r.data_bytes + r.scale_bytes}});
  return m;
}
}  // namespace

int cmd_compile(const Args& a) {
  po::options_description d("n3 compile options");
  std::string model, hw, out;
  int chunk = 0;
  int64_t resident = -1;
  d.add_options()("model", po::value(&model)->required(), "model YAML, checkpoint dir or .n3w file")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file")(
      "out,o", po::value(&out)->required(), "output directory")(
      "chunk", po::value(&chunk)->default_value(0),
      "largest prefill chunk (0: the largest that fits L2; larger: activations spill to DDR)")(
      "resident-bytes", po::value(&resident)->default_value(-1),
      "L2 bytes for resident weights at most (-1: all the programs leave free; 0: stream every weight)")(
      "image", "also write ddr.img (n3 sim --mem-in): the weights and constants in their DDR places (needs weights)")(
      "ids", po::value<std::string>(), "with --image: a prompt (T ids, T one of the program sizes) in the input region, "
                                       "at position 0")(
      "dump-all", "accepted for older scripts: every program's symbol table names every tensor it materialises")(
      "force", "overwrite a non-empty output directory");
  po::variables_map vm;
  if (!parse_args("compile", a, d, {}, vm, "n3 compile --model M --hw H.yaml -o DIR")) return kExitOk;
  const bool force = vm.count("force") > 0;
  if (file_exists(out) && !force) prepare_output_dir(out, false);
  const HwConfig hwc = load_hw_config(hw);
  const bool yaml = model.size() > 5 && (model.substr(model.size() - 5) == ".yaml" || model.substr(model.size() - 4) == ".yml");
  const ModelConfig cfg = yaml ? load_model_config(model) : open_weights_for(model, "npu")->config();
  const num::Formats f = hwc.numerics.formats;
  const comp::HwLimits lim = hw_limits(hwc);
  const int fit = comp::largest_chunk(cfg, f, lim);
  require(chunk >= 0, "--chunk must be >= 0 (0: the largest that fits L2)");
  const int maxc = chunk > 0 ? chunk : fit;
  require(resident >= -1, "--resident-bytes must be -1 or more");
  comp::Layout lay = comp::plan_layout(cfg, f, lim, maxc);
  require(lay.ddr_end <= lim.ddr, "the DDR image needs " + std::to_string(lay.ddr_end) +
                                      " bytes, more than the " + std::to_string(lim.ddr) + " of " + hwc.name);
  comp::ResidencyOptions ro;
  ro.max_bytes = resident;
  comp::plan_residency(lay, cfg, f, lim, ro);
  nlohmann::ordered_json rep;
  rep["model"] = model;
  rep["hw"] = hwc.name;
  rep["ddr_bytes"] = lay.ddr_end;
  rep["ddr_capacity"] = lim.ddr;
  rep["ddr_weights_bytes"] = lay.weights_end;
  uint64_t kv = 0;
  for (const comp::Ring& r : lay.rings) kv += r.rows ? 2 * (r.v - r.k) : 0;
  rep["ddr_kv_bytes"] = kv;
  rep["l2_capacity"] = lim.l2;
  rep["max_chunk"] = maxc;
  rep["largest_chunk_in_l2"] = fit;
  rep["ddr_spill_bytes"] = lay.spill_bytes;
  const uint64_t res_bytes = comp::resident_bytes(lay);
  rep["l2_resident_base"] = lay.l2_resident_base;
  rep["resident_weight_bytes"] = res_bytes;
  rep["streamed_weight_bytes"] = lay.weights_end - res_bytes;  // read from DDR by the GEMV/GEMM/SFU/DMA
  const uint64_t tile_bytes = uint64_t(hwc.weight_tile_bytes());  // one slot of timing.wbuf_tiles
  rep["weight_tile_bytes"] = tile_bytes;
  for (const comp::Resident& x : lay.resident)
    rep["resident"].push_back({{"name", x.name}, {"bytes", x.data_bytes + x.scale_bytes}, {"uses", x.uses},
                               {"l2_base", x.l2_base}});
  std::vector<int> sizes = comp::chunk_sizes(maxc);
  const bool image = vm.count("image") > 0;
  require(!image || !yaml, "--image needs weights (a checkpoint or .n3w), not a model YAML");
  require(image || !vm.count("ids"), "--ids needs --image");
  std::vector<int32_t> prompt;
  if (vm.count("ids")) {
    prompt = read_ids(vm["ids"].as<std::string>(), cfg.vocab);
    require(std::find(sizes.begin(), sizes.end(), int(prompt.size())) != sizes.end(),
            "--ids: " + std::to_string(prompt.size()) + " ids; a program exists for the largest chunk (" +
                std::to_string(maxc) + ") and the powers of two below it only");
  }
  prepare_output_dir(out, force);
  write_file_atomic(out + "/memory_map.json", memory_map(lay).dump(1) + "\n");
  if (image) {
    std::vector<sim::ImageRegion> regions(1);
    regions[0].name = "weights";
    regions[0].bytes.assign(lay.weights_end, '\0');
    comp::write_weights(lay, *open_weights_for(model, "npu", hwc), cfg,
                        [&](uint64_t a, const void* p, uint64_t n) { std::memcpy(&regions[0].bytes[a], p, n); });
    if (!prompt.empty()) {
      const std::vector<int32_t> in = comp::input_words(lay, 0, prompt);
      sim::ImageRegion r;
      r.name = "input";
      r.addr = lay.input;
      r.bytes.assign(reinterpret_cast<const char*>(in.data()), in.size() * 4);
      regions.push_back(r);
    }
    sim::write_image(out + "/ddr.img", regions);
    rep["image"] = {{"file", "ddr.img"}, {"bytes", lay.weights_end}, {"prompt_tokens", prompt.size()}};
  }
  std::reverse(sizes.begin(), sizes.end());
  rep["chunk_sizes"] = sizes;
  uint64_t l2_max = 0;
  if (!lay.resident.empty()) {
    const comp::Compiled c = comp::compile_preload(lay, lim);
    const std::vector<uint8_t> bin = isa::serialize(c.program);
    write_file_atomic(out + "/preload.n3p", std::string(bin.begin(), bin.end()));
    write_file_atomic(out + "/preload.s", c.text);
    rep["preload"] = {{"file", "preload.n3p"}, {"instructions", c.instructions}};
  }
  for (int T : sizes) {
    const auto t0 = std::chrono::steady_clock::now();
    comp::CompileOptions o;
    o.tokens = T;
    const comp::Compiled c = comp::compile_forward(cfg, lay, f, lim, o);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string name = T == 1 ? "decode" : "prefill_" + std::to_string(T);
    const std::vector<uint8_t> bin = isa::serialize(c.program);
    write_file_atomic(out + "/" + name + ".n3p", std::string(bin.begin(), bin.end()));
    write_file_atomic(out + "/" + name + ".s", c.text);
    nlohmann::ordered_json p;
    p["file"] = name + ".n3p";
    p["tokens"] = T;
    p["instructions"] = c.instructions;
    p["descriptors"] = c.program.descs.size() - 1;
    p["l2_bytes"] = c.l2_high_water;
    p["spill_bytes"] = c.spill_bytes;
    p["spilled"] = c.spilled;
    p["compile_seconds"] = s;
    rep["programs"].push_back(p);
    l2_max = std::max(l2_max, c.l2_high_water);
    std::fprintf(stderr, "n3 compile: %s: %d instructions, L2 %llu of %llu bytes, %.2f s\n", name.c_str(),
                 c.instructions, static_cast<unsigned long long>(c.l2_high_water),
                 static_cast<unsigned long long>(lim.l2), s);
    if (c.spill_bytes) {
      std::string names;
      for (const std::string& n : c.spilled) names += (names.empty() ? "" : ", ") + n;
      std::fprintf(stderr, "n3 compile: %s: does not fit L2 (largest chunk that does: %d); %llu bytes of activations "
                   "spill to DDR: %s\n", name.c_str(), fit, static_cast<unsigned long long>(c.spill_bytes), names.c_str());
    }
  }
  rep["l2_high_water"] = l2_max;
  write_file_atomic(out + "/report.json", rep.dump(1) + "\n");
  std::printf("DDR %llu of %llu bytes (%.1f%%, %llu free); L2 high-water %llu + %llu resident of %llu bytes (%llu free); max chunk %d\n",
              static_cast<unsigned long long>(lay.ddr_end), static_cast<unsigned long long>(lim.ddr),
              100.0 * double(lay.ddr_end) / double(lim.ddr), static_cast<unsigned long long>(lim.ddr - lay.ddr_end),
              static_cast<unsigned long long>(l2_max), static_cast<unsigned long long>(hw_l2_resident(lay, lim)),
              static_cast<unsigned long long>(lim.l2), static_cast<unsigned long long>(lay.l2_resident_base - l2_max), maxc);
  std::string set;
  for (int T : sizes) set += (set.empty() ? "" : " ") + std::to_string(T);
  std::printf("programs for %s tokens (decode = 1; a prompt runs as chunks of %d, its tail as a greedy cover)\n", set.c_str(), maxc);
  std::printf("weights: %zu tensors resident in L2 (%llu bytes, loaded once by preload.n3p); %llu bytes stay in DDR, streamed through %llu-byte weight-buffer tiles\n",
              lay.resident.size(), static_cast<unsigned long long>(res_bytes),
              static_cast<unsigned long long>(lay.weights_end - res_bytes), static_cast<unsigned long long>(tile_bytes));
  return kExitOk;
}

}  // namespace n3::cli
