// json_text.cpp — see json_text.h. A first SAX pass (nlohmann-json's parser is iterative, so depth
// costs no stack there) enforces the limits and finds duplicate keys; only then is the DOM built,
// whose copy, compare and dump are recursive.
#include "io/json_text.h"

#include <algorithm>
#include <set>

#include "spec/input_limits.h"
#include "io/text.h"

namespace meshfit {

using nlohmann::json;

namespace {

class LimitChecker : public nlohmann::json_sax<json> {
 public:
  explicit LimitChecker(const std::string& field, std::vector<Issue>& issues) : field_(field), issues_(issues) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    path_.emplace_back();
    return enter();
  }
  bool key(string_t& name) override {
    if (++key_count_ > kMaxJsonKeys) {
      too_large("it has more than " + std::to_string(kMaxJsonKeys) + " keys (the limit)");
      return false;
    }
    path_.back() = name;
    if (!keys_.back().insert(name).second && duplicates_ < 8) {
      ++duplicates_;
      const std::string where = dotted_path();  // "zero_optimization.stage", not just "stage"
      issues_.push_back({IssueCode::kDuplicateKey, Severity::kError, where,
                         "the key " + quote_text(where) + " appears twice in the same object of " + field_ +
                             "; give each field once."});
    }
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    path_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    path_.emplace_back("[]");
    return enter();
  }
  bool end_array() override {
    path_.pop_back();
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) override {
    if (!failed_)
      issues_.push_back({IssueCode::kMalformedJson, Severity::kError, field_,
                         field_ + " is not valid JSON: " + quote_text(error.what(), 200) + "."});
    failed_ = true;
    return false;
  }
  bool failed() const { return failed_; }

 private:
  bool enter() {
    if (++depth_ > kMaxJsonDepth) {
      too_large("it nests deeper than " + std::to_string(kMaxJsonDepth) + " levels (the limit)");
      return false;
    }
    return true;
  }
  std::string dotted_path() const {
    std::string out;
    for (const std::string& part : path_) {
      if (part == "[]") out += "[]";
      else out += (out.empty() ? "" : ".") + part;
    }
    return out;
  }
  void too_large(const std::string& why) {
    failed_ = true;
    issues_.push_back({IssueCode::kInputTooLarge, Severity::kError, field_, field_ + " is refused: " + why + "."});
  }

  const std::string& field_;
  std::vector<Issue>& issues_;
  std::vector<std::set<std::string>> keys_;
  std::vector<std::string> path_;  // the key at each open object ("[]" for an array)
  int depth_ = 0;
  size_t key_count_ = 0;
  int duplicates_ = 0;
  bool failed_ = false;
};

}  // namespace

bool check_input_text(std::string_view text, const std::string& field, size_t max_bytes, std::vector<Issue>& issues) {
  if (text.size() > max_bytes) {
    issues.push_back({IssueCode::kInputTooLarge, Severity::kError, field,
                      field + " is refused: " + std::to_string(text.size()) + " bytes exceed the limit of " +
                          std::to_string(max_bytes) + " bytes."});
    return false;
  }
  if (!is_valid_utf8(text)) {
    issues.push_back({IssueCode::kInvalidText, Severity::kError, field,
                      field + " is not valid UTF-8 text: " + quote_text(text) + "."});
    return false;
  }
  // nlohmann's lexer ends the input at a NUL byte (C-string compatibility): what follows would be
  // dropped unsaid. No text config holds one.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    issues.push_back({IssueCode::kInvalidText, Severity::kError, field,
                      field + " holds a NUL byte at offset " + std::to_string(nul) + ": not a text file."});
    return false;
  }
  return true;
}

std::optional<json> parse_json_text(std::string_view text, const std::string& field, std::vector<Issue>& issues) {
  if (!check_input_text(text, field, kMaxJsonBytes, issues)) return std::nullopt;
  LimitChecker checker(field, issues);
  const bool complete = json::sax_parse(text, &checker, json::input_format_t::json, /*strict=*/true,
                                        /*ignore_comments=*/true);
  if (!complete || checker.failed()) return std::nullopt;
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (value.is_discarded()) {  // not expected after the checked pass; stay safe anyway
    issues.push_back({IssueCode::kMalformedJson, Severity::kError, field, field + " is not valid JSON."});
    return std::nullopt;
  }
  return value;
}

std::optional<json> parse_json_object(std::string_view text, const std::string& field, std::vector<Issue>& issues) {
  const size_t errors_before = std::count_if(issues.begin(), issues.end(), [](const Issue& i) { return i.severity == Severity::kError; });
  std::optional<json> value = parse_json_text(text, field, issues);
  const size_t errors_after = std::count_if(issues.begin(), issues.end(), [](const Issue& i) { return i.severity == Severity::kError; });
  if (!value || errors_after > errors_before) return std::nullopt;
  if (!value->is_object()) {
    issues.push_back({IssueCode::kMalformedJson, Severity::kError, field,
                      field + " must be a JSON object, got " + value->type_name() + "."});
    return std::nullopt;
  }
  return value;
}

}  // namespace meshfit
