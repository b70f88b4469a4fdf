// finetune.cpp — see finetune.h. Sources: ../shared/reference/FINETUNE_NOTES.md §1-4 (PEFT
// tuners/lora/layer.py, mapping_func.py, utils/other.py prepare_model_for_kbit_training;
// bitsandbytes functional.py quantize_4bit, autograd/_functions.py MatMul4Bit, optim/*.py),
// FRAMEWORK_NOTES.md §3 (DeepSpeed offload) and §4 (optimizers, paged memory).
#include "memory/finetune.h"

#include "spec/config.h"

#include <algorithm>
#include <sstream>

#include "memory/memory_model.h"

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

FinetuneDefaults finetune_defaults(const Config& config, bool framework_given) {
  FinetuneDefaults d;
  d.framework = framework_given ? config.training.framework : Framework::kFsdp;
  d.zero = framework_given ? framework_profile(d.framework).default_zero : 0;
  d.global_batch = config.training.micro_batch * std::max<int64_t>(1, effective_dp(config));
  d.recompute = config.training.finetune == FinetuneMethod::kQlora ? Recompute::kFull : Recompute::kNone;
  return d;
}

namespace {

struct Projection {
  LoraTarget target;
  double in, out;  // on one TP rank (column-parallel: out/tp; row-parallel: in/tp)
};

// The projections of one block (GeLU MLPs have no gate: up = fc1, down = fc2).
std::vector<Projection> projections(const ModelSpec& model, int64_t tp) {
  const double h = double(model.hidden), f = double(model.ffn), t = double(tp);
  const double kv = h / double(model.heads) * double(model.kv_heads);
  std::vector<Projection> list = {{kLoraQ, h, h / t}, {kLoraK, h, kv / t}, {kLoraV, h, kv / t}, {kLoraO, h / t, h},
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
  }
  p.other = layer_parameters_on_tp_rank(model, tp) - p.linear;  // norms (+ biases)
  return p;
}

// [SECTION] Model states

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
  double moment_bytes_per_trainable = 0, grad_bytes_per_trainable = 0, largest_trainable_tensor = 0;

  if (!has_adapters(training)) {
    // Pretraining and full fine-tuning: every parameter is trained (memory_model.cpp's rule).
    s.trainable_parameters = shape.parameters;
    s.weights = shape.parameters * plan.weight_bytes_per_param;
    s.gradients = shape.parameters * plan.grad_bytes_per_param;
    s.optimizer = shape.parameters * plan.optimizer_bytes_per_param;
    s.output_section_bytes = shape.lm_head_parameters *
                             (plan.weight_bytes_per_param + plan.grad_bytes_per_param + plan.optimizer_bytes_per_param);
    grad_bytes_per_trainable = plan.grad_bytes_per_param;
    moment_bytes_per_trainable = per_param(optimizer_moment_bytes(training.optimizer, training.precision), rule.moments_sharded);
    const ModelSpec& m = config.model;
    largest_trainable_tensor = std::max({double(m.hidden) * double(std::max(m.ffn, m.hidden)) / double(config.layout.tp),
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
    // A LoRA base loaded in fp32 stays fp32 under FSDP mixed precision (sharded fp32, gathered
    // bf16); DeepSpeed's bf16 mode casts the module to bf16 (engine.py _configure_distributed_model).
    const bool fp32_base = training.base_dtype == AdapterDtype::kFp32 &&
                           !framework_profile(training.framework).casts_base_to_bf16;
    const double unquantized_bytes = (qlora && training.kbit_upcast) || (!qlora && fp32_base) ? 4.0 : 2.0;
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
    s.trainable_parameters = layers * layer.adapters;
    s.weights += per_param(s.trainable_parameters * adapter_param_bytes, rule.weights_sharded);
    grad_bytes_per_trainable = per_param(adapter_param_bytes, grads_sharded);
    s.gradients = s.trainable_parameters * grad_bytes_per_trainable;
    moment_bytes_per_trainable = per_param(optimizer_moment_bytes(training.optimizer, moment_precision), rule.moments_sharded);
    s.optimizer = s.trainable_parameters * moment_bytes_per_trainable;
    largest_trainable_tensor = double(training.lora_rank) * double(std::max(config.model.ffn, config.model.hidden));
  }

  // bitsandbytes paged optimizers allocate their states (tensors of >= 1e5 elements) with
  // cudaMallocManaged (optim/optimizer.py get_state_buffer, is_paged): outside PyTorch's
  // allocator, so in nvidia-smi only (FINETUNE_NOTES §2.3, FRAMEWORK_NOTES §4.2).
  if (training.optimizer == Optimizer::kPagedAdamW || training.optimizer == Optimizer::kPagedAdam8bit) {
    const double moments = s.trainable_parameters * moment_bytes_per_trainable;
    s.paged_optimizer = moments;
    s.optimizer -= moments;
  }
  // torchtune optimizer_in_bwd (training/memory.py register_optim_in_bwd_hooks): each parameter is
  // stepped in its post-accumulate-grad hook and its gradient freed, so one tensor's gradient lives
  // at a time instead of the gradient buffer.
  if (training.optimizer_in_backward)
    s.gradients = std::min(s.gradients, largest_trainable_tensor * grad_bytes_per_trainable);
  // Offload (DeepSpeed ZeRO-Offload offload_optimizer, stage_1_and_2.py / stage3.py: fp32 master,
  // moments and the fp32 gradient partition live on the CPU and the step runs there; FSDP
  // CPUOffload(offload_params=True): sharded params and their gradients on the CPU). The GPU keeps
  // the 16-bit copies it computes with, which ZeRO-3/FSDP gather per unit (comm buffers).
  if (training.offload != Offload::kNone) {
    s.host += s.optimizer + s.paged_optimizer + s.gradients;
    s.optimizer = s.paged_optimizer = s.gradients = 0;
    if (training.offload == Offload::kParams) {
      s.host += s.weights;
      s.weights = 0;
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

double lora_activation_delta_bytes(const ModelSpec& model, const TrainingSpec& training, double tokens, int64_t tp) {
  if (!has_adapters(training)) return 0;
  const uint32_t targets = parse_lora_targets(training.lora_targets);
  const double h = double(model.hidden), f = double(model.ffn), t = double(tp);
  const double adapter_bytes = training.adapter_dtype == AdapterDtype::kFp32 ? 4.0 : 2.0;
  // With fp32 adapters and no autocast (pure bf16), Linear.forward casts x to the adapter dtype
  // (tuners_utils _cast_input_dtype) before lora_A, which then saves that fp32 copy: 4 * in per
  // token per adapted module; the bf16 input itself is then saved by nobody (FINETUNE_NOTES §1.2,
  // a derivation, not measured).
  const bool fp32_input_copy = training.adapter_dtype == AdapterDtype::kFp32 && training.precision == Precision::kPureBf16;
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
                               {kLoraO, h / t},
                               {kLoraGate | kLoraUp, h / t},
                               {kLoraDown, f / t}};
  double delta = 0;
  for (const InputGroup& group : groups)
    if (!(targets & group.consumers) || fp32_input_copy) delta -= 2.0 * tokens * group.width;
  // Each adapted module: lora_B saves lora_A's output (r wide, adapter dtype), plus the fp32 copy.
  for (const Projection& proj : projections(model, tp)) {
    if (!(targets & proj.target)) continue;
    delta += adapter_bytes * tokens * double(training.lora_rank);
    if (fp32_input_copy) delta += 4.0 * tokens * proj.in;
  }
  return delta;
}

}  // namespace meshfit
