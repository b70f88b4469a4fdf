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
