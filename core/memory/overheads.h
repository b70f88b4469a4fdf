// overheads.h — memory that the published formulas leave out, as named constants with sources.
// They are NCCL buffers, CUDA context, workspaces, framework buckets and allocator fragmentation,
// each cited below.
#pragma once

#include "units.h"

namespace meshfit {

// NCCL: ~0.5 GB per communicator of size > 1 (Fujii 2024's memory-estimator.js; NCCL buffers live
// outside PyTorch's allocator, so they show in nvidia-smi only).
constexpr double kNcclBytesPerCommunicator = 0.5 * kGB;

// CUDA context and loaded kernels, outside PyTorch's allocator: 300-500 MB context (Fujii tool
// notes) plus lazily loaded cuBLAS/attention kernels; MEMORY_NOTES §13.7 gives 0.3-2 GB.
constexpr double kCudaContextBytes = 600 * kMiB;

// cuBLAS/cuBLASLt workspaces allocated through PyTorch's caching allocator (CUBLAS_WORKSPACE_CONFIG
// default :4096:8 = 32 MiB per handle, two handles) — visible in max_memory_allocated.
constexpr double kCublasWorkspaceBytes = 64 * kMiB;

// Caching-allocator fragmentation (max_reserved - max_allocated) as a fraction of the memory that
// is allocated and freed every step (activations, logits, buffers, workspaces). Measured gaps:
// Megatron 4090 PP stage 0: 0.84 GiB over ~10 GiB dynamic; Leonardo 1.7B: 3.0 GiB over ~39 GiB
// dynamic (tests/data/memory_measured.csv); ROCm Megatron PR #161 budgets 7%.
constexpr double kFragmentationFraction = 0.08;

// DeepSpeed defaults (deepspeed/runtime/zero/config.py): reduce_bucket_size = 5e8 elements,
// stage3_prefetch_bucket_size = 5e7 elements; buckets hold 16-bit gradients/parameters.
constexpr double kDeepSpeedReduceBucketElements = 5e8;
constexpr double kDeepSpeedPrefetchBucketElements = 5e7;

// Peak bytes per logit element on the last stage (logits = s*b*v/(tp*cp) elements):
// Megatron vocab-parallel cross-entropy (tensor_parallel/cross_entropy.py): bf16 logits 2 + fp32
// softmax 4 that backward reuses in place -> 6.
constexpr double kMegatronBytesPerLogit = 6.0;
// torchtitan / plain PyTorch cross_entropy on logits.float(): bf16 logits 2 + fp32 copy 4 +
// fp32 log_softmax output 4 -> 10 at the forward end of the loss.
constexpr double kPyTorchBytesPerLogit = 10.0;

}  // namespace meshfit
