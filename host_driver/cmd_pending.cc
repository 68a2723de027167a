// Commands whose parts have not landed yet say so plainly instead of
// pretending to work. Each moves to its own cmd_<name>.cc when its issue lands.
#include "golden/error.h"
#include "host_driver/cli.h"

namespace n3::cli {

namespace {
int pending(const char* name, const char* part) {
  throw Error(std::string("'n3 ") + name + "' is not available yet: it needs " + part);
}
}  // namespace

int cmd_sim(const Args&) { return pending("sim", "the ISA simulator (issue 4) and compiler (issue 5)"); }
int cmd_compile(const Args&) { return pending("compile", "the compiler (issue 5)"); }
int cmd_asm(const Args&) { return pending("asm", "the ISA table (issue 4)"); }
int cmd_dis(const Args&) { return pending("dis", "the ISA table (issue 4)"); }
int cmd_estimate(const Args&) { return pending("estimate", "the SystemC timing model (issue 6)"); }

}  // namespace n3::cli
