// url_state.cpp — see url_state.h.
#include "io/url_state.h"

#include "memory/finetune.h"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#include "io/text.h"
#include "spec/config_schema.h"
#include "spec/input_limits.h"

namespace meshfit {

using nlohmann::json;

namespace {

bool unreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '~';
}

std::string percent_encode(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (unreserved(c)) {
      out += c;
    } else {
      char buffer[4];
      std::snprintf(buffer, sizeof buffer, "%%%02X", static_cast<unsigned char>(c));
      out += buffer;
    }
  }
  return out;
}

bool percent_decode(const std::string& text, std::string& out) {
  out.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      if (i + 2 >= text.size()) return false;  // a '%' needs two hex digits after it
      // Exactly two hex digits (strtol alone would also take "-1", " 1" and "+F").
      int value = 0;
      for (size_t k = i + 1; k <= i + 2; ++k) {
        const char c = text[k];
        const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (digit < 0) return false;
        value = value * 16 + digit;
      }
      out += char(value);
      i += 2;
    } else {
      out += text[i] == '+' ? ' ' : text[i];
    }
  }
  return true;
}

std::string value_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  const double number = value.get<double>();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", number);
  if (std::strtod(buffer, nullptr) != number) std::snprintf(buffer, sizeof buffer, "%.17g", number);
  return buffer;
}

// One view key's value read into `view`, or an issue in parse_config's words. A warning: the view
// falls back to its default and the config is still evaluated (a bad tab must not hide a result).
template <typename Enum>
void read_view_word(const std::string& key, const std::string& value, Enum& out, std::vector<Issue>& issues) {
  if (const auto parsed = enum_from_key<Enum>(value)) {
    out = *parsed;
    return;
  }
  issues.push_back({IssueCode::kUnknownValue, Severity::kWarning, key,
                    key + " must be one of " + enum_keys_text<Enum>() + ", got " + quote_text(value) + "."});
}

void read_view_key(const std::string& key, const std::string& value, PageView& view, std::vector<Issue>& issues) {
  if (key == "tab") read_view_word(key, value, view.tab, issues);
  else if (key == "units") read_view_word(key, value, view.units, issues);
  else if (key == "sort") read_view_word(key, value, view.sort, issues);
  else if (key == "order") read_view_word(key, value, view.order, issues);
  else if (key == "filter") {
    if (value.size() > kMaxViewFilterBytes)
      issues.push_back({IssueCode::kOutOfRange, Severity::kWarning, key,
                        "filter is " + std::to_string(value.size()) + " bytes, more than the " +
                            std::to_string(kMaxViewFilterBytes) + " the layouts filter holds."});
    else view.filter = value;
  } else if (key == "pin") {
    // The pinned config is a state of its own: its problems are the link's, named "pin".
    const ParsedConfig pinned = decode_state(value);
    for (const Issue& issue : pinned.issues)
      if (issue.severity == Severity::kError) {
        issues.push_back({issue.code, Severity::kWarning, key,
                          "the pinned configuration is not used: " + issue.field + ": " + issue.message});
        return;
      }
    view.pin = encode_state(pinned.config);
  }
}

}  // namespace

bool operator==(const PageView& a, const PageView& b) {
  return a.tab == b.tab && a.units == b.units && a.sort == b.sort && a.order == b.order && a.filter == b.filter &&
         a.pin == b.pin;
}

bool is_view_key(const std::string& key) {
  for (const char* name : {"tab", "units", "sort", "order", "filter", "pin"})
    if (key == name) return true;
  return false;
}

std::string encode_view(const PageView& view) {
  const PageView defaults;
  std::string out;
  const auto add = [&](const char* key, const std::string& value) { out += "&" + std::string(key) + "=" + percent_encode(value); };
  if (view.tab != defaults.tab) add("tab", to_string(view.tab));
  if (view.units != defaults.units) add("units", to_string(view.units));
  if (view.sort != defaults.sort) add("sort", to_string(view.sort));
  if (view.order != defaults.order) add("order", to_string(view.order));
  if (!view.filter.empty()) add("filter", view.filter);
  if (!view.pin.empty()) add("pin", view.pin);
  return out;
}

std::string encode_state(const Config& config) {
  const json current = config_to_json(config);
  json reference = config_to_json(default_config());
  // Model: a preset name stands for its dimensions; only fields that differ from it are written.
  const std::string& model_name = config.model.name;
  const std::string preset_id = model_name.substr(0, model_name.find('+'));
  if (auto preset = find_model_preset(preset_id)) reference.update(model_to_json(*preset));
  // GPU: a preset name stands for its figures, as parse_config reads it; only the ones set apart
  // from it are written (an RTX 4090 link carried all eleven).
  if (auto gpu = find_gpu_preset(config.gpu.id)) {
    Config with_gpu = default_config();
    with_gpu.gpu = *gpu;
    const json preset = config_to_json(with_gpu);
    for (const auto& [key, value] : preset.items())
      if (key.rfind("gpu_", 0) == 0) reference[key] = value;
  }
  // Framework-dependent defaults: the profile's ZeRO stage.
  reference["zero"] = framework_profile(config.training.framework).default_zero;
  // Fine-tuning: what parse_config fills in for a fine-tuning config that leaves these out.
  if (is_finetune(config.training)) {
    const Framework stack_framework = finetune_defaults(config, false).framework;
    Config with = with_finetune_defaults(config, finetune_defaults(config, config.training.framework != stack_framework));
    with.training.framework = stack_framework;  // written unless the stack's
    const json defaults = config_to_json(with);
    for (const char* key : finetune_default_keys()) reference[key] = defaults[key];
  }
  std::string out = "v=" + std::to_string(kStateVersion);
  for (const ConfigField& field : config_fields()) {
    const std::string name = field.key;
    json value = current[name];
    if (name == "model") {
      if (!find_model_preset(preset_id)) continue;  // custom: the dimensions below say it all
      value = preset_id;
    } else if (name == "dp") {
      if (config.layout.dp == 0) continue;  // derived from gpus / (tp*pp*cp)
    } else if (value == reference[name]) {
      continue;
    }
    out += "&" + std::string(field.state_key) + "=" + percent_encode(value_text(value));
  }
  return out;
}

namespace {

// v= exactly: decimal digits without sign, space or leading zero, and a version this build knows.
int parse_version(const std::string& text) {
  if (text.empty() || text.size() > 6 || text[0] == '0') return 0;
  for (char c : text)
    if (c < '0' || c > '9') return 0;
  return std::atoi(text.c_str());
}

// The state's key=value pairs as written: a leading '#' or '?' dropped, and of a whole page address as
// copied from the browser (https://.../meshfit.html#v=1&...) its hash.
std::vector<std::string> state_pairs(const std::string& state) {
  std::string text = state;
  if (const size_t hash = text.find('#'); hash != std::string::npos && text.find("://") != std::string::npos &&
                                          text.find("://") < hash)
    text.erase(0, hash);
  if (!text.empty() && (text[0] == '#' || text[0] == '?')) text.erase(0, 1);
  std::vector<std::string> pairs;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('&', start);
    if (end == std::string::npos) end = text.size();
    pairs.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return pairs;
}

}  // namespace

json state_to_object(const std::string& state, std::vector<Issue>& issues, PageView* view) {
  PageView unused;
  json object = json::object();
  if (state.size() > kMaxStateBytes) {
    issues.push_back({IssueCode::kInputTooLarge, Severity::kError, "state",
                      "the state is refused: " + std::to_string(state.size()) + " bytes exceed the limit of " +
                          std::to_string(kMaxStateBytes) + " bytes."});
    return object;
  }
  int version = 0;
  bool version_given = false;
  std::set<std::string> seen;
  size_t pairs = 0;
  for (const std::string& pair : state_pairs(state)) {
    if (pair.empty()) continue;
    if (++pairs > kMaxStateKeys) {
      issues.push_back({IssueCode::kInputTooLarge, Severity::kError, "state",
                        "the state is refused: it has more than " + std::to_string(kMaxStateKeys) +
                            " key=value pairs (the limit)."});
      return json::object();
    }
    const size_t equals = pair.find('=');
    std::string key, value;
    if (equals == std::string::npos) {
      issues.push_back({IssueCode::kUnknownField, Severity::kError, "state",
                        quote_text(pair) + " is not a key=value pair of a meshfit state."});
      continue;
    }
    if (!percent_decode(pair.substr(0, equals), key) || !percent_decode(pair.substr(equals + 1), value)) {
      // kUnknownField as a pair without "=": the page's Dismiss drops such a pair and uses the rest.
      issues.push_back({IssueCode::kUnknownField, Severity::kError, "state",
                        quote_text(pair) + " has a broken %-escape: each % must be followed by two hex digits (%25 for a % sign)."});
      continue;
    }
    if (key.empty()) {  // "=5": said as such, not as the field "" (an as-a-user review read `: "" is not a meshfit config field`)
      issues.push_back({IssueCode::kUnknownField, Severity::kError, "state",
                        quote_text(pair) + " has no field name before its \"=\"."});
      continue;
    }
    if (!is_valid_utf8(key) || !is_valid_utf8(value)) {
      issues.push_back({IssueCode::kInvalidText, Severity::kError, "state",
                        "the state pair " + quote_text(pair) + " is not valid UTF-8 text once decoded."});
      continue;
    }
    // Short keys map to JSON names; unknown keys pass through for parse_config to report.
    const ConfigField* field = find_config_field_by_state_key(key);
    const std::string name = field ? field->key : key;
    if (!seen.insert(name).second) {
      issues.push_back({IssueCode::kDuplicateKey, Severity::kError, name,
                        "the key " + quote_text(key) + " appears twice in the state; give each field once."});
      continue;
    }
    if (key == "v") {
      version_given = true;
      version = parse_version(value);
      if (version > kStateVersion)
        issues.push_back({IssueCode::kStateVersion, Severity::kError, "v",
                          "state version " + std::to_string(version) + " is newer than this meshfit (" +
                              std::to_string(kStateVersion) + "): open the link in a newer version."});
      else if (version == 0)
        issues.push_back({IssueCode::kStateVersion, Severity::kError, "v",
                          "state version " + quote_text(value) + " is not a version number (1 to " +
                              std::to_string(kStateVersion) + ", digits only)."});
      continue;
    }
    if (!field && is_view_key(key)) {
      read_view_key(key, value, view ? *view : unused, issues);
      continue;
    }
    object[name] = field && field->kind == FieldKind::kText ? json(value) : value_from_text(value);
  }
  if (!version_given) {
    issues.push_back({IssueCode::kStateVersion, Severity::kWarning, "v",
                      "the state has no version (v=1 assumed)."});
  }
  // Version 1 is the current schema; a future version 2 decoder maps old keys here.
  return object;
}

std::map<std::string, std::string> state_texts(const std::string& state) {
  std::map<std::string, std::string> out;
  if (state.size() > kMaxStateBytes) return out;
  for (const std::string& pair : state_pairs(state)) {
    const size_t equals = pair.find('=');
    std::string key, value;
    if (equals == std::string::npos || !percent_decode(pair.substr(0, equals), key) ||
        !percent_decode(pair.substr(equals + 1), value))
      continue;
    const ConfigField* field = find_config_field_by_state_key(key);
    out.emplace(field ? field->key : key, value);
  }
  return out;
}

ParsedConfig decode_state(const std::string& state, PageView* view) {
  std::vector<Issue> issues;
  const json object = state_to_object(state, issues, view);
  ParsedConfig parsed = parse_config(object);
  parsed.issues.insert(parsed.issues.begin(), issues.begin(), issues.end());
  return parsed;
}

Config methods_base_config(const Config& config) {
  if (is_finetune(config.training)) return config;
  // Each method chooses its own tp, ZeRO stage and dp: the pretraining layout goes, so the stack's
  // default batch is per the GPUs (an as-a-user review saw tp 8 x pp 4 on 64 GPUs leave a batch of
  // 2, which no method with more data parallelism divides: 0 methods listed).
  Config neutral = config;
  neutral.layout = Layout{};
  neutral.layout.zero = framework_profile(config.training.framework).default_zero;
  const ParsedConfig parsed = decode_state(encode_state(neutral) + "&finetune=lora");
  return has_errors(parsed.issues) ? config : parsed.config;
}

}  // namespace meshfit
