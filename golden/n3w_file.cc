#include "golden/n3w_file.h"

#include "golden/error.h"

namespace n3 {

std::unique_ptr<WeightSource> open_n3w(const std::string& path) {
  throw Error(path + ": n3 weights files are not readable yet");
}

}  // namespace n3
