// training_spec.h — how the model is trained: sequence, batch, precision, optimizer, recompute,
// and which framework's memory layout applies (Megatron-LM, PyTorch FSDP2, DeepSpeed ZeRO).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace meshfit {

enum class Precision { kBf16, kFp8 };                      // bf16 mixed; fp8 (TE / float8) GEMMs
enum class Optimizer { kAdamW, kSgd, kAdam8bit };          // Adam and AdamW have equal state
enum class Recompute { kNone, kSelective, kFull };         // selective = attention core (Korthikanti)
enum class Framework { kMegatron, kFsdp, kDeepSpeed };     // memory-layout profile

const char* to_string(Precision value);  // "bf16" | "fp8"
const char* to_string(Optimizer value);  // "adamw" | "sgd" | "adam8bit"
const char* to_string(Recompute value);  // "none" | "selective" | "full"
const char* to_string(Framework value);  // "megatron" | "fsdp" | "deepspeed"
std::optional<Precision> precision_from_string(const std::string& text);
std::optional<Optimizer> optimizer_from_string(const std::string& text);  // also "adam"
std::optional<Recompute> recompute_from_string(const std::string& text);
std::optional<Framework> framework_from_string(const std::string& text);

// Instantiate the optional return types here: clang 14 targeting wasm gives the address of a
// function whose return type is not yet instantiated an opaque type, and wasm-ld then links the
// call to a trapping "signature_mismatch" stub (seen with recompute_from_string in serialize.cpp).
static_assert(sizeof(std::optional<Precision>) > 0 && sizeof(std::optional<Optimizer>) > 0 &&
              sizeof(std::optional<Recompute>) > 0 && sizeof(std::optional<Framework>) > 0);

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
