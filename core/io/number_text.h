// number_text.h — a count typed by a person ("8k", "32K", "1M", "4,096", "1e4") read as exactly the
// integer meant, or refused with a sentence. Shared by the page's fields (and meant for the CLI's
// flags, shell/cli): "8k" must never become 8, nor "3.7" become 3. Suffixes are binary, as sequence lengths
// and GPU counts are spoken: k = 1024 ("8k context" = 8192), M = 1024^2, G = 1024^3.
#pragma once

#include <cstdint>
#include <string>

namespace meshfit {

struct CountText {
  bool ok = false;
  int64_t value = 0;          // when ok
  std::string message;        // when not: "\"3.7\" is not a whole number." (no field name)
  bool too_large = false;     // refused for its size (beyond max), not its form
};

// Accepts optional surrounding spaces, a sign, digits with "," or "_" between groups of three,
// a decimal part, an exponent (e/E) and one suffix (k/K, m/M, g/G), when the result is a whole
// number with |value| <= max. Everything else is refused (hex, "inf", "nan", "8kk", "").
CountText parse_count_text(const std::string& text, int64_t max);

// The `max` for a count field's text by its JSON key: validate.h's bound for the model, cluster and
// batch sizes (kMaxSeq for seq, ...), the same in the page's fields and the CLI's flags; int64's
// largest value for the rest (their range is validated after parsing).
int64_t count_text_limit(const std::string& key);

// A parameter count as the page and the CLI print it: "8.030 B", "12.00 M", "4096".
std::string format_count(double value);

// A time to train as the page and the CLI print it, in the largest unit it fills: "61.4 days",
// "5.2 h", "42.0 min", "3.1 s" (an as-a-user review read 1000 tokens as "0.0 days").
std::string format_duration(double seconds);

}  // namespace meshfit
