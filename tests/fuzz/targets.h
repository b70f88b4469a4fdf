// targets.h — the fuzz targets (issue 17): each takes arbitrary bytes through one edge of meshfit
// and traps if a result breaks a promise (a NaN/inf in an ok result, text that is not valid UTF-8).
// Built as libFuzzer binaries (tests/fuzz/run.sh, clang -fsanitize=fuzzer,address,undefined) and,
// in every native build, as a replay tool that ctest runs over the seeds and kept crashes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace meshfit_fuzz {

void fuzz_state(const uint8_t* data, size_t size);            // decode_state + run_decode_state
void fuzz_json_config(const uint8_t* data, size_t size);      // parse_json_text + run_estimate + run_encode_state
void fuzz_hf_import(const uint8_t* data, size_t size);        // run_parse_hf_config
void fuzz_estimate_search(const uint8_t* data, size_t size);  // a decoded state -> estimate, step, search (small budget)
void fuzz_launch_import(const uint8_t* data, size_t size);    // run_import (byte 0: format) + run_export; HF id and fetch

struct Target {
  const char* name;  // also the folder under tests/fuzz/corpus and tests/fuzz/crashes
  void (*run)(const uint8_t*, size_t);
};
inline constexpr Target kTargets[] = {{"state", fuzz_state},
                                      {"json_config", fuzz_json_config},
                                      {"hf_import", fuzz_hf_import},
                                      {"estimate_search", fuzz_estimate_search},
                                      {"launch_import", fuzz_launch_import}};

}  // namespace meshfit_fuzz
