// config_schema.h — the one table of config fields. Each row is one input: its JSON/JS key, its
// URL-state key, its CLI flag, help, kind, allowed words and accessors into Config. Parsing and
// emitting JSON (serialize.*), the URL state (url_state.*), the CLI's flags (shell/cli) and the
// test that checks web/meshfit.d.ts all loop over it; defaults are the struct initialisers
// (default_config()), except zero, whose default is the framework profile's (framework.h).
// Adding an input = one struct member + one row here.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/config.h"
#include "spec/issue.h"

namespace meshfit {

enum class FieldKind {
  kInteger,  // JSON integer; CLI/URL text parsed as a number
  kNumber,   // JSON number
  kBoolean,  // true/false; CLI --flag / --no-flag
  kWord,     // one of `allowed` (an enum's name table)
  kPreset,   // a preset id or "custom" (model, gpu): applied before every other field
  kText,     // free text, never parsed as a number: UTF-8, at most kMaxTextFieldBytes (check_text_field)
};

// kRun: free text about the run (notes, ...): the page lists these fields under "Run" and shows the
// non-empty ones in its header and its Markdown report, so a new one needs no UI code.
enum class FieldGroup { kModel, kHardware, kTraining, kLayout, kRun };

struct ConfigField {
  const char* key;                  // JSON / JS key, snake_case
  const char* state_key;            // URL state key (short for the longest names)
  const char* help;                 // CLI help and docs
  FieldKind kind;
  FieldGroup group;
  std::string allowed;              // kWord: the accepted words ("none, selective, full"); kNumber: its range, if any
  bool dimension = false;           // model dimension: overriding it makes a preset "+custom"
  bool required_without_preset = false;  // a custom model must give it
  // kWord that was a boolean (dp_comm_overlap): true/false and 1/0 still read as on/off in JSON,
  // URL state and the JS API, and the CLI keeps --flag (= on) and --no-flag (= off).
  bool reads_old_boolean = false;
  nlohmann::json (*get)(const Config&) = nullptr;
  // Sets a value already checked against `kind` (integers as int64, numbers as double); returns
  // false when a word is not one of `allowed` or a number is outside the range `allowed` states.
  bool (*set)(Config&, const nlohmann::json&) = nullptr;

  std::string flag() const;         // CLI flag name: the key with '-' for '_' ("kv-heads")
};

// A key an older meshfit wrote and still reads, so that saved configs, scripts and shared links keep
// working after two inputs became one. It is accepted wherever a field is (JSON, URL state, CLI
// --flag, JS API), gives a renamed_field warning saying how to write it now, and sets the field that
// replaced it, before the fields, so that the new key wins when both are given.
struct LegacyField {
  const char* key;          // JSON key = URL state key; CLI --key (and --no-key: booleans only)
  FieldKind kind;           // what the old key held; checked like a field of that kind
  const char* replaced_by;  // the current field's key
  const char* how;          // the warning's advice, e.g. "write kernels=compiled"
  // The replacing field's value for a checked old value; null = leave the field as it is.
  nlohmann::json (*translate)(const nlohmann::json& value) = nullptr;
};

// In URL-state order: the fields people read first come first.
const std::vector<ConfigField>& config_fields();
const ConfigField* find_config_field(const std::string& key);           // by JSON key
const ConfigField* find_config_field_by_state_key(const std::string& state_key);
// A free-text field's value: valid UTF-8 and at most kMaxTextFieldBytes (input_limits.h), else an
// invalid_text / input_too_large issue naming the field. parse_config and validate both call it.
bool check_text_field(const ConfigField& field, const std::string& text, std::vector<Issue>& issues);
const std::vector<LegacyField>& legacy_config_fields();
const LegacyField* find_legacy_field(const std::string& key);

}  // namespace meshfit
