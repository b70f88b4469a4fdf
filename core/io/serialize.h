// serialize.h — JSON for configs (a flat snake_case object: CLI --config files and flags, the JS API,
// the URL state; fields from the schema table, spec/config_schema.h) and for reports and presets.
// JSON via nlohmann-json (Debian nlohmann-json3-dev), header-only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec/config.h"
#include "spec/issue.h"
#include "search/layout_search.h"
#include "memory/memory_model.h"
#include "perf/perf_model.h"

namespace meshfit {

struct ParsedConfig {
  Config config;
  std::vector<Issue> issues;  // parse problems (unknown keys, wrong types, unknown presets)
};

// A value typed as text (a CLI flag, a URL state value) as JSON: integers and decimals as numbers,
// so that parse_config reports fractions as not_integer; true/false as booleans; else a string.
// Strict: only the JSON number grammar is a number ("0x10", " 5", "inf" stay text; integers beyond
// int64 become doubles, which the readers refuse as too large).
nlohmann::json value_from_text(const std::string& text);
// A value for an issue message: strings quoted with quote_text, anything else dumped, at most ~64 bytes.
std::string describe(const nlohmann::json& value);

// The defaults every front end starts from: no model, H100 SXM, 8 GPUs, TrainingSpec/Layout defaults.
Config default_config();
// Reads a flat JSON object over default_config(). Presets ("model", "gpu") are applied before the
// individual fields, whatever the key order. Never throws.
ParsedConfig parse_config(const nlohmann::json& object);
// The fields only a fine-tune reads (adapters and the stack): parse_config says when a pretraining
// config sets one apart from its default; the Methods ranking, which fine-tunes any config, reads them.
const std::vector<const char*>& finetune_only_keys();
// The architecture fields of a model (hidden, layers, heads, kv_heads, ffn, vocab, tied_embeddings,
// norm, mlp, linear_bias, dropout), as in a config object.
nlohmann::json model_to_json(const ModelSpec& model);
// Every field of a config, resolved (model dimensions written out even when a preset named them).
nlohmann::json config_to_json(const Config& config);

nlohmann::json issues_to_json(const std::vector<Issue>& issues);
nlohmann::json memory_report_to_json(const MemoryReport& report);
nlohmann::json presets_to_json();

// Search options from the same flat object: layout fields present in it (dp, tp, pp, cp, vpp,
// micro_batch, zero, recompute, sp) pin that dimension; max_tp, max_pp, max_cp, max_vpp,
// max_micro_batch, max_dp bound it; memory_limit, top and budget set the rest. Every pin and bound
// is range-checked (not_positive below 1, out_of_range above its limit, zero outside 0..3). The
// keys it reads are removed from `object`, so that parse_config sees only config fields.
// The marking every front end shows beside a spatial-temporal (PrimePar-style) layout.
constexpr const char* kSpatialTemporalNote = "modelled, not implemented by any public framework";
SearchOptions search_options_from_json(nlohmann::json& object, std::vector<Issue>& issues);
nlohmann::json layout_candidate_to_json(const LayoutCandidate& candidate);
nlohmann::json search_result_to_json(const SearchResult& result);
// Candidates as CSV (io/csv_text's writer): one column per key of layout_candidate_to_json, nested
// objects flattened ("breakdown.compute_s"), columns in order of first appearance; a candidate
// without a key (no step report when infeasible) leaves that cell empty.
std::string layouts_to_csv(const std::vector<LayoutCandidate>& candidates);
// Adds step_time_s, tokens_per_s_per_gpu, mfu, hfu, tflops_per_gpu and the breakdown to `out`.
void add_step_report(nlohmann::json& out, const StepReport& step);

}  // namespace meshfit
