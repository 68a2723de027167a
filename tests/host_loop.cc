#include "tests/host_loop.h"

#include "base/file_util.h"
#include "golden/dump.h"
#include "host_driver/generate.h"

namespace n3::test {

Generated host_loop(Device& dev, const std::vector<int32_t>& prompt, int new_tokens, bool sampled,
                    const std::string& dump_dir, bool dump_all) {
  host::SamplerConfig sc;
  sc.max_new = new_tokens;
  if (sampled) sc.temperature = 3.0f, sc.top_k = 40, sc.seed = 7;
  DumpCollector rec(dump_all);
  set_run_meta(rec, dev, "test");
  rec.set_logits_last(true);  // prefill returns the last position's logits on every backend
  Recorder* r = dump_dir.empty() ? nullptr : &rec;
  // n3 run's own loop (host_driver/generate.h), one sequence.
  const host::Generation g = host::generate(dev, {prompt}, sc, r);
  Generated out;
  out.ids = g.ids[0];
  out.dtypes = g.dtypes;
  if (r) {
    prepare_output_dir(dump_dir, true);
    rec.write(dump_dir);
    out.dump = dump_dir;
  }
  return out;
}

}  // namespace n3::test
