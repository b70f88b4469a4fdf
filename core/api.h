// api.h — the JSON entry points every front end calls (native CLI, WASM/JS API), so that the same
// input gives byte-identical results everywhere. Inputs and outputs are flat JSON objects in the
// schema of serialize.h; results carry {"ok": bool, "issues": [...]} and never throw.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

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
// A launch config as text (format "hf", "megatron", "torchtitan", "deepspeed", or "auto" to detect it)
// under `overrides` (config fields, optionally a "state") -> "format", "fields" (what the text set),
// and, when the result is a valid config, "config" and "state". `drop_layout` leaves out the fields
// the layout search chooses, so that a search over the result is free to pick them.
nlohmann::json run_import(const std::string& format, const std::string& text, nlohmann::json overrides, bool drop_layout);
// Config object (optionally with "state") -> {"format", "text", "args" (megatron: the command's
// words)} in a launch format ("megatron", "torchtitan", "deepspeed", "hf"); warnings name what the
// format cannot say.
nlohmann::json run_export(nlohmann::json input, const std::string& format);

}  // namespace meshfit
