// n3: reference model, compiler and simulator for a Gemma 3n NPU.
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "golden/numerics/common.h"
#include "host_driver/cli.h"
#include "isa/isa_gen.h"
#include "host_driver/n3_version.h"  // generated at build time (cmake/version.cmake)

namespace {

struct Command {
  int (*fn)(const n3::cli::Args&);
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  using namespace n3::cli;
  static const std::map<std::string, Command> m = {
      {"golden", {cmd_golden, "run the golden model and dump tensors"}},
      {"sim", {cmd_sim, "run a program or a model on a simulator backend"}},
      {"diff", {cmd_diff, "compare two dump directories"}},
      {"run", {cmd_run, "host sampling loop over a backend"}},
      {"synth", {cmd_synth, "make seeded random INT4 weights for a model YAML"}},
      {"convert", {cmd_convert, "convert a HuggingFace checkpoint to an n3 weights file"}},
      {"compile", {cmd_compile, "compile a model to ISA programs"}},
      {"asm", {cmd_asm, "assemble ISA text"}},
      {"dis", {cmd_dis, "disassemble ISA words"}},
      {"estimate", {cmd_estimate, "estimate throughput of a hardware configuration"}},
      {"cosim", {cmd_cosim, "co-simulate an RTL unit against the C++ model"}},
  };
  return m;
}

void usage(std::FILE* f) {
  std::fprintf(f, "usage: n3 <command> [options]   (n3 <command> --help for details; n3 --version)\n\ncommands:\n");
  for (const auto& [name, c] : commands()) std::fprintf(f, "  %-9s %s\n", name.c_str(), c.summary);
}

// `n3 --version`: what a bug report or a regression farm's log needs to say
// which n3 produced a result.
void version() {
  std::printf("n3 %s (Gemma 3n NPU reference model, compiler and simulator)\n", N3_VERSION);
  std::printf("commit:   %s\n", N3_GIT_COMMIT);
  std::printf("isa:      %d\n", n3::isa::kIsaVersion);
  std::printf("numerics: %d (headers %s)\n", n3::num::kNumericsVersion, N3_NUMERICS_SOURCE_HASH);
  std::printf("build:    %s, flags '%s'\n", N3_BUILD_TYPE, N3_CXX_FLAGS);
  std::string with = "systemc ";
#ifdef N3_HAVE_SYSTEMC
  with += "yes";
#else
  with += "no";
#endif
  with += ", rtl units:";
  std::string units;
#ifdef N3_HAVE_RTL
  units += " decoder";
#endif
#ifdef N3_HAVE_RTL_GEMV
  units += " gemv";
#endif
#ifdef N3_HAVE_RTL_GEMM
  units += " gemm";
#endif
#ifdef N3_HAVE_RTL_DMA
  units += " dma";
#endif
#ifdef N3_HAVE_RTL_SFU
  units += " sfu";
#endif
#ifdef N3_HAVE_RTL_CTL
  units += " ctl";
#endif
#ifdef N3_HAVE_RTL_CDC
  units += " cdc";
#endif
  with += units.empty() ? " none (built without Verilator)" : units;
#ifdef N3_HAVE_CUDA
  with += ", cuda yes";
#else
  with += ", cuda no";
#endif
  std::printf("with:     %s\n", with.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? n3::cli::kExitBadInput : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    if (argc > 2) {
      std::fprintf(stderr, "n3 --version: takes no arguments (got '%s')\n", argv[2]);
      return n3::cli::kExitBadInput;
    }
    version();
    return 0;
  }
  auto it = commands().find(argv[1]);
  if (it == commands().end()) {
    std::fprintf(stderr, "n3: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return n3::cli::kExitBadInput;
  }
  n3::cli::Args args(argv + 2, argv + argc);
  // The run's outputs are one journal (base/atomic_file.h): kept when the
  // command returns (exit 0, or a finding such as exit 1 whose evidence it
  // chose to write), removed when it fails with bad input (exit 2) or is
  // interrupted, so a failed run leaves no output, also in a folder that
  // existed.
  n3::begin_output_run();
  try {
    const int rc = it->second.fn(args);
    if (rc == n3::cli::kExitBadInput) n3::abort_output_run();
    else n3::commit_output_run();
    return rc;
  } catch (const n3::Error& e) {
    n3::abort_output_run();
    std::fprintf(stderr, "n3 %s: error: %s\n", argv[1], e.what());
    return n3::cli::kExitBadInput;
  } catch (const std::bad_alloc&) {
    n3::abort_output_run();
    std::fprintf(stderr, "n3 %s: error: out of memory\n", argv[1]);
    return n3::cli::kExitBadInput;
  } catch (const std::exception& e) {
    // Not an n3::Error (a library's: std::filesystem, yaml-cpp): one line
    // and a bounded length all the same.
    n3::abort_output_run();
    std::fprintf(stderr, "n3 %s: error: %s\n", argv[1], n3::one_line(e.what()).c_str());
    return n3::cli::kExitBadInput;
  }
}
