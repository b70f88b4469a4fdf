// validate.h — structural rules on a Config; every problem at once, each with a code, the field and
// a sentence with the numbers. Framework-specific rules follow each framework's own checks
// (Megatron-LM arguments.py, torchtitan parallel_dims.py, DeepSpeed zero config).
#pragma once

#include <vector>

#include "spec/config.h"
#include "spec/issue.h"

namespace meshfit {

// Upper bounds that keep every product of sizes far from overflow; far above any real run.
constexpr int64_t kMaxHidden = 1 << 18;        // 262,144
constexpr int64_t kMaxLayers = 10000;
constexpr int64_t kMaxHeads = 1 << 16;
constexpr int64_t kMaxHeadDim = 1 << 14;       // 16,384 (real models: 64 to 256)
constexpr int64_t kMaxAttentionWidth = 1 << 22;  // heads * head_dim, the q/o width (bounded like ffn)
constexpr int64_t kMaxFfn = 1 << 22;
constexpr int64_t kMaxVocab = 1 << 24;
constexpr int64_t kMaxSeq = 1 << 25;           // 33.5M tokens
constexpr int64_t kMaxBatch = 1 << 24;
constexpr int64_t kMaxGpus = 1 << 22;          // 4.2M GPUs
constexpr double kMaxGpuMemoryBytes = 1e15;    // 1 PB per GPU
// 64 MiB: below any training GPU, and it bounds the share of capacity printed (a review gave 1e-300
// GiB and read a 300-digit percentage).
constexpr double kMinGpuMemoryBytes = 64.0 * 1024 * 1024;
constexpr double kMaxTokensToTrain = 1e18;     // 1e18 tokens (Llama 3 405B: 1.56e13)

std::vector<Issue> validate(const Config& config);

}  // namespace meshfit
