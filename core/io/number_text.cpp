// number_text.cpp — see number_text.h. The grammar is checked by hand (no locale, no strtod
// leniency), then the value is computed in long double and required to be a whole number.
#include "io/number_text.h"

#include <cctype>
#include <cstdio>
#include <cmath>
#include <limits>

#include "spec/input_limits.h"
#include "spec/validate.h"
#include "units.h"

namespace meshfit {

namespace {

CountText refuse(const std::string& text, const std::string& why) {
  CountText out;
  out.message = "\"" + text + "\" " + why;
  return out;
}

}  // namespace

CountText parse_count_text(const std::string& raw, int64_t max) {
  size_t begin = 0, end = raw.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(raw[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(raw[end - 1]))) --end;
  const std::string text = raw.substr(begin, end - begin);
  if (text.empty()) return refuse(text, "is empty: type a whole number such as 4096 or 8k.");
  if (text.size() > 64) return refuse(text.substr(0, 16) + "...", "is too long to be a number.");

  size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') negative = text[i++] == '-';
  // Integer part: digits, with "," or "_" only between groups of exactly three digits.
  std::string digits;
  size_t group = 0;
  bool separated = false;
  for (; i < text.size(); ++i) {
    const char ch = text[i];
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      digits += ch;
      ++group;
    } else if ((ch == ',' || ch == '_') && !digits.empty() && (separated ? group == 3 : group <= 3) && i + 1 < text.size() &&
               std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      separated = true;
      group = 0;
    } else {
      break;
    }
  }
  if (separated && group != 3) return refuse(text, "is not a number: separators go between groups of three digits.");
  std::string fraction;
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) fraction += text[i];
  }
  if (digits.empty() && fraction.empty()) return refuse(text, "is not a number.");
  long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    std::string exponent_digits;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) exponent_digits += text[i];
    if (exponent_digits.empty() || exponent_digits.size() > 3) return refuse(text, "is not a number.");
    exponent = std::stol(exponent_digits) * (exponent_negative ? -1 : 1);
  }
  long double scale = 1;
  if (i < text.size()) {
    switch (text[i]) {
      case 'k': case 'K': scale = 1024.0L; break;
      case 'm': case 'M': scale = 1024.0L * 1024.0L; break;
      case 'g': case 'G': scale = 1024.0L * 1024.0L * 1024.0L; break;
      default: return refuse(text, "is not a number (a whole number, optionally with k, M or G).");
    }
    ++i;
  }
  if (i != text.size()) return refuse(text, "is not a number (a whole number, optionally with k, M or G).");

  long double value = 0;
  for (char ch : digits) value = value * 10 + (ch - '0');
  long double place = 0.1L;
  for (char ch : fraction) {
    value += (ch - '0') * place;
    place /= 10;
  }
  value *= std::pow(10.0L, static_cast<long double>(exponent)) * scale;
  if (negative) value = -value;
  // Compared in long double (exact for every int64), so max = INT64_MAX cannot let 2^63 through.
  if (!std::isfinite(static_cast<double>(value)) || std::fabs(value) > static_cast<long double>(max)) {
    CountText out = refuse(text, "is beyond the largest supported value, " + std::to_string(max) + ".");
    out.too_large = true;
    return out;
  }
  const long double whole = std::round(value);
  if (std::fabs(static_cast<double>(value - whole)) > 1e-9L * std::max<long double>(1, std::fabs(value)))
    return refuse(text, "is not a whole number.");
  CountText out;
  out.ok = true;
  out.value = static_cast<int64_t>(whole);
  return out;
}

int64_t count_text_limit(const std::string& key) {
  struct Limit { const char* key; int64_t max; };
  static const Limit limits[] = {
      {"hidden", kMaxHidden}, {"layers", kMaxLayers}, {"heads", kMaxHeads}, {"kv_heads", kMaxHeads},
      {"head_dim", kMaxHeadDim}, {"ffn", kMaxFfn}, {"vocab", kMaxVocab}, {"gpus", kMaxGpus}, {"gpus_per_node", kMaxGpus},
      {"gpu_nvlink_domain", kMaxGpus}, {"gpu_sms", kMaxGpuSms}, {"seq", kMaxSeq}, {"global_batch", kMaxBatch}, {"micro_batch", kMaxBatch}};
  for (const Limit& limit : limits)
    if (key == limit.key) return limit.max;
  return std::numeric_limits<int64_t>::max();
}

std::string format_count(double value) {
  char text[32];
  if (value >= 1e9) std::snprintf(text, sizeof text, "%.3f B", value / 1e9);
  else if (value >= 1e6) std::snprintf(text, sizeof text, "%.2f M", value / 1e6);
  else std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

std::string format_duration(double seconds) {
  char text[48];
  if (seconds >= kSecondsPerDay) std::snprintf(text, sizeof text, "%.1f days", seconds_to_days(seconds));
  else if (seconds >= 3600) std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
  else if (seconds >= 60) std::snprintf(text, sizeof text, "%.1f min", seconds / 60);
  else std::snprintf(text, sizeof text, "%.1f s", seconds);
  return text;
}

}  // namespace meshfit
