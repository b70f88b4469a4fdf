// json_text.h — the one way text becomes JSON in meshfit (config files, the JS API, pasted HF
// config.json): length, UTF-8, nesting depth and key count are checked before a DOM is built, and
// duplicate keys, which nlohmann-json would silently resolve to the last, are reported.
// Every problem is an issue; nothing throws.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/issue.h"

namespace meshfit {

// The checks every text from outside gets first: at most `max_bytes` bytes (input_too_large) and
// valid UTF-8 (invalid_text), each naming `field`. False, with the issue, when the text is unusable.
// JSON, TOML and command-line importers all call this, so an input's size and encoding give the
// same codes whatever its format.
bool check_input_text(std::string_view text, const std::string& field, size_t max_bytes, std::vector<Issue>& issues);

// The parsed value, or nullopt with issues (input_too_large, invalid_text, malformed_json) naming
// `field` (e.g. "config", "config.json"). Duplicate keys give a duplicate_key error and a value.
// Comments (// and /* */) are allowed, as in the CLI's config files and HF exports.
std::optional<nlohmann::json> parse_json_text(std::string_view text, const std::string& field,
                                              std::vector<Issue>& issues);

// parse_json_text for inputs that must be one JSON object (launch configs): nullopt on any error,
// including a duplicate key (an error, as everywhere: which of the two values was meant is unknown)
// and a top-level value that is not an object (malformed_json).
std::optional<nlohmann::json> parse_json_object(std::string_view text, const std::string& field,
                                                std::vector<Issue>& issues);

}  // namespace meshfit
