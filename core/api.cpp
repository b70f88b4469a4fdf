// api.cpp — see api.h.
#include "api.h"

#include "method_select.h"


#include "import_export.h"
#include "layout_search.h"
#include "measured_runs.h"
#include "memory_model.h"
#include "perf_model.h"
#include "serialize.h"
#include "url_state.h"

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

json run_estimate(json input) {
  std::vector<Issue> issues;
  const json object = resolve_state(std::move(input), issues);
  const ParsedConfig parsed = parse_config(object);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  MemoryReport report;
  if (has_errors(issues)) {
    report.capacity_bytes = parsed.config.gpu.memory_bytes;
  } else {
    report = estimate_memory(parsed.config);
  }
  issues.insert(issues.end(), report.issues.begin(), report.issues.end());
  report.issues = issues;
  json out = memory_report_to_json(report);
  if (report.valid()) {
    add_step_report(out, predict_step(parsed.config, plan_memory(parsed.config)));
    out["config"] = config_to_json(parsed.config);
    out["state"] = encode_state(parsed.config);
  }
  return with_status(out, issues);
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

json run_methods(json input) {
  std::vector<Issue> issues;
  json object = resolve_state(std::move(input), issues);
  MethodOptions options;
  if (object.is_object() && object.contains("methods")) {
    const json methods = object["methods"];
    object.erase("methods");
    const std::string text = methods.is_string() ? methods.get<std::string>() : "";
    options.methods = {false, false, false};
    size_t begin = 0;
    while (begin <= text.size()) {
      const size_t comma = std::min(text.find(',', begin), text.size());
      const std::string word = text.substr(begin, comma - begin);
      if (const auto method = enum_from_key<FinetuneMethod>(word); method && *method != FinetuneMethod::kNone)
        options.methods[size_t(*method) - 1] = true;
      begin = comma + 1;
    }
    if (!options.methods[0] && !options.methods[1] && !options.methods[2])
      issues.push_back({IssueCode::kUnknownValue, Severity::kError, "methods",
                        "methods \"" + text + "\" names none of full, lora, qlora."});
  }
  // The fine-tuning defaults (finetune.h) apply to what the base config leaves out.
  if (object.is_object() && !object.contains("finetune")) object["finetune"] = "lora";
  const ParsedConfig parsed = parse_config(object);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  MethodRanking ranking;
  if (!has_errors(issues)) ranking = rank_finetune_methods(parsed.config, options);
  issues.insert(issues.end(), ranking.issues.begin(), ranking.issues.end());
  const auto candidate_json = [](const MethodCandidate& c) {
    json out = {{"strategy", c.strategy},
                {"finetune", to_string(c.config.training.finetune)},
                {"framework", to_string(c.config.training.framework)},
                {"zero", c.config.layout.zero},
                {"tp", c.config.layout.tp},
                {"offload", to_string(c.config.training.offload)},
                {"recompute", to_string(c.config.training.recompute)},
                {"fits", c.fits},
                {"device_bytes", c.device_bytes},
                {"host_bytes", c.host_bytes},
                {"step_time_s", c.step_time_s},
                {"tokens_per_s_per_gpu", c.tokens_per_s_per_gpu}};
    if (!c.rejected.empty()) out["rejected"] = c.rejected;
    return out;
  };
  json out = {{"ranked", json::array()}, {"rejected", json::array()}};
  for (const MethodCandidate& c : ranking.ranked) out["ranked"].push_back(candidate_json(c));
  for (const MethodCandidate& c : ranking.rejected) out["rejected"].push_back(candidate_json(c));
  if (!has_errors(issues)) {
    out["capacity_bytes"] = parsed.config.gpu.memory_bytes;
    out["config"] = config_to_json(parsed.config);
  }
  return with_status(out, issues);
}

json run_presets() { return with_status(presets_to_json(), {}); }

json run_validate() {
  const ValidationReport report = validate_against_measurements();
  json rows = json::array();
  for (const ValidationRow& row : report.rows) {
    const MeasuredRun& run = row.run;
    json r = {{"label", run.label},
              {"source", run.source},
              {"notes", run.notes},
              {"expressible", run.expressible},
              {"metric", to_string(run.metric)},
              {"oom", run.oom},
              {"first_iteration", !run.steady_state}};
    if (!run.expressible) {
      r["why_not"] = run.why_not;
    } else {
      r["config"] = config_to_json(run.config);
      r["predicted_bytes"] = row.predicted_bytes;
      r["verdict"] = to_string(row.verdict);
      r["label_agrees"] = row.label_agrees;
    }
    if (run.measured_bytes > 0) {
      r["measured_bytes"] = run.measured_bytes;
      if (run.expressible) r["signed_error"] = row.signed_error;
    }
    rows.push_back(std::move(r));
  }
  json out = {{"rows", rows},
              {"measured_rows", report.measured_rows},
              {"median_abs_error", report.median_abs_error},
              {"median_signed_error", report.median_signed_error},
              {"label_rows", report.label_rows},
              {"label_disagreements", report.label_disagreements},
              {"false_fits", report.false_fits}};
  return with_status(out, {});
}

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
