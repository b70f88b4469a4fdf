// url_state.cpp — see url_state.h.
#include "io/url_state.h"

#include <cstdio>
#include <cstdlib>

#include "spec/config_schema.h"

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
      const std::string hex = text.substr(i + 1, 2);
      char* end = nullptr;
      const long value = std::strtol(hex.c_str(), &end, 16);
      if (hex.size() != 2 || *end != '\0') return false;
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

}  // namespace

std::string encode_state(const Config& config) {
  const json current = config_to_json(config);
  json reference = config_to_json(default_config());
  // Model: a preset name stands for its dimensions; only fields that differ from it are written.
  const std::string& model_name = config.model.name;
  const std::string preset_id = model_name.substr(0, model_name.find('+'));
  if (auto preset = find_model_preset(preset_id)) reference.update(model_to_json(*preset));
  if (auto gpu = find_gpu_preset(config.gpu.id)) {
    Config with_gpu = default_config();
    with_gpu.gpu = *gpu;
    reference["gpu_memory_gib"] = config_to_json(with_gpu)["gpu_memory_gib"];
  }
  // Framework-dependent defaults: the profile's ZeRO stage.
  reference["zero"] = framework_profile(config.training.framework).default_zero;
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

json state_to_object(const std::string& state, std::vector<Issue>& issues) {
  json object = json::object();
  std::string text = state;
  if (!text.empty() && (text[0] == '#' || text[0] == '?')) text.erase(0, 1);
  int version = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('&', start);
    if (end == std::string::npos) end = text.size();
    const std::string pair = text.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) continue;
    const size_t equals = pair.find('=');
    std::string key, value;
    if (equals == std::string::npos || !percent_decode(pair.substr(0, equals), key) ||
        !percent_decode(pair.substr(equals + 1), value)) {
      issues.push_back({IssueCode::kUnknownField, Severity::kError, "state",
                        "\"" + pair + "\" is not a key=value pair of a meshfit state."});
      continue;
    }
    if (key == "v") {
      version = std::atoi(value.c_str());
      continue;
    }
    // Short keys map to JSON names; unknown keys pass through for parse_config to report.
    const ConfigField* field = find_config_field_by_state_key(key);
    const std::string name = field ? field->key : key;
    object[name] = field && field->kind == FieldKind::kText ? json(value) : value_from_text(value);
  }
  if (version == 0) {
    issues.push_back({IssueCode::kUnknownField, Severity::kWarning, "v",
                      "the state has no version (v=1 assumed)."});
  } else if (version > kStateVersion) {
    issues.push_back({IssueCode::kOutOfRange, Severity::kError, "v",
                      "state version " + std::to_string(version) + " is newer than this meshfit (" +
                          std::to_string(kStateVersion) + "): open the link in a newer version."});
  }
  // Version 1 is the current schema; a future version 2 decoder maps old keys here.
  return object;
}

ParsedConfig decode_state(const std::string& state) {
  std::vector<Issue> issues;
  const json object = state_to_object(state, issues);
  ParsedConfig parsed = parse_config(object);
  parsed.issues.insert(parsed.issues.begin(), issues.begin(), issues.end());
  return parsed;
}

}  // namespace meshfit
