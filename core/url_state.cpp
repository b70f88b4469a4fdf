// url_state.cpp — see url_state.h.
#include "url_state.h"

#include <cstdio>
#include <cstdlib>
#include <set>

#include "limits.h"
#include "text.h"

namespace meshfit {

using nlohmann::json;

namespace {

// Short keys for the longest names; everything else is the JSON field name itself.
const std::pair<const char*, const char*> kShortKeys[] = {
    {"global_batch", "gbs"}, {"micro_batch", "mb"}, {"kv_heads", "kv"}};

std::string short_key(const std::string& field) {
  for (const auto& [name, key] : kShortKeys)
    if (field == name) return key;
  return field;
}

std::string field_name(const std::string& key) {
  for (const auto& [name, short_name] : kShortKeys)
    if (key == short_name) return name;
  return key;
}

// Fields in link order: the ones people read first come first.
const char* const kFieldOrder[] = {
    "model", "hidden", "layers", "heads", "kv_heads", "ffn", "vocab", "tied_embeddings", "norm", "mlp",
    "linear_bias", "dropout", "gpu", "gpu_memory_gib", "gpus", "gpus_per_node", "seq", "global_batch",
    "micro_batch", "precision", "optimizer", "recompute", "flash", "sp", "framework", "fp32_grad_buffer",
    "headroom", "dp", "tp", "pp", "cp", "vpp", "zero", "pp_first_stage_layers", "pp_last_stage_layers"};

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
  std::string out = "v=" + std::to_string(kStateVersion);
  for (const char* field : kFieldOrder) {
    const std::string name = field;
    json value = current[name];
    if (name == "model") {
      if (!find_model_preset(preset_id)) continue;  // custom: the dimensions below say it all
      value = preset_id;
    } else if (name == "dp") {
      if (config.layout.dp == 0) continue;  // derived from gpus / (tp*pp*cp)
    } else if (value == reference[name]) {
      continue;
    }
    out += "&" + short_key(name) + "=" + percent_encode(value_text(value));
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

}  // namespace

json state_to_object(const std::string& state, std::vector<Issue>& issues) {
  json object = json::object();
  if (state.size() > kMaxStateBytes) {
    issues.push_back({IssueCode::kInputTooLarge, Severity::kError, "state",
                      "the state is refused: " + std::to_string(state.size()) + " bytes exceed the limit of " +
                          std::to_string(kMaxStateBytes) + " bytes."});
    return object;
  }
  std::string text = state;
  if (!text.empty() && (text[0] == '#' || text[0] == '?')) text.erase(0, 1);
  int version = 0;
  bool version_given = false;
  std::set<std::string> seen;
  size_t pairs = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('&', start);
    if (end == std::string::npos) end = text.size();
    const std::string pair = text.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) continue;
    if (++pairs > kMaxStateKeys) {
      issues.push_back({IssueCode::kInputTooLarge, Severity::kError, "state",
                        "the state is refused: it has more than " + std::to_string(kMaxStateKeys) +
                            " key=value pairs (the limit)."});
      return json::object();
    }
    const size_t equals = pair.find('=');
    std::string key, value;
    if (equals == std::string::npos || !percent_decode(pair.substr(0, equals), key) ||
        !percent_decode(pair.substr(equals + 1), value)) {
      issues.push_back({IssueCode::kUnknownField, Severity::kError, "state",
                        quote_text(pair) + " is not a key=value pair of a meshfit state."});
      continue;
    }
    if (!is_valid_utf8(key) || !is_valid_utf8(value)) {
      issues.push_back({IssueCode::kInvalidText, Severity::kError, is_valid_utf8(key) ? field_name(key) : "state",
                        "the state pair " + quote_text(pair) + " is not valid UTF-8 text once decoded."});
      continue;
    }
    if (!seen.insert(field_name(key)).second) {
      issues.push_back({IssueCode::kDuplicateKey, Severity::kError, field_name(key),
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
    object[field_name(key)] = value_from_text(value);
  }
  if (!version_given) {
    issues.push_back({IssueCode::kUnknownField, Severity::kWarning, "v",
                      "the state has no version (v=1 assumed)."});
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
