// api.cpp — see api.h.
#include "api.h"

#include "io/import_export.h"
#include "search/layout_search.h"
#include "memory/memory_model.h"
#include "perf/perf_model.h"
#include "io/serialize.h"
#include "io/url_state.h"
#include "io/json_text.h"
#include "io/text.h"

namespace meshfit {

using nlohmann::json;

const char* version() { return "0.1.0"; }

namespace {

// Merges a "state" string under the object's other fields; its issues join `issues`.
json resolve_state(json input, std::vector<Issue>& issues) {
  if (!input.is_object()) return input;
  if (!input.contains("state")) return input;
  const json state = input["state"];
  input.erase("state");
  if (!state.is_string()) {
    issues.push_back({IssueCode::kUnknownValue, Severity::kError, "state", "state must be a string."});
    return input;
  }
  json merged = state_to_object(state.get<std::string>(), issues);
  merged.update(input);
  return merged;
}

json with_status(json out, const std::vector<Issue>& issues) {
  out["ok"] = !has_errors(issues);
  out["issues"] = issues_to_json(issues);
  return out;
}

}  // namespace

Estimate estimate(const Config& config) {
  Estimate out;
  out.memory = estimate_memory(config);
  if (out.valid()) out.step = predict_step(config, plan_memory(config));
  return out;
}

Config apply(Config config, const LayoutCandidate& candidate) {
  const bool derived_dp = config.layout.dp == 0;
  config.layout = candidate.layout;
  if (derived_dp) config.layout.dp = 0;
  config.training.micro_batch = candidate.micro_batch;
  config.training.recompute = candidate.recompute;
  if (candidate.layout.tp > 1) config.training.sp = candidate.sp;  // at tp = 1 SP means nothing
  return config;
}

bool same_layout(const Config& config, const LayoutCandidate& candidate) {
  const Layout& a = config.layout;
  const Layout& b = candidate.layout;
  return a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.vpp == b.vpp && a.zero == b.zero &&
         a.pp_first_stage_layers == b.pp_first_stage_layers && a.pp_last_stage_layers == b.pp_last_stage_layers &&
         config.training.micro_batch == candidate.micro_batch && config.training.recompute == candidate.recompute &&
         (config.training.sp == candidate.sp || a.tp == 1);
}

json estimate_to_json(const Config& config, const Estimate& estimate, const std::vector<Issue>& issues) {
  MemoryReport report = estimate.memory;
  report.issues = issues;
  json out = memory_report_to_json(report);
  if (report.valid()) {
    add_step_report(out, estimate.step);
    out["config"] = config_to_json(config);
    out["state"] = encode_state(config);
  }
  return with_status(out, issues);
}

json run_estimate(json input) {
  std::vector<Issue> issues;
  const json object = resolve_state(std::move(input), issues);
  const ParsedConfig parsed = parse_config(object);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  Estimate result;
  if (has_errors(issues)) {
    result.memory.capacity_bytes = parsed.config.gpu.memory_bytes;
  } else {
    result = estimate(parsed.config);
  }
  issues.insert(issues.end(), result.memory.issues.begin(), result.memory.issues.end());
  return estimate_to_json(parsed.config, result, issues);
}

json run_search(json input, const json& options) {
  std::vector<Issue> issues;
  json object = resolve_state(std::move(input), issues);
  if (object.is_object() && options.is_object()) object.update(options);
  bool keep_all = false;
  if (object.is_object() && object.contains("keep_all")) {
    keep_all = object["keep_all"].is_boolean() && object["keep_all"].get<bool>();
    object.erase("keep_all");
  }
  SearchOptions search_options = object.is_object() ? search_options_from_json(object, issues) : SearchOptions{};
  if (keep_all) search_options.keep_all_max = 50000;
  const ParsedConfig parsed = parse_config(object);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  SearchResult result;
  if (!has_errors(issues)) result = search_layouts(parsed.config, search_options);
  issues.insert(issues.end(), result.issues.begin(), result.issues.end());
  result.issues = issues;
  json out = search_result_to_json(result);
  if (result.valid()) out["capacity_bytes"] = parsed.config.gpu.memory_bytes;
  return with_status(out, issues);
}

std::optional<json> read_input_text(const std::string& text, const std::string& field, std::vector<Issue>& issues) {
  std::optional<json> value = parse_json_text(text, field, issues);
  if (has_errors(issues)) return std::nullopt;
  return value;
}

json failed_call(const std::vector<Issue>& issues) { return with_status(json::object(), issues); }

json internal_error(const std::string& what) {
  return failed_call({{IssueCode::kInternalError, Severity::kError, "meshfit",
                       "meshfit failed on this input (a bug, please report it with the input): " + quote_text(what, 200) +
                           "."}});
}

std::string write_output_text(const json& out, int indent) {
  return out.dump(indent, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

json run_presets() { return with_status(presets_to_json(), {}); }

json run_parse_hf_config(const std::string& text) {
  const HfImport import = import_hf_config(text);
  json out = json::object();
  if (import.ok()) out["model"] = hf_import_to_json(import);
  out["model_type"] = import.model_type;
  return with_status(out, import.issues);
}

json run_encode_state(json input) {
  std::vector<Issue> issues;
  const json object = resolve_state(std::move(input), issues);
  const ParsedConfig parsed = parse_config(object);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  json out = json::object();
  if (!has_errors(issues)) out["state"] = encode_state(parsed.config);
  return with_status(out, issues);
}

json run_decode_state(const std::string& state) {
  std::vector<Issue> issues;
  const json object = state_to_object(state, issues);
  const ParsedConfig parsed = parse_config(object);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  json out = json::object();
  out["fields"] = object;  // what the state said, for front ends that fill their inputs from it
  if (!has_errors(issues)) out["config"] = config_to_json(parsed.config);
  return with_status(out, issues);
}

}  // namespace meshfit
