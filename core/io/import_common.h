// import_common.h — what every importer shares beyond the text checks and the JSON reader of every
// input (io/json_text.h: check_input_text, parse_json_object): counts read with range checks, and the
// field writer that names which flag set which field and reports conflicts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_text.h"
#include "io/launch_config.h"
#include "io/text.h"

namespace meshfit::detail {

// The start of every import: `out` for `format`, and the text checks (size, UTF-8) under `field`;
// false when the text is unusable (the issue is in out.issues).
bool begin_import(LaunchImport& out, LaunchFormat format, const std::string& text, const char* field);

// The start of every export: an empty result for `format`, with a warning when the config was made
// for another framework than the one the format launches: "the config is for X; " + `consequence`.
LaunchExport begin_export(LaunchFormat format, const Config& config, Framework launches, const char* consequence);
// A setting the export's format cannot carry (unsupported_setting warning on `field`).
void warn_unsupported(LaunchExport& out, const std::string& field, const std::string& message);

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
