// serialize.cpp — see serialize.h. Field names here are the schema shared by the CLI flags,
// config files and (later) the JS API and URL state.
#include "io/serialize.h"

#include "io/csv_text.h"

#include "memory/finetune.h"

#include <cerrno>
#include <cmath>
#include <map>
#include <cstdlib>
#include <algorithm>

#include "io/number_text.h"
#include "io/text.h"
#include "meshfit_assert.h"
#include "spec/config_schema.h"
#include "spec/input_limits.h"
#include "spec/preset_table.h"
#include "spec/validate.h"
#include "units.h"

namespace meshfit {

using nlohmann::json;

namespace {

// Strict number grammar (JSON's, without a leading '+' or any space): "-"? digits ("." digits)?
// ([eE] [+-]? digits)?. strtoll/strtod alone would take "0x10" as 16, " 5" as 5 and "inf".
bool is_decimal_number(const std::string& text, bool& integral) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digits()) return false;
  integral = true;
  if (i < text.size() && text[i] == '.') {
    ++i;
    integral = false;
    if (!digits()) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    integral = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

}  // namespace

json value_from_text(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  bool integral = false;
  if (!is_decimal_number(text, integral)) return text;
  if (integral) {
    errno = 0;
    const long long integer = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == 0) return integer;
  }
  // Decimals, and integers beyond int64 (the readers refuse those as too large, quoting the value).
  const double number = std::strtod(text.c_str(), nullptr);
  if (std::isfinite(number)) return number;
  return text;
}

std::string describe(const json& value) {
  if (value.is_string()) return quote_text(value.get_ref<const std::string&>());
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 64) text = text.substr(0, 64) + "...";
  return text;
}

Config default_config() {
  Config config;
  config.gpu = *find_gpu_preset("h100-sxm");
  return config;
}

namespace {

// [SECTION] Field readers: each reports its own type problems and leaves the target unchanged.

class Reader {
 public:
  explicit Reader(std::vector<Issue>& issues) : issues_(issues) {}

  void integer(const std::string& field, const json& value, int64_t& out) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX)) {
      too_large(field, value);
      return;
    }
    if (value.is_number_integer()) {
      out = value.get<int64_t>();
      return;
    }
    if (value.is_number_float()) {
      const double number = value.get<double>();
      if (std::isfinite(number) && number == std::floor(number)) {
        if (std::fabs(number) > 9.0e18) {
          too_large(field, value);
        } else {
          out = int64_t(number);
        }
        return;
      }
    }
    issues_.push_back({IssueCode::kNotInteger, Severity::kError, field,
                       field + " must be an integer, got " + describe(value) + "."});
  }

  void too_large(const std::string& field, const json& value) {
    issues_.push_back({IssueCode::kOutOfRange, Severity::kError, field,
                       field + "=" + describe(value) + " is too large to read as a whole number (over 2^63-1)."});
  }

  bool number(const std::string& field, const json& value, double& out) {
    if (value.is_number() && std::isfinite(value.get<double>())) {
      out = value.get<double>();
      return true;
    }
    // "15T" is no number at all, "nan" and "inf" are numbers that are not finite: say which (an
    // as-a-user review read "must be a finite number" for a suffix it expected to work).
    const std::string text = value.is_string() ? ascii_lower(value.get<std::string>()) : "";
    const bool not_finite = value.is_number() || text.find("nan") != std::string::npos || text.find("inf") != std::string::npos;
    issues_.push_back({IssueCode::kNotPositive, Severity::kError, field,
                       field + (not_finite ? " must be a finite number"
                                           : " must be a number (digits, a decimal point, an exponent as in 1.5e13; no suffix)") +
                           ", got " + describe(value) + "."});
    return false;
  }

  void boolean(const std::string& field, const json& value, bool& out) {
    if (value.is_boolean()) {
      out = value.get<bool>();
      return;
    }
    issues_.push_back({IssueCode::kUnknownValue, Severity::kError, field,
                       field + " must be true or false, got " + describe(value) + "."});
  }

  template <typename Enum>
  void word(const std::string& field, const json& value, Enum& out) {
    if (value.is_string()) {
      if (auto parsed = enum_from_key<Enum>(value.get<std::string>())) {
        out = *parsed;
        return;
      }
    }
    unknown_word(field, value, enum_keys_text<Enum>());
  }

  void unknown_word(const std::string& field, const json& value, const std::string& allowed) {
    issues_.push_back({IssueCode::kUnknownValue, Severity::kError, field,
                       field + " must be one of " + allowed + ", got " + describe(value) + "."});
  }

  // One schema field: the value checked against the row's kind, then set through its accessor.
  void field(const ConfigField& row, const json& value, Config& config) {
    const std::string key = row.key;
    // A setter refuses a value outside the row's documented range, `allowed` saying which (an
    // as-a-user review saw gpu_sms=-1 dropped without a word and the preset's kept).
    const auto set_or_refuse = [&](bool read, const auto& parsed) {
      if (!read) return;
      if (!row.set(config, parsed))
        issues_.push_back({parsed > 0 ? IssueCode::kOutOfRange : IssueCode::kNotPositive, Severity::kError, key,
                           key + "=" + describe(value) + " is refused: " + key + " must be " + row.allowed + "."});
    };
    switch (row.kind) {
      case FieldKind::kInteger: {
        const size_t before = issues_.size();
        int64_t number = 0;
        integer(key, value, number);
        set_or_refuse(issues_.size() == before, number);
        return;
      }
      case FieldKind::kNumber: {
        double real = 0;
        set_or_refuse(number(key, value, real), real);
        return;
      }
      case FieldKind::kBoolean:
        if (value.is_boolean()) row.set(config, value);
        else issues_.push_back({IssueCode::kUnknownValue, Severity::kError, key,
                                key + " must be true or false, got " + describe(value) + "."});
        return;
      case FieldKind::kWord:  // the setter refuses what is not one of its words (or an old boolean it reads)
        if (!row.set(config, value))
          unknown_word(key, value, row.allowed + (row.reads_old_boolean ? " (or true/false)" : ""));
        return;
      case FieldKind::kText:
        if (value.is_string()) {
          if (check_text_field(row, value.get_ref<const std::string&>(), issues_)) row.set(config, value);
        } else issues_.push_back({IssueCode::kUnknownValue, Severity::kError, key, key + " must be text, got " + describe(value) + "."});
        return;
      case FieldKind::kPreset:
        return;  // applied before every other field (parse_config)
    }
  }

  // An older key: a warning saying how to write it now, then its value onto the field that replaced it.
  void legacy(const LegacyField& old, const json& value, Config& config) {
    const std::string key = old.key;
    if (value.is_null()) return;  // null = keep the default, as for a field
    MESHFIT_ASSERT(old.kind == FieldKind::kBoolean, "legacy fields of other kinds need their check here");
    if (!value.is_boolean()) {
      issues_.push_back({IssueCode::kUnknownValue, Severity::kError, key,
                         key + " must be true or false, got " + describe(value) + "."});
      return;
    }
    issues_.push_back({IssueCode::kRenamedField, Severity::kWarning, key,
                       key + " is now part of " + old.replaced_by + ": " + old.how + "."});
    const json replacement = old.translate(value);
    if (!replacement.is_null()) field(*find_config_field(old.replaced_by), replacement, config);
  }

 private:
  std::vector<Issue>& issues_;
};

// The settings of one fine-tuning method: the adapters' (LoRA and QLoRA; dora: validate.cpp) and the
// 4-bit base's (QLoRA).
const std::vector<const char*>& adapter_keys() {
  static const std::vector<const char*> keys = {"lora_rank",  "lora_alpha", "lora_targets",      "lora_dropout",
                                                "adapter_dtype", "base_dtype", "embedding_trained", "lm_head_trained"};
  return keys;
}
const std::vector<const char*>& four_bit_keys() {
  static const std::vector<const char*> keys = {"kbit_upcast", "double_quant"};
  return keys;
}
bool listed(const std::vector<const char*>& keys, const char* key) {
  return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return std::string(k) == key; });
}

}  // namespace

const std::vector<const char*>& finetune_only_keys() {
  // The adapters' keys, the 4-bit base's, and the stack whose defaults fill them: one list each.
  static const std::vector<const char*> keys = [] {
    std::vector<const char*> all = adapter_keys();
    all.insert(all.end(), four_bit_keys().begin(), four_bit_keys().end());
    all.push_back("stack");
    return all;
  }();
  return keys;
}

// Not a hot path (once per input): presets, older keys, fields, then the defaults that depend on
// other fields (framework profile, fine-tuning), in that order.
ParsedConfig parse_config(const json& object) {
  ParsedConfig parsed;
  parsed.config = default_config();
  Config& c = parsed.config;
  std::vector<Issue>& issues = parsed.issues;
  Reader read(issues);
  if (!object.is_object()) {
    issues.push_back({IssueCode::kUnknownField, Severity::kError, "config",
                      "a config must be a JSON object of fields, got " + std::string(object.type_name()) + "."});
    return parsed;
  }

  // Presets first, so that individual fields override them whatever the key order.
  bool have_model_preset = false;
  if (object.contains("model")) {
    const json& value = object["model"];
    std::string id = value.is_string() ? value.get<std::string>() : "";
    // "<preset>+custom" is what this writes for a preset with overridden dimensions (below): read
    // back as that preset under the dimension fields written beside it.
    constexpr const char kCustomSuffix[] = "+custom";
    const size_t suffix = sizeof kCustomSuffix - 1;
    if (id.size() > suffix && id.compare(id.size() - suffix, suffix, kCustomSuffix) == 0 &&
        find_model_preset(id.substr(0, id.size() - suffix)))
      id.resize(id.size() - suffix);
    if (auto spec = value.is_string() ? find_model_preset(id) : std::nullopt) {
      c.model = *spec;
      have_model_preset = true;
    } else if (id != "custom") {
      const std::string near = nearest_preset_ids(model_presets(), id);
      issues.push_back({IssueCode::kUnknownModelPreset, Severity::kError, "model",
                        "model " + describe(value) + " is not a preset" + (near.empty() ? "" : " (did you mean " + near + "?)") +
                            "; known: " + preset_ids(model_presets()) + "."});
    }
  }
  if (object.contains("gpu")) {
    const json& value = object["gpu"];
    const std::string id = value.is_string() ? value.get<std::string>() : "";
    if (auto spec = value.is_string() ? find_gpu_preset(id) : std::nullopt) {
      c.gpu = *spec;
    } else if (id == "custom") {
      c.gpu = GpuSpec{};  // no figures until given: memory for the estimate, compute for the step time
    } else {
      const std::string near = nearest_preset_ids(gpu_presets(), id);
      issues.push_back({IssueCode::kUnknownGpuPreset, Severity::kError, "gpu",
                        "gpu " + describe(value) + " is not a preset" + (near.empty() ? "" : " (did you mean " + near + "?)") +
                            "; known: " + preset_ids(gpu_presets()) + "."});
    }
  }

  // Older keys first (config_schema.h LegacyField), so that the key replacing one wins when both are given.
  for (const auto& [key, value] : object.items())
    if (const LegacyField* legacy = find_legacy_field(key)) read.legacy(*legacy, value, c);
  for (const auto& [key, value] : object.items()) {
    if (find_legacy_field(key)) continue;
    const ConfigField* row = find_config_field(key);
    if (!row) {
      issues.push_back({IssueCode::kUnknownField, Severity::kError, is_valid_utf8(key) ? key : "config",
                        quote_text(key) + " is not a meshfit config field."});
      continue;
    }
    if (value.is_null()) continue;  // null = keep the default
    read.field(*row, value, c);
  }
  // Defaults that depend on the framework come from its profile (FSDP: full sharding).
  const auto given = [&object](const char* key) { return object.contains(key) && !object[key].is_null(); };
  if (!given("zero")) c.layout.zero = framework_profile(c.training.framework).default_zero;
  // Fine-tuning: the Hugging Face Trainer + PEFT defaults for what the config leaves out (finetune.h).
  if (is_finetune(c.training)) {
    // The stack's defaults (finetune.h FinetuneStackProfile) for every key the config leaves out.
    const json defaults = config_to_json(with_finetune_defaults(c, finetune_defaults(c, given("framework"))));
    for (const char* key : finetune_default_keys())
      if (!given(key)) find_config_field(key)->set(c, defaults[key]);
    // A given global batch of several micro-batches keeps the stack's optimizer, stepped after the
    // backward (the stack's default was for one micro-batch per step).
    if (!given("optimizer_in_backward"))
      c.training.optimizer_in_backward = stack_optimizer_in_backward(c, c.training.optimizer_in_backward);
    // Settings of another method than the one run (adapters on a full fine-tune, the 4-bit base's on
    // LoRA): said, not silently dropped (an as-a-user review gave --lora-rank 64 to a full fine-tune and
    // --double-quant to a LoRA). A value equal to what the stack or meshfit would have used is what a
    // whole config writes for every run: not said.
    {
      const Config plain = default_config();
      const auto& stack_keys = finetune_default_keys();
      const auto say_unused = [&](const char* key, const char* applies) {
        const ConfigField* row = find_config_field(key);
        if (!given(key) || !row) return;
        const bool stack_key = listed(stack_keys, key);
        if (row->get(c) == (stack_key ? defaults[key] : row->get(plain))) return;
        issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, key,
                          std::string(key) + " applies to " + applies + "; finetune=" + enum_key(c.training.finetune) +
                              " ignores it."});
      };
      if (c.training.finetune == FinetuneMethod::kFull)
        for (const char* key : adapter_keys()) say_unused(key, "LoRA and QLoRA (the adapters)");
      if (c.training.finetune != FinetuneMethod::kQlora)
        for (const char* key : four_bit_keys()) say_unused(key, "QLoRA (the 4-bit base)");
    }
    // framework=fsdp names the stack's own PyTorch path, where HF Trainer + PEFT run DDP (zero 0) unless
    // told to shard: said when a multi-GPU run leaves zero out (an as-a-user review read --framework
    // fsdp as FSDP and was shown a replicated 312 GiB run).
    if (given("framework") && !given("zero") && c.training.framework == Framework::kFsdp && c.layout.zero == 0 &&
        c.cluster.gpus > 1)
      issues.push_back({IssueCode::kConflictingSettings, Severity::kWarning, "zero",
                        "framework=fsdp with " + std::string(enum_label(c.training.stack)) +
                            " and no zero given is its DDP (zero=0: every GPU holds the whole model); FSDP's full "
                            "sharding is zero=3 (stack hf_peft_fsdp sets it)."});
  } else {
    // Adapter and stack settings without a fine-tune: said, not silently dropped (an as-a-user review
    // gave lora_rank to a pretraining estimate). A value equal to the default is what a whole config
    // (an export, an estimate's "config") writes for every run: not said.
    const Config plain = default_config();
    for (const char* key : finetune_only_keys()) {
      const ConfigField* row = find_config_field(key);
      if (given(key) && row && row->get(c) != row->get(plain))
        // The methods the key belongs to (a review read lora_rank "applies to ... finetune=full").
        issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, key,
                          std::string(key) + " applies to " +
                              (listed(four_bit_keys(), key) ? "QLoRA (finetune=qlora)"
                               : listed(adapter_keys(), key) ? "LoRA and QLoRA (finetune=lora or qlora)"
                                                             : "fine-tuning (finetune=full, lora or qlora)") +
                              "; finetune=none (pretraining) ignores it."});
    }
  }

  // A custom model (no preset) must name its whole architecture; kv_heads defaults to heads.
  if (!have_model_preset) {
    c.model.name = "custom";
    if (c.model.kv_heads == 0) c.model.kv_heads = c.model.heads;
    std::string missing;
    for (const ConfigField& row : config_fields())
      if (row.required_without_preset && !object.contains(row.key)) missing += (missing.empty() ? "" : ", ") + std::string(row.key);
    // Said even beside other errors (a garbled link's listed only its bad pairs, and then "hidden must be
    // positive, got 0" for fields it never named), unless the model field has its own problem already.
    const bool model_issue = std::any_of(issues.begin(), issues.end(), [](const Issue& i) { return i.field == "model"; });
    if (!missing.empty() && !model_issue)
      issues.push_back({IssueCode::kMissingModel, Severity::kError, "model",
                        "no model: give a preset (model) or every architecture field (missing: " + missing + ")."});
  } else {
    // Overridden = a dimension given with another value than the preset's (the same value, as an
    // import or an export writes it, keeps the preset's name).
    Config preset = c;
    preset.model = *find_model_preset(c.model.name);
    bool overridden = false;
    for (const ConfigField& row : config_fields())
      overridden |= row.dimension && object.contains(row.key) && row.get(c) != row.get(preset);
    if (overridden) c.model.name += "+custom";  // a preset with overridden dimensions is no longer that preset
  }
  if (c.gpu.id == "custom" && c.gpu.memory_bytes <= 0 && !object.contains("gpu_memory_gib"))
    issues.push_back({IssueCode::kNotPositive, Severity::kError, "gpu_memory_gib",
                      "a custom GPU needs gpu_memory_gib (its memory capacity in GiB)."});
  // The default global batch (512 sequences) on a data-parallel size it does not divide (24 GPUs, three
  // nodes): the next multiple of dp x micro_batch, said, rather than an error about a batch the user
  // never gave (an as-a-user review). A batch given is the user's and stays.
  if (!given("global_batch") && !is_finetune(c.training) && c.training.micro_batch > 0) {
    const int64_t dp = effective_dp(c);
    const int64_t unit = dp > 0 ? dp * c.training.micro_batch : 0;
    if (unit > 0 && unit <= kMaxBatch && c.training.global_batch % unit != 0) {
      const int64_t rounded = (c.training.global_batch / unit + 1) * unit;
      if (rounded <= kMaxBatch) {
        issues.push_back({IssueCode::kOutOfRange, Severity::kWarning, "global_batch",
                          "global_batch " + std::to_string(rounded) + ": meshfit's default of " +
                              std::to_string(c.training.global_batch) + " rounded up to a multiple of dp x micro_batch = " +
                              std::to_string(unit) + "; give global_batch to set it."});
        c.training.global_batch = rounded;
      }
    }
  }
  return parsed;
}

json model_to_json(const ModelSpec& m) {
  Config config;
  config.model = m;
  json out = json::object();
  for (const ConfigField& row : config_fields())
    if (row.group == FieldGroup::kModel && row.kind != FieldKind::kPreset) out[row.key] = row.get(config);
  return out;
}

json config_to_json(const Config& c) {
  json out = json::object();
  for (const ConfigField& row : config_fields()) out[row.key] = row.get(c);
  return out;
}

json issues_to_json(const std::vector<Issue>& issues) {
  json out = json::array();
  for (const Issue& issue : issues)
    out.push_back({{"code", to_string(issue.code)},
                   {"severity", to_string(issue.severity)},
                   {"field", issue.field},
                   {"message", issue.message}});
  return out;
}

namespace {

json stage_activations_to_json(const StageActivations& a) {
  return {{"in_flight", a.in_flight},
          {"layers_per_in_flight", a.layers_per_in_flight},
          {"layer_bytes", a.layer_bytes},
          {"layers_bytes", a.layers_bytes},
          {"offloaded_bytes", a.offloaded_bytes},
          {"recompute_working_bytes", a.recompute_working_bytes},
          {"embedding_bytes", a.embedding_bytes},
          {"head_input_bytes", a.head_input_bytes},
          {"total_bytes", a.total}};
}

json rank_to_json(const RankMemory& rank, double capacity_bytes) {
  json components = json::object();
  for (int i = 0; i < kComponentCount; ++i) components[to_string(Component(i))] = rank.component_bytes[size_t(i)];
  json chunks = json::array();
  for (const ChunkLayers& chunk : rank.chunks)
    chunks.push_back({{"chunk", chunk.chunk}, {"first_layer", chunk.first_layer}, {"layers", chunk.layers}});
  const RankIntermediates& in = rank.intermediates;
  return {{"role", rank.role},
          {"pp_stage", rank.pp_stage},
          {"chunks", chunks},
          {"components", components},
          {"peak_allocated_bytes", rank.peak_allocated_bytes},
          {"peak_reserved_bytes", rank.peak_reserved_bytes},
          {"device_bytes", rank.device_bytes},
          {"host_bytes", rank.host_bytes},
          {"paged_spill_bytes", paged_spill_bytes(rank, capacity_bytes)},
          {"sections", {{"body_bytes", in.body_section_bytes}, {"output_bytes", in.output_section_bytes}}},
          {"intermediates",
           {{"layers", in.layers},
            {"parameters", in.parameters},
            {"layer_parameters", in.layer_parameters},
            {"embedding_parameters", in.embedding_parameters},
            {"lm_head_parameters", in.lm_head_parameters},
            {"weight_bytes_per_param", in.weight_bytes_per_param},
            {"grad_bytes_per_param", in.grad_bytes_per_param},
            {"optimizer_bytes_per_param", in.optimizer_bytes_per_param},
            {"in_flight_microbatches", in.in_flight_microbatches},
            {"activations", stage_activations_to_json(in.activations)},
            {"logits_elements", in.logits_elements},
            {"logits_bytes", in.logits_bytes},
            {"backward_working_bytes", in.backward_working_bytes},
            {"peak_phase", in.peak_at_optimizer_step ? "optimizer_step" : in.peak_at_backward ? "backward" : "forward_end"},
            {"optimizer_step_transient_bytes", in.optimizer_step_transient_bytes},
            {"optimizer_step_allocated_bytes", in.optimizer_step_allocated_bytes},
            {"optimizer_step_new_segments", in.optimizer_step_new_segments},
            {"largest_unit_parameters", in.largest_unit_parameters},
            {"nccl_communicators", in.nccl_communicators},
            {"trainable_parameters", in.trainable_parameters},
            {"frozen_parameters", in.frozen_parameters},
            {"quantized_parameters", in.quantized_parameters},
            {"dequantized_transient_bytes", in.dequantized_transient_bytes}}}};
}

}  // namespace

json memory_report_to_json(const MemoryReport& report) {
  json out = {{"issues", issues_to_json(report.issues)}, {"capacity_bytes", report.capacity_bytes},
              {"headroom", report.headroom}};
  if (!report.valid()) {
    out["fits"] = false;
    out["verdict"] = "invalid";
    return out;
  }
  const RankMemory& worst = report.worst();
  out["peak_allocated_bytes"] = worst.peak_allocated_bytes;
  out["peak_reserved_bytes"] = worst.peak_reserved_bytes;
  out["device_bytes"] = worst.device_bytes;
  out["fits"] = report.fits();
  out["verdict"] = to_string(report.verdict);
  out["worst_rank"] = report.worst_rank;
  out["total_parameters"] = report.total_parameters;
  out["padded_vocab"] = report.padded_vocab;
  out["dp"] = report.dp;
  out["num_microbatches"] = report.num_microbatches;
  out["optimizer_shard_ranks"] = report.optimizer_shard_ranks;
  out["optimizer_state_after_first_step"] = report.optimizer_state_after_first_step;
  const LayerActivations& layer = report.layer_activations;
  out["layer_activations"] = {{"sequence_terms_bytes", layer.sequence_terms},
                              {"tp_split_terms_bytes", layer.tp_split_terms},
                              {"attention_scores_bytes", layer.attention_scores},
                              {"no_recompute_bytes", layer.no_recompute},
                              {"stored_bytes", layer.stored}};
  out["ranks"] = json::array();
  for (const RankMemory& rank : report.ranks) out["ranks"].push_back(rank_to_json(rank, report.capacity_bytes));
  return out;
}

void add_step_report(json& out, const StepReport& step) {
  out["step_time_s"] = step.step_time_s;
  out["tokens_per_s_per_gpu"] = step.tokens_per_s_per_gpu;
  out["mfu"] = step.mfu;
  out["hfu"] = step.hfu;
  out["tflops_per_gpu"] = step.tflops_per_gpu;
  out["model_flops_per_token"] = step.model_flops_per_token;
  out["bubble_fraction"] = step.bubble_fraction;
  out["gemm_efficiency"] = step.gemm_efficiency;
  out["host_bound_fraction"] = step.host_bound_fraction;
  out["host_bound_note"] = host_bound_text(step);
  out["time_to_train_s"] = step.time_to_train_s;  // 0 when tokens_to_train is not given
  out["time_to_train_days"] = seconds_to_days(step.time_to_train_s);
  out["time_to_train_text"] = format_duration(step.time_to_train_s);  // "61.4 days", "5.2 h" (number_text.h)
  // How far to trust tokens/s, MFU and step time: the validation error for this framework and GPU family.
  out["error_band"] = {{"median_abs_error", step.error_band.median_abs_error},
                       {"runs", step.error_band.runs},
                       {"basis", step.error_band.basis},
                       {"min_gpus", step.error_band.min_gpus},
                       {"max_gpus", step.error_band.max_gpus},
                       // the runs of this framework and GPU family: fewer than runs when the band was widened to
                       // the framework's runs on every family (perf_model.h prediction_error_band)
                       {"family_runs", step.error_band.exact_runs >= 0 ? step.error_band.exact_runs : step.error_band.runs},
                       {"text", error_band_text(step.error_band)}};
  out["tp_crosses_nodes"] = step.tp_crosses_nodes;
  out["dp_crosses_nodes"] = step.dp_crosses_nodes;
  const StepBreakdown& b = step.breakdown;
  out["breakdown"] = {{"compute_s", b.compute_s},     {"tp_comm_s", b.tp_comm_s},   {"cp_comm_s", b.cp_comm_s},
                      {"pp_bubble_s", b.pp_bubble_s}, {"pp_p2p_s", b.pp_p2p_s},     {"dp_comm_s", b.dp_comm_s},
                      {"optimizer_s", b.optimizer_s}};
}

SearchOptions search_options_from_json(json& object, std::vector<Issue>& issues) {
  SearchOptions options;
  Reader read(issues);
  const auto take = [&](const char* key) -> std::optional<json> {
    if (!object.contains(key) || object[key].is_null()) {
      object.erase(key);
      return std::nullopt;
    }
    json value = object[key];
    object.erase(key);
    return value;
  };
  // Each searched dimension with the largest value a pin or bound may take (validate.h, input_limits.h).
  struct Dimension {
    const char* key;
    Range* range;
    int64_t limit;
  };
  const Dimension dimensions[] = {{"dp", &options.dp, kMaxGpus},   {"tp", &options.tp, kMaxGpus},
                                  {"pp", &options.pp, kMaxGpus},   {"cp", &options.cp, kMaxGpus},
                                  {"vpp", &options.vpp, kMaxSearchVpp},  {"micro_batch", &options.micro_batch, kMaxBatch}};
  // A pin or bound in [1, limit]; anything else is an issue and leaves the search's default.
  const auto in_range = [&](const std::string& key, const json& value, int64_t limit, int64_t& out) {
    int64_t number = 0;
    const size_t before = issues.size();
    read.integer(key, value, number);
    if (issues.size() != before) return false;
    if (number < 1) {
      issues.push_back({IssueCode::kNotPositive, Severity::kError, key,
                        key + " must be a positive integer, got " + std::to_string(number) + "."});
      return false;
    }
    if (number > limit) {
      issues.push_back({IssueCode::kOutOfRange, Severity::kError, key,
                        key + "=" + std::to_string(number) + " exceeds the supported maximum of " +
                            std::to_string(limit) + "."});
      return false;
    }
    out = number;
    return true;
  };
  for (const Dimension& dimension : dimensions) {
    int64_t number = 0;
    if (auto value = take(dimension.key))
      if (in_range(dimension.key, *value, dimension.limit, number)) *dimension.range = Range::pinned(number);
    const std::string bound = std::string("max_") + dimension.key;
    if (auto value = take(bound.c_str()))
      if (in_range(bound, *value, dimension.limit, number)) dimension.range->max = std::min(dimension.range->max, number);
  }
  if (auto value = take("zero")) {
    int64_t zero = -1;
    const size_t before = issues.size();
    read.integer("zero", *value, zero);
    if (issues.size() == before && (zero < 0 || zero > 3))
      issues.push_back({IssueCode::kOutOfRange, Severity::kError, "zero",
                        "zero must be 0, 1, 2 or 3, got " + std::to_string(zero) + "."});
    else if (issues.size() == before)
      for (int64_t stage = 0; stage < 4; ++stage) options.zero[size_t(stage)] = stage == zero;
  }
  if (auto value = take("recompute")) {
    Recompute recompute = Recompute::kNone;
    read.word("recompute", *value, recompute);
    for (int i = 0; i < 3; ++i) options.recompute[size_t(i)] = i == int(recompute);
  }
  if (auto value = take("sp")) {
    bool sp = true;
    read.boolean("sp", *value, sp);
    options.sp = sp ? SpChoice::kOn : SpChoice::kOff;
  }
  if (auto value = take("spatial_temporal")) read.boolean("spatial_temporal", *value, options.spatial_temporal);
  if (auto value = take("memory_limit")) {
    read.number("memory_limit", *value, options.memory_limit);
    if (!(options.memory_limit > 0 && options.memory_limit <= 1.0))
      issues.push_back({IssueCode::kThresholdOutOfRange, Severity::kError, "memory_limit",
                        "memory_limit must be a fraction in (0, 1], got " + format_decimal(options.memory_limit) + "."});
  }
  if (auto value = take("top")) in_range("top", *value, kMaxTop, options.top_k);
  if (auto value = take("budget")) in_range("budget", *value, kMaxSearchBudget, options.budget);
  return options;
}

json layout_candidate_to_json(const LayoutCandidate& c) {
  json out = {{"dp", c.layout.dp},
              {"tp", c.layout.tp},
              {"pp", c.layout.pp},
              {"cp", c.layout.cp},
              {"vpp", c.layout.vpp},
              {"micro_batch", c.micro_batch},
              {"zero", c.layout.zero},
              {"dp_replicate", c.layout.dp_replicate},
              {"hpz_partition_size", c.layout.hpz_partition_size},
              {"recompute", to_string(c.recompute)},
              {"sp", c.sp},
              {"pp_first_stage_layers", c.layout.pp_first_stage_layers},
              {"pp_last_stage_layers", c.layout.pp_last_stage_layers},
              {"peak_allocated_bytes", c.peak_allocated_bytes},
              {"peak_reserved_bytes", c.peak_reserved_bytes},
              {"device_bytes", c.device_bytes},
              {"worst_rank_role", c.worst_role},
              {"worst_rank", c.worst_stage},
              {"verdict", to_string(c.verdict)},
              {"fits", c.verdict != Verdict::kOutOfMemory},
              {"feasible", c.feasible},
              {"spatial_temporal_q", c.layout.st_q},
              {"model_parallel", c.spatial_temporal() ? "spatial_temporal" : "megatron_tp"}};
  // Marked wherever it is shown: the search's spatial-temporal layouts are modelled only.
  if (c.spatial_temporal()) out["modelled_only"] = kSpatialTemporalNote;
  json components = json::object();
  for (int i = 0; i < kComponentCount; ++i) components[to_string(Component(i))] = c.component_bytes[size_t(i)];
  out["components"] = components;
  if (c.feasible) add_step_report(out, c.step);
  return out;
}

json search_result_to_json(const SearchResult& result) {
  json out = {{"issues", issues_to_json(result.issues)}};
  if (!result.valid()) return out;
  out["evaluated"] = result.evaluated;
  out["feasible"] = result.feasible;
  out["memory_evaluations"] = result.memory_evaluations;
  out["work"] = result.work;
  out["complete"] = result.complete;
  json rejected = json::object();
  for (int i = 0; i < kRejectReasonCount; ++i)
    if (result.rejected[size_t(i)] > 0) rejected[to_string(RejectReason(i))] = result.rejected[size_t(i)];
  out["rejected"] = rejected;
  out["layouts"] = json::array();
  for (const LayoutCandidate& c : result.top) out["layouts"].push_back(layout_candidate_to_json(c));
  out["pareto"] = json::array();
  for (const LayoutCandidate& c : result.pareto) out["pareto"].push_back(layout_candidate_to_json(c));
  if (!result.spatial_temporal_top.empty()) {
    out["spatial_temporal_layouts"] = json::array();
    for (const LayoutCandidate& c : result.spatial_temporal_top)
      out["spatial_temporal_layouts"].push_back(layout_candidate_to_json(c));
  }
  if (!result.all.empty()) {
    out["all"] = json::array();
    for (const LayoutCandidate& c : result.all) out["all"].push_back(layout_candidate_to_json(c));
  }
  return out;
}

namespace {

void flatten(const json& value, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object()) {
    for (const auto& item : value.items()) flatten(item.value(), prefix.empty() ? item.key() : prefix + "." + item.key(), out);
    return;
  }
  out.emplace_back(prefix, value.is_string() ? value.get<std::string>()
                                             : value.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace

std::string layouts_to_csv(const std::vector<LayoutCandidate>& candidates) {
  std::vector<std::string> header;
  std::map<std::string, size_t> column;
  std::vector<std::vector<std::pair<std::string, std::string>>> flat;
  flat.reserve(candidates.size());
  for (const LayoutCandidate& c : candidates) {
    flat.emplace_back();
    flatten(layout_candidate_to_json(c), "", flat.back());
    for (const auto& cell : flat.back())
      if (column.emplace(cell.first, header.size()).second) header.push_back(cell.first);
  }
  std::vector<std::vector<std::string>> rows;
  rows.reserve(flat.size());
  for (const auto& cells : flat) {
    std::vector<std::string> row(header.size());
    for (const auto& cell : cells) row[column[cell.first]] = cell.second;
    rows.push_back(std::move(row));
  }
  return write_csv(header, rows);
}

json presets_to_json() {
  json models = json::array();
  for (const ModelPreset& preset : model_presets()) {
    json entry = {{"id", preset.id}, {"source", preset.source}, {"total_parameters", total_parameters(preset.spec)}};
    entry.update(model_to_json(preset.spec));
    models.push_back(entry);
  }
  json gpus = json::array();
  for (const GpuPreset& preset : gpu_presets()) {
    const GpuSpec& g = preset.spec;
    gpus.push_back({{"id", preset.id},
                    {"name", g.name},
                    {"source", preset.source},
                    {"memory_bytes", g.memory_bytes},
                    {"memory_gib", bytes_to_gib(g.memory_bytes)},
                    {"bf16_flops", g.bf16_flops},
                    {"fp8_flops", g.fp8_flops},
                    {"hbm_bytes_per_s", g.hbm_bytes_per_s},
                    {"nvlink_bytes_per_s", g.nvlink_bytes_per_s},
                    {"internode_bytes_per_s", g.internode_bytes_per_s},
                    {"nvlink_domain", g.nvlink_domain},
                    {"sms", g.sms},
                    {"family", g.family},
                    {"bf16_gemm_ceiling", g.bf16_gemm_ceiling},
                    {"fp8_gemm_ceiling", g.fp8_gemm_ceiling},
                    {"tdp_w", g.tdp_w},
                    {"power_limit_w", g.power_limit_w}});
  }
  return {{"models", models}, {"gpus", gpus}};
}

}  // namespace meshfit
