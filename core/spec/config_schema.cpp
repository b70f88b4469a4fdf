// config_schema.cpp — the rows of config_schema.h. Accessors are generated from member pointers,
// so a row names its member once; only model, gpu, gpu_memory_gib and dp need their own code.
#include "spec/config_schema.h"

#include <optional>
#include <type_traits>

#include "io/json_text.h"
#include "spec/input_limits.h"

#include "units.h"
#include "validate.h"

namespace meshfit {

using nlohmann::json;

namespace {

// [SECTION] Row builders: one template per kind, over (Config::*part).*member.

const std::string kTextFieldAllowed = "UTF-8 text of at most " + std::to_string(kMaxTextFieldBytes) + " bytes";

template <auto Part, auto Member>
auto& member_of(Config& c) { return (c.*Part).*Member; }
template <auto Part, auto Member>
const auto& member_of(const Config& c) { return (c.*Part).*Member; }

template <auto Part, auto Member>
ConfigField plain(const char* key, const char* state_key, FieldKind kind, FieldGroup group, const char* help) {
  ConfigField field{key, state_key, help, kind, group, {}};
  field.get = [](const Config& c) -> json { return member_of<Part, Member>(c); };
  field.set = [](Config& c, const json& value) {
    using T = std::decay_t<decltype(member_of<Part, Member>(c))>;
    member_of<Part, Member>(c) = value.get<T>();
    return true;
  };
  return field;
}

template <auto Part, auto Member>
ConfigField integer(const char* key, const char* state_key, FieldGroup group, const char* help) {
  return plain<Part, Member>(key, state_key, FieldKind::kInteger, group, help);
}
template <auto Part, auto Member>
ConfigField boolean(const char* key, FieldGroup group, const char* help) {
  return plain<Part, Member>(key, key, FieldKind::kBoolean, group, help);
}
template <auto Part, auto Member>
ConfigField number(const char* key, FieldGroup group, const char* help) {
  return plain<Part, Member>(key, key, FieldKind::kNumber, group, help);
}

// Free text: checked by check_text_field (UTF-8, at most kMaxTextFieldBytes) wherever it is read.
template <auto Part, auto Member>
ConfigField text(const char* key, FieldGroup group, const char* help) {
  ConfigField field = plain<Part, Member>(key, key, FieldKind::kText, group, help);
  field.allowed = kTextFieldAllowed;
  return field;
}

template <auto Part, auto Member>
ConfigField word(const char* key, FieldGroup group, const char* help) {
  using Enum = std::decay_t<decltype(member_of<Part, Member>(std::declval<Config&>()))>;
  ConfigField field{key, key, help, FieldKind::kWord, group, enum_keys_text<Enum>()};
  field.get = [](const Config& c) -> json { return enum_key(member_of<Part, Member>(c)); };
  field.set = [](Config& c, const json& value) {
    const auto parsed = value.is_string() ? enum_from_key<Enum>(value.get<std::string>()) : std::nullopt;
    if (parsed) member_of<Part, Member>(c) = *parsed;
    return parsed.has_value();
  };
  return field;
}

// An on/off/auto word that was a boolean: the old values (true/false, and 1/0 as a link's or a
// flag's text reads) set on/off, so saved configs, links and scripts keep their meaning.
template <auto Part, auto Member>
ConfigField switch_word(const char* key, FieldGroup group, const char* help) {
  using Enum = std::decay_t<decltype(member_of<Part, Member>(std::declval<Config&>()))>;
  ConfigField field = word<Part, Member>(key, group, help);
  field.reads_old_boolean = true;
  field.set = [](Config& c, const json& value) {
    std::optional<Enum> parsed;
    if (value.is_string()) parsed = enum_from_key<Enum>(value.get<std::string>());
    else if (value.is_boolean()) parsed = enum_from_key<Enum>(value.get<bool>() ? "on" : "off");
    else if (value.is_number_integer() && (value.get<int64_t>() == 0 || value.get<int64_t>() == 1))
      parsed = enum_from_key<Enum>(value.get<int64_t>() == 1 ? "on" : "off");
    if (parsed) member_of<Part, Member>(c) = *parsed;
    return parsed.has_value();
  };
  return field;
}

// Free text held directly by Config (no section).
template <auto Member>
ConfigField text(const char* key, FieldGroup group, const char* help) {
  ConfigField field{key, key, help, FieldKind::kText, group, kTextFieldAllowed};
  field.get = [](const Config& c) -> json { return c.*Member; };
  field.set = [](Config& c, const json& value) {
    c.*Member = value.get<std::string>();
    return true;
  };
  return field;
}

// A model dimension (overrides a preset); `required`: a custom model must give it.
ConfigField dimension(ConfigField field, bool required) {
  field.dimension = true;
  field.required_without_preset = required;
  return field;
}

ConfigField custom(const char* key, const char* state_key, FieldKind kind, FieldGroup group, const char* help,
                   json (*get)(const Config&), bool (*set)(Config&, const json&), const char* allowed = "") {
  ConfigField field{key, state_key, help, kind, group, allowed};
  field.get = get;
  field.set = set;
  return field;
}

// A GPU figure in datasheet units: stored value = given value * Unit::value.
struct One { static constexpr double value = 1.0; };
struct Tera { static constexpr double value = 1e12; };     // TFLOP/s, TB/s
struct Giga { static constexpr double value = 1e9; };      // GB/s
struct GigaBit { static constexpr double value = 1e9 / 8.0; };  // Gb/s -> bytes/s
template <double GpuSpec::*Member, class Unit>
ConfigField gpu_figure(const char* key, const char* help) {
  ConfigField field{key, key, help, FieldKind::kNumber, FieldGroup::kHardware, "a finite number >= 0"};
  field.get = [](const Config& c) -> json { return c.gpu.*Member / Unit::value; };
  field.set = [](Config& c, const json& value) {
    // No negative or infinite figure reaches the models (1e308 TFLOP/s overflows to inf).
    const double stored = value.get<double>() * Unit::value;
    if (!(std::isfinite(stored) && stored >= 0)) return false;
    c.gpu.*Member = stored;
    return true;
  };
  return field;
}

// A measured fraction of a GPU figure (GEMM ceilings): in (0, 1]. Above 1 the model would run GEMMs
// past the datasheet peak (an as-a-user review saw MFU 179% from a ceiling of 5); 0 has no step time.
template <double GpuSpec::*Member>
ConfigField gpu_fraction(const char* key, const char* help) {
  ConfigField field{key, key, help, FieldKind::kNumber, FieldGroup::kHardware, "a number above 0 and at most 1"};
  field.get = [](const Config& c) -> json { return c.gpu.*Member; };
  field.set = [](Config& c, const json& value) {
    const double fraction = value.get<double>();
    if (!(fraction > 0 && fraction <= 1)) return false;
    c.gpu.*Member = fraction;
    return true;
  };
  return field;
}

// [SECTION] The table

// One row per field: a table, not logic (its length is the number of inputs).
std::vector<ConfigField> make_fields() {
  using G = FieldGroup;
  using C = Config;
  return {
      // Model. "model" is applied by parse_config before the fields (presets first).
      custom("model", "model", FieldKind::kPreset, G::kModel, "model preset (see `meshfit presets`)",
             [](const Config& c) -> json { return c.model.name; }, nullptr),
      dimension(integer<&C::model, &ModelSpec::hidden>("hidden", "hidden", G::kModel, "hidden size"), true),
      dimension(integer<&C::model, &ModelSpec::layers>("layers", "layers", G::kModel, "transformer layers"), true),
      dimension(integer<&C::model, &ModelSpec::heads>("heads", "heads", G::kModel, "attention heads"), true),
      dimension(integer<&C::model, &ModelSpec::kv_heads>("kv_heads", "kv", G::kModel, "key/value heads (GQA)"), false),
      dimension(integer<&C::model, &ModelSpec::head_dim>("head_dim", "head_dim", G::kModel,
                                                        "attention head dimension (0 = hidden / heads)"), false),
      dimension(integer<&C::model, &ModelSpec::ffn>("ffn", "ffn", G::kModel, "MLP intermediate size"), true),
      dimension(integer<&C::model, &ModelSpec::vocab>("vocab", "vocab", G::kModel, "vocabulary size"), true),
      boolean<&C::model, &ModelSpec::tied_embeddings>("tied_embeddings", G::kModel, "LM head tied to the embedding"),
      word<&C::model, &ModelSpec::norm>("norm", G::kModel, "normalisation"),
      word<&C::model, &ModelSpec::mlp>("mlp", G::kModel, "MLP kind"),
      boolean<&C::model, &ModelSpec::linear_bias>("linear_bias", G::kModel, "biases on projections"),
      boolean<&C::model, &ModelSpec::dropout>("dropout", G::kModel, "dropout layers"),
      boolean<&C::model, &ModelSpec::qk_norm>("qk_norm", G::kModel,
                                              "RMSNorm on each query and key head (Qwen3, OLMo 2, Gemma 3; Megatron --qk-layernorm)"),
      // Hardware.
      custom("gpu", "gpu", FieldKind::kPreset, G::kHardware, "GPU preset (see `meshfit presets`) or custom",
             [](const Config& c) -> json { return c.gpu.id; }, nullptr),
      custom("gpu_memory_gib", "gpu_memory_gib", FieldKind::kNumber, G::kHardware,
             "GPU memory capacity in GiB (custom GPU, or override a preset)",
             [](const Config& c) -> json { return bytes_to_gib(c.gpu.memory_bytes); },
             [](Config& c, const json& value) {
               // Refused outside [64 MiB, 1 PB]: no negative, zero, vanishing or infinite capacity reaches a report.
               const double bytes = gib_to_bytes(value.get<double>());
               if (!(bytes >= kMinGpuMemoryBytes && bytes <= kMaxGpuMemoryBytes)) return false;
               c.gpu.memory_bytes = bytes;
               return true;
             },
             "a number of GiB from 0.0625 (64 MiB) up to 931322 (1 PB)"),
      // GPU figures: set every one for a custom GPU, or override a preset's (units as on datasheets).
      gpu_figure<&GpuSpec::bf16_flops, Tera>("gpu_bf16_tflops", "dense BF16 tensor TFLOP/s (datasheet)"),
      gpu_figure<&GpuSpec::fp8_flops, Tera>("gpu_fp8_tflops", "dense FP8 tensor TFLOP/s (0 = no FP8)"),
      gpu_figure<&GpuSpec::hbm_bytes_per_s, Tera>("gpu_hbm_tbps", "memory bandwidth, TB/s"),
      gpu_figure<&GpuSpec::nvlink_bytes_per_s, Giga>("gpu_nvlink_gbps", "NVLink/xGMI GB/s per GPU, both directions (0 = none)"),
      gpu_figure<&GpuSpec::internode_bytes_per_s, GigaBit>("gpu_nic_gbps", "network Gb/s per GPU (bits)"),
      gpu_fraction<&GpuSpec::bf16_gemm_ceiling>("gpu_bf16_gemm_ceiling", "measured best bf16 matmul / bf16 peak (0-1]"),
      gpu_fraction<&GpuSpec::fp8_gemm_ceiling>("gpu_fp8_gemm_ceiling", "measured best fp8 matmul / fp8 peak (0-1]"),
      gpu_figure<&GpuSpec::power_limit_w, One>("gpu_power_limit_w", "power cap in W (0 = none; needs the part's TDP)"),
      gpu_figure<&GpuSpec::tdp_w, One>("gpu_tdp_w", "board power in W"),
      custom("gpu_nvlink_domain", "gpu_nvlink_domain", FieldKind::kInteger, G::kHardware,
             "GPUs in one NVLink domain (8 HGX, 72 NVL72)", [](const Config& c) -> json { return c.gpu.nvlink_domain; },
             [](Config& c, const json& value) {
               // At least the GPU itself (an as-a-user review saw -5 accepted, TP timed 10x slower).
               const int64_t domain = value.get<int64_t>();
               if (domain < 1 || domain > kMaxGpus) return false;
               c.gpu.nvlink_domain = domain;
               return true;
             },
             "a whole number from 1 (no NVLink) to 4194304"),
      custom("gpu_sms", "gpu_sms", FieldKind::kInteger, G::kHardware,
             "streaming multiprocessors (AMD: compute units) for GEMM wave quantization (0 = unknown)",
             [](const Config& c) -> json { return c.gpu.sms; },
             [](Config& c, const json& value) {
               const int64_t sms = value.get<int64_t>();
               if (sms < 0 || sms > kMaxGpuSms) return false;
               c.gpu.sms = sms;
               return true;
             },
             "a whole number from 0 to 100000"),
      integer<&C::cluster, &ClusterSpec::gpus>("gpus", "gpus", G::kHardware, "total GPUs"),
      integer<&C::cluster, &ClusterSpec::gpus_per_node>("gpus_per_node", "gpus_per_node", G::kHardware, "GPUs per node"),
      // Training.
      integer<&C::training, &TrainingSpec::seq>("seq", "seq", G::kTraining, "sequence length (tokens)"),
      integer<&C::training, &TrainingSpec::global_batch>("global_batch", "gbs", G::kTraining,
                                                         "global batch (sequences per step)"),
      integer<&C::training, &TrainingSpec::micro_batch>("micro_batch", "mb", G::kTraining, "micro-batch size (sequences)"),
      word<&C::training, &TrainingSpec::precision>("precision", G::kTraining, "GEMM precision"),
      word<&C::training, &TrainingSpec::optimizer>("optimizer", G::kTraining, "optimizer"),
      word<&C::training, &TrainingSpec::recompute>("recompute", G::kTraining, "activation recomputation"),
      integer<&C::training, &TrainingSpec::recompute_layers>(
          "recompute_layers", "rcl", G::kTraining,
          "recompute=full on only this many layers of each pipeline stage (each virtual chunk), the rest keeping every "
          "activation (Megatron-LM --recompute-method block --recompute-num-layers); 0 = every layer"),
      boolean<&C::training, &TrainingSpec::flash>("flash", G::kTraining, "FlashAttention / SDPA"),
      boolean<&C::training, &TrainingSpec::sp>("sp", G::kTraining, "sequence parallelism"),
      word<&C::training, &TrainingSpec::framework>("framework", G::kTraining, "framework memory layout"),
      boolean<&C::training, &TrainingSpec::fp32_grad_buffer>("fp32_grad_buffer", G::kTraining,
                                                            "fp32 gradient accumulation buffer"),
      word<&C::training, &TrainingSpec::loss>("loss", G::kTraining, "cross-entropy implementation"),
      boolean<&C::training, &TrainingSpec::async_tp>("async_tp", G::kTraining, "asynchronous TP (torchtitan, tp > 1; runs under torch.compile)"),
      boolean<&C::training, &TrainingSpec::fp8_all_gather>(
          "fp8_all_gather", G::kTraining,
          "fp8 weights all-gathered in fp8: FSDP2 with torchao float8 (torchtitan enable_fsdp_float8_all_gather; needs "
          "sharded weights) or Megatron-LM --fp8-param-gather (fp8 parameters, no bf16 copy; needs zero=1); precision=fp8"),
      word<&C::training, &TrainingSpec::finetune>("finetune", G::kTraining,
                                                  "training mode: none (pretraining) or a fine-tuning method"),
      word<&C::training, &TrainingSpec::stack>("stack", G::kTraining,
                                               "fine-tuning software whose defaults fill what the config leaves out"),
      integer<&C::training, &TrainingSpec::lora_rank>("lora_rank", "lora_r", G::kTraining, "LoRA rank r"),
      number<&C::training, &TrainingSpec::lora_alpha>("lora_alpha", G::kTraining, "LoRA alpha (scaling only)"),
      number<&C::training, &TrainingSpec::lora_dropout>("lora_dropout", G::kTraining,
                                                       "LoRA dropout probability in [0, 1) (> 0 keeps a dropped input copy)"),
      boolean<&C::training, &TrainingSpec::dora>("dora", G::kTraining,
                                                 "LoRA: DoRA weight decomposition (PEFT use_dora): a magnitude per output, the weight norm each forward"),
      boolean<&C::training, &TrainingSpec::embedding_trained>(
          "embedding_trained", G::kTraining,
          "LoRA: the token embedding trained in full beside the adapters (PEFT modules_to_save embed_tokens): a copy, "
          "its gradient and optimizer state"),
      boolean<&C::training, &TrainingSpec::lm_head_trained>(
          "lm_head_trained", G::kTraining,
          "LoRA: the LM head trained in full beside the adapters (PEFT modules_to_save lm_head): a copy, its gradient "
          "and optimizer state"),
      text<&C::training, &TrainingSpec::lora_targets>("lora_targets", G::kTraining,
                                                     "LoRA target modules: all-linear, attention or a list of q,k,v,o,gate,up,down"),
      word<&C::training, &TrainingSpec::adapter_dtype>("adapter_dtype", G::kTraining, "LoRA adapter dtype"),
      word<&C::training, &TrainingSpec::base_dtype>("base_dtype", G::kTraining,
                                                    "LoRA: dtype of the frozen base as loaded (DeepSpeed bf16 casts it to bf16)"),
      boolean<&C::training, &TrainingSpec::kbit_upcast>("kbit_upcast", G::kTraining,
                                                       "QLoRA: fp32 upcast of non-4-bit params (prepare_model_for_kbit_training)"),
      boolean<&C::training, &TrainingSpec::double_quant>("double_quant", G::kTraining, "QLoRA: double-quantised absmax"),
      boolean<&C::training, &TrainingSpec::optimizer_in_backward>("optimizer_in_backward", G::kTraining,
                                                                 "optimizer step inside backward (no gradient buffer)"),
      word<&C::training, &TrainingSpec::offload>("offload", G::kTraining, "offload to CPU memory"),
      boolean<&C::training, &TrainingSpec::offload_activations>(
          "offload_activations", G::kTraining,
          "saved activations to CPU memory, back for backward (torchtune enable_activation_offloading)"),
      word<&C::training, &TrainingSpec::optimizer_impl>("optimizer_impl", G::kTraining,
                                                        "optimizer step: auto (the framework's), fused or foreach"),
      word<&C::training, &TrainingSpec::allocator>("allocator", G::kTraining,
                                                   "PyTorch allocator: auto, caching or expandable_segments"),
      number<&C::training, &TrainingSpec::headroom>("headroom", G::kTraining,
                                                    "fraction of capacity flagged as tight (default 0.8)"),
      custom("tokens_to_train", "tokens", FieldKind::kNumber, G::kTraining,
             "tokens the run trains on, for the time to train (0 = not given)",
             [](const Config& c) -> json { return c.training.tokens_to_train; },
             [](Config& c, const json& value) {
               // Refused outside [0, 1e18]: no negative or infinite count reaches a time to train.
               const double tokens = value.get<double>();
               if (!(tokens >= 0 && tokens <= kMaxTokensToTrain)) return false;
               c.training.tokens_to_train = tokens;
               return true;
             },
             "a number of tokens from 0 to 1e18"),
      word<&C::training, &TrainingSpec::kernels>("kernels", G::kTraining,
                                                 "kernel issue mode (auto = the framework's; compiled = torch.compile, read by memory and step time)"),
      word<&C::training, &TrainingSpec::norm_kernel>("norm_kernel", G::kTraining,
                                                     "RMSNorm: auto (the framework's; eager for fine-tunes), one fused kernel, or eager fp32 ops (Hugging Face LlamaRMSNorm); step time only"),
      boolean<&C::training, &TrainingSpec::tp_comm_overlap>("tp_comm_overlap", G::kTraining,
                                                            "overlap TP collectives with GEMMs (Megatron TE / AsyncTP)"),
      switch_word<&C::training, &TrainingSpec::dp_comm_overlap>(
          "dp_comm_overlap", G::kTraining,
          "overlap the DP gradient reduce / parameter gather with compute (auto = the framework's default: "
          "Megatron on as in Megatron-Bridge/NeMo recipes, FSDP2 always, DeepSpeed only at ZeRO-3; "
          "true/false still read as on/off)"),
      // Layout. dp is written resolved (gpus / (tp*pp*cp) when not given).
      custom("dp", "dp", FieldKind::kInteger, G::kLayout, "data-parallel degree (default: gpus / (tp*pp*cp))",
             [](const Config& c) -> json { return effective_dp(c); },
             [](Config& c, const json& value) {
               c.layout.dp = value.get<int64_t>();
               return true;
             }),
      integer<&C::layout, &Layout::tp>("tp", "tp", G::kLayout, "tensor-parallel degree"),
      integer<&C::layout, &Layout::pp>("pp", "pp", G::kLayout, "pipeline-parallel degree"),
      integer<&C::layout, &Layout::cp>("cp", "cp", G::kLayout, "context-parallel degree"),
      integer<&C::layout, &Layout::vpp>("vpp", "vpp", G::kLayout, "interleaved chunks per pipeline rank"),
      integer<&C::layout, &Layout::zero>("zero", "zero", G::kLayout,
                                         "ZeRO stage 0-3 (default: the framework's; Megatron: 1 = distributed optimizer)"),
      integer<&C::layout, &Layout::dp_replicate>(
          "dp_replicate", "dpr", G::kLayout,
          "replicas of each shard group: states sharded over dp x cp / dp_replicate ranks (1 = over all; "
          "torchtitan HSDP data_parallel_replicate_degree, Megatron --num-distributed-optimizer-instances "
          "(divides dp x cp), DeepSpeed ZeRO-3 MiCS with mics_shard_size = dp / dp_replicate; the others divide dp)"),
      integer<&C::layout, &Layout::hpz_partition_size>(
          "hpz_partition_size", "hpz", G::kLayout,
          "DeepSpeed ZeRO++ hpZ (zero_hpz_partition_size, ZeRO-3): a second 16-bit partition of the weights over "
          "groups of this many ranks, which the backward gathers from (1 = off; e.g. 8 = one node)"),
      integer<&C::layout, &Layout::st_q>("spatial_temporal_q", "stq", G::kLayout,
                                         "spatial-temporal (PrimePar-style) square side q: tp = (tp/q^2 conventional) x "
                                         "(q x q square); 1 = Megatron TP. Modelled, not implemented by any public framework"),
      integer<&C::layout, &Layout::pp_first_stage_layers>("pp_first_stage_layers", "pp_first_stage_layers", G::kLayout,
                                                          "layers on the first pipeline stage (uneven split); with vpp > 1, in its first "
                                                          "virtual chunk only (Megatron-LM's --decoder-first-pipeline-num-layers "
                                                          "counts the whole stage)"),
      integer<&C::layout, &Layout::pp_last_stage_layers>("pp_last_stage_layers", "pp_last_stage_layers", G::kLayout,
                                                         "layers on the last pipeline stage (uneven split); with vpp > 1, in its last "
                                                         "virtual chunk only"),
      // Run.
      text<&C::name>("name", G::kRun, "name of the run (shown in the page header and Markdown)"),
      text<&C::notes>("notes", G::kRun, "free text about the run (kept in links, --json and export --format meshfit)"),
  };
}

// Keys still read after a rename (LegacyField). `compile` (a boolean for the memory model) and
// `kernels=compiled` (the step time's kernel mode) were one user choice, torch.compile on or off,
// held twice and able to disagree; kernels is the one input now and both models read it.
std::vector<LegacyField> make_legacy_fields() {
  return {
      {"compile", FieldKind::kBoolean, "kernels", "write kernels=compiled (true) or leave kernels as it is (false)",
       [](const json& value) -> json { return value.get<bool>() ? json("compiled") : json(); }},
  };
}

}  // namespace

std::string ConfigField::flag() const {
  std::string name = key;
  for (char& ch : name)
    if (ch == '_') ch = '-';
  return name;
}

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = make_fields();
  return fields;
}

namespace {

// The row whose `column` is `key`, or nullptr (the tables are short: a scan).
template <class Row>
const Row* find_row(const std::vector<Row>& rows, const char* Row::*column, const std::string& key) {
  for (const Row& row : rows)
    if (key == row.*column) return &row;
  return nullptr;
}

}  // namespace

const ConfigField* find_config_field(const std::string& key) { return find_row(config_fields(), &ConfigField::key, key); }

const ConfigField* find_config_field_by_state_key(const std::string& state_key) {
  return find_row(config_fields(), &ConfigField::state_key, state_key);
}

bool check_text_field(const ConfigField& field, const std::string& text, std::vector<Issue>& issues) {
  MESHFIT_ASSERT(field.kind == FieldKind::kText, "check_text_field on a field that is not text");
  return check_input_text(text, field.key, kMaxTextFieldBytes, issues);
}

const std::vector<LegacyField>& legacy_config_fields() {
  static const std::vector<LegacyField> fields = make_legacy_fields();
  return fields;
}

const LegacyField* find_legacy_field(const std::string& key) {
  return find_row(legacy_config_fields(), &LegacyField::key, key);
}

}  // namespace meshfit
