// test_fit_advice.cpp — "how to make it fit": every suggestion, applied, is valid and under the
// tight threshold as the CLI's estimate computes it; fewest changes first; the largest micro-batch
// and sequence fit and one step more does not.
#include <doctest/doctest.h>

#include "api.h"
#include "search/fit_advice.h"
#include "fixtures.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {

Config oom_config() {
  Config config = preset_config("llama3-70b", 64, 8, 1);  // 80 layers on one stage at 8k: out of memory
  config.training.seq = 8192;
  config.training.global_batch = 512;
  return config;
}

}  // namespace

TEST_CASE("each suggestion for an out-of-memory config fits when applied, fewest changes first") {
  const Config config = oom_config();
  REQUIRE(estimate(config).memory.verdict == Verdict::kOutOfMemory);
  const FitAdvice advice = fit_advice(config);
  REQUIRE_FALSE(advice.suggestions.empty());
  int last_changes = 1;
  for (const FitSuggestion& s : advice.suggestions) {
    CAPTURE(s.change);
    const Estimate applied = estimate(s.config);
    REQUIRE(applied.valid());
    CHECK(applied.memory.verdict == Verdict::kFits);
    CHECK(applied.worst().device_bytes == doctest::Approx(s.device_bytes).epsilon(1e-9));
    CHECK(s.changed_dimensions >= last_changes);
    last_changes = s.changed_dimensions;
    CHECK(s.change.find("\xE2\x86\x92") != std::string::npos);
  }
  CHECK(advice.suggestions.front().changed_dimensions == 1);
}

TEST_CASE("the largest sequence that fits fits, and one step more does not") {
  Config config = preset_config("llama3-8b", 8, 1, 1);
  config.training.seq = 2048;  // tight at 2k, out of memory at 4k
  const FitAdvice advice = fit_advice(config);
  REQUIRE(advice.largest_seq > 0);
  config.training.seq = advice.largest_seq;
  CHECK(estimate(config).memory.verdict != Verdict::kOutOfMemory);
  config.training.seq = advice.largest_seq + 512;
  CHECK(estimate(config).memory.verdict == Verdict::kOutOfMemory);
  REQUIRE(advice.largest_micro_batch >= 1);
  config.training.seq = 2048;
  config.training.micro_batch = advice.largest_micro_batch;
  CHECK(estimate(config).memory.verdict != Verdict::kOutOfMemory);
  CHECK_FALSE(fit_advice(config).suggestions.empty());  // tight: what brings it under the threshold
}
