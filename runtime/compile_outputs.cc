#include "runtime/compile_outputs.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/file_util.h"
#include "compiler/residency.h"
#include "isa/program.h"
#include "sim/memory.h"

namespace n3 {

namespace {

// Where everything the programs touch lives, for running them on their own
// (`n3 sim --program`): every placed weight, the KV rings, the run-time
// input region and its layout, the logits and spill regions, L2 residents.
nlohmann::ordered_json memory_map(const comp::Layout& lay, const num::Formats& f) {
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
                       {"layout", "int32: [0] pos0, [1] row0 (the global KV rings' row of the first token; pos0 until "
                                  "the host evicts rows), [2..3] 0, [4 .. 4+max_chunk) positions, [4+max_chunk ..) ids"},
                       {"max_chunk", lay.max_chunk}};
  m["ddr"]["logits"] = {{"base", lay.logits}, {"bytes", lay.logits_bytes},
                        {"layout", std::string(num::fmt_name(f.logits)) + " [T, vocab], T of the program"}};
  m["ddr"]["spill"] = {{"base", lay.spill}, {"bytes", lay.spill_bytes}};
  m["ddr"]["end"] = lay.ddr_end;
  m["l2"]["resident_base"] = lay.l2_resident_base;
  for (const comp::Resident& r : lay.resident)
    m["l2"]["resident"].push_back({{"name", r.name}, {"l2_base", r.l2_base}, {"bytes", r.data_bytes + r.scale_bytes}});
  return m;
}

void write_program(const std::string& dir, const std::string& name, const comp::Compiled& c) {
  const std::vector<uint8_t> bin = isa::serialize(c.program);
  write_file_atomic(dir + "/" + name + ".n3p", std::string(bin.begin(), bin.end()));
  write_file_atomic(dir + "/" + name + ".s", c.text);
}

}  // namespace

CompileSummary write_compiled(CompiledModel& m, const std::string& dir, const CompileOutputs& o, uint64_t tile_bytes) {
  const comp::Layout& lay = m.layout();
  const comp::HwLimits& lim = m.limits();
  // Compile every program before writing anything: a program that fails
  // (e.g. a hardware file whose L2 breaks the descriptors' alignment) must
  // leave no memory_map.json or earlier program behind.
  std::map<int, double> seconds;
  m.preload();
  for (int T : m.chunk_sizes()) {
    const auto t0 = std::chrono::steady_clock::now();
    m.program(T);
    seconds[T] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::vector<sim::ImageRegion> regions;
  if (o.image) {
    regions.resize(1);
    regions[0].name = "weights";
    regions[0].bytes = m.weight_image();
    if (!o.prompt.empty()) {
      const std::vector<int32_t> in = comp::input_words(lay, 0, 0, o.prompt);
      sim::ImageRegion r;
      r.name = "input";
      r.addr = lay.input;
      r.bytes.assign(reinterpret_cast<const char*>(in.data()), in.size() * 4);
      regions.push_back(r);
    }
  }
  CompileSummary sum;
  sum.ddr_bytes = lay.ddr_end;
  sum.ddr_capacity = lim.ddr;
  sum.l2_capacity = lim.l2;
  sum.max_chunk = m.max_chunk();
  sum.l2_resident_base = lay.l2_resident_base;
  sum.l2_resident = lim.l2 - lay.l2_resident_base;
  sum.resident_weight_bytes = comp::resident_bytes(lay);
  sum.streamed_weight_bytes = lay.weights_end - sum.resident_weight_bytes;  // read from DDR by the engines
  sum.weight_tile_bytes = tile_bytes;
  sum.resident_tensors = lay.resident.size();
  nlohmann::ordered_json rep;
  rep["model"] = o.model_name;
  rep["hw"] = o.hw_name;
  rep["ddr_bytes"] = lay.ddr_end;
  rep["ddr_capacity"] = lim.ddr;
  rep["ddr_weights_bytes"] = lay.weights_end;
  uint64_t kv = 0;
  for (const comp::Ring& r : lay.rings) kv += r.rows ? 2 * (r.v - r.k) : 0;
  rep["ddr_kv_bytes"] = kv;
  rep["l2_capacity"] = lim.l2;
  rep["max_chunk"] = m.max_chunk();
  rep["largest_chunk_in_l2"] = m.largest_chunk_in_l2();
  rep["ddr_spill_bytes"] = lay.spill_bytes;
  rep["l2_resident_base"] = lay.l2_resident_base;
  rep["resident_weight_bytes"] = sum.resident_weight_bytes;
  rep["streamed_weight_bytes"] = sum.streamed_weight_bytes;
  rep["weight_tile_bytes"] = tile_bytes;
  for (const comp::Resident& x : lay.resident)
    rep["resident"].push_back({{"name", x.name}, {"bytes", x.data_bytes + x.scale_bytes}, {"uses", x.uses},
                               {"l2_base", x.l2_base}});
  write_file_atomic(dir + "/memory_map.json", memory_map(lay, m.formats()).dump(1) + "\n");
  if (o.image) {
    sim::write_image(dir + "/ddr.img", regions);
    rep["image"] = {{"file", "ddr.img"}, {"bytes", lay.weights_end}, {"prompt_tokens", o.prompt.size()}};
  }
  sum.sizes = m.chunk_sizes();
  std::reverse(sum.sizes.begin(), sum.sizes.end());
  rep["chunk_sizes"] = sum.sizes;
  rep["chunk_choice"] = chunk_choice_json(m.chunk_choice());
  if (const comp::Compiled* pre = m.preload()) {
    write_program(dir, "preload", *pre);
    rep["preload"] = {{"file", "preload.n3p"}, {"instructions", pre->instructions}};
  }
  for (int T : sum.sizes) {
    const comp::Compiled& c = m.program(T);  // compiled above
    const double s = seconds.at(T);
    const std::string name = T == 1 ? "decode" : "prefill_" + std::to_string(T);
    write_program(dir, name, c);
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
    sum.l2_high_water = std::max(sum.l2_high_water, c.l2_high_water);
    std::fprintf(stderr, "n3 compile: %s: %d instructions, L2 %llu of %llu bytes, %.2f s\n", name.c_str(),
                 c.instructions, static_cast<unsigned long long>(c.l2_high_water),
                 static_cast<unsigned long long>(lim.l2), s);
    if (c.spill_bytes) {
      std::string names;
      for (const std::string& n : c.spilled) names += (names.empty() ? "" : ", ") + n;
      std::fprintf(stderr, "n3 compile: %s: does not fit L2 (largest chunk that does: %d); %llu bytes of activations "
                   "spill to DDR: %s\n", name.c_str(), m.largest_chunk_in_l2(),
                   static_cast<unsigned long long>(c.spill_bytes), names.c_str());
    }
  }
  rep["l2_high_water"] = sum.l2_high_water;
  if (o.report) {
    // Each program at position 0, timing-only (no weights touched).
    for (int T : sum.sizes) {
      sum.schedule.push_back(schedule_report(m.program(T), lay, m.hw_config(), T, true));
      rep["schedule"].push_back(schedule_report_json(sum.schedule.back()));
    }
  }
  write_file_atomic(dir + "/report.json", rep.dump(1) + "\n");
  return sum;
}

}  // namespace n3
