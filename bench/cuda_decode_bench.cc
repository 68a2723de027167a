// E4B decode throughput of the CUDA reference path at batch 1, next to the
// GPU's HBM roofline for the bytes one decode token streams.
//
//   build/bench/cuda_decode_bench [--model E4B.n3w] [--steps N] [--numerics npu|reference] [--hf]
//   N3_BENCH_MODEL=path.n3w works too; by default configs/models/gemma3n-e4b.yaml is
//   synthesised into $TMPDIR/n3-bench-e4b.n3w once (seed 1, as golden_decode_bench).
//
// Prints the device, bytes streamed per token (INT4 weights + scales, one row
// of each embedding table, float vectors, the tied LM head: the formula of
// golden_decode_bench.cc), the roofline tok/s = bandwidth / bytes for the
// spec HBM bandwidth and for the measured device-to-device copy bandwidth,
// and decode tok/s: wall time through CudaModel::forward (a CUDA graph
// replay per token plus the 1 MB logits copy to the host, what `n3 run`
// pays) and GPU time (CUDA events around the graph). --hf then runs
// tools/hf_decode_bench.py (HuggingFace transformers, bf16, eager, the same
// model config) on the same GPU and prints its decode tok/s beside ours.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "bench/decode_bytes.h"
#include "base/error.h"
#include "base/file_util.h"
#include "golden/model_config.h"
#include "golden/synth.h"
#include "golden/weight_names.h"
#include "runtime/numerics_select.h"
#include "host_driver/sampler.h"
#ifdef N3_HAVE_CUDA
#include "gpu_reference/model_cuda.h"
#endif

namespace {
#ifdef N3_HAVE_CUDA

// Runs tools/hf_decode_bench.py on `config`, echoes its lines (model,
// device, torch version, result) and returns its decode tok/s (the number
// before " tok/s" on its result line); throws with the script's last line
// when it fails (no torch, no GPU, ...).
double hf_decode_tok_s(const std::string& config) {
  std::string script = "tools/hf_decode_bench.py";
  if (!n3::file_exists(script)) script = std::string(N3_SOURCE_DIR) + "/" + script;
  const std::string cmd = "python3 '" + script + "' '" + config + "' --new 64 --reps 2 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p) throw n3::Error("cannot run " + cmd);
  std::string out, last;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p.get())) {
    out += buf;
    if (std::string(buf).find_first_not_of(" \n") != std::string::npos) last = buf;
  }
  const int rc = pclose(p.release());
  while (!last.empty() && last.back() == '\n') last.pop_back();
  const size_t at = out.rfind(" tok/s");
  const size_t from = at == std::string::npos || at == 0 ? std::string::npos : out.find_last_of(' ', at - 1);
  const double v = from == std::string::npos ? 0.0 : std::atof(out.substr(from + 1, at - from - 1).c_str());
  if (rc != 0 || !(v > 0)) throw n3::Error("HuggingFace decode benchmark failed (" + script + "): " + last);
  std::printf("%s", out.c_str());
  return v;
}

#endif
}  // namespace

int main(int argc, char** argv) {
#ifndef N3_HAVE_CUDA
  (void)argc, (void)argv;
  std::fprintf(stderr, "cuda_decode_bench: n3 was built without CUDA\n");
  return 2;
#else
  try {
    std::string model = std::getenv("N3_BENCH_MODEL") ? std::getenv("N3_BENCH_MODEL") : "", numerics = "npu",
                hw_path = n3::default_hw_path();
    int steps = 64;
    bool hf = false;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--hf")
        hf = true;
      else if (a == "--model" && i + 1 < argc)
        model = argv[++i];
      else if (a == "--steps" && i + 1 < argc)
        steps = std::atoi(argv[++i]);
      else if (a == "--numerics" && i + 1 < argc)
        numerics = argv[++i];
      else if (a == "--hw" && i + 1 < argc)  // e.g. numerics.kv_format: int8
        hw_path = argv[++i];
      else
        throw n3::Error(
            "usage: cuda_decode_bench [--model E4B.n3w] [--steps N] [--numerics npu|reference] [--hw HW.yaml] [--hf]");
    }
    const std::string problem = n3::gpu::cuda_problem();
    if (!problem.empty()) throw n3::Error(problem);
    if (model.empty()) {
      model = (std::filesystem::temp_directory_path() / "n3-bench-e4b.n3w").string();
      if (!n3::file_exists(model)) {
        const n3::ModelConfig c =
            n3::load_model_config(std::string(N3_SOURCE_DIR) + "/configs/models/gemma3n-e4b.yaml");
        const auto t0 = std::chrono::steady_clock::now();
        const uint64_t bytes = n3::synth_n3w(c, 1, model, {});
        std::printf("synthesised %s: %.2f GB in %.1f s\n", model.c_str(), bytes / 1e9,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    }
    const std::string dev = n3::gpu::cuda_device_name();
    const double copy_bw = n3::gpu::copy_bandwidth(size_t(1) << 30), spec_bw = n3::bench::spec_hbm_bandwidth(dev);
    const n3::HwConfig hw = n3::load_hw_config(hw_path);
    const auto t0 = std::chrono::steady_clock::now();
    n3::gpu::CudaModel m(n3::open_weights_for(model, numerics), numerics, hw);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const n3::ModelConfig& c = m.config();
    // The HF model is built from the E4B YAML: only compare like with like.
    if (hf && c.name != "gemma3n-e4b") throw n3::Error("--hf compares with gemma3n-e4b; the model is '" + c.name + "'");
    const double bytes = n3::bench::decode_weight_bytes(c);

    // Prefill of 32 tokens, then greedy decode.
    std::vector<int32_t> prompt(32);
    for (int i = 0; i < 32; ++i) prompt[i] = (i * 7919 + 2) % c.vocab;
    const int s = m.new_sequence();
    auto tp = std::chrono::steady_clock::now();
    n3::Tensor l = m.forward(s, prompt, n3::Phase::Prefill, nullptr, true);
    const double prefill_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tp).count();
    // Greedy ids from n3 run's sampler (host::Sampler, temperature 0): the
    // host work every decode token pays in `n3 run`.
    n3::host::SamplerConfig greedy;
    greedy.max_new = 1 << 30;
    n3::host::Sampler sampler(greedy, {});
    auto argmax = [&](const n3::Tensor& t) { return int32_t(sampler.next(t.data.data(), int(t.data.size()))); };
    int32_t id = argmax(l);
    double argmax_s = 0;  // of the last decode() call: the sampler's share of the wall time
    auto decode = [&](int n, bool graphs, double* gpu_s) {
      m.use_graphs(graphs);
      *gpu_s = 0;
      argmax_s = 0;
      const auto a = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) {
        const n3::Tensor l = m.forward(s, {id}, n3::Phase::Decode, nullptr, true);
        const auto b = std::chrono::steady_clock::now();
        id = argmax(l);
        argmax_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - b).count();
        *gpu_s += m.last_gpu_seconds();
      }
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    };
    double gpu_s = 0;
    decode(4, true, &gpu_s);  // capture the graph, warm up
    const double wall_s = decode(steps, true, &gpu_s);
    const double host_argmax_s = argmax_s;
    double gpu_ng = 0;
    const double wall_ng = decode(std::min(steps, 16), false, &gpu_ng);
    const double tok_s = steps / wall_s, gpu_tok_s = steps / gpu_s;
    m.profile_kernels(true);
    double gpu_p = 0;
    decode(8, false, &gpu_p);
    const std::string prof = m.kernel_profile();
    m.profile_kernels(false);

    std::printf("device: %s\n", dev.c_str());
    std::printf("model: %s (%s numerics, %s KV cache), %.2f GB of weights on the GPU, loaded in %.1f s\n",
                model.c_str(), m.numerics(), n3::num::kv_fmt_name(hw.numerics.formats.kv), m.weight_bytes() / 1e9,
                load_s);
    std::printf("bytes streamed per decode token: %.3f GB\n", bytes / 1e9);
    std::printf("HBM bandwidth: spec %.2f TB/s, measured device-to-device copy %.2f TB/s (read + write)\n",
                spec_bw / 1e12, copy_bw / 1e12);
    std::printf("roofline: %.1f tok/s at the spec bandwidth, %.1f tok/s at the measured copy bandwidth\n",
                spec_bw / bytes, copy_bw / bytes);
    std::printf("prefill: 32 tokens in %.1f ms (%.0f tok/s)\n", prefill_s * 1e3, 32 / prefill_s);
    std::printf("decode, batch 1, %d steps (CUDA graph): %.1f tok/s wall (%.3f ms/token), %.1f tok/s GPU time\n", steps,
                tok_s, 1e3 / tok_s, gpu_tok_s);
    std::printf("  per token outside the graph: %.3f ms, of which the greedy sampler over %d logits %.3f ms\n",
                (wall_s - gpu_s) / steps * 1e3, c.vocab, host_argmax_s / steps * 1e3);
    std::printf("decode without graphs (%d steps): %.1f tok/s wall, %.1f tok/s GPU time\n", std::min(steps, 16),
                std::min(steps, 16) / wall_ng, std::min(steps, 16) / gpu_ng);
    std::printf("fraction of roofline (wall tok/s): %.1f%% of spec, %.1f%% of measured copy bandwidth\n",
                spec_bw > 0 ? 100 * tok_s * bytes / spec_bw : 0.0, 100 * tok_s * bytes / copy_bw);
    std::printf("effective bandwidth: %.2f TB/s (wall), %.2f TB/s (GPU time)\n", tok_s * bytes / 1e12,
                gpu_tok_s * bytes / 1e12);
    std::printf("kernels of one decode step, %s", prof.c_str());
    if (hf) {
      std::fflush(stdout);
      const double hf_tok_s = hf_decode_tok_s(std::string(N3_SOURCE_DIR) + "/configs/models/gemma3n-e4b.yaml");
      std::printf("HuggingFace transformers decode on this GPU (bf16, eager, tools/hf_decode_bench.py): %.2f tok/s; "
                  "the CUDA path is %.1fx faster (wall)\n",
                  hf_tok_s, tok_s / hf_tok_s);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_decode_bench: error: %s\n", e.what());
    return 2;
  }
#endif
}
