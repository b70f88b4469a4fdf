// api.cpp — see api.h.
#include "api.h"

#include <algorithm>
#include <cmath>

#include "io/import_export.h"
#include "io/gpu_runs.h"
#include "io/measured_runs.h"
#include "io/throughput_runs.h"
#include "io/launch_config.h"
#include "search/layout_search.h"
#include "memory/memory_model.h"
#include "memory/overheads.h"
#include "perf/perf_model.h"
#include "io/serialize.h"
#include "io/url_state.h"
#include "search/fit_advice.h"
#include "search/method_select.h"
#include "spec/config_schema.h"
#include "spec/validate.h"
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

// Every problem at once (README): when parsing already failed (a missing model, a bad value), the
// rules on the fields it did read are checked too, so {gpus: 0} without a model reports both (a
// review saw only missing_model). A field already named keeps its first message, and a missing
// model's zero dimensions are not reported again one by one.
void add_field_problems(const ParsedConfig& parsed, std::vector<Issue>& issues) {
  if (!has_errors(issues)) return;
  // No model, or one not found (a mistyped preset: "did you mean"): its dimensions are unset, not wrong
  // (an as-a-user review read six "must be positive" errors under the "did you mean" line).
  const bool missing_model = std::any_of(issues.begin(), issues.end(), [](const Issue& i) {
    return i.code == IssueCode::kMissingModel || (i.field == "model" && i.severity == Severity::kError);
  });
  for (const Issue& issue : validate(parsed.config)) {
    if (issue.severity != Severity::kError) continue;
    const ConfigField* field = find_config_field(issue.field);
    if (missing_model && (issue.field == "model" || (field && (field->required_without_preset || field->dimension)))) continue;
    if (std::any_of(issues.begin(), issues.end(), [&](const Issue& i) { return i.field == issue.field; })) continue;
    issues.push_back(issue);
  }
}

// The config of a call's input, its parse problems and every other field problem joined to `issues`.
ParsedConfig parse_input(const json& object, std::vector<Issue>& issues) {
  ParsedConfig parsed = parse_config(object);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  add_field_problems(parsed, issues);
  return parsed;
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
  if (!out.valid()) return out;
  out.memory_band = memory_error_band(config, out.worst().device_bytes, out.memory.capacity_bytes);
  // A GPU without a compute or bandwidth figure, or nodes without a network figure, have no step
  // time: say so, and keep every figure finite (no inf s per step, no NaN MFU in any front end).
  if (const auto why = step_unpredictable(config)) {
    out.memory.issues.push_back(*why);
    return out;
  }
  out.step = predict_step(config, plan_memory(config));
  const StepReport& step = out.step;
  if (!step_is_finite(step)) {
    out.step = StepReport{};
    out.memory.issues.push_back({IssueCode::kOutOfRange, Severity::kWarning, "gpu",
                                 "the step-time model gave no finite figure for these inputs: step time not predicted."});
  }
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
  return a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.vpp == b.vpp && a.zero == b.zero && a.st_q == b.st_q &&
         a.pp_first_stage_layers == b.pp_first_stage_layers && a.pp_last_stage_layers == b.pp_last_stage_layers &&
         config.training.micro_batch == candidate.micro_batch && config.training.recompute == candidate.recompute &&
         (config.training.sp == candidate.sp || a.tp == 1);
}

json estimate_to_json(const Config& config, const Estimate& estimate, const std::vector<Issue>& issues) {
  MemoryReport report = estimate.memory;
  report.issues = issues;
  json out = memory_report_to_json(report);
  if (report.valid()) {
    // How far to trust the peak: the validation error of the runs most like this one (memory_band.h).
    const MemoryBand& band = estimate.memory_band;
    const auto runs_json = [](const MemoryBandRuns& kind) {
      return nlohmann::json{{"runs", kind.runs}, {"median_abs_error", kind.median_abs_error},
                            {"min_gpus", kind.min_gpus}, {"max_gpus", kind.max_gpus}};
    };
    out["memory_error_band"] = {{"median_abs_error", band.median_abs_error},
                                {"runs", band.runs},
                                {"scope", band.scope},
                                {"published", runs_json(band.published)},
                                {"own_scope", band.own_scope},
                                {"own_published", runs_json(band.own_published)},
                                {"own_steps", runs_json(band.own_steps)},
                                {"widened", band.widened},
                                {"own_worse", band.own_worse},
                                {"capacity_within", band.capacity_within},
                                {"basis", band.basis},
                                {"text", memory_band_text(band)}};
    add_step_report(out, estimate.step);
    out["config"] = config_to_json(config);
    out["state"] = encode_state(config);
  }
  return with_status(out, issues);
}

json run_estimate(json input) {
  std::vector<Issue> issues;
  const json object = resolve_state(std::move(input), issues);
  const ParsedConfig parsed = parse_input(object, issues);
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
  const ParsedConfig parsed = parse_input(object, issues);
  SearchResult result;
  if (!has_errors(issues)) result = search_layouts(parsed.config, search_options);
  issues.insert(issues.end(), result.issues.begin(), result.issues.end());
  result.issues = issues;
  json out = search_result_to_json(result);
  if (result.valid()) {
    out["capacity_bytes"] = parsed.config.gpu.memory_bytes;
    // Every layout shares the method and framework: one band covers the memory column (memory_band.h).
    out["memory_error_band"] = {{"text", memory_band_text(memory_error_band(parsed.config))}};
  }
  return with_status(out, issues);
}

json run_methods(json input) {
  std::vector<Issue> issues;
  json object = resolve_state(std::move(input), issues);
  MethodOptions options;
  if (object.is_object() && object.contains("methods")) {
    const json methods = object["methods"];
    object.erase("methods");
    // A comma list of full, lora, qlora: every other word is an error naming it (an as-a-user review
    // saw "lora,QLoRA" rank LoRA alone, without a word).
    const std::string text = methods.is_string() ? methods.get<std::string>() : "";
    options.methods = {false, false, false};
    if (!methods.is_string())
      issues.push_back({IssueCode::kUnknownValue, Severity::kError, "methods",
                        "methods must be text, a comma list of full, lora, qlora; got " + methods.dump() + "."});
    size_t begin = 0;
    while (methods.is_string() && begin <= text.size()) {
      const size_t comma = std::min(text.find(',', begin), text.size());
      const std::string word = text.substr(begin, comma - begin);
      if (const auto method = enum_from_key<FinetuneMethod>(word); method && *method != FinetuneMethod::kNone)
        options.methods[size_t(*method) - 1] = true;
      else
        issues.push_back({IssueCode::kUnknownValue, Severity::kError, "methods",
                          "\"" + word + "\" in methods is not one of full, lora, qlora (lower case, comma-separated)."});
      begin = comma + 1;
    }
  }
  options.keep_optimizer = object.is_object() && (object.contains("optimizer") || object.contains("optimizer_in_backward"));
  const ParsedConfig parsed = parse_input(object, issues);
  // The ranking fine-tunes the config: its adapter and stack fields are read, not ignored (an
  // as-a-user review saw --lora-rank 8 called ignored while it moved every LoRA row).
  issues.erase(std::remove_if(issues.begin(), issues.end(),
                              [](const Issue& issue) {
                                const auto& keys = finetune_only_keys();
                                // Nor is its ZeRO stage a question: every stage is a row of the ranking.
                                if (issue.code == IssueCode::kConflictingSettings && issue.field == "zero") return true;
                                return issue.code == IssueCode::kUnsupportedSetting && issue.severity == Severity::kWarning &&
                                       std::any_of(keys.begin(), keys.end(), [&](const char* k) { return issue.field == k; });
                              }),
               issues.end());
  MethodRanking ranking;
  // A pretraining config is ranked as its link with finetune=lora reads, as the page's Methods view
  // does: the fine-tuning defaults (finetune.h) apply to what it leaves out.
  const Config base = methods_base_config(parsed.config);
  if (!has_errors(issues)) ranking = rank_finetune_methods(base, options);
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
                // fits / tight / oom against the GPU and the headroom, as estimate's verdict reads
                {"verdict", to_string(c.verdict)},
                {"device_bytes", c.device_bytes},
                {"host_bytes", c.host_bytes},
                // null when the GPU has no step time (the issues say why)
                {"step_time_s", c.step_predicted ? json(c.step_time_s) : json()},
                {"tokens_per_s_per_gpu", c.step_predicted ? json(c.tokens_per_s_per_gpu) : json()}};
    // Each method's memory has its own band (LoRA's ±5% beside QLoRA's ±28%: memory_band.h).
    out["memory_error_band"] = {{"median_abs_error", c.memory_band.median_abs_error},
                                {"runs", c.memory_band.runs},
                                {"percent", memory_band_percent(c.memory_band)},
                                {"text", memory_band_text(c.memory_band)}};
    if (!c.rejected.empty()) out["rejected"] = c.rejected;
    return out;
  };
  json out = {{"ranked", json::array()}, {"rejected", json::array()}};
  for (const MethodCandidate& c : ranking.ranked) out["ranked"].push_back(candidate_json(c));
  for (const MethodCandidate& c : ranking.rejected) out["rejected"].push_back(candidate_json(c));
  if (!has_errors(issues)) {
    out["capacity_bytes"] = base.gpu.memory_bytes;
    out["config"] = config_to_json(base);  // the base the methods were ranked from
  }
  return with_status(out, issues);
}

json run_fit_advice(json input) {
  std::vector<Issue> issues;
  const json object = resolve_state(std::move(input), issues);
  const ParsedConfig parsed = parse_input(object, issues);
  json out = {{"suggestions", json::array()}};
  if (!has_errors(issues)) {
    const Estimate current = estimate(parsed.config);
    issues.insert(issues.end(), current.memory.issues.begin(), current.memory.issues.end());
    if (current.valid()) {
      const FitAdvice advice = fit_advice(parsed.config);
      for (const FitSuggestion& f : advice.suggestions)
        out["suggestions"].push_back({{"change", f.change},
                                      {"state", encode_state(f.config)},
                                      {"device_bytes", f.device_bytes},
                                      {"verdict", to_string(f.verdict)},
                                      {"tokens_per_s_per_gpu", f.tokens_per_s_per_gpu},
                                      {"throughput_change", f.throughput_change}});
      out["verdict"] = to_string(current.memory.verdict);
      out["device_bytes"] = current.memory.worst().device_bytes;
      out["capacity_bytes"] = current.memory.capacity_bytes;
      out["tokens_per_s_per_gpu"] = current.step.tokens_per_s_per_gpu;
      out["largest_micro_batch"] = advice.largest_micro_batch;
      out["largest_seq"] = advice.largest_seq;
      out["limits_text"] = fit_limits_text(advice, parsed.config);
      out["costly"] = fit_advice_costly(advice);  // the cheapest fix costs kCostlyFitPercent or more: see the search
      out["config"] = config_to_json(parsed.config);
      out["state"] = encode_state(parsed.config);
    }
  }
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

namespace {

json validation_to_json(const ValidationReport& report) {
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
  return out;
}

}  // namespace

// The step-time model against tests/data/layouts_measured.csv: every run, the medians per source,
// and the error bands (per framework and GPU family) that predictions carry.
json throughput_validation_to_json(const ThroughputValidation& v) {
  json out = {{"rows", json::array()}, {"sources", json::array()}, {"bands", json::array()},
              {"runs", int64_t(v.rows.size())}, {"median_abs_error", v.median_abs_error},
              {"bands_note", kThroughputBandNote}};
  for (const ThroughputRow& row : v.rows)
    out["rows"].push_back({{"label", row.run.label},
                           {"source", row.run.source},
                           {"citation", row.run.citation},
                           {"framework", to_string(row.run.config.training.framework)},
                           {"gpu", row.run.config.gpu.id},
                           {"gpus", row.run.config.cluster.gpus},
                           {"in_band", row.run.framework_band},
                           {"measured_tokens_per_s_per_gpu", row.run.measured_tokens_per_s_per_gpu},
                           {"predicted_tokens_per_s_per_gpu", row.predicted_tokens_per_s_per_gpu},
                           {"signed_error", row.signed_error}});
  for (const auto* list : {&v.sources, &v.bands})
    for (const ThroughputSummary& summary : *list)
      out[list == &v.sources ? "sources" : "bands"].push_back({{"key", summary.key},
                                                              {"runs", summary.runs},
                                                              {"median_abs_error", summary.median_abs_error},
                                                              {"median_signed_error", summary.median_signed_error}});
  return out;
}

// meshfit's own ground truth (tests/data/gpu_memory_measured.csv, tests/gpu): every row with each
// metric measured and predicted, then the medians per metric.
json gpu_validation_to_json(const GpuValidation& v) {
  json out = {{"rows", json::array()}, {"metrics", json::array()}, {"label_rows", v.label_rows},
              {"label_disagreements", v.label_disagreements}};
  for (const GpuRow& row : v.rows) {
    json r = {{"id", row.run.id}, {"label", row.run.label}, {"software", row.run.software},
              {"expressible", row.run.expressible}, {"oom", row.run.oom}};
    if (!row.run.expressible) {
      r["why_not"] = row.run.why_not;
    } else {
      r["config"] = config_to_json(row.run.config);
      r["verdict"] = to_string(row.verdict);
      r["label_agrees"] = row.label_agrees;
      json measured = json::object(), predicted = json::object();
      for (int m = 0; m < kGpuMetricCount; ++m) {
        if (!row.run.oom) measured[to_string(GpuMetric(m))] = row.run.measured[size_t(m)];
        predicted[to_string(GpuMetric(m))] = row.predicted[size_t(m)];
      }
      if (!row.run.oom) r["measured"] = measured;
      r["predicted"] = predicted;
    }
    out["rows"].push_back(std::move(r));
  }
  for (const GpuMetricSummary& s : v.metrics)
    out["metrics"].push_back({{"metric", to_string(s.metric)},
                              {"label", enum_label(s.metric)},
                              {"error_over_peak_allocated", gpu_error_over_peak(s.metric)},
                              {"rows", s.rows},
                              {"median_abs_error", s.median_abs_error},
                              {"max_abs_error", s.max_abs_error},
                              {"median_signed_error", s.median_signed_error}});
  return out;
}

json run_validate() {
  json out = validation_to_json(validate_against_measurements());
  out["finetune"] = validation_to_json(validate_finetune_against_measurements());  // tests/data/finetune_measured.csv
  out["throughput"] = throughput_validation_to_json(throughput_validation());     // tests/data/layouts_measured.csv
  out["gpu"] = gpu_validation_to_json(gpu_validation());                          // tests/data/gpu_memory_measured.csv
  // The memory error band of every method and setup (io/memory_band.h), as estimates carry them.
  out["memory_bands"] = json::array();
  for (const MemoryBand& band : memory_bands())
    out["memory_bands"].push_back({{"scope", band.scope},
                                   {"published_runs", band.published.runs},
                                   {"published_median_abs_error", band.published.median_abs_error},
                                   {"step_runs", band.own_steps.runs},
                                   {"step_median_abs_error", band.own_steps.median_abs_error},
                                   {"basis", band.basis}});
  // Every named constant behind the memory figures (overheads.h), how its value was obtained.
  out["constants"] = json::array();
  for (const NamedConstant& constant : kMemoryConstants)
    out["constants"].push_back({{"name", constant.name},
                                {"value", constant.value},
                                {"unit", constant.unit},
                                {"meaning", constant.meaning},
                                {"source", constant.source},
                                {"basis", to_string(constant.basis)}});
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

json run_import(const std::string& format, const std::string& text, json overrides, bool drop_layout) {
  std::vector<Issue> issues;
  json out = json::object();
  std::optional<LaunchFormat> chosen =
      format == "auto" || format.empty() ? detect_launch_format(text) : enum_from_key<LaunchFormat>(format);
  if (!chosen) {
    const std::string what = unimported_format(text);
    issues.push_back({IssueCode::kUnknownValue, Severity::kError, "format",
                      format != "auto" && !format.empty() ? "format must be one of " + enum_keys_text<LaunchFormat>() + "."
                      : what.empty() ? std::string("the text is not ") + kImportFormatsText + "."
                                     : "the text is " + what + ", which meshfit writes (export) but does not read: import reads " +
                                           kImportFormatsText +
                                           "; give its settings as fields (or import meshfit's own JSON, export --format meshfit)."});
    return with_status(out, issues);
  }
  out["format"] = enum_key(*chosen);
  const LaunchImport import = import_launch_config(*chosen, text);
  issues = import.issues;
  out["fields"] = import.fields;  // replaced by the merged fields below when the import is usable
  const json given = resolve_state(std::move(overrides), issues);
  // A field the caller gives answers the import's "give --x" warning, whether or not the import is usable.
  issues.erase(std::remove_if(issues.begin(), issues.end(),
                              [&](const Issue& issue) {
                                return issue.code == IssueCode::kMissingModel && issue.severity == Severity::kWarning &&
                                       given.is_object() && given.contains(issue.field);
                              }),
               issues.end());
  if (!import.ok()) return with_status(out, issues);
  json merged = resolve_import(import, given, issues);
  if (drop_layout)  // fields the search chooses go, unless the caller pinned them
    for (auto it = merged.begin(); it != merged.end();)
      it = is_searched_field(it.key()) && !(given.is_object() && given.contains(it.key())) ? merged.erase(it) : std::next(it);
  out["fields"] = merged;
  const ParsedConfig parsed = parse_config(merged);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  if (!has_errors(issues) && !drop_layout) {  // without its layout the config is the search's input, not a layout
    const std::vector<Issue> structural = validate(parsed.config);
    issues.insert(issues.end(), structural.begin(), structural.end());
  }
  if (!has_errors(issues)) {
    out["config"] = config_to_json(parsed.config);
    out["state"] = encode_state(parsed.config);
  }
  return with_status(out, issues);
}

json run_export(json input, const std::string& format) {
  std::vector<Issue> issues;
  json out = json::object();
  const std::optional<LaunchFormat> chosen = enum_from_key<LaunchFormat>(format);
  if (!chosen) {
    issues.push_back({IssueCode::kUnknownValue, Severity::kError, "format",
                      "format must be one of " + enum_keys_text<LaunchFormat>() + "."});
    return with_status(out, issues);
  }
  const ParsedConfig parsed = parse_config(resolve_state(std::move(input), issues));
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  if (!has_errors(issues)) {
    const std::vector<Issue> structural = validate(parsed.config);
    issues.insert(issues.end(), structural.begin(), structural.end());
  }
  out["format"] = enum_key(*chosen);
  if (has_errors(issues)) return with_status(out, issues);
  const LaunchExport exported = export_launch_config(parsed.config, *chosen);
  issues.insert(issues.end(), exported.issues.begin(), exported.issues.end());
  out["text"] = exported.text;
  if (!exported.args.empty()) out["args"] = exported.args;
  out["config"] = config_to_json(parsed.config);
  return with_status(out, issues);
}

}  // namespace meshfit
