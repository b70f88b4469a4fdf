// import_common.h — what every importer shares: text limits and UTF-8 checks at the edge, a JSON
// reader that reports duplicate keys, nesting and parse errors as issues, counts read with range
// checks, and the field writer that names which flag set which field and reports conflicts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/launch_config.h"

namespace meshfit::detail {

// Text quoted for a message: at most 60 bytes, control bytes as '?'. Input must be valid UTF-8.
std::string quote_text(std::string_view text);

// Size and UTF-8 checks every importer runs first; false (with an issue) when the text is unusable.
bool check_import_text(const std::string& text, const char* what, std::vector<Issue>& issues);

// Parses a JSON object: duplicate keys are warnings (the last value counts, as in Python's json),
// nesting deeper than kMaxImportDepth and parse errors are errors. nullopt on errors.
std::optional<nlohmann::json> parse_json_object(const std::string& text, const char* what, std::vector<Issue>& issues);

// Builds LaunchImport::fields: every write names its source ("--num-layers", "[training] seq_len")
// so that two sources giving different values become one conflicting_settings issue.
class FieldWriter {
 public:
  explicit FieldWriter(LaunchImport& out) : out_(out) {}
  void set(const char* key, const nlohmann::json& value, const std::string& source);
  bool has(const char* key) const { return out_.fields.contains(key); }
  void issue(IssueCode code, Severity severity, const std::string& field, const std::string& message) {
    out_.issues.push_back({code, severity, field, message});
  }
  void warn(IssueCode code, const std::string& field, const std::string& message) {
    issue(code, Severity::kWarning, field, message);
  }
  void error(IssueCode code, const std::string& field, const std::string& message) {
    issue(code, Severity::kError, field, message);
  }
  // A count from a JSON/TOML value: integer (or integral float), 1..kMaxImportCount (0 allowed when
  // `allow_zero`). Reports and returns nullopt otherwise.
  std::optional<int64_t> count(const nlohmann::json& value, const std::string& source, bool allow_zero = false);
  // A count from flag text.
  std::optional<int64_t> count_text(const std::string& text, const std::string& source, bool allow_zero = false);
  LaunchImport& result() { return out_; }

 private:
  LaunchImport& out_;
  std::map<std::string, std::string> source_of_;  // field key -> the flag or key that set it
};

}  // namespace meshfit::detail
