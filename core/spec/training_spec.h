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
enum class LossKind { kAuto, kVocabParallel, kEager, kEagerKeepLogits, kCompiled, kChunked };
enum class Optimizer { kAdamW, kSgd, kAdam8bit };          // Adam and AdamW have equal state
enum class Recompute { kNone, kSelective, kFull };         // selective = attention core (Korthikanti)
enum class Framework { kMegatron, kFsdp, kDeepSpeed };     // memory-layout profile
// How the layer's kernels are issued (step time only; perf_model.cpp kKernelProfiles): the framework's
// default, PyTorch eager ops (torchtitan without compile, nanotron, HF/DeepSpeed models), fused
// kernels (Megatron-LM with Transformer Engine), or torch.compile (torchtitan --compile).
enum class Kernels { kAuto, kEager, kFused, kCompiled };

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
                                                 {LossKind::kChunked, "chunked", "chunked (8 chunks)"}};
};
template <> struct EnumNames<Optimizer> {
  static constexpr EnumName<Optimizer> table[] = {{Optimizer::kAdamW, "adamw", "AdamW"},
                                                  {Optimizer::kSgd, "sgd", "SGD (momentum)"},
                                                  {Optimizer::kAdam8bit, "adam8bit", "8-bit Adam"},
                                                  {Optimizer::kAdamW, "adam", nullptr}};  // alias: equal state
};
template <> struct EnumNames<Recompute> {
  static constexpr EnumName<Recompute> table[] = {{Recompute::kNone, "none", "none"},
                                                  {Recompute::kSelective, "selective", "selective"},
                                                  {Recompute::kFull, "full", "full"}};
};
template <> struct EnumNames<Framework> {
  static constexpr EnumName<Framework> table[] = {{Framework::kMegatron, "megatron", "Megatron-LM"},
                                                  {Framework::kFsdp, "fsdp", "PyTorch FSDP2"},
                                                  {Framework::kDeepSpeed, "deepspeed", "DeepSpeed ZeRO"}};
};

template <> struct EnumNames<Kernels> {
  static constexpr EnumName<Kernels> table[] = {{Kernels::kAuto, "auto", "framework default"},
                                                {Kernels::kEager, "eager", "PyTorch eager"},
                                                {Kernels::kFused, "fused", "fused (Transformer Engine)"},
                                                {Kernels::kCompiled, "compiled", "torch.compile"}};
};

struct TrainingSpec {
  int64_t seq = 4096;                      // s: tokens per sequence
  int64_t global_batch = 512;              // sequences per optimizer step (all DP ranks)
  int64_t micro_batch = 1;                 // b: sequences per micro-batch per rank
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  Recompute recompute = Recompute::kNone;
  bool flash = true;                       // FlashAttention / SDPA: no s^2 score tensor is stored
  bool sp = true;                          // Megatron sequence parallelism (only meaningful at tp > 1)
  Framework framework = Framework::kMegatron;
  bool fp32_grad_buffer = true;            // Megatron/DeepSpeed: accumulate gradients in fp32
  LossKind loss = LossKind::kAuto;         // cross-entropy implementation
  bool compile = false;                    // torch.compile of the blocks (and the loss) (torchtitan compile.enable)
  bool async_tp = false;                   // torchtitan enable_async_tensor_parallel (runs under compile)
  AllocatorMode allocator = AllocatorMode::kAuto;  // PYTORCH_ALLOC_CONF expandable_segments or not
  double headroom = 0.8;                   // "tight" at or above this fraction of capacity (Fujii 2024)
  Kernels kernels = Kernels::kAuto;        // kernel issue mode (step time only)
  bool tp_comm_overlap = false;            // Megatron --tp-comm-overlap / torchtitan AsyncTP
  bool dp_comm_overlap = true;             // Megatron --overlap-grad-reduce/--overlap-param-gather (on in
                                           // Megatron-Bridge/NeMo recipes), DeepSpeed overlap_comm; FSDP2 always
};

}  // namespace meshfit
