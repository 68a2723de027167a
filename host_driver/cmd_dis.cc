// n3 dis IN.n3p: prints a program container as canonical assembly text
// (assembling it gives the same container). n3 dis --word W: one word.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "base/error.h"
#include "base/file_util.h"
#include "host_driver/cli_util.h"
#include "isa/dis.h"

namespace n3::cli {

int cmd_dis(const Args& a) {
  po::options_description d("n3 dis options");
  std::string in;
  std::vector<std::string> words;
  d.add_options()("input", po::value(&in), "program container (.n3p)")(
      "word", po::value(&words)->multitoken(), "disassemble bare 64-bit words (hex or decimal) instead");
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (!parse_args("dis", a, d, pos, vm, "n3 dis IN.n3p | n3 dis --word 0xWORD...")) return kExitOk;
  require(in.empty() != words.empty(), "n3 dis: give a program file or --word, not both or neither");
  for (const std::string& s : words) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long w = std::strtoull(s.c_str(), &end, 0);
    require(!s.empty() && *end == '\0' && errno == 0 && s[0] != '-', "n3 dis: '" + s + "' is not a 64-bit word");
    std::cout << isa::disassemble_word(w) << "\n";
  }
  if (!in.empty()) {
    const std::vector<uint8_t> bin = read_file_bytes(in);
    std::cout << isa::disassemble(isa::parse_program(bin.data(), bin.size(), in));
  }
  return kExitOk;
}

}  // namespace n3::cli
