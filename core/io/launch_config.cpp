// launch_config.cpp — see launch_config.h: format detection, dispatch to the per-format files
// (megatron.cpp, torchtitan.cpp, deepspeed.cpp; the HF reader is import_export.cpp), the merge
// with other inputs, and the Hugging Face export.
#include "io/launch_config.h"

#include <cctype>

#include "memory/memory_model.h"

#include "spec/config_schema.h"
#include "io/import_export.h"
#include "io/import_common.h"
#include "io/json_text.h"
#include "spec/model_spec.h"
#include "io/serialize.h"
#include "io/text.h"
#include "io/url_state.h"

namespace meshfit {

using nlohmann::json;

namespace detail {
LaunchExport export_megatron(const Config& config);
LaunchExport export_torchtitan(const Config& config);
LaunchExport export_deepspeed(const Config& config);
LaunchExport export_torchtune(const Config& config);
LaunchExport export_hf_trainer(const Config& config);
}  // namespace detail

namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' || text.front() == '\r'))
    text.remove_prefix(1);
  return text;
}

// A key meshfit's config (or an older meshfit's) reads.
bool meshfit_key(const std::string& key) { return find_config_field(key) || find_legacy_field(key) || key == "state"; }

// Keys that name a run: meshfit's, never a DeepSpeed config's or a config.json's top level.
constexpr const char* kMeshfitSigns[] = {"model", "gpu", "gpus", "framework", "tp", "pp", "cp", "dp", "micro_batch",
                                         "global_batch", "seq"};

// DeepSpeed's own top-level keys, which no meshfit config has (its "optimizer" is a meshfit field too).
bool deepspeed_sign(const std::string& key) {
  return key.rfind("train_", 0) == 0 || key == "zero_optimization" || key == "gradient_accumulation_steps";
}

// meshfit's own JSON: a result, or mostly config fields naming a run (one misspelt key among them is
// still meshfit's, said as an unknown field, not read as DeepSpeed).
// The page's "Export JSON" (ui/reports.cpp json_report): the link's state beside the estimate and
// the layouts (an as-a-user review pasted it back and got it read as a DeepSpeed config).
bool is_page_report(const json& object) {
  return object.is_object() && object.contains("state") && object["state"].is_string() && object.contains("estimate") &&
         object["estimate"].is_object();
}

bool meshfit_object(const json& object) {
  if (is_meshfit_result(object) || is_page_report(object)) return true;
  int ours = 0, others = 0;
  bool named = false;
  for (const auto& [key, value] : object.items()) {
    if (deepspeed_sign(key)) return false;
    ++(meshfit_key(key) ? ours : others);
    for (const char* sign : kMeshfitSigns) named |= key == sign;
  }
  return named && ours > others;
}

// Every config field written: what config_to_json and an estimate's "config" hold.
bool whole_config(const json& object) {
  for (const ConfigField& field : config_fields())
    if (!object.contains(field.key)) return false;
  return true;
}

}  // namespace

bool is_meshfit_result(const json& object) {
  return object.is_object() && object.contains("ok") && object["ok"].is_boolean() && object.contains("issues");
}

json meshfit_config_fields(const json& object, std::vector<Issue>& issues) {
  if (is_page_report(object)) return state_to_object(object["state"].get<std::string>(), issues);  // the run, as its link
  if (is_meshfit_result(object)) {
    const auto config = object.find("config");
    if (config == object.end() || !config->is_object()) {
      issues.push_back({IssueCode::kMissingModel, Severity::kError, "config",
                        "this meshfit result has no config (ok is false, or it is a search's result): import the config "
                        "it was run with, or a layout's state."});
      return json::object();
    }
    return meshfit_config_fields(*config, issues);
  }
  if (!object.is_object() || !whole_config(object)) return object;
  ParsedConfig parsed = parse_config(object);
  if (has_errors(parsed.issues)) return object;  // said when the fields are read
  Config& c = parsed.config;
  const int64_t written = c.layout.dp;
  c.layout.dp = 0;  // derived again (config.h effective_dp), unless the written dp is not what it derives to
  if (effective_dp(c) != written) c.layout.dp = written;
  return state_to_object(encode_state(c), issues);
}

LaunchImport import_meshfit_json(const std::string& text) {
  LaunchImport out;
  out.format = LaunchFormat::kMeshfit;
  const auto parsed = parse_json_object(text, "meshfit_config", out.issues);
  if (!parsed) return out;
  const json given = meshfit_config_fields(*parsed, out.issues);
  for (const auto& [key, value] : given.items()) {
    if (meshfit_key(key)) out.fields[key] = value;
    else
      out.issues.push_back({IssueCode::kUnknownField, Severity::kWarning, key,
                            quote_text(key) + " is not a meshfit config field; ignored."});
  }
  return out;
}

// Not a hot path (once per paste): one block of tell-tale signs per format.
std::optional<LaunchFormat> detect_launch_format(const std::string& text) {
  std::string_view head = trimmed(text);
  // A file saved with a UTF-8 byte order mark (Windows editors): the JSON parser skips it, and so
  // does the detection (an as-a-user review saw such a config.json called no known format).
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head = trimmed(head.substr(3));
  if (head.empty()) return std::nullopt;
  if (head.front() == '{') {
    std::vector<Issue> ignored;  // the importer reports them
    const auto object = parse_json_object(head, "config", ignored);
    if (object && meshfit_object(*object)) return LaunchFormat::kMeshfit;
    // Text the JSON reader refuses (a duplicate key, a syntax error): the keys only meshfit writes, so
    // that the error names meshfit's reader, not DeepSpeed's.
    if (!object)
      for (const char* key : {"\"gpus\"", "\"micro_batch\"", "\"global_batch\"", "\"framework\""})
        if (text.find(key) != std::string::npos) return LaunchFormat::kMeshfit;
    // A DeepSpeed config has no model dimensions; a config.json always names some.
    for (const char* key : {"\"model_type\"", "\"hidden_size\"", "\"n_embd\"", "\"num_hidden_layers\"", "\"architectures\""})
      if (text.find(key) != std::string::npos) return LaunchFormat::kHfConfig;
    return LaunchFormat::kDeepSpeed;
  }
  if (!unimported_format(text).empty()) return std::nullopt;
  if (head.front() == '[' || text.find("\n[") != std::string::npos) return LaunchFormat::kTorchtitan;
  if (text.find("--") != std::string::npos) return LaunchFormat::kMegatron;
  return std::nullopt;
}

std::string unimported_format(const std::string& text) {
  if (text.find("TrainingArguments(") != std::string::npos || text.find("from transformers import") != std::string::npos)
    return "a Hugging Face Trainer script";
  // YAML: "key: value" lines (torchtune's recipe configs), where a TOML has "key = value" and a command
  // line "--flag value".
  int keys = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = trimmed(std::string_view(text).substr(start, end - start));
    size_t i = 0;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == '.')) ++i;
    if (i > 0 && i < line.size() && line[i] == ':' && (i + 1 == line.size() || line[i + 1] == ' ')) ++keys;
    start = end + 1;
  }
  if (keys >= 3) return text.find("_component_") != std::string::npos ? "a torchtune recipe YAML" : "a YAML file";
  return "";
}

LaunchImport import_hf_launch(const std::string& config_json) {
  const HfImport hf = import_hf_config(config_json);
  LaunchImport out;
  out.format = LaunchFormat::kHfConfig;
  out.issues = hf.issues;
  if (hf.ok()) {
    out.fields = hf_import_to_json(hf);
    out.fields["model"] = "custom";
  }
  return out;
}

namespace {

bool hf_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

// One part of a repo id (namespace or name) against validate_repo_id's rule; "" when it passes.
std::string hf_id_part_problem(std::string_view part, const char* what) {
  if (part.empty()) return std::string("the ") + what + " is empty";
  if (part.size() > kMaxHfIdPartBytes)
    return std::string("the ") + what + " has " + std::to_string(part.size()) + " characters; the Hub allows at most " +
           std::to_string(kMaxHfIdPartBytes);
  for (const char c : part)
    if (!hf_id_char(c)) return std::string("the ") + what + " may hold only A-Z, a-z, 0-9, '_', '-' and '.'";
  const auto edge = [](char c) { return c == '-' || c == '.'; };
  if (edge(part.front()) || edge(part.back())) return std::string("the ") + what + " must start and end with a letter, digit or '_'";
  if (part.find("--") != std::string_view::npos || part.find("..") != std::string_view::npos)
    return std::string("the ") + what + " may not contain \"--\" or \"..\"";
  return "";
}

}  // namespace

std::optional<std::string> hf_config_url(const std::string& model_id, std::vector<Issue>& issues) {
  const auto refuse = [&](IssueCode code, const std::string& why) {
    issues.push_back({code, Severity::kError, "model_id",
                      "model id " + quote_text(model_id) + ": " + why + " (a Hugging Face id is \"name\" or \"namespace/name\", e.g. "
                      "\"Qwen/Qwen2.5-7B\")."});
    return std::nullopt;
  };
  // The longest id the rule allows: two parts and the slash. Longer text is refused before it is read.
  if (model_id.size() > 2 * kMaxHfIdPartBytes + 1)
    return refuse(IssueCode::kInputTooLarge, std::to_string(model_id.size()) + " bytes, over the " +
                                                 std::to_string(2 * kMaxHfIdPartBytes + 1) + " an id can have");
  if (!is_valid_utf8(model_id)) return refuse(IssueCode::kInvalidText, "not valid UTF-8");
  const size_t slash = model_id.find('/');
  if (slash != std::string::npos && model_id.find('/', slash + 1) != std::string::npos)
    return refuse(IssueCode::kInvalidText, "more than one '/'");
  std::string problem = slash == std::string::npos ? "" : hf_id_part_problem(std::string_view(model_id).substr(0, slash), "namespace");
  if (problem.empty())
    problem = hf_id_part_problem(slash == std::string::npos ? std::string_view(model_id) : std::string_view(model_id).substr(slash + 1),
                                 "name");
  if (problem.empty() && model_id.size() >= 4 && model_id.compare(model_id.size() - 4, 4, ".git") == 0)
    problem = "the name may not end in \".git\"";
  if (!problem.empty()) return refuse(IssueCode::kInvalidText, problem);
  // Every character left is unreserved in URLs (RFC 3986 2.3): the id goes into the path as it is.
  return "https://huggingface.co/" + model_id + "/resolve/main/config.json";
}

LaunchImport import_fetched_hf_config(const std::string& model_id, int status, const std::string& body) {
  std::vector<Issue> issues;
  if (!hf_config_url(model_id, issues)) {
    LaunchImport out;
    out.format = LaunchFormat::kHfConfig;
    out.issues = issues;
    return out;
  }
  const std::string what = "config.json of " + quote_text(model_id);
  const auto failed = [&](const std::string& message) {
    LaunchImport out;
    out.format = LaunchFormat::kHfConfig;
    out.issues.push_back({IssueCode::kFetchFailed, Severity::kError, "model_id", message});
    return out;
  };
  if (status == 200) {
    const std::string_view head = trimmed(body);
    if (head.empty() || head.front() != '{')
      return failed("huggingface.co sent " + what + " but it is not JSON (it begins " + quote_text(head, 24) +
                    "); paste the file's text instead.");
    return import_hf_launch(body);  // the same reader, limits and issues as a pasted config.json
  }
  if (status == 0)
    return failed("could not reach huggingface.co for " + what + " (offline, or the request was blocked); "
                  "paste the file's text instead.");
  if (status == 401)
    return failed("huggingface.co wants a login for " + what + " (HTTP 401): the repository is gated or private, or "
                  "there is no such repository (anonymous requests get 401 for all three). Check the id; for a gated "
                  "model accept its licence on huggingface.co and paste config.json (the page sends no credentials).");
  if (status == 403)
    return failed("huggingface.co refused " + what + " (HTTP 403): the repository is gated. Accept its licence on "
                  "huggingface.co and paste config.json (the page sends no credentials).");
  if (status == 404)
    return failed("huggingface.co has no " + what + " (HTTP 404): check the id (case matters), or the repository "
                  "keeps no config.json on its main branch.");
  return failed("huggingface.co answered HTTP " + std::to_string(status) + " for " + what +
                "; try again later, or paste the file's text.");
}

LaunchImport import_launch_config(LaunchFormat format, const std::string& text) {
  switch (format) {
    case LaunchFormat::kHfConfig: return import_hf_launch(text);
    case LaunchFormat::kMegatron: return import_megatron_args(text);
    case LaunchFormat::kTorchtitan: return import_torchtitan_toml(text);
    case LaunchFormat::kDeepSpeed: return import_deepspeed_json(text);
    case LaunchFormat::kMeshfit: return import_meshfit_json(text);
    case LaunchFormat::kTorchtune:
    case LaunchFormat::kHfTrainer: break;
  }
  LaunchImport out;
  out.format = format;
  out.issues.push_back({IssueCode::kUnknownValue, Severity::kError, "format",
                        std::string(enum_label(format)) + " is an export format only; import hf, megatron, torchtitan, deepspeed or meshfit."});
  return out;
}

namespace {

// DeepSpeed's third batch figure (runtime/config.py _set_batch_related_parameters): micro = train /
// (gradient_accumulation_steps × dp), at the resolved dp; said either way, as it is not in the file.
void derive_micro_batch(const LaunchImport& import, json& merged, std::vector<Issue>& issues) {
  if (import.accumulation_steps <= 0 || merged.contains("micro_batch") || !merged.contains("global_batch")) return;
  const ParsedConfig parsed = parse_config(merged);
  const int64_t dp = effective_dp(parsed.config), global = parsed.config.training.global_batch;
  int64_t per_micro = 0;
  if (dp <= 0 || __builtin_mul_overflow(import.accumulation_steps, dp, &per_micro)) return;  // validation reports it
  if (global % per_micro == 0 && global / per_micro >= 1) {
    merged["micro_batch"] = global / per_micro;
    issues.push_back({IssueCode::kMissingModel, Severity::kWarning, "micro_batch",
                      "micro_batch " + std::to_string(global / per_micro) + " = train_batch_size " + std::to_string(global) +
                          " / (gradient_accumulation_steps " + std::to_string(import.accumulation_steps) + " × dp " +
                          std::to_string(dp) + "), as DeepSpeed derives it."});
  } else {
    issues.push_back({IssueCode::kBatchNotDivisible, Severity::kError, "micro_batch",
                      "train_batch_size " + std::to_string(global) + " is not a multiple of gradient_accumulation_steps " +
                          std::to_string(import.accumulation_steps) + " × dp " + std::to_string(dp) + ": DeepSpeed refuses it."});
  }
}

// DeepSpeed MiCS: replicas = dp / mics_shard_size at the resolved dp (runtime/zero/mics_utils.py
// create_mics_comm_groups: dp ranks in groups of mics_shard_size, replicated across groups).
void derive_replicas(const LaunchImport& import, json& merged, std::vector<Issue>& issues) {
  if (import.shard_group_size <= 0 || merged.contains("dp_replicate")) return;
  const int64_t dp = effective_dp(parse_config(merged).config);
  if (dp <= 0) return;  // validation reports it
  if (dp % import.shard_group_size != 0) {
    issues.push_back({IssueCode::kReplicasInvalid, Severity::kError, "dp_replicate",
                      "zero_optimization.mics_shard_size " + std::to_string(import.shard_group_size) + " does not divide dp " +
                          std::to_string(dp) + ": DeepSpeed needs whole shard groups."});
    return;
  }
  const int64_t replicas = dp / import.shard_group_size;
  merged["dp_replicate"] = replicas;
  if (replicas > 1)
    issues.push_back({IssueCode::kMissingModel, Severity::kWarning, "dp_replicate",
                      "dp_replicate " + std::to_string(replicas) + " = dp " + std::to_string(dp) +
                          " / mics_shard_size " + std::to_string(import.shard_group_size) + " (MiCS shard groups)."});
}

// Megatron-LM --pipeline-model-parallel-layout places its own count of decoder layers: a model with
// another count (a preset, when the command line has no --num-layers) would be split differently.
void check_layout_layers(const LaunchImport& import, const Config& config, std::vector<Issue>& issues) {
  if (import.layout_layers <= 0 || config.model.layers == import.layout_layers) return;
  issues.push_back({IssueCode::kConflictingSettings, Severity::kError, "--pipeline-model-parallel-layout",
                    "--pipeline-model-parallel-layout places " + std::to_string(import.layout_layers) +
                        " decoder layers; the model (" + config.model.name + ") has " + std::to_string(config.model.layers) + "."});
}

// The import's sequences per DP rank × dp against the global batch it also gave (resolve_import for
// the CLI and the API, apply_import for the page): the same warning from both.
Issue global_batch_mismatch(int64_t global, int64_t per_dp_rank, int64_t dp, int64_t implied) {
  return {IssueCode::kConflictingSettings, Severity::kWarning, "global_batch",
          "the imported global batch " + std::to_string(global) + " is not the imported " + std::to_string(per_dp_rank) +
              " sequences per DP rank × dp=" + std::to_string(dp) + " = " + std::to_string(implied) + "."};
}

}  // namespace

json resolve_import(const LaunchImport& import, const json& overrides, std::vector<Issue>& issues) {
  json merged = import.fields;
  if (overrides.is_object()) merged.update(overrides);
  // Launch configs name no GPU: said, with the one assumed (an as-a-user review re-imported a file
  // exported for A100 and got the H100's step time without a word).
  const bool names_no_gpu = import.format == LaunchFormat::kDeepSpeed || import.format == LaunchFormat::kMegatron ||
                            import.format == LaunchFormat::kTorchtitan;
  if (names_no_gpu && !merged.contains("gpu"))
    issues.push_back({IssueCode::kMissingModel, Severity::kWarning, "gpu",
                      std::string("a ") + enum_label(import.format) + " config names no GPU: " + default_config().gpu.id +
                          " (meshfit's default) assumed; give the GPU (--gpu)."});
  // DeepSpeed's batch fixes its data-parallel size (train_batch_size = micro × accumulation × dp):
  // with no GPU count given, that dp is the run's, not meshfit's default GPU count (the same review saw
  // "global batch 16 is not 1 × dp=8").
  if (import.format == LaunchFormat::kDeepSpeed && !merged.contains("gpus") && !merged.contains("dp") &&
      import.batch_per_dp_rank > 0 && merged.contains("global_batch") && merged["global_batch"].is_number_integer()) {
    const int64_t global = merged["global_batch"].get<int64_t>();
    const ParsedConfig layout = parse_config(merged);
    const Layout& l = layout.config.layout;
    int64_t gpus = 0;
    if (global > 0 && global % import.batch_per_dp_rank == 0 &&
        !__builtin_mul_overflow(global / import.batch_per_dp_rank, l.tp * l.pp * l.cp, &gpus) && gpus > 0) {
      merged["gpus"] = gpus;
      issues.push_back({IssueCode::kMissingModel, Severity::kWarning, "gpus",
                        "gpus " + std::to_string(gpus) + " = train_batch_size " + std::to_string(global) +
                            " / (train_micro_batch_size_per_gpu × gradient_accumulation_steps = " +
                            std::to_string(import.batch_per_dp_rank) + ")" + (gpus != global / import.batch_per_dp_rank ? " × tp × pp × cp" : "") +
                            ", as DeepSpeed derives its data parallelism; give --gpus to set it."});
    }
  }
  derive_micro_batch(import, merged, issues);
  derive_replicas(import, merged, issues);
  const ParsedConfig parsed = parse_config(merged);
  if (!has_errors(parsed.issues)) check_layout_layers(import, parsed.config, issues);
  if (import.batch_per_dp_rank <= 0) return merged;
  const int64_t dp = effective_dp(parsed.config);
  int64_t implied = 0;
  if (dp <= 0 || __builtin_mul_overflow(import.batch_per_dp_rank, dp, &implied)) return merged;  // validation reports it
  if (!merged.contains("global_batch")) {
    merged["global_batch"] = implied;
  } else if (import.fields.contains("global_batch") && merged["global_batch"] == import.fields["global_batch"] &&
             parsed.config.training.global_batch != implied) {
    issues.push_back(global_batch_mismatch(parsed.config.training.global_batch, import.batch_per_dp_rank, dp, implied));
  }
  return merged;
}

Config apply_import(const Config& base, const LaunchImport& import, std::vector<Issue>& issues) {
  if (!import.ok()) return base;
  const json& given = import.fields;
  json object = config_to_json(base);  // every field resolved, model dimensions written out
  if (!find_model_preset(base.model.name)) object["model"] = "custom";
  if (given.contains("model"))  // another preset: its dimensions, not the old model's
    for (const ConfigField& field : config_fields())
      if (field.group == FieldGroup::kModel && field.kind != FieldKind::kPreset) object.erase(field.key);
  for (const char* derived : {"dp", "pp_first_stage_layers", "pp_last_stage_layers", "zero", "global_batch"})
    if (!given.contains(derived) && (std::string(derived) != "global_batch" || import.batch_per_dp_rank > 0) &&
        (std::string(derived) != "zero" || given.contains("framework")))
      object.erase(derived);
  object.update(given);
  if (import.accumulation_steps > 0 && !given.contains("micro_batch")) {  // DeepSpeed's derived micro-batch
    object.erase("micro_batch");
    derive_micro_batch(import, object, issues);
  }
  if (import.shard_group_size > 0 && !given.contains("dp_replicate")) {
    object.erase("dp_replicate");
    derive_replicas(import, object, issues);
  }
  ParsedConfig parsed = parse_config(object);
  int64_t global = 0;
  if (import.batch_per_dp_rank > 0 &&
      !__builtin_mul_overflow(import.batch_per_dp_rank, effective_dp(parsed.config), &global) && global > 0) {
    if (!given.contains("global_batch")) parsed.config.training.global_batch = global;
    else if (parsed.config.training.global_batch != global)
      issues.push_back(global_batch_mismatch(parsed.config.training.global_batch, import.batch_per_dp_rank,
                                             effective_dp(parsed.config), global));
  }
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  if (has_errors(parsed.issues)) return base;
  std::vector<Issue> layout_issues;
  check_layout_layers(import, parsed.config, layout_issues);
  issues.insert(issues.end(), layout_issues.begin(), layout_issues.end());
  return layout_issues.empty() ? parsed.config : base;
}

bool is_searched_field(const std::string& key) {
  const ConfigField* field = find_config_field(key);
  return field && (field->group == FieldGroup::kLayout || key == "micro_batch" || key == "recompute" || key == "sp");
}

namespace {

// A launch config is checked by reading it back: a training or layout field that the file, run as
// written (the framework's defaults for everything it leaves out), would not give is named in one
// warning, so that no setting the estimate used drops out of an export unsaid. The model, the
// hardware and the run's name and headroom are not launch settings.
void note_uncarried(const Config& config, LaunchExport& out) {
  const LaunchImport back = import_launch_config(out.format, out.text);
  if (!back.ok()) return;
  Config plain;  // what the file does not set falls to the defaults, as the framework would
  plain.model = config.model;
  plain.gpu = config.gpu;
  plain.cluster = config.cluster;
  std::vector<Issue> ignored;
  const Config again = apply_import(plain, back, ignored);
  std::string missing;
  for (const ConfigField& row : config_fields()) {
    if (row.group != FieldGroup::kTraining && row.group != FieldGroup::kLayout) continue;
    const std::string key = row.key;
    if (key == "headroom" || key == "tokens_to_train") continue;
    const bool said = std::any_of(out.issues.begin(), out.issues.end(), [&](const Issue& i) { return i.field == key; });
    const json wanted = row.get(config), written = row.get(again);
    if (said || wanted == written) continue;
    if (key == "sp" && config.layout.tp == 1) continue;  // sequence parallelism splits over tp: nothing at tp 1
    // auto is the framework's default: the same run when it resolves alike.
    if (key == "dp_comm_overlap" &&
        dp_comm_overlapped(config.training, config.layout.zero) == dp_comm_overlapped(again.training, again.layout.zero))
      continue;
    // Likewise the loss: auto under torch.compile is the compiled loss the file names (an as-a-user
    // review saw "loss=auto (the file: compiled)" for the same run).
    if (key == "loss" && effective_loss(framework_profile(config.training.framework), config.training, config.layout.tp) ==
                             effective_loss(framework_profile(again.training.framework), again.training, again.layout.tp))
      continue;
    missing += (missing.empty() ? "" : ", ") + key + "=" + (wanted.is_string() ? wanted.get<std::string>() : wanted.dump()) +
               " (the file: " + (written.is_string() ? written.get<std::string>() : written.dump()) + ")";
  }
  if (!missing.empty())
    out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, "export",
                          std::string("not carried by this ") + enum_label(out.format) +
                              " file, so set where the run is launched: " + missing + "."});
}

// The run's own name, notes and token budget are meshfit's: a launch file has no place for them (an
// as-a-user review exported --name, --notes and --tokens-to-train and lost all three without a word).
void note_run_fields(const Config& config, LaunchExport& out) {
  if (out.format == LaunchFormat::kMeshfit || out.format == LaunchFormat::kHfConfig) return;
  std::string kept;
  if (!config.name.empty()) kept += "name";
  if (!config.notes.empty()) kept += std::string(kept.empty() ? "" : ", ") + "notes";
  if (config.training.tokens_to_train > 0) kept += std::string(kept.empty() ? "" : ", ") + "tokens_to_train";
  if (!kept.empty())
    out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, "export",
                          kept + ": meshfit's, not in this " + enum_label(out.format) +
                              " file; a link or export --format meshfit keeps them."});
}

// Every format's export; export_launch_config adds what no launch file carries.
LaunchExport export_for(const Config& config, LaunchFormat format) {
  if (spatial_temporal(config.layout)) {
    // PrimePar has no public implementation (PrimePar paper §4; no code released): nothing could run it.
    LaunchExport refused;
    refused.format = format;
    refused.issues.push_back({IssueCode::kStNotExportable, Severity::kError, "spatial_temporal_q",
                              "spatial_temporal_q=" + std::to_string(config.layout.st_q) +
                                  ": a spatial-temporal (PrimePar-style) layout is modelled, not implemented by any "
                                  "public framework, so there is no launch config to export; set spatial_temporal_q=1 "
                                  "for a Megatron TP layout."});
    return refused;
  }
  switch (format) {
    case LaunchFormat::kMegatron:
    case LaunchFormat::kTorchtitan:
    case LaunchFormat::kDeepSpeed: {
      LaunchExport out = format == LaunchFormat::kMegatron     ? detail::export_megatron(config)
                         : format == LaunchFormat::kTorchtitan ? detail::export_torchtitan(config)
                                                               : detail::export_deepspeed(config);
      note_uncarried(config, out);
      return out;
    }
    case LaunchFormat::kTorchtune: return detail::export_torchtune(config);
    case LaunchFormat::kHfTrainer: return detail::export_hf_trainer(config);
    case LaunchFormat::kMeshfit: {  // what --config reads back: the fields given, so flags over it re-derive the rest
      LaunchExport out;
      out.format = format;
      out.text = meshfit_config_fields(config_to_json(config), out.issues).dump(2) + "\n";
      return out;
    }
    case LaunchFormat::kHfConfig: break;
  }
  // The model as a transformers config.json (LlamaConfig keys; GPT-style models keep those keys too).
  LaunchExport out;
  out.format = LaunchFormat::kHfConfig;
  const ModelSpec& m = config.model;
  nlohmann::ordered_json hf;
  const bool llama = m.mlp == MlpKind::kSwiGlu && m.norm == NormKind::kRmsNorm;  // else written as GPT-NeoX
  // Per-head q/k norms: Qwen3Config (the same keys as LlamaConfig, plus q_norm/k_norm in the model).
  hf["model_type"] = llama ? (m.qk_norm ? "qwen3" : "llama") : "gpt_neox";
  hf["hidden_size"] = m.hidden;
  hf["num_hidden_layers"] = m.layers;
  hf["num_attention_heads"] = m.heads;
  hf["num_key_value_heads"] = m.kv_heads;
  if (m.head_dim > 0) hf["head_dim"] = m.head_dim;  // LlamaConfig.head_dim (default hidden_size // heads)
  hf["intermediate_size"] = m.ffn;
  hf["vocab_size"] = m.vocab;
  hf["tie_word_embeddings"] = m.tied_embeddings;
  // Dropout: LlamaConfig has attention_dropout only; GPTNeoXConfig attention_dropout and hidden_dropout.
  hf["attention_dropout"] = m.dropout ? 0.1 : 0.0;
  if (!llama) hf["hidden_dropout"] = m.dropout ? 0.1 : 0.0;
  hf["hidden_act"] = m.mlp == MlpKind::kSwiGlu ? "silu" : "gelu";
  if (llama) {
    hf["attention_bias"] = m.linear_bias;
    hf["mlp_bias"] = m.linear_bias;
  } else if (m.mlp != MlpKind::kGelu || m.norm != NormKind::kLayerNorm || !m.linear_bias || m.qk_norm) {
    out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, "model",
                          "no transformers architecture has this norm/MLP/bias mix; written as GPT-NeoX."});
  }
  // The file carries the shapes meshfit counts, not the family's own details (an as-a-user review saw
  // Gemma 2 written as model_type llama with silu, and Llama 3.1 without its rope_theta).
  const std::string name = ascii_lower(m.name);
  const bool named_family = name != "custom" && name.find(llama ? "llama" : "gpt") == std::string::npos;
  out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, "model",
                        std::string("the shapes meshfit counts, as a ") + (llama ? "LlamaConfig" : "GPTNeoXConfig") +
                            ": rope_theta, RoPE scaling and max_position_embeddings are not written" +
                            (named_family ? ", and " + m.name + "'s own architecture (activation, norms, biases) is not named" : "") +
                            "; load weights with the model's own config.json."});
  out.text = hf.dump(2) + "\n";
  return out;
}

}  // namespace

LaunchExport export_launch_config(const Config& config, LaunchFormat format) {
  LaunchExport out = export_for(config, format);
  note_run_fields(config, out);
  return out;
}

}  // namespace meshfit
