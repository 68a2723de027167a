// libFuzzer entry point of fuzz_hw_yaml (fuzz/file_targets.h has the checks).
#include "fuzz/file_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)n3::fuzz::fuzz_hw_yaml(data, size);
  return 0;
}
