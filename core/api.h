// api.h — the JSON entry points every front end calls (native CLI, WASM/JS API), so that the same
// input gives byte-identical results everywhere. Inputs and outputs are flat JSON objects in the
// schema of serialize.h; results carry {"ok": bool, "issues": [...]} and never throw.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "issue.h"

namespace meshfit {

const char* version();  // "0.1.0"

// Config object (optionally with "state": a URL state merged under the other fields) -> the memory
// report, the step-time prediction, the resolved config and its state string.
nlohmann::json run_estimate(nlohmann::json input);
// Config object + search options (pins such as "tp", bounds such as "max_pp", "memory_limit",
// "top", "keep_all") -> the search result.
nlohmann::json run_search(nlohmann::json input, const nlohmann::json& options);
nlohmann::json run_presets();
nlohmann::json run_parse_hf_config(const std::string& text);
nlohmann::json run_encode_state(nlohmann::json input);
nlohmann::json run_decode_state(const std::string& state);

// [SECTION] Text edges (the JS API's JSON text, the CLI's --config file)
// JSON text in: read with parse_json_text (size, depth, key count, UTF-8, duplicate keys); nullopt
// after any error, the issues saying why.
std::optional<nlohmann::json> read_input_text(const std::string& text, const std::string& field,
                                              std::vector<Issue>& issues);
// {"ok": false, "issues": [...]}: the result of a call whose input could not be read.
nlohmann::json failed_call(const std::vector<Issue>& issues);
// The result of a call that failed inside meshfit (a caught exception: a bug, reported as one).
nlohmann::json internal_error(const std::string& what);
// JSON text out; never throws (any invalid UTF-8 that slipped into a string is replaced by U+FFFD).
std::string write_output_text(const nlohmann::json& out, int indent = -1);

}  // namespace meshfit
