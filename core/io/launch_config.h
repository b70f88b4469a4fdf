// launch_config.h — round trips with real launch configs: import what people run (a Hugging Face
// config.json, a Megatron-LM pretrain_gpt.py command line, a torchtitan TOML job config, a DeepSpeed
// JSON config) into config fields, and export a config as what each framework runs. Flag and key
// names follow Megatron-LM megatron/training/arguments.py, torchtitan torchtitan/config/job_config.py
// and DeepSpeed deepspeed/runtime/config.py + zero/config.py (commits in the README's sources).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/config.h"
#include "spec/enum_names.h"
#include "spec/input_limits.h"
#include "spec/issue.h"

namespace meshfit {

// torchtune and hf-trainer are export-only (fine-tuning recipes: finetune_export.cpp). meshfit is
// meshfit's own JSON: a config file (what `import` prints, what --config reads) or an estimate's or a
// search's --json result, whose "config" is the config.
enum class LaunchFormat { kHfConfig, kMegatron, kTorchtitan, kDeepSpeed, kTorchtune, kHfTrainer, kMeshfit };

template <> struct EnumNames<LaunchFormat> {
  static constexpr EnumName<LaunchFormat> table[] = {{LaunchFormat::kHfConfig, "hf", "Hugging Face config.json"},
                                                     {LaunchFormat::kMegatron, "megatron", "Megatron-LM flags"},
                                                     {LaunchFormat::kTorchtitan, "torchtitan", "torchtitan TOML"},
                                                     {LaunchFormat::kDeepSpeed, "deepspeed", "DeepSpeed JSON"},
                                                     {LaunchFormat::kTorchtune, "torchtune", "torchtune recipe YAML"},
                                                     {LaunchFormat::kHfTrainer, "hf-trainer", "HF Trainer + PEFT (Python)"},
                                                     {LaunchFormat::kMeshfit, "meshfit", "meshfit config JSON"}};
};

constexpr std::size_t kMaxImportBytes = kMaxJsonBytes;         // 1 MiB, as any JSON input; real configs and command lines are KBs
constexpr int64_t kMaxImportCount = int64_t(1) << 40;           // any count above this is out_of_range

struct LaunchImport {
  LaunchFormat format = LaunchFormat::kMegatron;
  nlohmann::json fields = nlohmann::json::object();  // the config fields the source sets (schema keys only)
  // Sequences per DP rank per optimizer step, when the source gives them but no global batch
  // (DeepSpeed micro × gradient_accumulation_steps; Megatron without --global-batch-size; torchtitan
  // global_batch_size = -1): global_batch = this × dp once dp is known (resolve_import).
  int64_t batch_per_dp_rank = 0;
  // DeepSpeed's train_batch_size and gradient_accumulation_steps without the micro-batch:
  // micro_batch = global / (this × dp) once dp is known (resolve_import, apply_import).
  int64_t accumulation_steps = 0;
  // DeepSpeed MiCS's mics_shard_size (ranks per ZeRO-3 shard group): dp_replicate = dp / this once
  // dp is known (resolve_import, apply_import).
  int64_t shard_group_size = 0;
  // Megatron-LM --pipeline-model-parallel-layout: the decoder layers it places, checked against the
  // model's once the model is known (a preset's layers when the command line has no --num-layers).
  int64_t layout_layers = 0;
  std::vector<Issue> issues;  // every unknown, unsupported or conflicting flag or key; errors: unusable
  bool ok() const { return !has_errors(issues); }
};

// The format of pasted text: meshfit's own JSON (is_meshfit_result, or an object of config fields
// naming at least one of the model, the GPUs, the framework or the layout), '{' with model keys = hf,
// '{' otherwise = deepspeed, TOML sections = torchtitan, "--flags" = megatron. nullopt when none fits.
std::optional<LaunchFormat> detect_launch_format(const std::string& text);
// What a text that no importer reads is, when it is a format meshfit writes but does not read back
// (a torchtune recipe YAML, the HF Trainer snippet) or other YAML; "" otherwise. detect_launch_format
// returns nothing for these (a review saw an exported torchtune YAML read as Megatron flags, 55 warnings).
std::string unimported_format(const std::string& text);
// What import reads, in words, for the messages that say a text is none of it (CLI, JS API, page).
inline constexpr const char* kImportFormatsText =
    "a config.json, a DeepSpeed JSON, a meshfit JSON, a torchtitan TOML or a Megatron-LM command line";

LaunchImport import_launch_config(LaunchFormat format, const std::string& text);
LaunchImport import_hf_launch(const std::string& config_json);         // model fields only
LaunchImport import_megatron_args(const std::string& command_line);    // with or without torchrun in front
LaunchImport import_torchtitan_toml(const std::string& toml_text);
LaunchImport import_deepspeed_json(const std::string& config_json);
// meshfit's own JSON: its config fields as they are (a result's "config"); a key that is not a config
// field is an unknown_field warning, and the values are checked as --config checks them.
LaunchImport import_meshfit_json(const std::string& text);

// Whether `object` is one of meshfit's --json results (an object with a boolean "ok" and "issues").
bool is_meshfit_result(const nlohmann::json& object);
// The fields a meshfit JSON gives, as `import` and --config read them: a result's "config" (an
// error when it has none: ok false, or a search's result); a whole config (every field written, as
// `config_to_json` writes it) reduced to what was given, the fields that differ from the defaults
// and presets with dp left to derive when it equals gpus / (tp·pp·cp), so that a flag over it (--gpu,
// --tp, --model) re-derives the rest; any other object as it is.
nlohmann::json meshfit_config_fields(const nlohmann::json& object, std::vector<Issue>& issues);

// [Page] "Fetch from Hugging Face". A model id is user text: it is checked against the Hub's own
// rule before any URL is built (huggingface_hub utils/_validators.py validate_repo_id: an optional
// "namespace/" and a name, each 1 to 96 of A-Z a-z 0-9 _ . -, starting and ending with a letter,
// digit or _, no "--" or "..", not ending in ".git"). Only public repositories: no credentials.
constexpr std::size_t kMaxHfIdPartBytes = 96;
// https://huggingface.co/<id>/resolve/main/config.json, or nullopt with an issue (field "model_id")
// naming the rule the id breaks.
std::optional<std::string> hf_config_url(const std::string& model_id, std::vector<Issue>& issues);
// What fetching that URL gave, as an import: HTTP `status` (0 = no answer: offline, DNS, a blocked
// request) and the body. 200 goes through import_hf_launch, as a pasted config.json; anything else is
// a fetch_failed error that says why (401 login needed: gated, private or no such repository; 403
// gated; 404 no config.json; 0 offline) and what to do, and a 200 that is not JSON says so.
LaunchImport import_fetched_hf_config(const std::string& model_id, int status, const std::string& body);

// The import's fields with `overrides` (CLI flags, a state, the page's other inputs) on top; when
// neither sets global_batch and the import gave batch_per_dp_rank, global_batch = that × dp; when the
// import gave both and they disagree at the resolved dp, a conflicting_settings warning joins `issues`.
nlohmann::json resolve_import(const LaunchImport& import, const nlohmann::json& overrides, std::vector<Issue>& issues);

// The import over a whole config (the page's inputs): what the text sets replaces, the rest of `base`
// stays; fields derived from what the import changes (dp, the uneven split, a preset's dimensions
// when the import names another model) follow the import. Returns `base` unchanged when the result
// has errors (they join `issues`).
Config apply_import(const Config& base, const LaunchImport& import, std::vector<Issue>& issues);

// The fields the layout search chooses (dp, tp, pp, cp, vpp, micro_batch, zero, recompute, sp and
// the uneven split): dropped from an import so that `meshfit search` is free to choose them.
bool is_searched_field(const std::string& key);

struct LaunchExport {
  LaunchFormat format = LaunchFormat::kMegatron;
  std::vector<std::string> args;  // megatron: the command's words (torchrun, its flags, pretrain_gpt.py, flags)
  std::string text;               // what to paste: the shell command, the TOML sections, the JSON file
  std::vector<Issue> issues;      // what the format says differently (warnings), or cannot say (errors: text incomplete)
};

// `config` must be valid (validate() without errors). hf exports the model's config.json fields;
// torchtune a recipe YAML, hf-trainer the TrainingArguments / LoraConfig / BitsAndBytesConfig lines.
LaunchExport export_launch_config(const Config& config, LaunchFormat format);

}  // namespace meshfit
