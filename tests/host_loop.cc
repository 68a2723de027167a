#include "tests/host_loop.h"

#include "base/file_util.h"
#include "golden/dump.h"
#include "host_driver/sampler.h"

namespace n3::test {

Generated host_loop(Device& dev, const std::vector<int32_t>& prompt, int new_tokens, bool sampled,
                    const std::string& dump_dir, bool dump_all) {
  host::SamplerConfig sc;
  sc.max_new = new_tokens;
  if (sampled) sc.temperature = 3.0f, sc.top_k = 40, sc.seed = 7;
  host::Sampler sampler(sc, std::vector<int>(prompt.begin(), prompt.end()));
  DumpCollector rec(dump_all);
  set_run_meta(rec, dev, "test");
  rec.set_logits_last(true);  // prefill returns the last position's logits on every backend
  Recorder* r = dump_dir.empty() ? nullptr : &rec;
  const int seq = dev.open_sequence();
  const int V = dev.config().vocab;
  Logits lg = dev.prefill(seq, prompt, r);
  Generated g;
  g.dtypes.push_back(lg.dtype);
  while (!sampler.done()) {
    const int id = sampler.next(lg.values.row(lg.values.shape[0] - 1), V);
    g.ids.push_back(id);
    if (sampler.done()) break;
    lg = dev.decode({seq}, {id}, r);
    g.dtypes.push_back(lg.dtype);
  }
  dev.close_sequence(seq);
  if (r) {
    prepare_output_dir(dump_dir, true);
    rec.write(dump_dir);
    g.dump = dump_dir;
  }
  return g;
}

}  // namespace n3::test
