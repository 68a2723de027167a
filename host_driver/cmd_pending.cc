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


}  // namespace n3::cli
