// finetune_export.cpp — a fine-tuning config as what the fine-tuning stacks run: a torchtune recipe
// YAML (keys of torchtune recipes/configs/llama3_1/8B_lora_single_device.yaml and the component
// builders torchtune/models/llama3_1/_component_builders.py lora_llama3_1 / llama3_1, llama3_2 for
// tied embeddings) and a Hugging Face Trainer snippet (transformers TrainingArguments in
// training_args.py, peft LoraConfig in tuners/lora/config.py, BitsAndBytesConfig, get_peft_model,
// prepare_model_for_kbit_training). Both are built as data (ordered JSON trees, keyword lists) and
// written by the two small emitters below, so quoting is decided in one place per format.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "io/launch_config.h"
#include "io/text.h"
#include "memory/finetune.h"
#include "spec/config.h"

namespace meshfit {

using ojson = nlohmann::ordered_json;

namespace {

// [SECTION] Emitters

// A YAML scalar: plain when YAML 1.1/1.2 read it back as the same string, else JSON-quoted (a JSON
// string is a valid YAML double-quoted scalar).
std::string yaml_scalar(const ojson& value) {
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";  // torchtune's spelling; YAML 1.1 bool
  if (value.is_null()) return "null";
  if (!value.is_string()) return value.dump();
  const std::string text = value.get<std::string>();
  bool plain = !text.empty();
  for (char ch : text)
    plain &= (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '/';
  const bool digit_first = !text.empty() && ((text[0] >= '0' && text[0] <= '9') || text[0] == '.');
  for (const char* word : {"true", "false", "True", "False", "yes", "no", "on", "off", "null", "y", "n"})
    plain &= text != word;
  return plain && !digit_first ? text : value.dump();
}

void emit_yaml(const ojson& node, int indent, std::string& out) {
  const std::string pad(size_t(indent), ' ');
  for (auto it = node.begin(); it != node.end(); ++it) {
    const ojson& value = it.value();
    out += pad + it.key() + ":";
    if (value.is_object()) {
      out += "\n";
      emit_yaml(value, indent + 2, out);
    } else if (value.is_array()) {
      std::string items;
      for (const ojson& item : value) items += (items.empty() ? "" : ", ") + yaml_scalar(item);
      out += " [" + items + "]\n";
    } else {
      out += " " + yaml_scalar(value) + "\n";
    }
  }
}

// A Python keyword argument: a literal (JSON value written as Python) or an expression as is.
struct PyArg {
  std::string name;
  ojson value;
  bool expression = false;  // value is a string of Python code (torch.bfloat16, bnb_config)
};

std::string python_literal(const ojson& value) {
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_null()) return "None";
  if (value.is_array()) {
    std::string items;
    for (const ojson& item : value) items += (items.empty() ? "" : ", ") + python_literal(item);
    return "[" + items + "]";
  }
  if (value.is_object()) {
    std::string items;
    for (auto it = value.begin(); it != value.end(); ++it)
      items += (items.empty() ? "" : ", ") + ojson(it.key()).dump() + ": " + python_literal(it.value());
    return "{" + items + "}";
  }
  return value.dump();  // numbers; strings JSON double-quoted, which Python reads the same
}

std::string python_call(const std::string& target, const std::string& callee, const std::vector<PyArg>& args) {
  std::string out = target + " = " + callee + "(\n";
  for (const PyArg& arg : args)
    out += "    " + arg.name + "=" + (arg.expression ? arg.value.get<std::string>() : python_literal(arg.value)) + ",\n";
  return out + ")\n";
}

// [SECTION] Shared pieces

struct Warner {
  LaunchExport& out;
  void operator()(const char* field, const std::string& message) const {
    out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, field, message});
  }
};

// PEFT / Hugging Face module names of the targets (LlamaForCausalLM naming).
std::vector<std::string> hf_target_names(uint32_t targets) {
  const std::pair<uint32_t, const char*> names[] = {{kLoraQ, "q_proj"},       {kLoraK, "k_proj"},   {kLoraV, "v_proj"},
                                                    {kLoraO, "o_proj"},       {kLoraGate, "gate_proj"}, {kLoraUp, "up_proj"},
                                                    {kLoraDown, "down_proj"}};
  std::vector<std::string> list;
  for (const auto& [bit, name] : names)
    if (targets & bit) list.push_back(name);
  return list;
}

// A number as the stacks' own configs write it: 16, not 16.0, when it is whole.
ojson number(double value) {
  const double whole = std::floor(value);
  return whole == value && std::fabs(value) < 1e15 ? ojson(int64_t(whole)) : ojson(value);
}

int64_t accumulation_steps(const Config& c) {
  const int64_t per_step = c.training.micro_batch * std::max<int64_t>(1, effective_dp(c));
  return per_step > 0 ? std::max<int64_t>(1, c.training.global_batch / per_step) : 1;
}

// FSDP's HYBRID_SHARD (the HF Trainer's fsdp "hybrid_shard"): torch/distributed/fsdp/_init_utils.py
// _init_process_group_state_for_hybrid_shard builds the shard group from the node's GPUs
// (_init_intra_and_inter_node_groups with torch.cuda.device_count()) and replicates across nodes, so
// the file can say dp_replicate only where a shard group is exactly one node.
bool hybrid_shard_is_node(const Config& c) {
  return c.training.framework == Framework::kFsdp && c.layout.zero >= 2 && c.layout.dp_replicate > 1 &&
         c.layout.tp == 1 && c.layout.cp == 1 && c.layout.pp == 1 && shard_group_ranks(c) == c.cluster.gpus_per_node;
}

// `replicas`: how the stack can shard within groups ("" = it cannot), or nullptr where the file
// writes the user's dp_replicate.
void warn_layout(const Config& c, const Warner& warn, const char* stack, const char* replicas = "") {
  if (c.layout.pp > 1) warn("pp", std::string(stack) + " has no pipeline parallelism for fine-tuning; pp=" + std::to_string(c.layout.pp) + " is left out.");
  if (c.layout.cp > 1) warn("cp", std::string(stack) + " has no context parallelism here; cp=" + std::to_string(c.layout.cp) + " is left out.");
  if (c.layout.dp_replicate > 1 && replicas != nullptr)
    warn("dp_replicate", std::string(stack) + " shards over every data-parallel rank here" + replicas + "; dp_replicate=" +
                             std::to_string(c.layout.dp_replicate) + " (shard groups of " + std::to_string(shard_group_ranks(c)) +
                             " ranks) is left out.");
  if (c.training.precision == Precision::kFp8) warn("precision", "fp8 GEMMs are not a setting here; bf16 written.");
  if (c.training.recompute == Recompute::kSelective)
    warn("recompute", "selective recompute has no setting here; full activation checkpointing written.");
}

const char* nproc_text(const Config& c) { return c.cluster.gpus > 1 ? "distributed" : "single_device"; }

// What the file runs when the degrees it cannot carry are dropped: launched on every GPU, its data
// parallelism is gpus / (the degrees it keeps), so its batch per step is micro-batch x that x the
// accumulation it writes. Said where that is not the config's global batch.
void warn_launched_batch(const Config& c, const Warner& warn, int64_t kept_model_parallel) {
  const int64_t launched_dp = std::max<int64_t>(1, c.cluster.gpus / std::max<int64_t>(1, kept_model_parallel));
  if (launched_dp == std::max<int64_t>(1, effective_dp(c))) return;
  const int64_t launched_batch = c.training.micro_batch * launched_dp * accumulation_steps(c);
  warn("global_batch", "launched on " + std::to_string(c.cluster.gpus) + " GPUs the file runs data parallelism " +
                           std::to_string(launched_dp) + ", not " + std::to_string(effective_dp(c)) + ": " +
                           std::to_string(launched_batch) + " sequences per step, not " +
                           std::to_string(c.training.global_batch) +
                           ", and a different memory per GPU (estimate it with tp/pp/cp as the file runs).");
}

// torchtune's llama3_1/llama3_2 builders are Llama's architecture, Llama 3.1's RoPE scaling
// included; other families have builders of their own (torchtune/models/<family>).
bool llama_family(const ModelSpec& m) {
  return ascii_lower(m.name).find("llama") != std::string::npos;
}

}  // namespace

namespace detail {

// [SECTION] torchtune

LaunchExport export_torchtune(const Config& c) {
  LaunchExport out;
  out.format = LaunchFormat::kTorchtune;
  const Warner warn{out};
  const TrainingSpec& t = c.training;
  const ModelSpec& m = c.model;
  const bool adapters = has_adapters(t);
  if (!is_finetune(t)) warn("finetune", "a pretraining config: written as full fine-tuning (torchtune recipes fine-tune).");
  if (m.mlp != MlpKind::kSwiGlu || m.norm != NormKind::kRmsNorm || m.linear_bias)
    warn("model", "torchtune's Llama builders are RMSNorm + SwiGLU without biases; this model is not one of them.");
  warn_layout(c, warn, "torchtune");
  warn_launched_batch(c, warn, c.layout.tp);  // torchtune keeps tensor_parallel_dim
  if (!llama_family(m))
    warn("model", "the file builds " + m.name + " with torchtune's Llama 3.1/3.2 builder (Llama's RoPE scaling, no q/k/v "
                  "biases or QK-norm): use the model's own builder from torchtune.models (e.g. qwen2_5, mistral, gemma2); "
                  "the dimensions written are the ones estimated.");
  if (t.framework == Framework::kDeepSpeed || t.framework == Framework::kMegatron)
    warn("framework", std::string("torchtune shards with FSDP2, not ") + enum_label(t.framework) + ".");

  // Model: the component builder with the dimensions written out (llama3_2 ties the embeddings).
  const std::string family = m.tied_embeddings ? "llama3_2" : "llama3_1";
  ojson model;
  model["_component_"] = "torchtune.models." + family + "." + (adapters ? "lora_" : "") + family;
  if (adapters) {
    const uint32_t targets = parse_lora_targets(t.lora_targets);
    ojson attention = ojson::array();
    const std::pair<uint32_t, const char*> attn[] = {{kLoraQ, "q_proj"}, {kLoraK, "k_proj"}, {kLoraV, "v_proj"}, {kLoraO, "output_proj"}};
    for (const auto& [bit, name] : attn)
      if (targets & bit) attention.push_back(name);
    const uint32_t mlp = kLoraGate | kLoraUp | kLoraDown;
    if ((targets & mlp) != 0 && (targets & mlp) != mlp)
      warn("lora_targets", "torchtune adapts the MLP as a whole (apply_lora_to_mlp); all three MLP projections written.");
    model["lora_attn_modules"] = attention;
    model["apply_lora_to_mlp"] = (targets & mlp) != 0;
    model["apply_lora_to_output"] = false;
  }
  model["vocab_size"] = m.vocab;
  model["num_layers"] = m.layers;
  model["num_heads"] = m.heads;
  model["num_kv_heads"] = m.kv_heads;
  model["embed_dim"] = m.hidden;
  model["max_seq_len"] = t.seq;
  model["intermediate_dim"] = m.ffn;
  if (m.head_dim > 0 && m.heads > 0 && m.head_dim * m.heads != m.hidden)
    warn("head_dim", "torchtune's llama3 builders derive the head dimension as embed_dim // num_heads = " +
                         std::to_string(m.hidden / m.heads) + ", not head_dim=" + std::to_string(m.head_dim) +
                         ": use a builder that takes head_dim (e.g. torchtune.models.qwen3).");
  if (adapters) {
    model["lora_rank"] = t.lora_rank;
    model["lora_alpha"] = number(t.lora_alpha);
    model["lora_dropout"] = t.lora_dropout;
    if (t.dora) model["use_dora"] = true;  // torchtune lora_llama3 builders' use_dora
    if (t.finetune == FinetuneMethod::kQlora) model["quantize_base"] = true;  // torchao NF4
  }
  if (t.finetune == FinetuneMethod::kQlora && !t.double_quant)
    warn("double_quant", "torchao's NF4 always double-quantises its scales; double_quant=false is not written.");
  if (adapters && t.adapter_dtype == AdapterDtype::kFp32)
    warn("adapter_dtype", "torchtune builds the adapters in the model dtype; fp32 adapters are not a setting.");
  for (const ModuleToSave& module : kModulesToSave)
    if (adapters && t.*module.flag)
      warn(module.key,
           std::string("torchtune's LoRA recipes train the adapters only (no modules_to_save); ") + module.key + " is not written.");

  ojson config;
  config["model"] = model;
  config["tokenizer"] = {{"max_seq_len", t.seq}};
  config["batch_size"] = t.micro_batch;
  config["gradient_accumulation_steps"] = accumulation_steps(c);
  ojson optimizer;
  switch (t.optimizer) {
    case Optimizer::kAdamW: optimizer = {{"_component_", "torch.optim.AdamW"}, {"fused", true}}; break;
    case Optimizer::kSgd: optimizer = {{"_component_", "torch.optim.SGD"}}; break;
    case Optimizer::kAdam8bit: optimizer = {{"_component_", "bitsandbytes.optim.AdamW8bit"}}; break;
    case Optimizer::kPagedAdamW: optimizer = {{"_component_", "bitsandbytes.optim.PagedAdamW"}}; break;
    case Optimizer::kPagedAdam8bit: optimizer = {{"_component_", "bitsandbytes.optim.PagedAdamW8bit"}}; break;
    case Optimizer::kAdafactor: optimizer = {{"_component_", "torchao.optim.Adafactor"}}; warn("optimizer", "Adafactor: use your own optimizer component."); break;
  }
  config["optimizer"] = optimizer;
  if (!adapters) config["optimizer_in_bwd"] = t.optimizer_in_backward;
  else if (t.optimizer_in_backward) warn("optimizer_in_backward", "torchtune's LoRA recipes have no optimizer_in_bwd.");
  config["loss"] = {{"_component_", t.loss == LossKind::kChunked ? "torchtune.modules.loss.LinearCrossEntropyLoss"
                                                                 : "torch.nn.CrossEntropyLoss"}};
  if (t.loss != LossKind::kChunked && t.loss != LossKind::kEager && t.loss != LossKind::kAuto)
    warn("loss", std::string("loss=") + enum_key(t.loss) + " is not a torchtune loss; torch.nn.CrossEntropyLoss written.");
  config["enable_activation_checkpointing"] = t.recompute != Recompute::kNone;
  if (t.recompute == Recompute::kFull && t.recompute_layers > 0)
    warn("recompute_layers", "torchtune checkpoints every layer: the file recomputes all of them, not " +
                                 std::to_string(t.recompute_layers) + ".");
  config["enable_activation_offloading"] = t.offload_activations;
  config["compile"] = t.kernels == Kernels::kCompiled;
  if (t.precision == Precision::kBf16)
    warn("precision", "torchtune has no mixed precision: dtype bf16 trains in pure bf16 (no fp32 master).");
  config["dtype"] = "bf16";
  if (half_precision_is_fp16(c.gpu.family))
    warn("precision", "torchtune trains in bf16 or fp32 only and refuses bf16 on " + c.gpu.name +
                          " (no BF16: torch.cuda.is_bf16_supported() is false); set dtype: fp32, which this estimate (fp16) does not count.");
  if (c.cluster.gpus > 1) {
    if (c.layout.tp > 1) config["tensor_parallel_dim"] = c.layout.tp;
    config["fsdp_cpu_offload"] = t.offload == Offload::kParams;
    config["fsdp_reshard_after_forward"] = c.layout.zero >= 3;
    if (c.layout.zero > 0 && c.layout.zero < 3)
      warn("zero", "FSDP2 shards parameters, gradients and optimizer together; ZeRO-" + std::to_string(c.layout.zero) +
                       " is written as reshard_after_forward False.");
  }
  if (t.offload == Offload::kOptimizer) warn("offload", "torchtune offloads parameters with the optimizer (fsdp_cpu_offload), not the optimizer alone.");
  if (c.cluster.gpus <= 1 && t.offload == Offload::kParams) warn("offload", "CPU offload needs the distributed recipe.");

  const std::string recipe = std::string(adapters ? "lora_finetune_" : "full_finetune_") + nproc_text(c);
  char run[200];
  // tune run passes torchrun's launcher flags on: more GPUs than a node's are --nnodes nodes (an
  // as-a-user review saw 16 GPUs written as one node of 8).
  const int64_t per_node = std::max<int64_t>(1, std::min(c.cluster.gpus, c.cluster.gpus_per_node));
  const int64_t nodes = (c.cluster.gpus + per_node - 1) / per_node;
  if (nodes > 1)
    std::snprintf(run, sizeof run, "tune run --nnodes %lld --nproc_per_node %lld %s --config meshfit.yaml", (long long)nodes,
                  (long long)per_node, recipe.c_str());
  else if (c.cluster.gpus > 1)
    std::snprintf(run, sizeof run, "tune run --nproc_per_node %lld %s --config meshfit.yaml", (long long)per_node, recipe.c_str());
  else
    std::snprintf(run, sizeof run, "tune run %s --config meshfit.yaml", recipe.c_str());
  out.text = "# meshfit: " + m.name + ", " + enum_label(t.finetune) + " on " + std::to_string(c.cluster.gpus) + " x " +
             c.gpu.name + ". Recipe: " + recipe + "\n# " + run +
             "\n# Add your dataset, tokenizer path, checkpointer and lr: they do not change memory.\n";
  emit_yaml(config, 0, out.text);
  return out;
}

// [SECTION] Hugging Face Trainer + PEFT

LaunchExport export_hf_trainer(const Config& c) {
  LaunchExport out;
  out.format = LaunchFormat::kHfTrainer;
  const Warner warn{out};
  const TrainingSpec& t = c.training;
  const bool adapters = has_adapters(t);
  const bool qlora = t.finetune == FinetuneMethod::kQlora;
  if (!is_finetune(t)) warn("finetune", "a pretraining config: written as full fine-tuning.");
  const bool hybrid = hybrid_shard_is_node(c);
  warn_layout(c, warn, "the HF Trainer",
              hybrid ? nullptr
                     : t.framework == Framework::kFsdp ? " (or, with fsdp hybrid_shard, over the GPUs of one node)" : "");
  // DeepSpeed's AutoTP training (the JSON's tensor_parallel.autotp_size, written in the deepspeed dict
  // below) carries tp through the Trainer; the other back ends have none (a review saw tp said to be
  // left out beside a dict that still carried it).
  const bool autotp = t.framework == Framework::kDeepSpeed && c.cluster.gpus > 1;
  warn_launched_batch(c, warn, autotp ? c.layout.tp : 1);  // no pp or cp in the file
  if (c.layout.tp > 1 && !autotp)
    warn("tp", "the HF Trainer has no tensor parallelism for training here; tp=" + std::to_string(c.layout.tp) + " is left out.");
  if (t.framework == Framework::kMegatron) warn("framework", "Megatron-LM is not an HF Trainer back end; plain DDP written.");

  std::string text = "# meshfit: " + c.model.name + ", " + enum_label(t.finetune) + " on " + std::to_string(c.cluster.gpus) +
                     " x " + c.gpu.name + " (transformers TrainingArguments, peft LoraConfig).\n";
  text += std::string("import torch\nfrom transformers import AutoModelForCausalLM, ") + (qlora ? "BitsAndBytesConfig, " : "") +
          "TrainingArguments\n";
  if (adapters)
    text += std::string("from peft import LoraConfig, get_peft_model") + (qlora && t.kbit_upcast ? ", prepare_model_for_kbit_training" : "") + "\n";
  text += "\n";
  // Turing and Volta have no bf16 (gpu_catalog.h half_precision_is_fp16): the estimate stands for fp16
  // mixed precision there, and the file asks for fp16 (an as-a-user review exported bf16=True for a
  // T4, which TrainingArguments refuses on that card).
  const bool fp16 = half_precision_is_fp16(c.gpu.family);
  const char* half = fp16 ? "torch.float16" : "torch.bfloat16";
  std::vector<PyArg> load = {{"torch_dtype", t.precision == Precision::kPureBf16 || adapters ? half : "torch.float32", true}};
  if (qlora) {
    text += python_call("bnb_config", "BitsAndBytesConfig",
                        {{"load_in_4bit", true},
                         {"bnb_4bit_quant_type", "nf4"},
                         {"bnb_4bit_use_double_quant", t.double_quant},
                         {"bnb_4bit_compute_dtype", half, true},
                         {"bnb_4bit_quant_storage", half, true}});
    load.push_back({"quantization_config", "bnb_config", true});
  }
  if (t.base_dtype == AdapterDtype::kFp32 && adapters && !qlora) load.front() = {"torch_dtype", "torch.float32", true};
  text += python_call("model", "AutoModelForCausalLM.from_pretrained", [&] {
    std::vector<PyArg> args = {{"pretrained_model_name_or_path", "MODEL_ID_OR_PATH"}};
    args.insert(args.end(), load.begin(), load.end());
    return args;
  }());
  if (qlora && t.kbit_upcast)
    text += python_call("model", "prepare_model_for_kbit_training",
                        {{"model", "model", true}, {"use_gradient_checkpointing", t.recompute != Recompute::kNone}});
  if (adapters) {
    const uint32_t targets = parse_lora_targets(t.lora_targets);
    ojson target_modules = targets == kLoraAllLinear ? ojson("all-linear") : ojson(hf_target_names(targets));
    std::vector<PyArg> lora_args = {{"r", t.lora_rank},
                                    {"lora_alpha", number(t.lora_alpha)},
                                    {"lora_dropout", t.lora_dropout},
                                    {"target_modules", target_modules},
                                    {"task_type", "CAUSAL_LM"}};
    if (t.dora) lora_args.push_back({"use_dora", true});
    ojson saved = ojson::array();
    for (const ModuleToSave& module : kModulesToSave)
      if (t.*module.flag) saved.push_back(module.peft_name);
    if (!saved.empty()) lora_args.push_back({"modules_to_save", saved});
    text += python_call("lora_config", "LoraConfig", lora_args);
    text += python_call("model", "get_peft_model",
                        {{"model", "model", true},
                         {"peft_config", "lora_config", true},
                         {"autocast_adapter_dtype", t.adapter_dtype == AdapterDtype::kFp32}});
  }

  const char* optim = "adamw_torch";
  switch (t.optimizer) {
    case Optimizer::kAdamW: optim = "adamw_torch"; break;
    case Optimizer::kSgd: optim = "sgd"; break;
    case Optimizer::kAdam8bit: optim = "adamw_bnb_8bit"; break;
    case Optimizer::kPagedAdamW: optim = "paged_adamw_32bit"; break;
    case Optimizer::kPagedAdam8bit: optim = "paged_adamw_8bit"; break;
    case Optimizer::kAdafactor: optim = "adafactor"; break;
  }
  if (t.optimizer_in_backward) warn("optimizer_in_backward", "the HF Trainer has no optimizer step inside backward.");
  if (t.offload_activations)
    warn("offload_activations", "the HF Trainer has no activation offloading (torchtune's enable_activation_offloading).");
  if (t.recompute == Recompute::kFull && t.recompute_layers > 0)
    warn("recompute_layers", "gradient_checkpointing checkpoints every layer: the file recomputes all of them, not " +
                                 std::to_string(t.recompute_layers) + ".");
  std::vector<PyArg> args = {{"output_dir", "out"},
                             {"per_device_train_batch_size", t.micro_batch},
                             {"gradient_accumulation_steps", accumulation_steps(c)},
                             {fp16 ? "fp16" : "bf16", t.precision != Precision::kPureBf16},
                             {"gradient_checkpointing", t.recompute != Recompute::kNone},
                             {"optim", optim}};
  if (t.recompute != Recompute::kNone) args.push_back({"gradient_checkpointing_kwargs", ojson{{"use_reentrant", false}}});
  if (t.kernels == Kernels::kCompiled) args.push_back({"torch_compile", true});
  // Liger-Kernel's fused linear cross-entropy (TrainingArguments use_liger_kernel, which also swaps
  // in Liger's RMSNorm, RoPE and SwiGLU kernels: they save no more than the eager modules).
  if (t.loss == LossKind::kFusedLinear) args.push_back({"use_liger_kernel", true});
  if (t.framework == Framework::kDeepSpeed && c.cluster.gpus > 1) {
    // The DeepSpeed JSON the deepspeed export writes, as the dict TrainingArguments(deepspeed=...) takes,
    // with the optimizer's hyper-parameters "auto": the Trainer fills them from its own arguments
    // (integrations/deepspeed.py trainer_config_process). Without params DeepSpeed would build the
    // optimizer at its defaults (lr 1e-3) and learning_rate would not apply (an as-a-user review).
    ojson deepspeed = ojson::parse(export_launch_config(c, LaunchFormat::kDeepSpeed).text);
    deepspeed["optimizer"]["params"] = t.optimizer == Optimizer::kSgd
                                           ? ojson{{"lr", "auto"}, {"weight_decay", "auto"}}
                                           : ojson{{"lr", "auto"}, {"betas", "auto"}, {"eps", "auto"}, {"weight_decay", "auto"}};
    args.push_back({"deepspeed", deepspeed});
  } else if (t.framework == Framework::kFsdp && c.layout.zero > 0 && c.cluster.gpus > 1) {
    std::string fsdp = hybrid ? (c.layout.zero >= 3 ? "hybrid_shard auto_wrap" : "hybrid_shard_zero2 auto_wrap")
                              : c.layout.zero >= 3 ? "full_shard auto_wrap" : "shard_grad_op auto_wrap";
    if (t.offload == Offload::kParams) fsdp += " offload";
    args.push_back({"fsdp", fsdp});
    args.push_back({"fsdp_config", ojson{{"transformer_layer_cls_to_wrap", "LlamaDecoderLayer"}, {"use_orig_params", adapters}}});
    if (c.layout.zero == 1) warn("zero", "FSDP has no optimizer-only sharding; zero=1 written as shard_grad_op.");
  }
  if (t.offload == Offload::kOptimizer && t.framework != Framework::kDeepSpeed)
    warn("offload", "optimizer-only offload is DeepSpeed's (offload_optimizer); FSDP offloads parameters too.");
  text += python_call("training_args", "TrainingArguments", args);
  char seq[160];
  std::snprintf(seq, sizeof seq, "# Sequences of %lld tokens: pad or pack to this in your collator (TRL SFTConfig max_length).\n",
                (long long)t.seq);
  out.text = text + seq;
  return out;
}

}  // namespace detail

}  // namespace meshfit
