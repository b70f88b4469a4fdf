// training_spec.h — how the model is trained: sequence, batch, precision, optimizer, recompute,
// and which framework's memory layout applies (Megatron-LM, PyTorch FSDP2, DeepSpeed ZeRO).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "spec/enum_names.h"

namespace meshfit {

enum class Precision { kBf16, kFp8 };                      // bf16 mixed; fp8 (TE / float8) GEMMs
enum class Optimizer { kAdamW, kSgd, kAdam8bit };          // Adam and AdamW have equal state
enum class Recompute { kNone, kSelective, kFull };         // selective = attention core (Korthikanti)
enum class Framework { kMegatron, kFsdp, kDeepSpeed };     // memory-layout profile

template <> struct EnumNames<Precision> {
  static constexpr EnumName<Precision> table[] = {{Precision::kBf16, "bf16", "bf16"}, {Precision::kFp8, "fp8", "fp8"}};
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
  double headroom = 0.8;                   // "tight" at or above this fraction of capacity (Fujii 2024)
};

}  // namespace meshfit
