// test_structure.cpp — divisors(), the walk under the layout choosers and the search: every divisor,
// ascending, in O(sqrt n) steps (a GPU count up to kMaxGpus is walked on every page edit).
#include <doctest/doctest.h>

#include <chrono>

#include "spec/structure.h"
#include "spec/validate.h"

using namespace meshfit;

TEST_CASE("divisors lists every divisor of n in ascending order") {
  for (int64_t n = 1; n <= 3000; ++n) {
    CAPTURE(n);
    std::vector<int64_t> expected;
    for (int64_t d = 1; d <= n; ++d)
      if (n % d == 0) expected.push_back(d);
    CHECK(divisors(n) == expected);
  }
  CHECK(divisors(0).empty());
  CHECK(divisors(-8).empty());
}

TEST_CASE("divisors reaches the divisors above 2^20 of a large count") {
  // 2^40 has 41 divisors, 2^0 .. 2^40; a walk that stops at 2^20 would miss the 20 largest.
  const std::vector<int64_t> all = divisors(int64_t(1) << 40);
  REQUIRE(all.size() == 41);
  CHECK(all.front() == 1);
  CHECK(all.back() == int64_t(1) << 40);
  // kMaxGpus = 2^22: its own divisors include itself (the largest tp/pp a chooser may offer).
  CHECK(divisors(kMaxGpus).back() == kMaxGpus);
}

TEST_CASE("divisors of a 12-digit prime takes about a million steps, not n") {
  // 999,999,999,989 is the largest prime below 10^12: a linear walk would take 10^12 steps (hours);
  // sqrt(n) is 10^6 steps, well under a second even unoptimised.
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int64_t> all = divisors(999999999989LL);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(all == std::vector<int64_t>{1, 999999999989LL});
  CHECK(seconds < 2.0);
}

TEST_CASE("torchtitan's virtual stages past two per rank exist only where pipeline_parallel_layers_per_stage gives them") {
  // pipeline_parallel.py: ceil((layers + 1 + 1) / layers_per_stage) stages, pp * vpp of them. 80 layers
  // (82 with the embedding and the head) on pp 4: k = 7 gives 12 (vpp 3), k = 3 gives 28 (vpp 7); no k
  // gives 16 or 20. A review saw the export write layers_per_stage = 5 for vpp 5, which torchtitan refuses.
  const FrameworkProfile& tt = framework_profile(Framework::kFsdp);
  REQUIRE(tt.pipeline_edge_weight == 1);
  CHECK(torchtitan_layers_per_stage(80, tt, 12) == std::optional<int64_t>(7));
  CHECK(torchtitan_layers_per_stage(80, tt, 28) == std::optional<int64_t>(3));
  CHECK_FALSE(torchtitan_layers_per_stage(80, tt, 16));
  CHECK_FALSE(torchtitan_layers_per_stage(80, tt, 20));
  // Issue 11's case: 126 layers (405B) on 16 virtual stages, k = 8.
  CHECK(torchtitan_layers_per_stage(126, tt, 16) == std::optional<int64_t>(8));
  Layout layout{16, 1, 4, 1, 1, 0, 0, 0};
  for (int64_t vpp : {2, 3, 4, 5, 7}) {
    CAPTURE(vpp);
    layout.vpp = vpp;
    const bool expressible = vpp == 2 || vpp == 3 || vpp == 7;
    CHECK(pipeline_problem(80, layout, tt).has_value() != expressible);
    Layout split = layout;
    CHECK(choose_pipeline_split(80, tt, split) == expressible);
  }
  // Megatron-LM has its own rule (equal chunks), unchanged.
  layout.vpp = 4;
  CHECK_FALSE(pipeline_problem(80, layout, framework_profile(Framework::kMegatron)).has_value());
}
