// finetune.h — fine-tuning: full, LoRA and QLoRA model states, the activations frozen layers still
// keep, 4-bit base weights, paged/8-bit optimizers, optimizer-in-backward and CPU offload.
// Main reference: ../shared/reference/FINETUNE_NOTES.md (HF PEFT, bitsandbytes, torchtune) and
// FRAMEWORK_NOTES.md §3-4; each formula in finetune.cpp cites its source file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "spec/config.h"

namespace meshfit {

struct MemoryPlan;
struct StageShape;

// LoRA target modules as a bit set (PEFT LoraConfig.target_modules of a Llama block).
enum LoraTarget : uint32_t {
  kLoraQ = 1u << 0, kLoraK = 1u << 1, kLoraV = 1u << 2, kLoraO = 1u << 3,
  kLoraGate = 1u << 4, kLoraUp = 1u << 5, kLoraDown = 1u << 6,
  kLoraAttention = kLoraQ | kLoraK | kLoraV | kLoraO,
  kLoraAllLinear = kLoraAttention | kLoraGate | kLoraUp | kLoraDown,  // PEFT "all-linear" (lm_head excluded)
};
// "all-linear" | "attention" | a comma list of q,k,v,o,gate,up,down (also q_proj, ..., down_proj,
// and torchtune's output_proj). 0 = not understood.
uint32_t parse_lora_targets(const std::string& text);
bool is_finetune(const TrainingSpec& training);    // any fine-tuning method (finetune != none)
bool has_adapters(const TrainingSpec& training);
// The largest tensor, pipeline and context degrees a fine-tune's stack launches (0: no limit, as for
// pretraining): no stack has pipeline or context parallelism for fine-tuning (their exports leave pp
// and cp out), and QLoRA's bitsandbytes 4-bit layers have no tensor-parallel form (validate.cpp). The
// layout search and the layout repair offer only these.
struct DegreeLimits {
  int64_t tp = 0, pp = 0, cp = 0;
};
DegreeLimits finetune_degree_limits(const TrainingSpec& training);

// What a fine-tuning stack really does by default (FinetuneStack; kStacks in finetune.cpp cites each
// row's source files). Arrays are indexed by method: full, lora, qlora.
struct FinetuneStackProfile {
  FinetuneStack stack = FinetuneStack::kHfPeft;
  const char* source = "";
  Framework framework = Framework::kFsdp;    // Framework::kFsdp at zero 0 = plain DDP (torch.optim)
  int64_t zero_one_gpu = 0, zero_many_gpus = 0;
  Precision precision = Precision::kBf16;   // bf16 = AMP over fp32/bf16 weights; pure_bf16 = model cast to bf16
  AdapterDtype adapter_dtype = AdapterDtype::kFp32;
  bool kbit_upcast = true;                  // QLoRA: prepare_model_for_kbit_training's fp32 upcast
  LossKind loss = LossKind::kEagerKeepLogits;
  std::array<Recompute, 3> recompute{};     // gradient checkpointing per method
  std::array<Optimizer, 3> optimizer{};     // per method
  Optimizer full_one_gpu_optimizer = Optimizer::kAdamW;  // full fine-tuning on one GPU (torchtune: paged 8-bit)
  bool full_one_gpu_optimizer_in_backward = false;
  int64_t lora_rank = 16;
  double lora_alpha = 32;
  const char* lora_targets = "all-linear";
  double lora_dropout = 0;
  // Memory switches the stack ships (validate.cpp warns for the others; fit_advice.cpp offers these):
  bool offloads_activations = false;  // torchtune enable_activation_offloading, axolotl activation_offloading
  bool fused_linear_loss = true;      // Liger's fused linear cross-entropy (HF use_liger_kernel, axolotl's plugin)
};
const FinetuneStackProfile& finetune_stack_profile(FinetuneStack stack);

// Defaults of a fine-tuning config for the inputs it does not give, from its stack's profile. The
// default stack, Hugging Face Trainer + PEFT (FINETUNE_NOTES §1-2), is a plain PyTorch loop (the fsdp
// profile at zero 0 = DDP: torch.optim, zero_grad(set_to_none=True)), gradient_accumulation_steps=1
// (global batch = micro_batch * dp), PyTorch's default caching allocator (no expandable segments),
// logits returned in the output (eager_keep_logits), and for QLoRA gradient checkpointing, which
// prepare_model_for_kbit_training turns on (use_gradient_checkpointing=True).
struct FinetuneDefaults {
  Framework framework = Framework::kFsdp;
  int64_t zero = 0;
  int64_t global_batch = 0;
  Recompute recompute = Recompute::kNone;
  LossKind loss = LossKind::kEagerKeepLogits;
  AllocatorMode allocator = AllocatorMode::kCaching;  // HF Trainer sets no PYTORCH_ALLOC_CONF
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  bool optimizer_in_backward = false;
  AdapterDtype adapter_dtype = AdapterDtype::kFp32;
  bool kbit_upcast = true;
  int64_t lora_rank = 16;
  double lora_alpha = 32;
  std::string lora_targets = "all-linear";
  double lora_dropout = 0;
};
// `framework_given`: the config named its framework (then its ZeRO default is the profile's).
FinetuneDefaults finetune_defaults(const Config& config, bool framework_given);
// The config's fields that finetune_defaults fills, by schema key, and the config with all of them
// set from `d` (parse_config fills the ones not given; encode_state leaves out the ones equal).
const std::vector<const char*>& finetune_default_keys();
Config with_finetune_defaults(const Config& config, const FinetuneDefaults& d);
// Whether the stack steps the optimizer inside the backward for this config's own batch: torchtune's
// optimizer_in_bwd leaves nothing to accumulate, and its recipes refuse it with gradient accumulation
// (FRAMEWORK_NOTES §4.3), so the default is off when a step is several micro-batches (an as-a-user
// review saw both written into one torchtune config).
bool stack_optimizer_in_backward(const Config& config, bool stack_default);

// NF4 with double quantisation (bitsandbytes functional.py quantize_4bit, blocksize 64;
// compress_statistics quantises the fp32 absmax to 8 bit in blocks of 256):
// 4/8 (codes) + 1/64 (8-bit absmax) + 4/(64*256) (fp32 second-level absmax) = 0.515869 B/param.
constexpr double kNf4BlockSize = 64.0;
constexpr double kNf4SecondBlockSize = 256.0;
constexpr double kNf4BytesPerParam = 0.5 + 1.0 / kNf4BlockSize + 4.0 / (kNf4BlockSize * kNf4SecondBlockSize);
constexpr double kNf4NoDoubleQuantBytesPerParam = 0.5 + 4.0 / kNf4BlockSize;  // 0.5625

// The parameters of one layer on one TP rank, split by what fine-tuning does with them.
struct LayerFinetuneParameters {
  double linear = 0;        // projection weights (quantised under QLoRA)
  double other = 0;         // norms and biases: kept in the load dtype (fp32 after kbit upcast)
  double adapters = 0;      // LoRA A and B: r*(in + out) per targeted module
  double largest_linear = 0;  // in*out of the widest projection (QLoRA dequantised transient)
};
LayerFinetuneParameters layer_finetune_parameters(const ModelSpec& model, const TrainingSpec& training, int64_t tp);

// Model states of one pipeline stage on one rank (bytes), and what lives in host memory.
struct StageStateBytes {
  double weights = 0;              // on the GPU: frozen base + trainable weights (+ 4-bit base)
  double hpz_secondary = 0;        // of those, DeepSpeed ZeRO++ hpZ's second partition
  double gradients = 0;            // on the GPU, persistent or built during backward
  double optimizer = 0;            // on the GPU, inside PyTorch's allocator
  double paged_optimizer = 0;      // CUDA managed memory (bitsandbytes paged): nvidia-smi only
  double host = 0;                 // CPU memory of offloaded states (ZeRO-Offload/Infinity, FSDP CPU offload)
  double trainable_parameters = 0; // parameters with gradients on this stage (before sharding)
  double trained_module_parameters = 0;  // of those, the trainable embedding/head copies (modules_to_save)
  double frozen_parameters = 0;    // parameters without gradients on this stage
  double quantized_parameters = 0; // of which stored as NF4
  double output_section_bytes = 0; // LM head + final norm states (LLMem's separate output section)
  double transient_bytes = 0;      // QLoRA: one layer's dequantised bf16 weight, live in its GEMMs
};
// PEFT modules_to_save as meshfit's switches: the schema key, the TrainingSpec flag, PEFT's module
// name for Llama-family models (what the HF export writes) and the words the page and fit use.
struct ModuleToSave {
  const char* key;
  bool TrainingSpec::*flag;
  const char* peft_name;
  const char* label;  // the page's checkbox and the fit advice's change name it so
};
inline constexpr ModuleToSave kModulesToSave[] = {
    {"embedding_trained", &TrainingSpec::embedding_trained, "embed_tokens", "train embedding fully"},
    {"lm_head_trained", &TrainingSpec::lm_head_trained, "lm_head", "train LM head fully"}};
// The width in bytes of the frozen base outside the 4-bit linears, and so of a modules_to_save copy
// of its embedding or head: 2 (bf16 as loaded); 4 when it is kept in fp32 (a LoRA base loaded in
// fp32 under a framework that does not cast it, QLoRA after prepare_model_for_kbit_training).
double base_unquantized_bytes(const TrainingSpec& training);
// The parameters of the trainable copies a stage holds on one TP rank (the embedding's with the
// embedding, the head's with the head; a tied model's copies are two), 0 without adapters.
double trained_module_parameters(const TrainingSpec& training, const MemoryPlan& plan, const StageShape& shape);
// The hook of stage_memory(): every method, pretraining included, goes through here.
StageStateBytes stage_state_bytes(const Config& config, const MemoryPlan& plan, const StageShape& shape);

// What fine-tuning changes in the work of one layer, one micro-batch, one rank (perf_model.cpp
// turns these into seconds with its rates). Pretraining and full fine-tuning: all zero except
// weight_grad_fraction = 1.
struct FinetuneWork {
  double weight_grad_fraction = 1;  // share of the base GEMMs' weight-gradient work done in backward (frozen: 0)
  double adapter_flops_fwd = 0;     // LoRA A and B GEMMs, forward: 2 * tokens * r * (in + out)
  double adapter_bytes_fwd = 0;     // their memory traffic (skinny GEMMs are bandwidth-bound): input read, fp32 cast, output add
  double dequant_bytes = 0;         // QLoRA: one pass over the layer's NF4 weights, read 0.516 + write 2 B/param
  // DoRA's weight norm, once per forward whatever the tokens (not model FLOPs): B A applied to an
  // in x in identity, then fp32 passes over every adapted weight.
  double dora_norm_flops = 0;
  double dora_norm_bytes = 0;
  double trainable_fraction = 1;    // trainable / all parameters (gradient traffic and optimizer step)
};
FinetuneWork finetune_work(const Config& config, double tokens);

// Per layer, per micro-batch: what LoRA changes in the saved activations relative to full
// fine-tuning (negative: inputs of untargeted frozen linears that nothing else saves; positive:
// the adapters' own saved tensors). Bytes, one TP rank, no recompute. `autocast`: the step runs
// under torch.autocast over the adapters' own dtype (HF Trainer bf16=True on one GPU or DDP; not
// DeepSpeed's bf16 module, nor FSDP's mixed-precision policy, which cast the adapters to bf16).
double lora_activation_delta_bytes(const ModelSpec& model, const TrainingSpec& training, double tokens, int64_t tp,
                                   bool autocast);

}  // namespace meshfit
