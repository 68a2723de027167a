// libFuzzer entry point of fuzz_sim (fuzz/targets.h has the checks).
#include "fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return n3::fuzz::fuzz_sim(data, size); }
