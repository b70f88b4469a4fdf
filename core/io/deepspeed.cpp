// deepspeed.cpp — DeepSpeed JSON configs, both ways. Keys and defaults follow
// deepspeed/runtime/config.py and deepspeed/runtime/zero/config.py (deepspeedai/DeepSpeed @ edaa7221):
// train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × dp.
#include "io/import_common.h"
#include "memory/overheads.h"

namespace meshfit {

using nlohmann::json;
using detail::FieldWriter;

namespace {

// zero_optimization keys that change GPU memory, with DeepSpeed's defaults (zero/config.py); meshfit
// counts the defaults, so another value is reported. "auto" (HF Trainer) is accepted silently.
struct ZeroKnob {
  const char* key;
  double default_value;
};
constexpr ZeroKnob kZeroKnobs[] = {
    {"reduce_bucket_size", kDeepSpeedReduceBucketElements},   {"allgather_bucket_size", 5e8},
    {"stage3_prefetch_bucket_size", kDeepSpeedPrefetchBucketElements},
    {"stage3_param_persistence_threshold", 1e5},              {"stage3_max_live_parameters", 1e9},
    {"stage3_max_reuse_distance", 1e9},                       {"sub_group_size", 1e9},
};
// zero_optimization keys with no effect on the memory meshfit models.
constexpr const char* kZeroIgnored[] = {"stage", "overlap_comm" /* read in read_zero */, "contiguous_gradients", "reduce_scatter",
                                        "allgather_partitions", "round_robin_gradients",
                                        "stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save",
                                        "stage3_model_persistence_threshold", "elastic_checkpoint",
                                        "load_from_fp32_weights", "ignore_unused_parameters", "offload_optimizer",
                                        "offload_param", "use_multi_rank_bucket_allreduce", "memory_efficient_linear",
                                        "mics_shard_size" /* read in read_mics */, "mics_hierarchical_params_gather",
                                        "zero_hpz_partition_size" /* read in read_hpz */};
// Top-level keys with no effect on per-GPU memory.
constexpr const char* kTopIgnored[] = {"scheduler", "gradient_clipping", "steps_per_print", "wall_clock_breakdown",
                                       "prescale_gradients", "gradient_predivide_factor", "communication_data_type",
                                       "tensorboard", "wandb", "csv_monitor", "flops_profiler", "comms_logger",
                                       "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer", "dump_state",
                                       "checkpoint", "aio", "memory_breakdown", "seed", "sparse_gradients",
                                       "disable_allgather", "monitor_config", "train_batch_size",
                                       "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "fp16", "bf16",
                                       "bfloat16", "zero_optimization", "optimizer", "data_types",
                                       "activation_checkpointing", "tensor_parallel", "amp", "pipeline",
                                       "sequence_parallel_size", "elasticity", "compression_training"};

bool listed(const char* const* begin, const char* const* end, const std::string& key) {
  for (const char* const* item = begin; item != end; ++item)
    if (key == *item) return true;
  return false;
}

bool is_auto(const json& value) { return value.is_string() && value.get<std::string>() == "auto"; }

// {"enabled": true|false|"auto"}: true, false, or nullopt (absent or auto).
std::optional<bool> enabled(const json& config, const char* key, FieldWriter& w) {
  if (!config.contains(key)) return std::nullopt;
  const json& section = config[key];
  if (!section.is_object()) {  // DeepSpeed reads section["enabled"] (runtime/config.py get_scalar_param): a bare true fails there
    w.error(IssueCode::kMalformedInput, key, std::string(key) + " must be an object such as {\"enabled\": true}, got " +
                                                quote_text(section.dump()) + ".");
    return std::nullopt;
  }
  if (!section.contains("enabled")) return false;
  if (section["enabled"].is_boolean()) return section["enabled"].get<bool>();
  if (!is_auto(section["enabled"]))
    w.error(IssueCode::kUnknownValue, std::string(key) + ".enabled",
            std::string(key) + ".enabled must be true, false or \"auto\", got " + quote_text(section["enabled"].dump()) + ".");
  return std::nullopt;
}

std::optional<int64_t> batch_count(const json& config, const char* key, FieldWriter& w) {
  if (!config.contains(key)) return std::nullopt;
  if (is_auto(config[key])) {
    w.warn(IssueCode::kMissingModel, key, std::string(key) + " is \"auto\" (filled by the HF Trainer): give the value with flags.");
    return std::nullopt;
  }
  return w.count(config[key], key);
}

// ZeRO-Offload / ZeRO-Infinity (FRAMEWORK_NOTES §3.4; zero/config.py and offload_config.py):
// offload_optimizer {device: cpu|nvme} (stages 1-3) moves the fp32 master, the moments and the fp32
// gradient partition off the GPU and steps there = offload=optimizer; offload_param (stage 3 only)
// also moves the 16-bit parameter partitions = offload=params. The deprecated booleans cpu_offload and
// cpu_offload_params mean the same with device cpu. Every case meshfit cannot express is counted
// without that offload, so the GPU memory shown errs high, never low, and says so.
std::string offload_device(const json& zero, const char* key, const char* old_key, FieldWriter& w) {
  if (zero.contains(key) && !zero[key].is_null()) {
    const json& section = zero[key];
    if (!section.is_object()) {
      w.error(IssueCode::kMalformedInput, std::string("zero_optimization.") + key, std::string(key) + " must be an object such as {\"device\": \"cpu\"}.");
      return "none";
    }
    if (!section.contains("device")) return "none";  // DeepSpeed's OffloadDeviceEnum default
    if (!section["device"].is_string() || (section["device"] != "none" && section["device"] != "cpu" && section["device"] != "nvme")) {
      w.error(IssueCode::kUnknownValue, std::string("zero_optimization.") + key + ".device",
              std::string(key) + ".device must be \"none\", \"cpu\" or \"nvme\", got " + quote_text(section["device"].dump()) + ".");
      return "none";
    }
    return section["device"].get<std::string>();
  }
  if (zero.contains(old_key) && zero[old_key] == true) return "cpu";
  return "none";
}

void read_offload(const json& zero, FieldWriter& w) {
  const std::string optimizer = offload_device(zero, "offload_optimizer", "cpu_offload", w);
  const std::string param = offload_device(zero, "offload_param", "cpu_offload_params", w);
  if ((optimizer == "none" && param == "none") || !w.has("zero")) return;
  const int64_t stage = w.result().fields.value("zero", int64_t(0));
  const std::string optimizer_key = zero.contains("offload_optimizer") ? "zero_optimization.offload_optimizer" : "zero_optimization.cpu_offload";
  const std::string param_key = zero.contains("offload_param") ? "zero_optimization.offload_param" : "zero_optimization.cpu_offload_params";
  if (optimizer != "none" && stage == 0) {
    w.warn(IssueCode::kConflictingSettings, optimizer_key,
           "optimizer offload is part of ZeRO (stages 1-3): at stage 0 it is counted without offload.");
    return;
  }
  bool params = param != "none";
  if (params && stage != 3) {
    w.warn(IssueCode::kUnsupportedSetting, param_key, "parameter offload works at ZeRO stage 3 only; DeepSpeed ignores it at stage " +
                                                          std::to_string(stage) + ".");
    params = false;
  }
  if (params && optimizer == "none") {
    w.warn(IssueCode::kUnsupportedSetting, param_key,
           "parameter offload without optimizer offload is not modelled: counted without offload, so the GPU memory shown "
           "is high by the 16-bit parameter partition (2 B per parameter / dp).");
    return;
  }
  if (optimizer == "none") return;
  if (zero.contains("offload_optimizer") && zero["offload_optimizer"].is_object() && zero["offload_optimizer"].contains("ratio") &&
      !(zero["offload_optimizer"]["ratio"].is_number() && zero["offload_optimizer"]["ratio"].get<double>() >= 1.0)) {
    w.warn(IssueCode::kUnsupportedSetting, "zero_optimization.offload_optimizer.ratio",
           "a partial optimizer offload (ratio below 1) is not modelled: counted without offload, so the GPU memory shown is high.");
    return;
  }
  w.set("offload", params ? "params" : "optimizer", params ? param_key : optimizer_key);
  if (optimizer == "nvme" || (params && param == "nvme"))
    w.warn(IssueCode::kUnsupportedSetting, optimizer == "nvme" ? optimizer_key : param_key,
           "NVMe offload (ZeRO-Infinity) frees the same GPU memory as CPU offload; the step time counts CPU offload's "
           "transfers, not the NVMe's.");
}

// MiCS (runtime/zero/config.py mics_shard_size, default -1 = off; mics.py MiCS_Init): ZeRO-3 sharded
// inside groups of mics_shard_size ranks. The replicas follow once dp is known (derive_replicas).
void read_mics(const json& zero, FieldWriter& w, LaunchImport& out) {
  if (!zero.contains("mics_shard_size") || (zero["mics_shard_size"].is_number_integer() && zero["mics_shard_size"].get<int64_t>() == -1))
    return;
  const auto size = w.count(zero["mics_shard_size"], "zero_optimization.mics_shard_size");
  if (!size) return;
  // engine.py builds the MiCS optimizer only at stage 3 (_configure_zero_optimizer); below it the key is unused.
  const int64_t stage = w.result().fields.value("zero", int64_t(0));
  if (stage < 3)
    w.warn(IssueCode::kUnsupportedSetting, "zero_optimization.mics_shard_size",
           "mics_shard_size applies to ZeRO stage 3 (MiCS); at stage " + std::to_string(stage) + " DeepSpeed shards over all ranks: ignored.");
  else
    out.shard_group_size = *size;
}

// ZeRO++ hpZ (runtime/zero/config.py zero_hpz_partition_size, default 1): ZeRO-3's second weight
// partition over groups of that many ranks (Layout::hpz_partition_size).
void read_hpz(const json& zero, FieldWriter& w) {
  if (!zero.contains("zero_hpz_partition_size")) return;
  const auto size = w.count(zero["zero_hpz_partition_size"], "zero_optimization.zero_hpz_partition_size");
  if (!size || *size == 1) return;
  const int64_t stage = w.result().fields.value("zero", int64_t(0));
  if (stage < 3)
    w.warn(IssueCode::kUnsupportedSetting, "zero_optimization.zero_hpz_partition_size",
           "zero_hpz_partition_size (hpZ) partitions ZeRO-3's weights a second time; at stage " + std::to_string(stage) +
               " there are no partitioned weights: ignored.");
  else
    w.set("hpz_partition_size", *size, "zero_optimization.zero_hpz_partition_size (ZeRO++ hpZ)");
}

void read_zero(const json& config, FieldWriter& w, LaunchImport& out) {
  if (!config.contains("zero_optimization")) {
    w.set("zero", 0, "no zero_optimization (stage 0)");
    return;
  }
  const json& zero = config["zero_optimization"];
  if (!zero.is_object()) {
    w.error(IssueCode::kMalformedInput, "zero_optimization", "zero_optimization must be an object.");
    return;
  }
  if (zero.contains("stage")) {
    if (const auto stage = w.count(zero["stage"], "zero_optimization.stage", /*allow_zero=*/true)) {
      if (*stage > 3) w.error(IssueCode::kOutOfRange, "zero_optimization.stage", "zero_optimization.stage must be 0-3, got " + std::to_string(*stage) + ".");
      else w.set("zero", *stage, "zero_optimization.stage");
    }
  } else {
    w.set("zero", 0, "zero_optimization without stage (DeepSpeed's default 0)");
  }
  // overlap_comm: absent (or HF's "auto") leaves dp_comm_overlap=auto, which is DeepSpeed's own
  // default (true only at stage 3, zero/config.py overlap_comm_valid); a boolean is the user's choice.
  if (zero.contains("overlap_comm") && !is_auto(zero["overlap_comm"])) {
    if (zero["overlap_comm"].is_boolean())
      w.set("dp_comm_overlap", zero["overlap_comm"].get<bool>() ? "on" : "off", "zero_optimization.overlap_comm");
    else
      w.error(IssueCode::kUnknownValue, "zero_optimization.overlap_comm",
              "zero_optimization.overlap_comm must be true or false, got " + quote_text(zero["overlap_comm"].dump()) + ".");
  }
  read_offload(zero, w);
  read_mics(zero, w, out);
  read_hpz(zero, w);
  for (const auto& [key, value] : zero.items()) {
    bool knob = false;
    for (const ZeroKnob& k : kZeroKnobs) {
      if (key != k.key) continue;
      knob = true;
      if (!is_auto(value) && !(value.is_number() && value.get<double>() == k.default_value))
        w.warn(IssueCode::kUnsupportedSetting, "zero_optimization." + key,
               key + "=" + quote_text(value.dump()) + ": meshfit counts DeepSpeed's default " + json(k.default_value).dump() + ".");
    }
    if (!knob && !listed(std::begin(kZeroIgnored), std::end(kZeroIgnored), key) && key != "cpu_offload" &&
        key != "cpu_offload_params")
      w.warn(IssueCode::kUnsupportedSetting, "zero_optimization." + key,
             "zero_optimization." + quote_text(key) + " is not modelled; ignored.");
  }
}

}  // namespace

LaunchImport import_deepspeed_json(const std::string& text) {
  LaunchImport out;
  out.format = LaunchFormat::kDeepSpeed;
  const auto parsed = parse_json_object(text, "deepspeed_config", out.issues);
  if (!parsed) return out;
  const json& c = *parsed;
  FieldWriter w(out);
  w.set("framework", enum_key(Framework::kDeepSpeed), "a DeepSpeed config");
  for (const auto& [key, value] : c.items())
    if (!listed(std::begin(kTopIgnored), std::end(kTopIgnored), key))
      w.warn(IssueCode::kUnknownField, key, quote_text(key) + " is not a DeepSpeed key meshfit knows; ignored.");
  // Batch: any two of the three determine the third (runtime/config.py _set_batch_related_parameters).
  const auto train = batch_count(c, "train_batch_size", w);
  const auto micro = batch_count(c, "train_micro_batch_size_per_gpu", w);
  const auto accumulation = batch_count(c, "gradient_accumulation_steps", w);
  if (micro) w.set("micro_batch", *micro, "train_micro_batch_size_per_gpu");
  if (train) w.set("global_batch", *train, "train_batch_size");
  if (micro && __builtin_mul_overflow(*micro, accumulation.value_or(train ? 0 : 1), &out.batch_per_dp_rank))
    w.error(IssueCode::kOutOfRange, "gradient_accumulation_steps", "train_micro_batch_size_per_gpu × gradient_accumulation_steps overflows.");
  if (train && accumulation && !micro) out.accumulation_steps = *accumulation;  // micro = train / (accumulation × dp)
  // What a DeepSpeed JSON never holds: the launcher's world size and the model script's sequence.
  // Its batch fixes the data-parallel size when it gives all three counts (resolve_import derives the
  // GPU count from it and says so); without them the count is the user's to give.
  if (!(train && out.batch_per_dp_rank > 0))
    w.warn(IssueCode::kMissingModel, "gpus", "a DeepSpeed config has no world size (the launcher's --num_gpus × --num_nodes): give --gpus.");
  w.warn(IssueCode::kMissingModel, "seq", "a DeepSpeed config has no sequence length (the training script's): give --seq.");
  // Precision.
  const auto fp16 = enabled(c, "fp16", w);
  auto bf16 = enabled(c, "bf16", w);
  if (!bf16) bf16 = enabled(c, "bfloat16", w);
  if (fp16.value_or(false) && bf16.value_or(false))
    w.error(IssueCode::kConflictingSettings, "fp16", "fp16 and bf16 are both enabled; DeepSpeed refuses that.");
  else if (fp16.value_or(false))
    w.warn(IssueCode::kUnsupportedSetting, "fp16", "fp16 is counted like bf16 (same bytes; the loss scaler is negligible).");
  else if (!bf16.value_or(false) && !c.contains("fp16") && !c.contains("bf16") && !c.contains("bfloat16"))
    w.warn(IssueCode::kUnsupportedSetting, "bf16", "neither bf16 nor fp16 is enabled: DeepSpeed would train in fp32; meshfit counts bf16.");
  w.set("precision", enum_key(Precision::kBf16), "bf16/fp16");
  if (c.contains("amp")) w.warn(IssueCode::kUnsupportedSetting, "amp", "apex amp is not modelled; counted as bf16 mixed precision.");
  read_zero(c, w, out);
  if (c.contains("data_types") && c["data_types"].is_object() && c["data_types"].contains("grad_accum_dtype")) {
    const json& dtype = c["data_types"]["grad_accum_dtype"];
    if (dtype == "fp32") w.set("fp32_grad_buffer", true, "data_types.grad_accum_dtype");
    else if (dtype == "bf16" || dtype == "fp16") w.set("fp32_grad_buffer", false, "data_types.grad_accum_dtype");
    else w.error(IssueCode::kUnknownValue, "data_types.grad_accum_dtype", "grad_accum_dtype must be fp32, bf16 or fp16, got " + quote_text(dtype.dump()) + ".");
  }
  if (c.contains("optimizer") && (!c["optimizer"].is_object() || (c["optimizer"].contains("type") && !c["optimizer"]["type"].is_string())))
    w.error(IssueCode::kMalformedInput, "optimizer.type",
            "optimizer must be an object with a \"type\" name such as \"AdamW\", got " + quote_text(c["optimizer"].dump()) + ".");
  else if (c.contains("optimizer") && c["optimizer"].contains("type")) {
    const std::string type = ascii_lower(c["optimizer"]["type"].get<std::string>());
    if (type == "adam" || type == "adamw" || type == "fusedadam" || type == "cpuadam") w.set("optimizer", enum_key(Optimizer::kAdamW), "optimizer.type");
    else if (type == "sgd") w.set("optimizer", enum_key(Optimizer::kSgd), "optimizer.type");
    else w.warn(IssueCode::kUnsupportedSetting, "optimizer.type", "optimizer " + quote_text(type) + " is counted as AdamW (two fp32 moments).");
  }
  if (c.contains("tensor_parallel") && c["tensor_parallel"].is_object()) {
    const json& tp = c["tensor_parallel"];
    const char* key = tp.contains("autotp_size") ? "autotp_size" : tp.contains("tp_size") ? "tp_size" : nullptr;
    if (key)
      if (const auto degree = w.count(tp[key], std::string("tensor_parallel.") + key)) w.set("tp", *degree, std::string("tensor_parallel.") + key);
  }
  if (c.contains("activation_checkpointing") && c["activation_checkpointing"].is_object()) {
    const json& ac = c["activation_checkpointing"];
    for (const char* key : {"partition_activations", "cpu_checkpointing"})
      if (ac.contains(key) && ac[key] == true)
        w.warn(IssueCode::kUnsupportedSetting, std::string("activation_checkpointing.") + key,
               std::string(key) + " is not modelled (activations counted on the GPU, unpartitioned).");
    w.warn(IssueCode::kMissingModel, "recompute",
           "activation checkpointing is switched on in the model code, not in this file: give --recompute full if it is.");
  }
  for (const char* key : {"pipeline", "sequence_parallel_size", "elasticity", "compression_training"})
    if (c.contains(key))
      w.warn(IssueCode::kUnsupportedSetting, key, quote_text(key) + " is not read: give the pipeline/context degrees with flags.");
  return out;
}

namespace detail {

LaunchExport export_deepspeed(const Config& c) {
  LaunchExport out = begin_export(LaunchFormat::kDeepSpeed, c, Framework::kDeepSpeed, "DeepSpeed's memory differs.");
  const auto warn = [&out](const std::string& field, const std::string& message) { warn_unsupported(out, field, message); };
  const Layout& l = c.layout;
  const TrainingSpec& t = c.training;
  nlohmann::ordered_json config;
  config["train_batch_size"] = t.global_batch;
  config["train_micro_batch_size_per_gpu"] = t.micro_batch;
  config["gradient_accumulation_steps"] = num_microbatches(c);  // global / (dp × micro)
  // Turing and Volta have no bf16: their runs are fp16 mixed precision (with DeepSpeed's loss scaler).
  const bool fp16 = half_precision_is_fp16(c.gpu.family);
  config[fp16 ? "fp16" : "bf16"] = {{"enabled", true}};
  config["zero_optimization"] = {{"stage", l.zero}};
  if (l.zero >= 3 && l.dp_replicate > 1) config["zero_optimization"]["mics_shard_size"] = effective_dp(c) / l.dp_replicate;  // MiCS
  if (l.zero >= 3 && l.hpz_partition_size > 1) config["zero_optimization"]["zero_hpz_partition_size"] = l.hpz_partition_size;  // ZeRO++ hpZ
  // auto is DeepSpeed's own default (overlap_comm unset); an explicit choice is written.
  if (t.dp_comm_overlap != DpCommOverlap::kAuto)
    config["zero_optimization"]["overlap_comm"] = t.dp_comm_overlap == DpCommOverlap::kOn;
  // ZeRO-Offload / ZeRO-Infinity (zero/config.py offload_optimizer, offload_param; the latter stage 3 only).
  if (t.offload != Offload::kNone) config["zero_optimization"]["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
  if (t.offload == Offload::kParams) config["zero_optimization"]["offload_param"] = {{"device", "cpu"}, {"pin_memory", true}};
  config["data_types"] = {{"grad_accum_dtype", t.fp32_grad_buffer ? "fp32" : fp16 ? "fp16" : "bf16"}};
  if (t.optimizer == Optimizer::kSgd) config["optimizer"] = {{"type", "SGD"}};
  else config["optimizer"] = {{"type", "AdamW"}};
  if (t.optimizer == Optimizer::kAdam8bit) warn("optimizer", "8-bit Adam is not a DeepSpeed optimizer type; AdamW written.");
  warn("optimizer", "optimizer.params (lr, betas, eps, weight_decay) are not written: add yours, or DeepSpeed builds the "
                    "optimizer at its defaults (lr 1e-3). Under the HF Trainer write \"auto\" (the hf export does).");
  if (l.tp > 1) config["tensor_parallel"] = {{"autotp_size", l.tp}};
  if (l.pp > 1) warn("pp", "pipeline parallelism comes from the model (deepspeed.pipe.PipelineModule(num_stages=" + std::to_string(l.pp) + ")), not this file.");
  // DeepSpeed-Ulysses is set up by the training script, which hands its sequence-parallel group to
  // DeepSpeed; the batch arithmetic above assumes it (a review launched the file without it).
  if (l.cp > 1)
    warn("cp", "cp=" + std::to_string(l.cp) + " is DeepSpeed-Ulysses, which the training script sets up (Megatron-DeepSpeed "
               "--ds-sequence-parallel-size " + std::to_string(l.cp) + "), not this file; DeepSpeed then counts dp = world / (tp x pp x sp) = " +
               std::to_string(effective_dp(c)) + ", as train_batch_size here does. Launched without it, DeepSpeed counts dp " +
               std::to_string(effective_dp(c) * l.cp) + " and refuses this batch.");
  if (t.precision == Precision::kFp8) warn("precision", "fp8 GEMMs come from Transformer Engine in the model; the file says bf16.");
  if (t.recompute != Recompute::kNone)
    warn("recompute", std::string("recompute=") + enum_key(t.recompute) + " is switched on in the model code (gradient_checkpointing_enable()).");
  out.text = config.dump(2) + "\n";
  return out;
}

}  // namespace detail

}  // namespace meshfit
