// import_common.cpp — see import_common.h.
#include "io/import_common.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "io/text.h"
#include "spec/config_schema.h"

namespace meshfit::detail {

using nlohmann::json;

std::string quote_text(std::string_view text) {
  constexpr size_t kMaxQuoted = 60;
  std::string out = "\"";
  size_t i = 0;
  for (; i < text.size() && i < kMaxQuoted; ++i) out += static_cast<unsigned char>(text[i]) < 0x20 ? '?' : text[i];
  // Never cut inside a UTF-8 sequence.
  while (out.size() > 1 && i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) {
    out.pop_back();
    --i;
  }
  if (i < text.size()) out += "...";
  return out + "\"";
}

bool check_import_text(const std::string& text, const char* what, std::vector<Issue>& issues) {
  if (text.size() > kMaxImportBytes) {
    issues.push_back({IssueCode::kOutOfRange, Severity::kError, what,
                      std::string(what) + " is " + std::to_string(text.size()) + " bytes; the limit is " +
                          std::to_string(kMaxImportBytes) + " (1 MiB)."});
    return false;
  }
  if (!is_valid_utf8(text)) {
    issues.push_back({IssueCode::kMalformedInput, Severity::kError, what, std::string(what) + " is not valid UTF-8 text."});
    return false;
  }
  return true;
}

namespace {

// Captures nlohmann's parse error message (the DOM parser without exceptions only says "discarded").
struct ErrorSax : nlohmann::json_sax<json> {
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) override {
    message = error.what();
    return false;
  }
};

}  // namespace

std::optional<json> parse_json_object(const std::string& text, const char* what, std::vector<Issue>& issues) {
  if (!check_import_text(text, what, issues)) return std::nullopt;
  std::vector<std::set<std::string>> keys;  // keys seen in each open object
  std::vector<std::string> duplicates;
  bool too_deep = false;
  const json::parser_callback_t watch = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= kMaxImportDepth) too_deep = true;
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && parsed.is_string() && !keys.back().insert(parsed.get<std::string>()).second)
          duplicates.push_back(parsed.get<std::string>());
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      default:
        break;
    }
    return !too_deep;
  };
  json value = json::parse(text, watch, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (too_deep) {
    issues.push_back({IssueCode::kOutOfRange, Severity::kError, what,
                      std::string(what) + " nests deeper than " + std::to_string(kMaxImportDepth) + " levels."});
    return std::nullopt;
  }
  if (value.is_discarded()) {
    ErrorSax sax;
    json::sax_parse(text, &sax, nlohmann::detail::input_format_t::json, /*strict=*/true, /*ignore_comments=*/true);
    // nlohmann quotes the last bytes it read, which can end inside a UTF-8 sequence: keep ASCII only.
    for (char& c : sax.message)
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    issues.push_back({IssueCode::kMalformedInput, Severity::kError, what,
                      std::string(what) + " is not valid JSON (truncated?): " +
                          (sax.message.empty() ? std::string("parse error") : sax.message) + "."});
    return std::nullopt;
  }
  if (!value.is_object()) {
    issues.push_back({IssueCode::kMalformedInput, Severity::kError, what,
                      std::string(what) + " must be a JSON object, got " + value.type_name() + "."});
    return std::nullopt;
  }
  for (const std::string& key : duplicates)
    issues.push_back({IssueCode::kConflictingSettings, Severity::kWarning, key,
                      "key " + quote_text(key) + " appears more than once in " + what + "; the last value is used."});
  return value;
}

void FieldWriter::set(const char* key, const json& value, const std::string& source) {
  MESHFIT_ASSERT(find_config_field(key) != nullptr, "importer writes a key that is not in the config schema");
  const auto previous = source_of_.find(key);
  if (previous != source_of_.end() && out_.fields[key] != value && previous->second != source)
    warn(IssueCode::kConflictingSettings, key,
         source + " gives " + key + "=" + value.dump() + " but " + previous->second + " gave " + out_.fields[key].dump() +
             "; " + source + " is used.");
  out_.fields[key] = value;
  source_of_[key] = source;
}

std::optional<int64_t> FieldWriter::count(const json& value, const std::string& source, bool allow_zero) {
  double number = 0;
  if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(kMaxImportCount)) {
    number = double(kMaxImportCount) * 2;
  } else if (value.is_number_integer()) {
    number = double(value.get<int64_t>());
  } else if (value.is_number_float() && std::isfinite(value.get<double>()) &&
             value.get<double>() == std::floor(value.get<double>())) {
    number = value.get<double>();
  } else {
    error(IssueCode::kNotInteger, source, source + " must be an integer, got " + quote_text(value.dump()) + ".");
    return std::nullopt;
  }
  if (number > double(kMaxImportCount)) {
    error(IssueCode::kOutOfRange, source, source + "=" + quote_text(value.dump()) + " is beyond any real run (limit 2^40).");
    return std::nullopt;
  }
  if (number < 0 || (number == 0 && !allow_zero)) {
    error(IssueCode::kNotPositive, source, source + " must be positive, got " + quote_text(value.dump()) + ".");
    return std::nullopt;
  }
  return int64_t(number);
}

std::optional<int64_t> FieldWriter::count_text(const std::string& text, const std::string& source, bool allow_zero) {
  char* end = nullptr;
  errno = 0;
  const long long number = text.empty() ? 0 : std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || !end || *end != '\0') {
    const std::string hint = !text.empty() && text[0] == '$' ? " (shell variables are not expanded: paste the values)" : "";
    error(IssueCode::kNotInteger, source, source + " must be an integer, got " + quote_text(text) + hint + ".");
    return std::nullopt;
  }
  if (errno == ERANGE) {
    error(IssueCode::kOutOfRange, source, source + "=" + quote_text(text) + " is beyond any real run (limit 2^40).");
    return std::nullopt;
  }
  return count(json(int64_t(number)), source, allow_zero);
}

}  // namespace meshfit::detail
