#include <filesystem>
#include "host_driver/cli_util.h"

#include <iostream>

#include "base/error.h"

namespace n3::cli {

bool parse_args(const std::string& cmd, const Args& a, po::options_description& desc,
                const po::positional_options_description& pos, po::variables_map& vm,
                const std::string& usage) {
  desc.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(a).options(desc).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << desc << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw Error("n3 " + cmd + ": " + e.what());
  }
  return true;
}

OutputGuard::~OutputGuard() {
  std::error_code ec;
  for (const std::string& p : paths_) std::filesystem::remove_all(p, ec);
}

}  // namespace n3::cli
