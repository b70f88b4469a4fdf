// finetune.cpp — see finetune.h. Sources: ../shared/reference/FINETUNE_NOTES.md §1-4 (PEFT
// tuners/lora/layer.py, mapping_func.py, utils/other.py prepare_model_for_kbit_training;
// bitsandbytes functional.py quantize_4bit, autograd/_functions.py MatMul4Bit, optim/*.py),
// FRAMEWORK_NOTES.md §3 (DeepSpeed offload) and §4 (optimizers, paged memory).
#include "memory/finetune.h"

#include "spec/config.h"

#include <algorithm>
#include <sstream>

#include "memory/memory_model.h"
#include "meshfit_assert.h"

namespace meshfit {

// [SECTION] Targets and parameter split

uint32_t parse_lora_targets(const std::string& text) {
  if (text == "all-linear" || text == "all_linear") return kLoraAllLinear;
  if (text == "attention") return kLoraAttention;
  uint32_t targets = 0;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    const std::string name = item.size() > 5 && item.compare(item.size() - 5, 5, "_proj") == 0 ? item.substr(0, item.size() - 5) : item;
    if (name == "q") targets |= kLoraQ;
    else if (name == "k") targets |= kLoraK;
    else if (name == "v") targets |= kLoraV;
    else if (name == "o" || name == "output") targets |= kLoraO;  // torchtune output_proj
    else if (name == "gate" || name == "w1") targets |= kLoraGate;
    else if (name == "up" || name == "w3") targets |= kLoraUp;
    else if (name == "down" || name == "w2") targets |= kLoraDown;
    else if (name == "mlp") targets |= kLoraGate | kLoraUp | kLoraDown;
    else return 0;
  }
  return targets;
}

bool has_adapters(const TrainingSpec& training) {
  return training.finetune == FinetuneMethod::kLora || training.finetune == FinetuneMethod::kQlora;
}
bool is_finetune(const TrainingSpec& training) { return training.finetune != FinetuneMethod::kNone; }

DegreeLimits finetune_degree_limits(const TrainingSpec& training) {
  DegreeLimits limits;
  if (!is_finetune(training)) return limits;
  limits.pp = limits.cp = 1;
  if (training.finetune == FinetuneMethod::kQlora) limits.tp = 1;
  return limits;
}

// [SECTION] Stacks: what each fine-tuning stack does by default

namespace {

using R = Recompute;
using O = Optimizer;

FinetuneStackProfile stack_row(FinetuneStack stack, const char* source) {
  FinetuneStackProfile p;
  p.stack = stack;
  p.source = source;
  p.recompute = {R::kNone, R::kNone, R::kFull};
  p.optimizer = {O::kAdamW, O::kAdamW, O::kAdamW};
  return p;
}

// One row per stack, in enum order. Where a stack leaves a setting to the user's script, the row
// keeps meshfit's defaults (TrainingSpec's initialisers) and says so.
const std::vector<FinetuneStackProfile>& stacks() {
  static const std::vector<FinetuneStackProfile> rows = [] {
    std::vector<FinetuneStackProfile> list;
    // Hugging Face transformers TrainingArguments (training_args.py): optim "adamw_torch",
    // gradient_checkpointing False; bf16=True is torch autocast. PEFT get_peft_model
    // autocast_adapter_dtype=True (fp32 adapters, mapping_func.py); prepare_model_for_kbit_training
    // (utils/other.py) upcasts non-4-bit params to fp32 and turns checkpointing on for QLoRA. The
    // model returns its logits (eager loss, logits kept). LoraConfig (tuners/lora/config.py) defaults
    // to r=8, lora_alpha=8, lora_dropout=0.0 and per-model targets (q,v for Llama), but scripts pass
    // their own: the row keeps meshfit's r 16, alpha 32, all-linear (the QLoRA/TRL recipes' choice).
    list.push_back(stack_row(FinetuneStack::kHfPeft,
                             "transformers training_args.py TrainingArguments; PEFT mapping_func.py, utils/other.py"));
    // Accelerate's DeepSpeed plugin as PEFT documents it (PEFT docs/source/accelerate/deepspeed.md,
    // examples/sft/configs/deepspeed_config_z3_qlora.yaml: zero_stage 3; run script passes
    // --gradient_checkpointing True). DeepSpeed's bf16 mode casts the module to bf16 (engine.py).
    FinetuneStackProfile ds = stack_row(FinetuneStack::kHfPeftDeepSpeed,
                                        "PEFT docs accelerate/deepspeed.md, examples/sft/configs/deepspeed_config_z3_qlora.yaml");
    ds.framework = Framework::kDeepSpeed;
    ds.zero_one_gpu = ds.zero_many_gpus = 3;
    ds.recompute = {R::kFull, R::kFull, R::kFull};
    list.push_back(ds);
    // Accelerate's FSDP plugin (PEFT docs/source/accelerate/fsdp.md, examples/sft/configs/
    // fsdp_config_qlora.yaml: FULL_SHARD, --gradient_checkpointing True). QLoRA under FSDP stores the
    // 4-bit weights as bf16 (bnb_4bit_quant_storage) and TRL skips prepare_model_for_kbit_training,
    // so embedding, head and norms stay bf16 (FINETUNE_NOTES §2.2).
    FinetuneStackProfile fsdp = stack_row(FinetuneStack::kHfPeftFsdp,
                                          "PEFT docs accelerate/fsdp.md, examples/sft/configs/fsdp_config_qlora.yaml");
    fsdp.zero_one_gpu = fsdp.zero_many_gpus = 3;
    fsdp.recompute = {R::kFull, R::kFull, R::kFull};
    fsdp.kbit_upcast = false;
    list.push_back(fsdp);
    // torchtune recipes/configs/llama3_1/8B_lora_single_device.yaml, 8B_qlora_single_device.yaml,
    // 8B_full_single_device.yaml and 8B_lora.yaml / 8B_full.yaml (distributed, FSDP2 fully_shard):
    // dtype bf16 (model and adapters cast to bf16, no AMP), enable_activation_checkpointing True,
    // torch.optim.AdamW fused, loss LinearCrossEntropyLoss (8 chunks; FRAMEWORK_NOTES §4.5),
    // lora_attn_modules [q_proj, v_proj, output_proj] + apply_lora_to_mlp True, lora_rank 8,
    // lora_alpha 16, lora_dropout 0.0; QLoRA is torchao NF4 with no fp32 upcast; full fine-tuning on
    // one device uses bitsandbytes PagedAdamW8bit with optimizer_in_bwd True (FRAMEWORK_NOTES §4.3).
    FinetuneStackProfile tt = stack_row(FinetuneStack::kTorchtune,
                                        "torchtune recipes/configs/llama3_1/8B_{lora,qlora,full}_single_device.yaml, 8B_lora.yaml, 8B_full.yaml");
    tt.zero_many_gpus = 3;
    tt.precision = Precision::kPureBf16;
    tt.adapter_dtype = AdapterDtype::kBf16;
    tt.kbit_upcast = false;
    tt.loss = LossKind::kChunked;
    tt.recompute = {R::kFull, R::kFull, R::kFull};
    tt.full_one_gpu_optimizer = O::kPagedAdam8bit;
    tt.full_one_gpu_optimizer_in_backward = true;
    tt.lora_rank = 8;
    tt.lora_alpha = 16;
    tt.lora_targets = "q,v,o,gate,up,down";
    tt.offloads_activations = true;  // training/_activation_offloading.py
    tt.fused_linear_loss = false;    // its losses: CrossEntropyLoss, LinearCrossEntropyLoss (chunked)
    list.push_back(tt);
    // LitGPT litgpt/finetune/lora.py setup() defaults: lora_r 8, lora_alpha 16, lora_dropout 0.05,
    // lora_query and lora_value only; config_hub/finetune/*/lora.yaml set precision bf16-true (pure
    // bf16, adapters included); no activation checkpointing in the LoRA recipe; QLoRA via
    // --quantize bnb.nf4-dq keeps the rest in bf16. Its loss (utils.py chunked_cross_entropy over
    // 128-token lm_head chunks) keeps every bf16 logit chunk and its bf16 log-probs (loss bf16_chunked).
    FinetuneStackProfile lit = stack_row(FinetuneStack::kLitgpt,
                                         "LitGPT litgpt/finetune/lora.py setup(), config_hub/finetune/llama-3.1-8b/lora.yaml");
    lit.zero_many_gpus = 3;  // Fabric FSDPStrategy on more than one device
    lit.precision = Precision::kPureBf16;
    lit.adapter_dtype = AdapterDtype::kBf16;
    lit.kbit_upcast = false;
    lit.recompute = {R::kNone, R::kNone, R::kNone};
    lit.lora_rank = 8;
    lit.lora_alpha = 16;
    lit.lora_targets = "q,v";
    lit.lora_dropout = 0.05;
    lit.loss = LossKind::kBf16Chunked;
    lit.fused_linear_loss = false;
    list.push_back(lit);
    // Axolotl examples/llama-3/qlora.yml and lora-8b.yml: lora_r 32, lora_alpha 16, lora_dropout
    // 0.05, lora_target_linear true, gradient_checkpointing true, bf16 auto (HF Trainer AMP, PEFT
    // fp32 adapters), optimizer paged_adamw_32bit (QLoRA) / adamw_bnb_8bit (LoRA). Whether axolotl's
    // model loader skips the kbit fp32 upcast was not checked: PEFT's default is kept.
    FinetuneStackProfile ax = stack_row(FinetuneStack::kAxolotl, "axolotl examples/llama-3/qlora.yml, lora-8b.yml");
    ax.recompute = {R::kFull, R::kFull, R::kFull};
    ax.optimizer = {O::kAdamW, O::kAdam8bit, O::kPagedAdamW};
    ax.lora_rank = 32;
    ax.lora_alpha = 16;
    ax.lora_dropout = 0.05;
    ax.offloads_activations = true;  // activation_offloading (a port of torchtune's)
    list.push_back(ax);
    return list;
  }();
  return rows;
}

size_t method_index(FinetuneMethod method) {
  return method == FinetuneMethod::kQlora ? 2 : method == FinetuneMethod::kLora ? 1 : 0;
}

}  // namespace

const FinetuneStackProfile& finetune_stack_profile(FinetuneStack stack) {
  const std::vector<FinetuneStackProfile>& rows = stacks();
  MESHFIT_ASSERT(rows.size() == enum_count<FinetuneStack>(), "one stack profile per FinetuneStack, in enum order");
  return rows[size_t(stack)];
}

FinetuneDefaults finetune_defaults(const Config& config, bool framework_given) {
  const TrainingSpec& t = config.training;
  const FinetuneStackProfile& stack = finetune_stack_profile(t.stack);
  const size_t method = method_index(t.finetune);
  const bool one_gpu = config.cluster.gpus <= 1;
  FinetuneDefaults d;
  d.framework = framework_given ? t.framework : stack.framework;
  // A framework named in the config that is the stack's own keeps the stack's stage (HF Trainer's DDP
  // at zero 0): an as-a-user review saw framework=fsdp, the value already shown, move a LoRA run
  // from zero 0 to 3. Another framework takes its own default stage.
  d.zero = framework_given && d.framework != stack.framework ? framework_profile(d.framework).default_zero
           : one_gpu                                          ? stack.zero_one_gpu
                                                              : stack.zero_many_gpus;
  // One sequence per data-parallel rank per step. QLoRA's 4-bit layers have no tensor-parallel form
  // (validate.cpp), so its ranks are data-parallel whatever tp a pretraining config carried: the batch
  // of the layout it can run, not of one it cannot (tp 8 on 8 GPUs gave 1, which tp 1 cannot divide).
  Config runs = config;
  if (t.finetune == FinetuneMethod::kQlora && runs.layout.dp == 0) runs.layout.tp = 1;
  d.global_batch = t.micro_batch * std::max<int64_t>(1, effective_dp(runs));
  d.recompute = stack.recompute[method];
  // Megatron-LM fine-tunes (Megatron-Bridge/NeMo PEFT) compute the loss vocab-parallel, as Methods'
  // TP rows do; the stack's loss is its own model code's (a review could not reproduce a Methods TP row
  // with estimate: the HF stack's kept logits came with --framework megatron, 1.25 GiB more).
  d.loss = d.framework == Framework::kMegatron ? LossKind::kAuto : stack.loss;
  d.precision = stack.precision;
  const bool full_one_gpu = t.finetune == FinetuneMethod::kFull && one_gpu;
  d.optimizer = full_one_gpu ? stack.full_one_gpu_optimizer : stack.optimizer[method];
  d.optimizer_in_backward = full_one_gpu && stack.full_one_gpu_optimizer_in_backward;
  d.adapter_dtype = stack.adapter_dtype;
  d.kbit_upcast = stack.kbit_upcast;
  d.lora_rank = stack.lora_rank;
  d.lora_alpha = stack.lora_alpha;
  d.lora_targets = stack.lora_targets;
  d.lora_dropout = stack.lora_dropout;
  return d;
}

const std::vector<const char*>& finetune_default_keys() {
  static const std::vector<const char*> keys = {"framework", "zero", "global_batch", "recompute", "loss", "allocator",
                                                "precision", "optimizer", "optimizer_in_backward", "adapter_dtype",
                                                "kbit_upcast", "lora_rank", "lora_alpha", "lora_targets", "lora_dropout"};
  return keys;
}

bool stack_optimizer_in_backward(const Config& config, bool stack_default) {
  return stack_default && num_microbatches(config) <= 1;
}

Config with_finetune_defaults(const Config& config, const FinetuneDefaults& d) {
  Config c = config;
  TrainingSpec& t = c.training;
  t.framework = d.framework;
  c.layout.zero = d.zero;
  t.global_batch = d.global_batch;
  t.recompute = d.recompute;
  t.loss = d.loss;
  t.allocator = d.allocator;
  t.precision = d.precision;
  t.optimizer = d.optimizer;
  t.optimizer_in_backward = d.optimizer_in_backward;
  t.adapter_dtype = d.adapter_dtype;
  t.kbit_upcast = d.kbit_upcast;
  t.lora_rank = d.lora_rank;
  t.lora_alpha = d.lora_alpha;
  t.lora_targets = d.lora_targets;
  t.lora_dropout = d.lora_dropout;
  return c;
}

namespace {

struct Projection {
  LoraTarget target;
  double in, out;  // on one TP rank (column-parallel: out/tp; row-parallel: in/tp)
};

// The projections of one block (GeLU MLPs have no gate: up = fc1, down = fc2).
std::vector<Projection> projections(const ModelSpec& model, int64_t tp) {
  const double h = double(model.hidden), f = double(model.ffn), t = double(tp);
  const double q = query_width(model), kv = kv_width(model);  // a*d and k*d (model_spec.h)
  std::vector<Projection> list = {{kLoraQ, h, q / t}, {kLoraK, h, kv / t}, {kLoraV, h, kv / t}, {kLoraO, q / t, h},
                                  {kLoraUp, h, f / t}, {kLoraDown, f / t, h}};
  if (model.mlp == MlpKind::kSwiGlu) list.push_back({kLoraGate, h, f / t});
  return list;
}

}  // namespace

LayerFinetuneParameters layer_finetune_parameters(const ModelSpec& model, const TrainingSpec& training, int64_t tp) {
  LayerFinetuneParameters p;
  const uint32_t targets = has_adapters(training) ? parse_lora_targets(training.lora_targets) : 0;
  for (const Projection& proj : projections(model, tp)) {
    p.linear += proj.in * proj.out;
    p.largest_linear = std::max(p.largest_linear, proj.in * proj.out);
    // PEFT LoraLayer.update_layer: lora_A (r x in) and lora_B (out x r). Under TP the adapter of a
    // column-parallel layer shards B, of a row-parallel one A; the other factor is counted split too.
    if (targets & proj.target) p.adapters += double(training.lora_rank) * (proj.in + proj.out);
    // DoRA (PEFT tuners/lora/dora.py DoraLinearLayer): one trained magnitude per output.
    if ((targets & proj.target) && training.dora) p.adapters += proj.out;
  }
  p.other = layer_parameters_on_tp_rank(model, tp) - p.linear;  // norms (+ biases)
  return p;
}

// [SECTION] Model states

// bf16 as loaded (torch_dtype=bfloat16); a LoRA base loaded in fp32 stays fp32 under FSDP mixed
// precision (sharded fp32, gathered bf16) while DeepSpeed's bf16 mode casts the module to bf16
// (engine.py _configure_distributed_model); QLoRA's is fp32 after prepare_model_for_kbit_training
// (PEFT utils/other.py) unless skipped.
double base_unquantized_bytes(const TrainingSpec& training) {
  if (training.finetune == FinetuneMethod::kQlora) return training.kbit_upcast ? 4.0 : 2.0;
  const bool fp32_base = training.base_dtype == AdapterDtype::kFp32 && !framework_profile(training.framework).casts_base_to_bf16;
  return fp32_base ? 4.0 : 2.0;
}

double trained_module_parameters(const TrainingSpec& training, const MemoryPlan& plan, const StageShape& shape) {
  if (!has_adapters(training)) return 0;
  return (training.embedding_trained && shape.placement.has_embedding ? plan.vocab_parameters : 0.0) +
         (training.lm_head_trained && shape.placement.has_lm_head ? plan.vocab_parameters : 0.0);
}

// (~85 lines: pretraining, full fine-tuning, LoRA and QLoRA states side by side, so that each
// method's bytes per parameter read against the others'; FINETUNE_NOTES sections in order.)
StageStateBytes stage_state_bytes(const Config& config, const MemoryPlan& plan, const StageShape& shape) {
  const TrainingSpec& training = config.training;
  const ModelStateRule rule = model_state_rule(training.framework, config.layout.zero, training.fp32_grad_buffer, training.precision);
  const double shard = double(plan.optimizer_shard_ranks);
  const auto per_param = [shard](double bytes, bool sharded) { return sharded ? bytes / shard : bytes; };
  const bool grads_sharded = rule.grad_fp32_bytes > 0 ? rule.grads_fp32_sharded : rule.grads_sharded;
  const double layers = double(shape.placement.layers);
  StageStateBytes s;
  double moments = 0;                    // optimizer moments of the trainable parameters (paged: all of them)
  double largest_gradient_bytes = 0;     // the largest trainable tensor's gradient (optimizer in backward)

  if (!has_adapters(training)) {
    // Pretraining and full fine-tuning: every parameter is trained (memory_model.cpp's rule).
    s.trainable_parameters = shape.parameters;
    s.weights = shape.parameters * plan.weight_bytes_per_param;
    s.gradients = shape.parameters * plan.grad_bytes_per_param;
    s.optimizer = shape.parameters * plan.optimizer_bytes_per_param;
    s.output_section_bytes = shape.lm_head_parameters *
                             (plan.weight_bytes_per_param + plan.grad_bytes_per_param + plan.optimizer_bytes_per_param);
    moments = s.trainable_parameters *
              per_param(optimizer_moment_bytes(training.optimizer, training.precision), rule.moments_sharded);
    const ModelSpec& m = config.model;
    const double widest = std::max({double(m.ffn), double(m.hidden), query_width(m)});  // Wq/Wo: h x a*d
    largest_gradient_bytes = plan.grad_bytes_per_param * std::max({double(m.hidden) * widest / double(config.layout.tp),
                                                                   shape.embedding_parameters, shape.lm_head_parameters});
  } else {
    const LayerFinetuneParameters layer = layer_finetune_parameters(config.model, training, config.layout.tp);
    const bool qlora = training.finetune == FinetuneMethod::kQlora;
    // Frozen base. LoRA: the model as loaded, bf16 (torch_dtype=bfloat16). QLoRA: block linears in
    // NF4 (0.516 B with double quant); embedding, head, norms and biases kept in the load dtype,
    // then cast to fp32 by prepare_model_for_kbit_training (PEFT utils/other.py) unless skipped.
    const double edge = shape.embedding_parameters + shape.lm_head_parameters;
    const double quantized = qlora ? layers * layer.linear : 0.0;
    const double unquantized = layers * (qlora ? layer.other : layer.linear + layer.other) + edge;
    const double nf4 = training.double_quant ? kNf4BytesPerParam : kNf4NoDoubleQuantBytesPerParam;
    const double unquantized_bytes = base_unquantized_bytes(training);
    s.frozen_parameters = quantized + unquantized;
    s.quantized_parameters = quantized;
    s.weights = per_param(quantized * nf4 + unquantized * unquantized_bytes, rule.weights_sharded);
    s.output_section_bytes = per_param(shape.lm_head_parameters * unquantized_bytes, rule.weights_sharded);
    // QLoRA forward and backward dequantise one projection to bf16 at a time (MatMul4Bit:
    // dequantize_4bit(B).to(A.dtype)): 2 * in * out bytes, transient.
    if (qlora && layers > 0) s.transient_bytes = 2.0 * layer.largest_linear;
    // Trainable adapters: fp32 under PEFT's autocast_adapter_dtype (mapping_func.py), or bf16.
    // torch.optim keeps moments in the parameter dtype (adam.py zeros_like); the adapter is its own
    // master copy, so there is no separate fp32 master.
    const double adapter_param_bytes = training.adapter_dtype == AdapterDtype::kFp32 ? 4.0 : 2.0;
    const Precision moment_precision = training.adapter_dtype == AdapterDtype::kFp32 ? Precision::kBf16 : Precision::kPureBf16;
    const double adapters = layers * layer.adapters;
    s.weights += per_param(adapters * adapter_param_bytes, rule.weights_sharded);
    const double adapter_grad_bytes = per_param(adapter_param_bytes, grads_sharded);
    s.gradients = adapters * adapter_grad_bytes;
    moments = adapters * per_param(optimizer_moment_bytes(training.optimizer, moment_precision), rule.moments_sharded);
    s.optimizer = moments;
    const ModelSpec& m = config.model;
    largest_gradient_bytes =
        adapter_grad_bytes * double(training.lora_rank) * std::max({double(m.ffn), double(m.hidden), query_width(m)});
    // PEFT modules_to_save (utils/other.py ModulesToSaveWrapper.update: copy.deepcopy(original_module),
    // requires_grad on the copy; FINETUNE_NOTES §1.1): the original stays frozen (counted above) and a
    // trainable copy of the embedding or head is added in the width it was loaded in, trained as
    // torch.optim trains it (its own master, moments in its dtype). A framework that casts the
    // model to bf16 and steps an fp32 master in its optimizer (DeepSpeed) keeps it as full training
    // keeps a parameter (the plan's bytes per parameter).
    const double copies = trained_module_parameters(training, plan, shape);
    s.trained_module_parameters = copies;
    if (copies > 0) {
      const bool framework_master = framework_profile(training.framework).casts_base_to_bf16;
      const double copy_weight = framework_master ? plan.weight_bytes_per_param : per_param(unquantized_bytes, rule.weights_sharded);
      const double copy_grad = framework_master ? plan.grad_bytes_per_param : per_param(unquantized_bytes, grads_sharded);
      const double copy_moments = per_param(
          optimizer_moment_bytes(training.optimizer,
                                 unquantized_bytes == 4.0 || framework_master ? Precision::kBf16 : Precision::kPureBf16),
          rule.moments_sharded);
      const double copy_optimizer = framework_master ? plan.optimizer_bytes_per_param : copy_moments;
      s.weights += copies * copy_weight;
      s.gradients += copies * copy_grad;
      s.optimizer += copies * copy_optimizer;
      moments += copies * copy_moments;
      largest_gradient_bytes = std::max(largest_gradient_bytes, plan.vocab_parameters * copy_grad);
      if (training.lm_head_trained && shape.placement.has_lm_head)
        s.output_section_bytes += plan.vocab_parameters * (copy_weight + copy_grad + copy_optimizer);
    }
    s.trainable_parameters = adapters + copies;
  }

  // bitsandbytes paged optimizers allocate their states (tensors of >= 1e5 elements) with
  // cudaMallocManaged (optim/optimizer.py get_state_buffer, is_paged): outside PyTorch's
  // allocator, so in nvidia-smi only (FINETUNE_NOTES §2.3, FRAMEWORK_NOTES §4.2).
  if (pages_optimizer_states(training.optimizer)) {
    s.paged_optimizer = moments;
    s.optimizer -= moments;
  }
  // torchtune optimizer_in_bwd (training/memory.py register_optim_in_bwd_hooks): each parameter is
  // stepped in its post-accumulate-grad hook and its gradient freed, so one tensor's gradient lives
  // at a time instead of the gradient buffer.
  if (training.optimizer_in_backward) s.gradients = std::min(s.gradients, largest_gradient_bytes);
  // DeepSpeed ZeRO++ hpZ (Layout::hpz_partition_size): after each forward gather ZeRO-3 keeps a
  // second partition of the 16-bit weights over the hpZ group, allocated once and kept
  // (partition_parameters.py _partition_param_sec: ds_secondary_tensor of numel / group size in
  // the parameter's dtype, on the parameters' device), and the backward gathers from it. The same
  // bytes as the primary partition, split over hpz_partition_size ranks instead of the shard group.
  if (config.layout.hpz_partition_size > 1 && rule.weights_sharded) {
    s.hpz_secondary = s.weights * shard / double(config.layout.hpz_partition_size);
    s.weights += s.hpz_secondary;
  }
  // Offload (DeepSpeed ZeRO-Offload offload_optimizer, stage_1_and_2.py / stage3.py: fp32 master,
  // moments and the fp32 gradient partition live on the CPU and the step runs there; FSDP
  // CPUOffload(offload_params=True): sharded params and their gradients on the CPU). The GPU keeps
  // the 16-bit copies it computes with, which ZeRO-3/FSDP gather per unit (comm buffers).
  // ZeRO-1 keeps every 16-bit gradient on every rank: the engine accumulates the micro-batches in
  // param.grad and reduces them into the (offloaded) fp32 partition only at the step
  // (stage_1_and_2.py, partition_gradients False), so those stay on the GPU. Megatron-LM's
  // --optimizer-cpu-offload keeps its unsharded fp32 main-grad buffer (memory_model.cpp's profile).
  // In general: the gradients a stage keeps whole stay; sharded ones go with the optimizer.
  if (training.offload != Offload::kNone) {
    const double kept_bytes = (rule.grads_sharded ? 0.0 : rule.grad_bytes) + (rule.grads_fp32_sharded ? 0.0 : rule.grad_fp32_bytes);
    const double kept_gradients = has_adapters(training) ? 0.0 : std::min(s.gradients, shape.parameters * kept_bytes);
    s.host += s.optimizer + s.paged_optimizer + s.gradients - kept_gradients;
    s.optimizer = s.paged_optimizer = 0;
    s.gradients = kept_gradients;
    if (training.offload == Offload::kParams) {
      s.host += s.weights;  // hpZ's second partition too (it lives on the parameters' remote device)
      s.weights = s.hpz_secondary = 0;
    }
  }
  return s;
}

// [SECTION] Work per layer (throughput)

FinetuneWork finetune_work(const Config& config, double tokens) {
  FinetuneWork w;
  const TrainingSpec& training = config.training;
  if (!has_adapters(training)) return w;
  // Frozen weights get no weight gradient: backward runs only the activation-gradient GEMM (dX = dY W),
  // half of a trained linear's backward (FINETUNE_NOTES §1.2; the 6N rule's 4N backward = 2N + 2N).
  w.weight_grad_fraction = 0;
  const LayerFinetuneParameters layer = layer_finetune_parameters(config.model, training, config.layout.tp);
  const uint32_t targets = parse_lora_targets(training.lora_targets);
  const bool fp32_cast = training.adapter_dtype == AdapterDtype::kFp32;
  for (const Projection& proj : projections(config.model, config.layout.tp)) {
    if (!(targets & proj.target)) continue;
    const double r = double(training.lora_rank);
    w.adapter_flops_fwd += 2.0 * tokens * r * (proj.in + proj.out);
    // Read x (bf16; fp32 adapters: read it, write and re-read an fp32 copy), write B's fp32 output,
    // read it and the base output for the add, write the sum (PEFT Linear.forward).
    w.adapter_bytes_fwd += tokens * (proj.in * (fp32_cast ? 2.0 + 4.0 + 4.0 : 2.0) + proj.out * (4.0 + 4.0 + 2.0 + 2.0));
    if (training.dora) {
      // DoRA each forward (PEFT dora.py DoraLinearLayer.forward): B A applied to an in x in identity
      // (lora_weight), W + scaling * lora_weight and its row norms (fp32 passes over out x in), then
      // the two scaled products and their sum over the module's output.
      w.dora_norm_flops += 2.0 * proj.in * r * (proj.in + proj.out);
      w.dora_norm_bytes += proj.in * proj.out * (2.0 + 4.0 + 4.0 + 4.0);
      w.adapter_bytes_fwd += tokens * proj.out * (2.0 + 4.0 + 3.0 * 4.0);
    }
  }
  if (training.finetune == FinetuneMethod::kQlora) {
    const double nf4 = training.double_quant ? kNf4BytesPerParam : kNf4NoDoubleQuantBytesPerParam;
    w.dequant_bytes = layer.linear * (nf4 + 2.0);  // bitsandbytes dequantize_4bit per GEMM call
  }
  const double all = layer.linear + layer.other;
  w.trainable_fraction = all > 0 ? layer.adapters / all : 0;
  return w;
}

// [SECTION] Activations of a frozen base

double lora_activation_delta_bytes(const ModelSpec& model, const TrainingSpec& training, double tokens, int64_t tp,
                                   bool autocast) {
  if (!has_adapters(training)) return 0;
  const uint32_t targets = parse_lora_targets(training.lora_targets);
  const double h = double(model.hidden), f = double(model.ffn), t = double(tp);
  const double adapter_bytes = training.adapter_dtype == AdapterDtype::kFp32 ? 4.0 : 2.0;
  // With fp32 adapters and no autocast (pure bf16), Linear.forward casts x to the adapter dtype
  // (tuners_utils _cast_input_dtype) before lora_A, which then saves that fp32 copy: 4 * in per
  // token per adapted module; the bf16 input itself is then saved by nobody (FINETUNE_NOTES §1.2,
  // a derivation, not measured).
  const bool fp32_input_copy = training.adapter_dtype == AdapterDtype::kFp32 && training.precision == Precision::kPureBf16;
  // Under autocast (precision bf16, HF Trainer bf16=True) the same cast makes an fp32 copy, and
  // lora_A's F.linear casts it back to a new bf16 tensor (autocast caches only the casts of leaf
  // weights that need a gradient) and saves that: 2 * in per token per adapted module, each its own,
  // and again nobody saves the shared bf16 input. Derived by an as-a-user review from PEFT
  // tuners/lora/layer.py Linear.forward (_cast_input_dtype) and torch autocast's cached_cast; not
  // measured here (the tests/gpu LoRA rows are pure bf16). bitsandbytes' LoRA layers skip the cast
  // under autocast (peft tuners/lora/bnb.py: requires_conversion = not is_autocast_enabled()).
  const bool autocast_input_copy = autocast && training.adapter_dtype == AdapterDtype::kFp32 &&
                                   training.precision == Precision::kBf16 && training.finetune == FinetuneMethod::kLora;
  // A frozen linear needs only its weight to pass the gradient on, so autograd saves its input only
  // when the weight needs a gradient (FINETUNE_NOTES §1.2, a derivation). The four linear inputs
  // of a block that full training saves (activation_memory.cpp) are therefore kept only when an
  // adapter consumes them uncast: the attention norm output (q, k, v), the attention output (o),
  // the MLP norm output (gate, up) and the MLP activation product (down).
  struct InputGroup {
    uint32_t consumers;
    double width;  // elements per token on one TP rank
  };
  const InputGroup groups[] = {{kLoraQ | kLoraK | kLoraV, h / t},
                               {kLoraO, query_width(model) / t},  // attention output, a*d wide
                               {kLoraGate | kLoraUp, h / t},
                               {kLoraDown, f / t}};
  // With lora_dropout > 0 each adapter has its own nn.Dropout before lora_A (PEFT tuners/lora/layer.py
  // LoraLayer.update_layer): lora_A saves the dropped copy instead of x, and the dropout saves its
  // bool mask (1 B per element): (copy + 1) * in per token per adapted module, q, k and v each
  // their own (FINETUNE_NOTES §1.2). With the default 0.0 it is nn.Identity and saves nothing.
  const bool dropout = training.lora_dropout > 0;
  // The attention output, o_proj's input, is also what a fused SDPA kernel (flash, efficient, cuDNN)
  // saves for its own backward (activation_memory.h: the transpose-contiguous is a view there), so it
  // stays whatever the adapters do; only the math backend's is freed. Measured: the tests/gpu LoRA
  // rows without checkpointing (pure bf16, fp32 adapters, flash) were low by this term to within
  // 0.03 GiB (lora-8b-s2048 -0.47 GiB against 0.50, lora-1b-s4096-mb4 -0.88 against 1.00; a review).
  const auto kept_by_attention = [&](const InputGroup& group) { return group.consumers == kLoraO && training.flash; };
  double delta = 0;
  for (const InputGroup& group : groups)
    if ((!(targets & group.consumers) || fp32_input_copy || autocast_input_copy || dropout) && !kept_by_attention(group))
      delta -= 2.0 * tokens * group.width;
  // Each adapted module: lora_B saves lora_A's output (r wide, adapter dtype), plus the fp32 copy
  // or the dropped copy and its mask.
  const double input_copy_bytes = fp32_input_copy ? 4.0 : 2.0;
  // DoRA (PEFT tuners/lora/dora.py DoraLinearLayer.forward): result = (m/||W+sBA|| - 1) * base_result
  // + m/||W+sBA|| * lora_result * s, with the norm detached but the magnitude m trained, so each
  // product saves its tensor operand: the base layer's output (bf16) and lora_B's output (the adapter
  // dtype; bf16 under autocast), out wide per token per adapted module. Checked against PEFT's
  // MetaMathQA results (Llama-3.2-3B q,v r32, 3072 tokens, 28 layers, fp32 adapters, pure bf16):
  // rank32-dora 22.85 against rank32 20.76 GiB, +2.09; this term 6 B x 3072 x 4096 x 28 = 1.97 GiB.
  const double dora_bytes = training.dora ? 2.0 + (autocast ? 2.0 : adapter_bytes) : 0.0;
  for (const Projection& proj : projections(model, tp)) {
    if (!(targets & proj.target)) continue;
    delta += adapter_bytes * tokens * double(training.lora_rank);
    delta += dora_bytes * tokens * proj.out;
    if (dropout) delta += (input_copy_bytes + 1.0) * tokens * proj.in;
    else if (fp32_input_copy) delta += 4.0 * tokens * proj.in;
    else if (autocast_input_copy) delta += 2.0 * tokens * proj.in;
  }
  return delta;
}

}  // namespace meshfit
