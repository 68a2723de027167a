// n3 asm IN.s -o OUT.bin: assembles ISA text into a program container
// (isa/asm.h). Errors are one line, file:line:column; nothing is written then.
#include <cstdio>

#include "base/error.h"
#include "base/file_util.h"
#include "host_driver/cli_util.h"
#include "isa/asm.h"

namespace n3::cli {

int cmd_asm(const Args& a) {
  po::options_description d("n3 asm options");
  std::string in, out;
  d.add_options()("input", po::value(&in)->required(), "assembly source (.s)")(
      "output,o", po::value(&out)->required(), "program container to write (.n3p)")(
      "no-verify", "skip the operand checks (descriptor slots, dtypes): for programs meant to trap");
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (!parse_args("asm", a, d, pos, vm, "n3 asm IN.s -o OUT.n3p [--no-verify]")) return kExitOk;
  check_output(out, "-o");
  isa::AsmOptions opt;
  opt.verify = vm.count("no-verify") == 0;
  const isa::Program p = isa::assemble(read_file_text(in), in, opt);
  const std::vector<uint8_t> bin = isa::serialize(p);
  write_file_atomic(out, std::string(bin.begin(), bin.end()));
  std::fprintf(stderr, "n3 asm: %zu instructions, %zu descriptors, %zu constants, %zu symbols -> %s\n",
               p.code.size(), p.descs.size() - 1, p.consts.size() - 1, p.symbols.size(), out.c_str());
  return kExitOk;
}

}  // namespace n3::cli
