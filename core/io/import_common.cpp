// import_common.cpp — see import_common.h.
#include "io/import_common.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "io/text.h"
#include "spec/config_schema.h"

namespace meshfit::detail {

using nlohmann::json;

bool begin_import(LaunchImport& out, LaunchFormat format, const std::string& text, const char* field) {
  out.format = format;
  return check_input_text(text, field, kMaxImportBytes, out.issues);
}

LaunchExport begin_export(LaunchFormat format, const Config& config, Framework launches, const char* consequence) {
  LaunchExport out;
  out.format = format;
  if (config.training.framework != launches)
    warn_unsupported(out, "framework",
                     std::string("the config is for ") + enum_label(config.training.framework) + "; " + consequence);
  return out;
}

void warn_unsupported(LaunchExport& out, const std::string& field, const std::string& message) {
  out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, field, message});
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

namespace {

// JSON writes a NaN or an infinity as null; a TOML nan/inf (or a JS NaN) is shown as itself.
std::string shown(const json& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>()))
    return std::isnan(value.get<double>()) ? "nan" : value.get<double>() > 0 ? "inf" : "-inf";
  return value.dump();
}

}  // namespace

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
    error(IssueCode::kNotInteger, source, source + " must be an integer, got " + quote_text(shown(value)) + ".");
    return std::nullopt;
  }
  if (number > double(kMaxImportCount)) {
    error(IssueCode::kOutOfRange, source, source + "=" + quote_text(shown(value)) + " is beyond any real run (limit 2^40).");
    return std::nullopt;
  }
  if (number < 0 || (number == 0 && !allow_zero)) {
    error(IssueCode::kNotPositive, source,
          source + (allow_zero ? " must be 0 or more" : " must be positive") + ", got " + quote_text(shown(value)) + ".");
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
