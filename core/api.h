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
// Config object (+ "methods": "full,lora,qlora") -> every distributed fine-tuning method evaluated:
// those that fit ranked by predicted step time, the rest with the reason (method_select.h).
nlohmann::json run_methods(nlohmann::json input);
nlohmann::json run_presets();
// Every measured run in tests/data/memory_measured.csv (compiled in) with its prediction: metric,
// measured and predicted bytes, signed error, fit/OOM label and verdict, source; plus the median.
nlohmann::json run_validate();
nlohmann::json run_parse_hf_config(const std::string& text);
nlohmann::json run_encode_state(nlohmann::json input);
nlohmann::json run_decode_state(const std::string& state);

}  // namespace meshfit
