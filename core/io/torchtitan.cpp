// torchtitan.cpp — torchtitan TOML job configs, both ways, through toml++ (Debian
// libtomlplusplus-dev, header-only; built without exceptions so parse errors are values). Sections and
// defaults follow torchtitan/config/job_config.py (pytorch/torchtitan @ 37e536d0); the split of a
// multi-stage pipeline follows distributed/pipeline_parallel.py (embedding and output each weigh one
// layer by default).
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#define TOML_ENABLE_FORMATTERS 1
#include <toml++/toml.h>

#include <charconv>
#include <sstream>

#include "io/import_common.h"
#include "spec/model_spec.h"
#include "spec/structure.h"
#include "spec/validate.h"

namespace meshfit {

using nlohmann::json;
using detail::FieldWriter;

namespace {

// torchtitan model flavors with a meshfit preset of the same dimensions
// (torchtitan/models/llama3/__init__.py llama3_configs; llama2 in torchtitan before v0.1).
struct TorchtitanFlavor {
  const char* name;
  const char* flavor;
  const char* preset;
};
constexpr TorchtitanFlavor kFlavors[] = {
    {"llama3", "8B", "llama3.1-8b"},  {"llama3", "70B", "llama3.1-70b"}, {"llama3", "405B", "llama3.1-405b"},
    {"llama2", "7B", "llama2-7b"},    {"llama2", "13B", "llama2-13b"},   {"llama2", "70B", "llama2-70b"},
};

// Sections read, and sections with no effect on per-GPU memory (their keys are not checked).
constexpr const char* kReadSections[] = {"model", "training", "parallelism", "activation_checkpoint", "float8", "compile",
                                         "optimizer"};
constexpr const char* kIgnoredSections[] = {"job", "profiling", "metrics", "checkpoint", "comm", "validation",
                                            "lr_scheduler", "fault_tolerance", "experimental", "memory_estimation",
                                            "mx", "quantize", "dataloader"};
// Keys of the read sections that need no reading (no effect on memory, or read elsewhere).
constexpr const char* kIgnoredKeys[] = {
    "model.hf_assets_path", "model.tokenizer_path", "model.print_after_conversion", "training.dataset",
    "training.dataset_path", "training.max_norm", "training.steps", "training.gc_freq", "training.gc_debug",
    "training.seed", "training.deterministic", "training.warmup_steps",
    "training.mixed_precision_reduce", "parallelism.enable_compiled_autograd", "parallelism.disable_loss_parallel",
    "parallelism.context_parallel_rotate_method",
    "parallelism.pipeline_parallel_schedule_csv", "activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns",
    "activation_checkpoint.early_stop", "activation_checkpoint.preserve_rng_state", "activation_checkpoint.debug",
    "activation_checkpoint.visualize_memory_budget_pareto", "float8.enable_fsdp_float8_all_gather",
    "float8.precompute_float8_dynamic_scale_for_fsdp", "float8.recipe_name", "float8.filter_fqns", "float8.emulate",
    "compile.backend", "optimizer.lr", "optimizer.eps", "optimizer.beta1",
    "optimizer.beta2", "optimizer.weight_decay", "optimizer.implementation", "optimizer.min_lr_factor"};
constexpr const char* kReadKeys[] = {
    "model.name", "model.flavor", "model.converters", "model.norm_type", "training.local_batch_size", "training.batch_size",
    "training.global_batch_size", "training.seq_len", "training.mixed_precision_param", "training.enable_cpu_offload",
    "parallelism.data_parallel_replicate_degree", "parallelism.data_parallel_shard_degree",
    "parallelism.fsdp_reshard_after_forward", "parallelism.tensor_parallel_degree", "parallelism.pipeline_parallel_degree",
    "parallelism.pipeline_parallel_schedule", "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_layers_per_stage", "parallelism.pipeline_parallel_first_stage_less_layers",
    "parallelism.pipeline_parallel_last_stage_less_layers", "parallelism.pipeline_parallel_split_points",
    "parallelism.module_fqns_per_model_part", "parallelism.context_parallel_degree", "parallelism.expert_parallel_degree",
    "parallelism.expert_tensor_parallel_degree", "activation_checkpoint.mode", "activation_checkpoint.selective_ac_option",
    "activation_checkpoint.memory_budget", "optimizer.name", "optimizer.early_step_in_backward", "training.compile",
    "compile.enable", "compile.components", "parallelism.enable_async_tensor_parallel"};

template <size_t N>
bool listed(const char* const (&list)[N], const std::string& key) {
  for (const char* item : list)
    if (key == item) return true;
  return false;
}

// Multi-stage schedules hold several virtual stages per rank (pipeline_parallel.py).
bool multi_stage(const std::string& schedule) {
  return schedule == "Interleaved1F1B" || schedule == "LoopedBFS" || schedule == "InterleavedZeroBubble" ||
         schedule == "ZBVZeroBubble" || schedule == "DualPipeV";
}

json to_json(const toml::node& node) {
  if (auto v = node.as_integer()) return v->get();
  if (auto v = node.as_floating_point()) return v->get();
  if (auto v = node.as_boolean()) return v->get();
  if (auto v = node.as_string()) return v->get();
  if (auto v = node.as_array()) {
    json out = json::array();
    for (const toml::node& item : *v) out.push_back(to_json(item));
    return out;
  }
  return std::string("<") + std::string(toml::impl::node_type_friendly_names[size_t(node.type())]) + ">";
}

class TomlReader {
 public:
  TomlReader(const toml::table& root, FieldWriter& w) : root_(root), w_(w) {}
  // The value of section.key as JSON, or nullopt when absent.
  std::optional<json> get(const char* section, const char* key) const {
    const toml::node_view<const toml::node> node = root_[section][key];
    if (!node) return std::nullopt;
    return to_json(*node.node());
  }
  std::optional<int64_t> count(const char* section, const char* key, bool allow_minus_one = false) const {
    const auto value = get(section, key);
    if (!value) return std::nullopt;
    if (allow_minus_one && *value == -1) return -1;
    return w_.count(*value, std::string("[") + section + "] " + key);
  }
  // A count where 0 is a value torchtitan takes (the *_less_layers keys).
  std::optional<int64_t> count_or_zero(const char* section, const char* key) const {
    const auto value = get(section, key);
    if (!value) return std::nullopt;
    return w_.count(*value, std::string("[") + section + "] " + key, /*allow_zero=*/true);
  }
  std::optional<std::string> text(const char* section, const char* key) const {
    const auto value = get(section, key);
    if (!value) return std::nullopt;
    if (value->is_string()) return value->get<std::string>();
    w_.error(IssueCode::kUnknownValue, std::string(section) + "." + key,
             std::string("[") + section + "] " + key + " must be a string, got " + quote_text(value->dump()) + ".");
    return std::nullopt;
  }
  // A boolean key: true or false; anything else (a string "true", 1) is an error naming the key,
  // as torchtitan's config manager would refuse it, and reads as false.
  bool flag(const char* section, const char* key) const {
    const auto value = get(section, key);
    if (value && !value->is_boolean())
      w_.error(IssueCode::kUnknownValue, std::string(section) + "." + key,
               std::string("[") + section + "] " + key + " must be true or false, got " + quote_text(value->dump()) + ".");
    return value && value->is_boolean() && value->get<bool>();
  }

 private:
  const toml::table& root_;
  FieldWriter& w_;
};

// torchtitan's 2024 job configs (train_configs/*.toml before the [parallelism] section, Sept-Dec
// 2024) kept the data and tensor degrees in [training], pipeline and context parallelism and Async TP
// in [experimental], the pipeline's micro-batch count (default: the pipeline degree) rather than its
// size, and float8 as [float8] enable_float8_linear. Each is moved to its current key (said as a
// renamed key) unless the current key is there too, before anything is read.
struct MovedKey {
  const char* from_section;
  const char* from_key;
  const char* to_section;
  const char* to_key;
};
constexpr MovedKey kLayout2024[] = {
    {"training", "data_parallel_replicate_degree", "parallelism", "data_parallel_replicate_degree"},
    {"training", "data_parallel_shard_degree", "parallelism", "data_parallel_shard_degree"},
    {"training", "data_parallel_degree", "parallelism", "data_parallel_shard_degree"},
    {"training", "tensor_parallel_degree", "parallelism", "tensor_parallel_degree"},
    {"training", "enable_async_tensor_parallel", "parallelism", "enable_async_tensor_parallel"},
    {"experimental", "pipeline_parallel_degree", "parallelism", "pipeline_parallel_degree"},
    {"experimental", "pipeline_parallel_schedule", "parallelism", "pipeline_parallel_schedule"},
    {"experimental", "pipeline_parallel_split_points", "parallelism", "pipeline_parallel_split_points"},
    {"experimental", "context_parallel_degree", "parallelism", "context_parallel_degree"},
    {"experimental", "enable_async_tensor_parallel", "parallelism", "enable_async_tensor_parallel"},
};

toml::table& section_of(toml::table& root, const char* section) {
  if (!root[section].is_table()) root.insert_or_assign(section, toml::table{});
  return *root[section].as_table();
}

void upgrade_2024_layout(toml::table& root, FieldWriter& w) {
  const auto renamed = [&w](const std::string& from, const std::string& to) {
    w.warn(IssueCode::kRenamedField, from, quote_text(from) + " (torchtitan's 2024 layout) is read as " + quote_text(to) + ".");
  };
  bool old_pipeline = false;
  for (const MovedKey& moved : kLayout2024) {
    toml::table* from = root[moved.from_section].as_table();
    const toml::node* value = from ? from->get(moved.from_key) : nullptr;
    if (!value) continue;
    const std::string from_name = std::string(moved.from_section) + "." + moved.from_key;
    const std::string to_name = std::string(moved.to_section) + "." + moved.to_key;
    toml::table& to = section_of(root, moved.to_section);
    if (to.contains(moved.to_key)) {
      w.warn(IssueCode::kConflictingSettings, from_name, quote_text(from_name) + " is ignored: " + quote_text(to_name) + " is given too.");
    } else {
      value->visit([&](const auto& node) { to.insert_or_assign(moved.to_key, node); });
      renamed(from_name, to_name);
      old_pipeline |= std::string(moved.to_key) == "pipeline_parallel_degree";
    }
    from = root[moved.from_section].as_table();  // section_of may have moved the tables
    from->erase(moved.from_key);
  }
  // The 2024 pipeline cut the local batch into pipeline_parallel_microbatches (default: the degree).
  toml::table* experimental = root["experimental"].as_table();
  const toml::node* count = experimental ? experimental->get("pipeline_parallel_microbatches") : nullptr;
  toml::table& parallelism = section_of(root, "parallelism");
  if ((old_pipeline || count) && !parallelism.contains("pipeline_parallel_microbatch_size")) {
    const std::optional<int64_t> local = root["training"]["local_batch_size"].value<int64_t>()
                                             ? root["training"]["local_batch_size"].value<int64_t>()
                                             : root["training"]["batch_size"].value<int64_t>();
    const std::optional<int64_t> degree = parallelism["pipeline_parallel_degree"].value<int64_t>();
    const std::optional<int64_t> microbatches = count ? count->value<int64_t>() : degree;
    if (local && microbatches && *microbatches > 0 && *local % *microbatches == 0 && *local / *microbatches >= 1) {
      parallelism.insert_or_assign("pipeline_parallel_microbatch_size", *local / *microbatches);
      w.warn(IssueCode::kRenamedField, "experimental.pipeline_parallel_microbatches",
             std::string("the 2024 pipeline cut the local batch ") + std::to_string(*local) + " into " + std::to_string(*microbatches) +
                 " micro-batches" + (count ? "" : " (its default: the pipeline degree)") + ": read as pipeline_parallel_microbatch_size " +
                 std::to_string(*local / *microbatches) + ".");
    } else if (local && microbatches && *microbatches > 0) {
      w.error(IssueCode::kBatchNotDivisible, "experimental.pipeline_parallel_microbatches",
              "the local batch " + std::to_string(*local) + " does not divide into " + std::to_string(*microbatches) + " micro-batches.");
    }
  }
  if (experimental) experimental->erase("pipeline_parallel_microbatches");
  // [float8] enable_float8_linear = true: the float8 converter of the 2025 configs.
  if (toml::table* float8 = root["float8"].as_table(); float8 && float8->contains("enable_float8_linear")) {
    const bool on = (*float8)["enable_float8_linear"].value_or(false);
    float8->erase("enable_float8_linear");
    toml::table& model = section_of(root, "model");
    if (on && !model.contains("converters")) {
      model.insert_or_assign("converters", toml::array{"float8"});
      renamed("float8.enable_float8_linear", "model.converters = [\"float8\"]");
    }
  }
}

void check_keys(const toml::table& root, FieldWriter& w) {
  for (const auto& [section_key, node] : root) {
    const std::string section(section_key.str());
    // torchtitan's 2024 configs kept pipeline and context parallelism (and Async TP) in [experimental]:
    // a degree there is part of the layout, so it is named, not dropped with the section.
    if (section == "experimental" && node.is_table())
      for (const auto& [key, value] : *node.as_table()) {
        (void)value;
        const std::string name = section + "." + std::string(key.str());
        if (name.find("parallel") != std::string::npos)
          w.warn(IssueCode::kUnsupportedSetting, name,
                 quote_text(name) + " (torchtitan's 2024 layout) is not read: give the layout as [parallelism] keys or flags.");
      }
    if (listed(kIgnoredSections, section)) continue;
    if (!listed(kReadSections, section) || !node.is_table()) {
      w.warn(IssueCode::kUnknownField, section, "[" + quote_text(section).substr(1, quote_text(section).size() - 2) +
                                                    "] is not a torchtitan section meshfit knows; ignored.");
      continue;
    }
    for (const auto& [key, value] : *node.as_table()) {
      const std::string name = section + "." + std::string(key.str());
      (void)value;
      if (!listed(kReadKeys, name) && !listed(kIgnoredKeys, name))
        w.warn(IssueCode::kUnknownField, name, quote_text(name) + " is not a torchtitan key meshfit knows; ignored.");
    }
  }
}

void read_model(const TomlReader& r, FieldWriter& w) {
  const std::string name = r.text("model", "name").value_or("llama3");
  const std::string flavor = r.text("model", "flavor").value_or("debugmodel");
  const TorchtitanFlavor* found = nullptr;
  for (const TorchtitanFlavor& f : kFlavors)
    if (name == f.name && flavor == f.flavor) found = &f;
  if (found) w.set("model", found->preset, "[model] name/flavor");
  else
    w.warn(IssueCode::kMissingModel, "model",
           "torchtitan model " + quote_text(name + " " + flavor) + " has no meshfit preset: give the dimensions (--model or --hidden ...).");
  bool fp8 = false;
  if (const auto converters = r.get("model", "converters"); converters && !converters->is_array())
    w.error(IssueCode::kUnknownValue, "model.converters",
            "[model] converters must be a list such as [\"float8\"], got " + quote_text(converters->dump()) + ".");
  if (const auto converters = r.get("model", "converters"); converters && converters->is_array())
    for (const json& converter : *converters) {
      if (converter == "float8") fp8 = true;
      else w.warn(IssueCode::kUnsupportedSetting, "model.converters", "model converter " + quote_text(converter.dump()) + " is not modelled.");
    }
  w.set("precision", enum_key(fp8 ? Precision::kFp8 : Precision::kBf16), "[model] converters");
  // torchtitan before nn.RMSNorm (2024 configs, models/norms.py build_norm): "rmsnorm" was its own
  // RMSNorm, _norm(x.float()).type_as(x) * weight, a chain of eager ops; "fused_rmsnorm" a Triton
  // kernel. The key is gone from later configs, whose nn.RMSNorm meshfit counts as one kernel.
  if (const auto norm = r.text("model", "norm_type")) {
    if (*norm == "rmsnorm") w.set("norm_kernel", enum_key(NormKernel::kEager), "[model] norm_type");
    else if (*norm == "fused_rmsnorm") w.set("norm_kernel", enum_key(NormKernel::kFused), "[model] norm_type");
    else
      w.warn(IssueCode::kUnsupportedSetting, "model.norm_type",
             "norm_type " + quote_text(*norm) + " is not modelled: the model's own RMSNorm is counted.");
  }
}

// torch.compile (FRAMEWORK_NOTES §1.8): [compile] enable with its components (job_config.py Compile:
// "model" compiles each block, "loss" the cross-entropy; both by default). Configs from before the
// [compile] section (2024) had [training] compile. Async TP runs only under a compiled model
// (TT25 distributed/tensor_parallel.py maybe_enable_async_tp) and only with TP.
void read_compile(const TomlReader& r, FieldWriter& w) {
  bool model = false, loss = false;
  const char* source = "[compile] enable, components";
  if (r.flag("compile", "enable")) {
    const auto components = r.get("compile", "components");
    if (!components) {
      model = loss = true;
    } else if (!components->is_array()) {
      w.error(IssueCode::kUnknownValue, "compile.components",
              "[compile] components must be a list such as [\"model\", \"loss\"], got " + quote_text(components->dump()) + ".");
    } else {
      for (const json& component : *components) {
        if (component == "model") model = true;
        else if (component == "loss") loss = true;
        else w.warn(IssueCode::kUnknownValue, "compile.components", "compile component " + quote_text(component.dump()) + " is not modelled.");
      }
    }
  } else if (r.flag("training", "compile")) {
    model = true;  // the loss as meshfit's torchtitan default under compile
    source = "[training] compile";
  }
  if (model) w.set("kernels", enum_key(Kernels::kCompiled), source);
  // Inductor fuses the norm whatever [model] norm_type says (validate: norm_kernel has no effect).
  if (model) w.result().fields.erase("norm_kernel");
  if (model && loss) w.set("loss", enum_key(LossKind::kCompiled), source);
  else if (model) w.set("loss", enum_key(LossKind::kEager), source);  // train step: F.cross_entropy(pred.float())
  else if (loss) w.set("loss", enum_key(LossKind::kCompiled), source);
  if (r.flag("parallelism", "enable_async_tensor_parallel")) {
    if (w.result().fields.value("tp", int64_t(1)) <= 1) {
      w.warn(IssueCode::kUnsupportedSetting, "parallelism.enable_async_tensor_parallel",
             "enable_async_tensor_parallel has no effect without tensor parallelism (tensor_parallel_degree 1).");
    } else {
      if (!model)
        w.warn(IssueCode::kConflictingSettings, "parallelism.enable_async_tensor_parallel",
               "torchtitan refuses Async TP unless the model is compiled ([compile] enable with \"model\"); meshfit counts it compiled.");
      w.set("async_tp", true, "[parallelism] enable_async_tensor_parallel");
    }
  }
}

// Not a hot path (once per import): [parallelism] keys in torchtitan's order, each with its checks.
void read_parallelism(const TomlReader& r, FieldWriter& w, LaunchImport& out) {
  const int64_t tp = r.count("parallelism", "tensor_parallel_degree").value_or(1);
  const int64_t pp = r.count("parallelism", "pipeline_parallel_degree").value_or(1);
  const int64_t cp = r.count("parallelism", "context_parallel_degree").value_or(1);
  const int64_t replicate = r.count("parallelism", "data_parallel_replicate_degree").value_or(1);
  const int64_t shard = r.count("parallelism", "data_parallel_shard_degree", /*allow_minus_one=*/true).value_or(-1);
  w.set("tp", tp, "[parallelism] tensor_parallel_degree");
  w.set("pp", pp, "[parallelism] pipeline_parallel_degree");
  w.set("cp", cp, "[parallelism] context_parallel_degree");
  w.set("sp", true, "torchtitan's TP (always sequence parallel)");
  w.set("framework", enum_key(Framework::kFsdp), "a torchtitan job config");
  w.set("flash", true, "torchtitan's SDPA attention");
  if (const auto ep = r.count("parallelism", "expert_parallel_degree"); ep && *ep > 1)
    w.error(IssueCode::kUnsupportedSetting, "parallelism.expert_parallel_degree", "expert parallelism is not modelled yet.");
  int64_t dp = 0, gpus = 0;
  const bool overflow = shard > 0 && (__builtin_mul_overflow(replicate, shard, &dp) || __builtin_mul_overflow(dp, tp, &gpus) ||
                                      __builtin_mul_overflow(gpus, pp, &gpus) || __builtin_mul_overflow(gpus, cp, &gpus));
  if (overflow) {
    w.error(IssueCode::kOutOfRange, "parallelism", "the product of the [parallelism] degrees overflows.");
  } else if (shard > 0) {
    w.set("dp", dp, "[parallelism] data_parallel_replicate_degree × data_parallel_shard_degree");
    w.set("gpus", gpus, "the product of the [parallelism] degrees");
  } else {
    w.warn(IssueCode::kMissingModel, "gpus",
           "data_parallel_shard_degree = -1 takes the rest of the world size (torchrun's NGPU): give --gpus.");
  }
  // parallel_dims.py: FSDP when dp_shard > 1 or cp > 1 (HSDP with replicate > 1), else DDP over replicate.
  const bool ddp = replicate > 1 && shard == 1 && cp == 1;
  if (replicate > 1 && !ddp)
    w.set("dp_replicate", replicate, "[parallelism] data_parallel_replicate_degree (HSDP)");
  const std::string reshard = r.text("parallelism", "fsdp_reshard_after_forward").value_or("default");
  int64_t zero = 3;
  if (ddp) zero = 0;
  else if (reshard == "never" || (reshard == "default" && pp > 1)) zero = 2;  // "default" = not pp_enabled
  else if (reshard != "always" && reshard != "default")
    w.error(IssueCode::kUnknownValue, "parallelism.fsdp_reshard_after_forward",
            "fsdp_reshard_after_forward must be default, always or never, got " + quote_text(reshard) + ".");
  w.set("zero", zero, "[parallelism] fsdp_reshard_after_forward");
  // Pipeline schedule and virtual stages.
  // The first and last stages' fewer layers, each read (and a bad value reported) once: torchtitan's
  // default 1 when absent, nullopt when the value is bad.
  const auto less_layers = [&r](const char* key) {
    return r.get("parallelism", key) ? r.count_or_zero("parallelism", key) : std::optional<int64_t>(1);
  };
  const std::optional<int64_t> first_less = less_layers("pipeline_parallel_first_stage_less_layers");
  const std::optional<int64_t> last_less = less_layers("pipeline_parallel_last_stage_less_layers");
  const std::string schedule = r.text("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
  int64_t vpp = 1;
  if (pp > 1 && multi_stage(schedule)) {
    vpp = 2;  // pipeline_parallel.py: two virtual stages per rank unless layers_per_stage is given
    if (const auto per_stage = r.count("parallelism", "pipeline_parallel_layers_per_stage")) {
      const auto layers = find_model_preset(out.fields.value("model", std::string()));
      if (!layers) {
        w.warn(IssueCode::kMissingModel, "vpp", "pipeline_parallel_layers_per_stage needs the model's layer count; vpp=2 assumed.");
      } else {
        const bool usable = first_less && last_less && *first_less <= kMaxLayers && *last_less <= kMaxLayers;
        const int64_t stages = usable ? (layers->layers + *first_less + *last_less + *per_stage - 1) / *per_stage : 0;
        if (!usable) {
          // a bad value's own error (or the "not modelled" note below) says it
        } else if (stages % pp != 0)
          w.error(IssueCode::kVppNotDivideLayers, "parallelism.pipeline_parallel_layers_per_stage",
                  std::to_string(stages) + " virtual stages do not divide over pipeline_parallel_degree " + std::to_string(pp) + ".");
        else vpp = stages / pp;
      }
    }
    if (schedule != "Interleaved1F1B")
      w.warn(IssueCode::kUnsupportedSetting, "parallelism.pipeline_parallel_schedule",
             "schedule " + quote_text(schedule) + " is counted as interleaved 1F1B.");
  } else if (pp > 1 && schedule == "GPipe") {
    w.warn(IssueCode::kUnsupportedSetting, "parallelism.pipeline_parallel_schedule",
           "GPipe keeps every micro-batch in flight; meshfit counts 1F1B (memory underestimated).");
  } else if (pp > 1 && schedule != "1F1B") {
    w.warn(IssueCode::kUnknownValue, "parallelism.pipeline_parallel_schedule", "schedule " + quote_text(schedule) + " is counted as 1F1B.");
  }
  w.set("vpp", vpp, "[parallelism] pipeline_parallel_schedule");
  for (const char* key : {"pipeline_parallel_split_points", "module_fqns_per_model_part"})
    if (r.get("parallelism", key))
      w.warn(IssueCode::kUnsupportedSetting, std::string("parallelism.") + key, std::string(key) + ": a hand-made split is counted as the default split.");
  for (const auto& [key, less] : {std::pair{"pipeline_parallel_first_stage_less_layers", first_less},
                                  std::pair{"pipeline_parallel_last_stage_less_layers", last_less}})
    if (less && *less != 1)
      w.warn(IssueCode::kUnsupportedSetting, std::string("parallelism.") + key, std::string(key) + " other than 1 is not modelled.");
  // Batches: without PP a micro-batch is the local batch; with PP it is pipeline_parallel_microbatch_size.
  const char* local_key = r.get("training", "local_batch_size") ? "local_batch_size" : "batch_size";
  const int64_t local = r.count("training", local_key).value_or(8);
  const int64_t micro = pp > 1 ? r.count("parallelism", "pipeline_parallel_microbatch_size").value_or(1) : local;
  w.set("micro_batch", micro, pp > 1 ? "[parallelism] pipeline_parallel_microbatch_size" : "[training] local_batch_size");
  const auto global = r.count("training", "global_batch_size", /*allow_minus_one=*/true);
  if (global && *global > 0) w.set("global_batch", *global, "[training] global_batch_size");
  else out.batch_per_dp_rank = local;  // global = local × dp (job_config.py: -1)
  if (pp > 1 && local % micro != 0)
    w.error(IssueCode::kBatchNotDivisible, "training.local_batch_size",
            "local_batch_size " + std::to_string(local) + " is not a multiple of pipeline_parallel_microbatch_size " + std::to_string(micro) + ".");
  // With PP, global_batch_size above local × dp means gradient accumulation: one pipeline schedule of
  // local / micro micro-batches per accumulation step (train.py), each with its own fill and drain.
  if (pp > 1 && global && *global > 0 && dp > 0 && micro > 0 && *global > local * dp)
    w.warn(IssueCode::kUnsupportedSetting, "training.global_batch_size",
           "global_batch_size " + std::to_string(*global) + " over local_batch_size " + std::to_string(local) + " × dp " +
               std::to_string(dp) + " is " + std::to_string(*global / (local * dp)) + " accumulation steps, each a pipeline schedule of " +
               std::to_string(local / micro) + " micro-batches; meshfit times one schedule of all " +
               std::to_string(*global / (dp * micro)) + " (the pipeline bubble is understated; memory is the same).");
}

// Layer-level SAC, selective_ac_option = "<n>" (TT25 _apply_layer_sac): a module-global counter
// over the blocks a process builds checkpoints blocks n, 2n, ... (full AC), and the others save
// everything: floor(blocks / n) of them. With the model's layers known, that is recompute=full on
// recompute_layers of them, per virtual chunk as meshfit counts it; without, full recompute on every
// layer (memory underestimated), said.
void read_layer_sac(const std::string& option, FieldWriter& w, Recompute& recompute) {
  const std::string field = "activation_checkpoint.selective_ac_option";
  int64_t every = 0;
  const auto parsed = std::from_chars(option.data(), option.data() + option.size(), every);
  if (parsed.ec != std::errc() || parsed.ptr != option.data() + option.size() || every < 1) {
    w.error(IssueCode::kUnknownValue, field, "selective_ac_option must be \"op\" or a positive layer count, got " + quote_text(option) + ".");
    return;
  }
  const auto preset = find_model_preset(w.result().fields.value("model", std::string()));
  if (!preset) {
    w.warn(IssueCode::kUnsupportedSetting, field,
           "layer-level AC every " + quote_text(option) + " layers needs the model's layer count (no known [model] flavor): counted "
           "as full recompute on every layer (memory underestimated).");
    return;
  }
  const int64_t chunks = w.result().fields.value("pp", int64_t(1)) * w.result().fields.value("vpp", int64_t(1));
  const int64_t per_chunk = preset->layers / std::max<int64_t>(chunks, 1);
  const int64_t checkpointed = per_chunk / every;
  if (checkpointed == 0) {
    recompute = Recompute::kNone;  // n beyond a chunk's blocks: none is checkpointed
  } else {
    w.set("recompute_layers", checkpointed, "[activation_checkpoint] selective_ac_option");
    if (chunks > 1 && (preset->layers % chunks != 0 || per_chunk % every != 0))
      w.warn(IssueCode::kUnsupportedSetting, field,
             "layer-level AC every " + option + " layers over " + std::to_string(chunks) + " pipeline chunks: counted as " +
                 std::to_string(checkpointed) + " checkpointed layers per chunk (the counter runs across a rank's chunks).");
  }
}

void read_training(const TomlReader& r, FieldWriter& w) {
  w.set("seq", r.count("training", "seq_len").value_or(2048), "[training] seq_len");
  // enable_cpu_offload hands fully_shard a CPUOffloadPolicy (parallelize.py apply_fsdp): the sharded
  // parameters, their gradients and the optimizer states live on the CPU and the step runs there =
  // offload=params. Only fully_shard takes it: a DDP-only mesh (apply_ddp) ignores it.
  if (r.flag("training", "enable_cpu_offload")) {
    if (w.result().fields.value("zero", int64_t(3)) == 0)
      w.warn(IssueCode::kConflictingSettings, "training.enable_cpu_offload",
             "enable_cpu_offload applies to FSDP (data_parallel_shard_degree > 1); torchtitan's DDP ignores it.");
    else
      w.set("offload", enum_key(Offload::kParams), "[training] enable_cpu_offload");
  }
  if (const auto param = r.text("training", "mixed_precision_param"); param && *param != "bfloat16")
    w.warn(IssueCode::kUnsupportedSetting, "training.mixed_precision_param", "mixed_precision_param " + quote_text(*param) + ": meshfit counts bfloat16.");
  const std::string mode = r.text("activation_checkpoint", "mode").value_or("selective");
  Recompute recompute = Recompute::kSelective;
  if (mode == "none") recompute = Recompute::kNone;
  else if (mode == "full") recompute = Recompute::kFull;
  else if (mode == "memory_budget")
    w.warn(IssueCode::kUnsupportedSetting, "activation_checkpoint.mode", "memory_budget AC is counted as selective (op).");
  else if (mode != "selective")
    w.error(IssueCode::kUnknownValue, "activation_checkpoint.mode", "mode must be none, selective, full or memory_budget, got " + quote_text(mode) + ".");
  if (recompute == Recompute::kSelective && mode == "selective") {
    const std::string option = r.text("activation_checkpoint", "selective_ac_option").value_or("2");
    if (option == "1") {
      recompute = Recompute::kFull;  // every layer checkpointed
    } else if (option != "op") {
      recompute = Recompute::kFull;
      read_layer_sac(option, w, recompute);
    }
  }
  w.set("recompute", enum_key(recompute), "[activation_checkpoint] mode");
  if (const auto name = r.text("optimizer", "name")) {
    if (*name == "AdamW" || *name == "Adam") w.set("optimizer", enum_key(Optimizer::kAdamW), "[optimizer] name");
    else w.warn(IssueCode::kUnsupportedSetting, "optimizer.name", "optimizer " + quote_text(*name) + " is counted as AdamW.");
  }
  // early_step_in_backward steps each parameter in its post-accumulate-grad hook and frees its
  // gradient (components/optimizer.py OptimizersInBackwardContainer); build_optimizers refuses it
  // under pipeline parallelism.
  if (r.flag("optimizer", "early_step_in_backward")) {
    if (w.result().fields.value("pp", int64_t(1)) > 1)
      w.error(IssueCode::kConflictingSettings, "optimizer.early_step_in_backward",
              "torchtitan does not run the optimizer in backward with pipeline parallelism (pipeline_parallel_degree > 1).");
    else
      w.set("optimizer_in_backward", true, "[optimizer] early_step_in_backward");
  }
  if (r.get("float8", "enable_fsdp_float8_all_gather") && w.result().fields.value("precision", "") != enum_key(Precision::kFp8) &&
      r.flag("float8", "enable_fsdp_float8_all_gather"))
    w.warn(IssueCode::kConflictingSettings, "float8.enable_fsdp_float8_all_gather",
           "[float8] settings without \"float8\" in [model] converters do nothing; bf16 is used.");
  // fp8 all-gather of the tensorwise recipe (FRAMEWORK_NOTES §1.9); the rowwise recipes gather in bf16.
  if (w.result().fields.value("precision", "") == enum_key(Precision::kFp8) && r.flag("float8", "enable_fsdp_float8_all_gather")) {
    if (r.text("float8", "recipe_name").value_or("tensorwise") != "tensorwise")
      w.warn(IssueCode::kConflictingSettings, "float8.enable_fsdp_float8_all_gather",
             "enable_fsdp_float8_all_gather is for the tensorwise recipe; recipe_name " +
                 quote_text(r.text("float8", "recipe_name").value_or("")) + " all-gathers in bf16 (counted so).");
    else
      w.set("fp8_all_gather", true, "[float8] enable_fsdp_float8_all_gather");
  }
}

}  // namespace

LaunchImport import_torchtitan_toml(const std::string& text) {
  LaunchImport out;
  if (!detail::begin_import(out, LaunchFormat::kTorchtitan, text, "torchtitan_config")) return out;
  // toml++ 3.3.0 (Debian's) reaches __builtin_unreachable() in its generated Unicode tables for
  // non-ASCII code points such as U+00E9 between tokens (unicode_autogenerated.h
  // is_non_ascii_horizontal_whitespace; found by UBSan on the hostile-input test): undefined
  // behaviour on user text. meshfit reads only ASCII keys and values, so each non-ASCII character
  // (already checked to be valid UTF-8) is read as '?': inside strings and comments nothing changes
  // for meshfit, elsewhere it is a parse error, as it would be anyway.
  std::string ascii;
  ascii.reserve(text.size());
  for (const char byte : text) {
    const auto u = static_cast<unsigned char>(byte);
    if (u < 0x80) ascii += byte;
    else if ((u & 0xC0) != 0x80) ascii += '?';  // one '?' per code point: its lead byte
  }
  toml::parse_result parsed = toml::parse(std::string_view(ascii));
  if (!parsed) {
    const toml::parse_error& error = parsed.error();
    const std::string description(error.description());  // from the ASCII copy: valid UTF-8
    out.issues.push_back({IssueCode::kMalformedInput, Severity::kError, "torchtitan_config",
                          "the TOML does not parse at line " + std::to_string(error.source().begin.line) + ", column " +
                              std::to_string(error.source().begin.column) + ": " + description + "."});
    return out;
  }
  toml::table& root = parsed.table();
  FieldWriter w(out);
  upgrade_2024_layout(root, w);
  check_keys(root, w);
  const TomlReader reader(root, w);
  read_model(reader, w);
  read_parallelism(reader, w, out);
  read_training(reader, w);
  read_compile(reader, w);
  return out;
}

namespace detail {

// Not a hot path (once per export): the TOML sections in torchtitan's job_config order.
LaunchExport export_torchtitan(const Config& c) {
  LaunchExport out = begin_export(LaunchFormat::kTorchtitan, c, Framework::kFsdp, "torchtitan (FSDP2) memory differs.");
  const auto warn = [&out](const std::string& field, const std::string& message) { warn_unsupported(out, field, message); };
  const Layout& l = c.layout;
  const TrainingSpec& t = c.training;
  const int64_t dp = effective_dp(c);
  toml::table model;
  const TorchtitanFlavor* flavor = nullptr;
  for (const TorchtitanFlavor& f : kFlavors) {
    const auto preset = find_model_preset(f.preset);
    const ModelSpec& m = c.model;
    if (preset && preset->hidden == m.hidden && preset->layers == m.layers && preset->heads == m.heads &&
        preset->kv_heads == m.kv_heads && preset->ffn == m.ffn && preset->vocab == m.vocab && preset->norm == m.norm &&
        preset->mlp == m.mlp && preset->tied_embeddings == m.tied_embeddings &&
        attention_head_dim(*preset) == attention_head_dim(m) && !flavor)
      flavor = &f;
  }
  if (flavor) {
    model.insert("name", flavor->name);
    model.insert("flavor", flavor->flavor);
  } else {
    warn("model", "torchtitan names models by flavor; this model (" + c.model.name +
                      ") has none: add its dimensions as a flavor in torchtitan/models/llama3/__init__.py.");
  }
  if (t.precision == Precision::kFp8) model.insert("converters", toml::array{"float8"});

  toml::table training;
  // Without PP a micro-batch is the local batch and accumulation = global / (local × dp); with PP the
  // local batch is the DP rank's whole share and the schedule cuts it into micro-batches.
  training.insert("local_batch_size", l.pp > 1 ? t.global_batch / dp : t.micro_batch);
  training.insert("global_batch_size", t.global_batch);
  training.insert("seq_len", t.seq);
  training.insert("mixed_precision_param", "bfloat16");
  if (half_precision_is_fp16(c.gpu.family))
    warn("precision", "torchtitan's mixed precision is bfloat16 or float32, and " + c.gpu.name +
                          " has no BF16: bfloat16 written; this estimate stands for fp16 mixed precision, which torchtitan does not offer.");

  toml::table parallelism;
  const bool ddp = l.zero == 0;
  parallelism.insert("data_parallel_replicate_degree", ddp ? dp : l.dp_replicate);
  parallelism.insert("data_parallel_shard_degree", ddp ? 1 : dp / l.dp_replicate);
  parallelism.insert("tensor_parallel_degree", l.tp);
  parallelism.insert("pipeline_parallel_degree", l.pp);
  parallelism.insert("context_parallel_degree", l.cp);
  if (!ddp) {
    // reshard_after_forward "default" = not pp_enabled: ZeRO-3 without PP, ZeRO-2 with it.
    const bool default_fits = (l.zero == 3) == (l.pp == 1);
    parallelism.insert("fsdp_reshard_after_forward", default_fits ? "default" : l.zero == 3 ? "always" : "never");
  }
  if (l.zero == 1) warn("zero", "FSDP2 has no ZeRO-1; the file asks for ZeRO-2 (reshard_after_forward never).");
  if (l.pp > 1) {
    parallelism.insert("pipeline_parallel_schedule", l.vpp > 1 ? "Interleaved1F1B" : "1F1B");
    parallelism.insert("pipeline_parallel_microbatch_size", t.micro_batch);
    // num virtual stages = ceil((layers + 1 + 1) / layers_per_stage) must equal pp × vpp; a vpp no k
    // gives is refused by validate() (structure.cpp torchtitan_layers_per_stage), so one exists here.
    if (l.vpp > 2)
      if (const std::optional<int64_t> per_stage =
              torchtitan_layers_per_stage(c.model.layers, framework_profile(Framework::kFsdp), l.pp * l.vpp))
        parallelism.insert("pipeline_parallel_layers_per_stage", *per_stage);
  }
  if (l.tp > 1 && !t.sp) warn("sp", "torchtitan's tensor parallelism is always sequence parallel.");
  if (t.async_tp && l.tp > 1) parallelism.insert("enable_async_tensor_parallel", true);
  else if (t.async_tp) warn("async_tp", "Async TP needs tensor parallelism: left out at tp 1.");
  if (l.pp_first_stage_layers > 0 || l.pp_last_stage_layers > 0)
    warn("pp_first_stage_layers", "torchtitan chooses the pipeline split itself (embedding and output weigh one layer each).");

  if (t.offload == Offload::kParams && !ddp) training.insert("enable_cpu_offload", true);
  else if (t.offload == Offload::kParams) warn("offload", "torchtitan offloads with FSDP only; its DDP (zero=0) has no CPU offload.");
  if (t.offload == Offload::kOptimizer)
    warn("offload", "FSDP2's CPUOffloadPolicy moves the parameters with the optimizer states (offload=params), not the optimizer alone.");

  toml::table checkpoint;
  // Full recompute on N of a chunk's layers: torchtitan's layer-level SAC every n-th block, n = layers / N.
  const int64_t chunk_layers = c.model.layers / std::max<int64_t>(l.pp * l.vpp, 1);
  const bool some_layers = t.recompute == Recompute::kFull && t.recompute_layers > 0 && t.recompute_layers < chunk_layers;
  if (some_layers && chunk_layers % t.recompute_layers == 0) {
    checkpoint.insert("mode", "selective");
    checkpoint.insert("selective_ac_option", std::to_string(chunk_layers / t.recompute_layers));
  } else {
    checkpoint.insert("mode", enum_key(t.recompute));
    if (t.recompute == Recompute::kSelective) checkpoint.insert("selective_ac_option", "op");
    if (some_layers)
      warn("recompute_layers", "torchtitan checkpoints every n-th block; no n gives " + std::to_string(t.recompute_layers) + " of " +
                                   std::to_string(chunk_layers) + " layers: the file asks for full recompute on every layer.");
  }

  toml::table root;
  root.insert("model", std::move(model));
  root.insert("training", std::move(training));
  root.insert("parallelism", std::move(parallelism));
  root.insert("activation_checkpoint", std::move(checkpoint));
  // [compile]: the model's blocks when compiled (Async TP runs only so), the loss when compiled or
  // left to torchtitan's default under a compiled model.
  const bool compiled_model = runs_compiled(t, c.layout.tp);
  const bool compiled_loss = t.loss == LossKind::kCompiled || (compiled_model && t.loss == LossKind::kAuto);
  if (compiled_model || compiled_loss) {
    toml::array components;
    if (compiled_model) components.push_back("model");
    if (compiled_loss) components.push_back("loss");
    toml::table compile;
    compile.insert("enable", true);
    compile.insert("components", std::move(components));
    root.insert("compile", std::move(compile));
  }
  if (t.loss != LossKind::kAuto && t.loss != LossKind::kEager && t.loss != LossKind::kCompiled)
    warn("loss", std::string("torchtitan's loss is PyTorch's cross-entropy, eager or compiled; ") + enum_label(t.loss) + " left out.");
  if (t.norm_kernel == NormKernel::kEager && !compiled_model)
    warn("norm_kernel", "torchtitan's job config has no eager-norm setting since nn.RMSNorm replaced its own (2024 configs: "
                        "[model] norm_type = \"rmsnorm\").");
  if (t.precision == Precision::kFp8) {
    toml::table float8;
    float8.insert("enable_fsdp_float8_all_gather", t.fp8_all_gather);
    float8.insert("precompute_float8_dynamic_scale_for_fsdp", t.fp8_all_gather);
    root.insert("float8", std::move(float8));
  }
  if (t.optimizer_in_backward && l.pp == 1) {
    toml::table optimizer;
    optimizer.insert("early_step_in_backward", true);
    root.insert("optimizer", std::move(optimizer));
  } else if (t.optimizer_in_backward) {
    warn("optimizer_in_backward", "torchtitan does not run the optimizer in backward with pipeline parallelism: left out.");
  }
  if (t.optimizer != Optimizer::kAdamW)
    warn("optimizer", std::string("torchtitan's optimizer section takes torch.optim names; ") + enum_label(t.optimizer) + " left out.");
  if (!t.flash) warn("flash", "torchtitan always uses SDPA (flash) attention.");
  std::ostringstream text;
  text << toml::toml_formatter{root, toml::toml_formatter::default_flags & ~toml::format_flags::indentation};
  out.text = text.str() + "\n";
  return out;
}

}  // namespace detail

}  // namespace meshfit
