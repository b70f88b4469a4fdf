// api.h — the pipeline every front end runs. Typed for callers in the same process (the page's
// ImGui app): estimate(Config) -> Estimate, search_layouts, decode_state/encode_state, apply().
// JSON for process and language edges (native CLI, WASM/JS API): flat objects in the schema of
// config_schema.h, results carrying {"ok": bool, "issues": [...]}, never a throw; the JSON entry
// points are the typed ones plus the shared serialisers, so every front end gets the same numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/memory_band.h"
#include "search/layout_search.h"
#include "memory/memory_model.h"
#include "perf/perf_model.h"
#include "spec/issue.h"

namespace meshfit {

const char* version();  // "0.1.0"

// [SECTION] Typed

struct Estimate {
  MemoryReport memory;               // issues: validation; ranks empty when invalid
  StepReport step;                   // the current layout's step time (valid configs only)
  MemoryBand memory_band;            // how far to trust the worst rank's peak (valid configs only)
  bool valid() const { return memory.valid(); }
  const RankMemory& worst() const { return memory.worst(); }
};

// Validates, then the per-rank memory and the step-time prediction of one config.
Estimate estimate(const Config& config);
// The config with a searched layout applied: its degrees, pipeline split, ZeRO stage, micro-batch,
// recompute and (at tp > 1) sequence parallelism. dp stays derived when the config derived it.
Config apply(Config config, const LayoutCandidate& candidate);
// Whether the config's layout is the candidate's.
bool same_layout(const Config& config, const LayoutCandidate& candidate);
// The CLI's and JS API's estimate object: report, step, resolved config and state; `issues` are
// every problem (input and validation) behind it.
nlohmann::json estimate_to_json(const Config& config, const Estimate& estimate, const std::vector<Issue>& issues);

// [SECTION] JSON

// Config object (optionally with "state": a URL state merged under the other fields) -> the memory
// report, the step-time prediction, the resolved config and its state string.
nlohmann::json run_estimate(nlohmann::json input);
// Config object + search options (pins such as "tp", bounds such as "max_pp", "memory_limit",
// "top", "keep_all") -> the search result.
nlohmann::json run_search(nlohmann::json input, const nlohmann::json& options);
// Config object (+ "methods": "full,lora,qlora") -> every distributed fine-tuning method evaluated:
// those that fit ranked by predicted step time, the rest with the reason (method_select.h).
nlohmann::json run_methods(nlohmann::json input);
// Config object -> how to make it fit (fit_advice.h), as the page's "How to make it fit" lists it:
// the current verdict, the largest micro-batch and sequence length that fit, and the suggested
// changes (each with its state), cheapest in throughput first. Nothing is suggested for a config
// that fits.
nlohmann::json run_fit_advice(nlohmann::json input);
nlohmann::json run_presets();
// Every measured run in tests/data/memory_measured.csv (compiled in) with its prediction: metric,
// measured and predicted bytes, signed error, fit/OOM label and verdict, source; plus the median.
nlohmann::json run_validate();
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
