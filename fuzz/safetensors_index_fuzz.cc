// libFuzzer entry point of fuzz_safetensors_index (fuzz/file_targets.h has the checks).
#include "fuzz/file_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)n3::fuzz::fuzz_safetensors_index(data, size);
  return 0;
}
