// libfuzzer_main.cpp — one libFuzzer binary per target: MESHFIT_FUZZ_TARGET names its function.
#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meshfit_fuzz::MESHFIT_FUZZ_TARGET(data, size);
  return 0;
}
