// test_number_text.cpp — parse_count_text reads what a person typed: suffixes, separators and
// exponents accepted where the result is whole; fractions, overflow and junk refused with a sentence.
#include <doctest/doctest.h>

#include <limits>

#include "io/number_text.h"
#include "spec/validate.h"

using namespace meshfit;

TEST_CASE("counts typed as people type them mean what was typed") {
  const std::pair<const char*, int64_t> cases[] = {
      {"8k", 8192}, {"32K", 32768}, {"1M", 1048576}, {"4,096", 4096}, {"1e4", 10000}, {" 128 ", 128},
      {"16_384", 16384}, {"1,048,576", 1048576}, {"1.5k", 1536}, {"2.5e3", 2500}, {"0", 0}, {"-4", -4}};
  for (const auto& [text_binding, value] : cases) {
    const char* text = text_binding;  // clang 14 (WASM) cannot capture a structured binding in CAPTURE
    CAPTURE(text);
    const CountText parsed = parse_count_text(text, int64_t(1) << 40);
    REQUIRE(parsed.ok);
    CHECK(parsed.value == value);
  }
}

TEST_CASE("fractions, overflow and junk are refused with a message that quotes the text") {
  const std::pair<const char*, const char*> cases[] = {
      {"3.7", "not a whole number"}, {"1e15", "beyond the largest"}, {"", "empty"}, {"0x10", "not a number"},
      {"inf", "not a number"}, {"nan", "not a number"}, {"8kk", "not a number"}, {"4,09", "groups of three"},
      {"1.0001k", "not a whole number"}, {"12,3456", "groups of three"}};
  for (const auto& [text_binding, why] : cases) {
    const char* text = text_binding;  // clang 14 (WASM) cannot capture a structured binding in CAPTURE
    CAPTURE(text);
    const CountText parsed = parse_count_text(text, int64_t(1) << 25);
    CHECK_FALSE(parsed.ok);
    CHECK(parsed.message.find(why) != std::string::npos);
    CHECK(parsed.message.find(std::string("\"") + text) == 0);
  }
}

TEST_CASE("only a value beyond the limit is refused as too large, up to int64's largest") {
  CHECK(parse_count_text("1e15", int64_t(1) << 25).too_large);
  CHECK_FALSE(parse_count_text("3.7", int64_t(1) << 25).too_large);
  const int64_t int64_max = std::numeric_limits<int64_t>::max();
  const CountText largest = parse_count_text("9223372036854775807", int64_max);
  REQUIRE(largest.ok);
  CHECK(largest.value == int64_max);
  // 2^63 rounds to int64's largest as a double: the comparison must not let it through.
  CHECK(parse_count_text("9223372036854775808", int64_max).too_large);
  CHECK(parse_count_text("8G", int64_max).value == int64_t(8) << 30);
}

TEST_CASE("count fields are bounded by validate's limits, the same for the page and the CLI") {
  CHECK(count_text_limit("seq") == kMaxSeq);
  CHECK(count_text_limit("gpus") == kMaxGpus);
  CHECK(count_text_limit("global_batch") == kMaxBatch);
  CHECK(count_text_limit("tp") == std::numeric_limits<int64_t>::max());
  CHECK_FALSE(parse_count_text("64M", count_text_limit("seq")).ok);
  CHECK(parse_count_text("32M", count_text_limit("seq")).value == kMaxSeq);
}

// An as-a-user review read a 1000-token run as "0.0 days" to train: the largest unit the time fills.
TEST_CASE("a time to train prints in the largest unit it fills") {
  CHECK(format_duration(61.4 * 86400) == "61.4 days");
  CHECK(format_duration(86400) == "1.0 days");
  CHECK(format_duration(86399) == "24.0 h");  // just short of a day, rounded as printed
  CHECK(format_duration(5.2 * 3600) == "5.2 h");
  CHECK(format_duration(42 * 60) == "42.0 min");
  CHECK(format_duration(3.14) == "3.1 s");
}

TEST_CASE("a number quoted back in a message has no padding zeros") {
  CHECK(format_decimal(2.0) == "2");
  CHECK(format_decimal(0.95) == "0.95");
  CHECK(format_decimal(1e-300) == "1e-300");
}
