// open_weights (golden/weights.h): the one place that knows both weight file
// readers. It sits in a file of its own, above the readers, because their
// headers include golden/weights.h for the WeightSource they implement; in
// weights.cc the two would include each other.
#include <memory>
#include <string>

#include "base/error.h"
#include "base/file_util.h"
#include "golden/hf_checkpoint.h"
#include "golden/n3w_file.h"
#include "golden/weights.h"

namespace n3 {

std::unique_ptr<WeightSource> open_weights(const std::string& path) {
  if (is_directory(path)) return open_hf_checkpoint(path);
  require(file_exists(path), path + ": no such file or directory");
  return open_n3w(path);
}

}  // namespace n3
