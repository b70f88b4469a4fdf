// training_spec.h — how the model is trained: sequence, batch, precision, optimizer, recompute,
// and which framework's memory layout applies (Megatron-LM, PyTorch FSDP2, DeepSpeed ZeRO).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "spec/enum_names.h"

namespace meshfit {

// bf16: mixed precision, fp32 master weights (Megatron --bf16, torchtitan MixedPrecisionPolicy);
// fp8: fp8 GEMMs on top of bf16 mixed precision (Transformer Engine / torchao float8);
// pure_bf16: weights, gradients and optimizer moments all bf16, no master (litgpt "bf16-true",
// torchtune dtype bf16, HF model loaded in bf16 without AMP).
enum class Precision { kBf16, kFp8, kPureBf16 };
// Cross-entropy implementation, which sets the bytes per logit on the last stage (overheads.h).
// auto = the framework's own (Megatron/DeepSpeed: vocab-parallel; torchtitan: eager, or compiled
// when compile is on); eager_keep_logits = eager with the bf16 logits kept alive through the
// backward (HF transformers returns them in the model output).
// PyTorch caching-allocator configuration: auto = what the framework's launcher sets (torchtitan's
// run_train.sh: PYTORCH_ALLOC_CONF="expandable_segments:True"; Megatron and DeepSpeed: none).
enum class AllocatorMode { kAuto, kCaching, kExpandableSegments };
enum class LossKind { kAuto, kVocabParallel, kEager, kEagerKeepLogits, kCompiled, kChunked, kFusedLinear, kBf16Chunked };
// Optimizers (FRAMEWORK_NOTES §4.2; bitsandbytes optim/*.py): paged_* keep their states in CUDA
// managed memory (outside PyTorch's counters); adafactor factors the second moment (no first).
enum class Optimizer { kAdamW, kSgd, kAdam8bit, kPagedAdamW, kPagedAdam8bit, kAdafactor };  // Adam = AdamW state
// How the optimizer step runs (FRAMEWORK_NOTES §1.12, §4.4): auto = the framework's (Megatron: TE/Apex
// FusedAdam; torchtitan: optimizer.implementation "fused"; DeepSpeed: its own flat-partition step);
// fused = torch fused=True / FusedAdam, in place; foreach = torch.optim's default on CUDA when
// neither is given (plain PyTorch loops, HF "adamw_torch"), which allocates sqrt(v) for every tensor.
enum class OptimizerImpl { kAuto, kFused, kForeach };
// Training mode and method: none = pretraining (every parameter trained, the default); full =
// full fine-tuning (same states); lora / qlora = frozen base (bf16 / NF4) with trainable adapters.
enum class FinetuneMethod { kNone, kFull, kLora, kQlora };
enum class AdapterDtype { kFp32, kBf16 };  // PEFT autocast_adapter_dtype=True upcasts adapters to fp32
// The fine-tuning software a config is run with: the defaults it gets for what it leaves out
// (precision, checkpointing, optimizer, loss, adapter settings, sharding; finetune.cpp kStacks cites
// each stack's own files). hf_peft = Hugging Face Trainer + PEFT (plain DDP); _deepspeed / _fsdp =
// the same through Accelerate's DeepSpeed ZeRO-3 / FSDP plugins; axolotl = its example YAMLs.
enum class FinetuneStack { kHfPeft, kHfPeftDeepSpeed, kHfPeftFsdp, kTorchtune, kLitgpt, kAxolotl };
// Offload to CPU memory: optimizer = ZeRO-Offload (offload_optimizer: fp32 master, moments and
// fp32 gradients on the host); params = ZeRO-Infinity offload_param / FSDP CPUOffload(offload_params)
// (parameters too; needs sharded weights).
enum class Offload { kNone, kOptimizer, kParams };
enum class Recompute { kNone, kSelective, kFull };         // selective = attention core (Korthikanti)
// Memory-layout and speed profile (memory_model.cpp kProfiles, perf_model.cpp framework_perf). nanotron
// (Hugging Face's 3D trainer) is Megatron-style TP/PP/DP with its own states, split and kernels.
enum class Framework { kMegatron, kFsdp, kDeepSpeed, kNanotron };
// How the layer's kernels are issued: the framework's default, PyTorch eager ops (torchtitan without
// compile, nanotron, HF/DeepSpeed models), fused kernels (Megatron-LM with Transformer Engine), or
// torch.compile (torchtitan compile.enable). The one input for "is torch.compile on": the step time
// reads its kernel profile (perf_model.cpp framework_perf), the memory model its compiled loss and
// activations (runs_compiled below).
enum class Kernels { kAuto, kEager, kFused, kCompiled };
// How RMSNorm runs, for the step time (perf_model.cpp kEagerRmsNormBytes): auto = the framework's
// (eager only for DeepSpeed's Hugging Face models, whose LlamaRMSNorm is separate fp32 ops), and eager
// for any fine-tune (the stacks run HF's, torchtune's or litgpt's upcasting modules); fused =
// one kernel each way (Transformer Engine, apex, Liger, nanotron's Triton kernel, PyTorch's
// F.rms_norm / nn.RMSNorm); eager = the upcast chain. torch.compile fuses it whatever this says.
enum class NormKernel { kAuto, kFused, kEager };
// Whether the data-parallel gradient reduce and parameter gather overlap the compute: auto = what
// the framework does when its own flag is left alone, per ZeRO stage (memory_model.h
// dp_comm_overlapped, the one rule both models read). It was a boolean (default true): true/false
// and 1/0 in JSON, links and the CLI's --dp-comm-overlap / --no-dp-comm-overlap still read as on/off.
enum class DpCommOverlap { kAuto, kOn, kOff };

template <> struct EnumNames<Precision> {
  static constexpr EnumName<Precision> table[] = {{Precision::kBf16, "bf16", "bf16 mixed (fp32 master)"},
                                                  {Precision::kFp8, "fp8", "fp8 GEMMs (bf16 mixed)"},
                                                  {Precision::kPureBf16, "pure_bf16", "pure bf16 (no master)"},
                                                  {Precision::kPureBf16, "bf16-true", nullptr}};  // litgpt's name
};
template <> struct EnumNames<AllocatorMode> {
  static constexpr EnumName<AllocatorMode> table[] = {{AllocatorMode::kAuto, "auto", "framework launcher's"},
                                                      {AllocatorMode::kCaching, "caching", "caching (default)"},
                                                      {AllocatorMode::kExpandableSegments, "expandable_segments",
                                                       "expandable segments"}};
};
template <> struct EnumNames<LossKind> {
  static constexpr EnumName<LossKind> table[] = {{LossKind::kAuto, "auto", "framework default"},
                                                 {LossKind::kVocabParallel, "vocab_parallel", "Megatron vocab-parallel"},
                                                 {LossKind::kEager, "eager", "PyTorch eager (fp32)"},
                                                 {LossKind::kEagerKeepLogits, "eager_keep_logits", "eager, logits kept (HF)"},
                                                 {LossKind::kCompiled, "compiled", "compiled / fused"},
                                                 {LossKind::kChunked, "chunked", "chunked (8 chunks)"},
                                                 {LossKind::kFusedLinear, "fused_linear", "fused linear (Liger, CCE)"},
                                                 {LossKind::kBf16Chunked, "bf16_chunked", "bf16, chunked (LitGPT)"}};
};
template <> struct EnumNames<Optimizer> {
  static constexpr EnumName<Optimizer> table[] = {{Optimizer::kAdamW, "adamw", "AdamW"},
                                                  {Optimizer::kSgd, "sgd", "SGD (momentum)"},
                                                  {Optimizer::kAdam8bit, "adam8bit", "8-bit Adam"},
                                                  {Optimizer::kPagedAdamW, "paged_adamw", "paged AdamW (32-bit)"},
                                                  {Optimizer::kPagedAdam8bit, "paged_adamw8bit", "paged 8-bit AdamW"},
                                                  {Optimizer::kAdafactor, "adafactor", "Adafactor"},
                                                  {Optimizer::kAdamW, "adam", nullptr},  // alias: equal state
                                                  {Optimizer::kAdam8bit, "adamw_8bit", nullptr},
                                                  {Optimizer::kPagedAdamW, "paged_adamw_32bit", nullptr},
                                                  {Optimizer::kPagedAdam8bit, "paged_adamw_8bit", nullptr}};
};
template <> struct EnumNames<OptimizerImpl> {
  static constexpr EnumName<OptimizerImpl> table[] = {{OptimizerImpl::kAuto, "auto", "framework's"},
                                                      {OptimizerImpl::kFused, "fused", "fused (in place)"},
                                                      {OptimizerImpl::kForeach, "foreach", "foreach (sqrt(v) copy)"}};
};
template <> struct EnumNames<NormKernel> {
  static constexpr EnumName<NormKernel> table[] = {{NormKernel::kAuto, "auto", "framework default"},
                                                   {NormKernel::kFused, "fused", "fused kernel"},
                                                   {NormKernel::kEager, "eager", "eager fp32 ops (HF LlamaRMSNorm)"}};
};
template <> struct EnumNames<FinetuneMethod> {
  static constexpr EnumName<FinetuneMethod> table[] = {{FinetuneMethod::kNone, "none", "pretraining"},
                                                       {FinetuneMethod::kFull, "full", "full fine-tuning"},
                                                       {FinetuneMethod::kLora, "lora", "LoRA"},
                                                       {FinetuneMethod::kQlora, "qlora", "QLoRA (NF4 base)"}};
};
template <> struct EnumNames<AdapterDtype> {
  static constexpr EnumName<AdapterDtype> table[] = {{AdapterDtype::kFp32, "fp32", "fp32 (PEFT default)"},
                                                     {AdapterDtype::kBf16, "bf16", "bf16 (torchtune, LitGPT)"}};
};
template <> struct EnumNames<FinetuneStack> {
  static constexpr EnumName<FinetuneStack> table[] = {{FinetuneStack::kHfPeft, "hf_peft", "HF Trainer + PEFT"},
                                                      {FinetuneStack::kHfPeftDeepSpeed, "hf_peft_deepspeed", "HF Trainer + PEFT + DeepSpeed"},
                                                      {FinetuneStack::kHfPeftFsdp, "hf_peft_fsdp", "HF Trainer + PEFT + FSDP"},
                                                      {FinetuneStack::kTorchtune, "torchtune", "torchtune"},
                                                      {FinetuneStack::kLitgpt, "litgpt", "LitGPT"},
                                                      {FinetuneStack::kAxolotl, "axolotl", "Axolotl"}};
};
template <> struct EnumNames<Offload> {
  static constexpr EnumName<Offload> table[] = {{Offload::kNone, "none", "none"},
                                                {Offload::kOptimizer, "optimizer", "optimizer to CPU (ZeRO-Offload)"},
                                                {Offload::kParams, "params", "optimizer + params to CPU"}};
};
template <> struct EnumNames<Recompute> {
  static constexpr EnumName<Recompute> table[] = {{Recompute::kNone, "none", "none"},
                                                  {Recompute::kSelective, "selective", "selective"},
                                                  {Recompute::kFull, "full", "full"}};
};
template <> struct EnumNames<Framework> {
  static constexpr EnumName<Framework> table[] = {{Framework::kMegatron, "megatron", "Megatron-LM"},
                                                  {Framework::kFsdp, "fsdp", "PyTorch FSDP2"},
                                                  {Framework::kDeepSpeed, "deepspeed", "DeepSpeed ZeRO"},
                                                  {Framework::kNanotron, "nanotron", "nanotron"},
                                                  // The software's own names, read as the profile that models it.
                                                  {Framework::kMegatron, "megatron-lm", nullptr},
                                                  {Framework::kMegatron, "megatron-bridge", nullptr},
                                                  {Framework::kMegatron, "nemo", nullptr},
                                                  {Framework::kFsdp, "torchtitan", nullptr},
                                                  {Framework::kFsdp, "fsdp2", nullptr},
                                                  {Framework::kDeepSpeed, "megatron-deepspeed", nullptr}};
};

template <> struct EnumNames<Kernels> {
  static constexpr EnumName<Kernels> table[] = {{Kernels::kAuto, "auto", "framework default"},
                                                {Kernels::kEager, "eager", "PyTorch eager"},
                                                {Kernels::kFused, "fused", "fused (Transformer Engine)"},
                                                {Kernels::kCompiled, "compiled", "torch.compile"}};
};

template <> struct EnumNames<DpCommOverlap> {
  static constexpr EnumName<DpCommOverlap> table[] = {{DpCommOverlap::kAuto, "auto", "framework default"},
                                                      {DpCommOverlap::kOn, "on", "on"},
                                                      {DpCommOverlap::kOff, "off", "off"}};
};

struct TrainingSpec {
  int64_t seq = 4096;                      // s: tokens per sequence
  int64_t global_batch = 512;              // sequences per optimizer step (all DP ranks)
  int64_t micro_batch = 1;                 // b: sequences per micro-batch per rank
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  Recompute recompute = Recompute::kNone;
  // recompute=full on only this many layers of each pipeline stage (each virtual chunk); the others
  // keep every activation. 0 = all. Megatron-LM --recompute-method block --recompute-num-layers N
  // (transformer_block.py _checkpointed_forward: "the first N layers of the block").
  int64_t recompute_layers = 0;
  bool flash = true;                       // FlashAttention / SDPA: no s^2 score tensor is stored
  bool sp = true;                          // Megatron sequence parallelism (only meaningful at tp > 1)
  Framework framework = Framework::kMegatron;
  bool fp32_grad_buffer = true;            // Megatron/DeepSpeed: accumulate gradients in fp32
  LossKind loss = LossKind::kAuto;         // cross-entropy implementation
  bool async_tp = false;                   // torchtitan enable_async_tensor_parallel (runs under compile)
  // torchao float8 under FSDP2: the converted Linear weights all-gathered in fp8, 1 B instead of 2
  // (torchtitan [float8] enable_fsdp_float8_all_gather; FRAMEWORK_NOTES §1.9). Needs precision=fp8.
  bool fp8_all_gather = false;
  // Fine-tuning (finetune.h; FINETUNE_NOTES.md).
  FinetuneMethod finetune = FinetuneMethod::kNone;
  FinetuneStack stack = FinetuneStack::kHfPeft;   // where the fine-tuning defaults come from
  int64_t lora_rank = 16;                  // r
  double lora_alpha = 32;                  // scaling alpha/r: no memory or time effect
  std::string lora_targets = "all-linear"; // all-linear | attention | q,k,v,o,gate,up,down
  AdapterDtype adapter_dtype = AdapterDtype::kFp32;
  double lora_dropout = 0;                 // PEFT LoraConfig.lora_dropout (default 0.0: nn.Identity, nothing saved)
  // PEFT LoraConfig(use_dora=True) / torchtune use_dora: a trained magnitude per output of each adapted
  // module, the column norm of W + BA every forward (finetune.cpp lora_activation_delta_bytes).
  bool dora = false;
  // PEFT LoraConfig(modules_to_save=["embed_tokens"] / ["lm_head"]) (peft utils/other.py
  // ModulesToSaveWrapper; axolotl lora_modules_to_save): a trainable deep copy of the module beside the
  // frozen original, with its own gradient and optimizer state (finetune.cpp stage_state_bytes).
  bool embedding_trained = false;
  bool lm_head_trained = false;
  AdapterDtype base_dtype = AdapterDtype::kBf16;  // LoRA: dtype the frozen base is loaded in (fp32: PEFT sft example without torch_dtype)
  bool kbit_upcast = true;                 // QLoRA: prepare_model_for_kbit_training casts non-4-bit params to fp32
  bool double_quant = true;                // QLoRA: bnb_4bit_use_double_quant (0.516 vs 0.5625 B/param)
  bool optimizer_in_backward = false;      // step each parameter in its backward hook (torchtune optimizer_in_bwd)
  Offload offload = Offload::kNone;
  // Saved activations moved to CPU memory as the forward saves them and brought back for backward
  // (torchtune enable_activation_offloading, training/_activation_offloading.py OffloadActivations;
  // Unsloth's "unsloth" gradient checkpointing): activation_memory.cpp offloaded_layers_on_gpu.
  bool offload_activations = false;
  OptimizerImpl optimizer_impl = OptimizerImpl::kAuto;  // optimizer-step temporaries (memory_model.cpp)
  AllocatorMode allocator = AllocatorMode::kAuto;  // PYTORCH_ALLOC_CONF expandable_segments or not
  double headroom = 0.8;                   // "tight" at or above this fraction of capacity (Fujii 2024)
  double tokens_to_train = 0;              // tokens the whole run trains on, for the time to train (0 = not given)
  Kernels kernels = Kernels::kAuto;        // kernel issue mode; compiled = torch.compile (torchtitan compile.enable),
                                           // which both models read (runs_compiled); the old `compile` key maps here
  NormKernel norm_kernel = NormKernel::kAuto;  // RMSNorm fused or as eager ops (step time only)
  bool tp_comm_overlap = false;            // Megatron --tp-comm-overlap / torchtitan AsyncTP
  // Megatron --overlap-grad-reduce/--overlap-param-gather, DeepSpeed overlap_comm; FSDP2 always
  // overlaps. auto = the framework's default at the config's ZeRO stage (dp_comm_overlapped).
  DpCommOverlap dp_comm_overlap = DpCommOverlap::kAuto;
};

// bitsandbytes paged optimizers: states in CUDA managed memory (outside PyTorch's counters; the driver
// may evict them to host memory).
inline bool pages_optimizer_states(Optimizer optimizer) {
  return optimizer == Optimizer::kPagedAdamW || optimizer == Optimizer::kPagedAdam8bit;
}

// Whether AsyncTP applies: torchtitan's enable_async_tensor_parallel, the FSDP2 profile's, on a
// tensor-parallel mesh; the other frameworks ignore it (Megatron-LM overlaps TP with tp_comm_overlap;
// an as-a-user review saw it lower Megatron's memory by 3.5 GiB), and torchtitan reads it only when TP
// is on (another saw it compile a tp=1 run it had just called unaffected).
inline bool async_tp_applies(const TrainingSpec& training, int64_t tp) {
  return training.async_tp && training.framework == Framework::kFsdp && tp > 1;
}

// Whether the blocks run under torch.compile, for the memory and the step-time model: kernels=compiled,
// or AsyncTP, which torchtitan applies only under compile (maybe_enable_async_tp).
inline bool runs_compiled(const TrainingSpec& training, int64_t tp) {
  return training.kernels == Kernels::kCompiled || async_tp_applies(training, tp);
}

// Whether the optimizer step is PyTorch's foreach AdamW (list kernels and a sqrt(v) copy) rather than
// one fused kernel: torchtitan / FSDP2 offers the choice (optimizer.implementation, default fused);
// nanotron builds torch.optim.AdamW with fused=torch_adam_is_fused (config default false: PyTorch's
// foreach default on CUDA); Megatron-LM and DeepSpeed run their own FusedAdam. The step-time model
// reads it (perf_model.cpp kForeachOptimizerHbmFraction); memory_model.cpp applies the same rule to the copy.
inline bool foreach_optimizer_step(const TrainingSpec& training) {
  if (training.optimizer != Optimizer::kAdamW) return false;
  if (training.framework == Framework::kNanotron) return training.optimizer_impl != OptimizerImpl::kFused;
  return training.optimizer_impl == OptimizerImpl::kForeach && training.framework == Framework::kFsdp;
}

}  // namespace meshfit
