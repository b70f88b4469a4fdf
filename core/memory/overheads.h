// overheads.h — memory that the published formulas leave out, as named constants with sources.
// They are NCCL buffers, CUDA context, workspaces, framework buckets and allocator fragmentation,
// each cited below.
#pragma once

#include "spec/enum_names.h"
#include "units.h"

namespace meshfit {

// NCCL: ~0.5 GB per communicator of size > 1 (Fujii 2024's memory-estimator.js; NCCL buffers live
// outside PyTorch's allocator, so they show in nvidia-smi only).
constexpr double kNcclBytesPerCommunicator = 0.5 * kGB;

// CUDA context and lazily loaded kernels, outside PyTorch's allocator. Measured by tests/gpu on one
// H100 (driver 580.159.04, CUDA 13.0, PyTorch 2.11, lazy module loading): 0.514 GiB after the first
// allocation, 0.643 GiB once a training step has loaded its cuBLAS, attention and Triton kernels
// (tests/data/gpu_memory_measured.csv: context_bytes, and sn_nonpytorch less the NCCL communicator's
// share after_pg_nonpytorch_bytes - context_bytes). Other drivers and GPUs differ by tens of MiB.
constexpr double kCudaContextBytes = 0.643 * kGiB;

// cuBLAS/cuBLASLt workspaces allocated through PyTorch's caching allocator (CUBLAS_WORKSPACE_CONFIG
// default :4096:8 = 32 MiB per handle, two handles) — visible in max_memory_allocated.
constexpr double kCublasWorkspaceBytes = 64 * kMiB;

// Caching-allocator fragmentation (max_reserved - max_allocated) as a fraction of the memory that
// is allocated and freed every step (activations, logits, buffers, workspaces). Measured gaps:
// Megatron 4090 PP stage 0: 0.84 GiB over ~10 GiB dynamic; Leonardo 1.7B: 3.0 GiB over ~39 GiB
// dynamic (tests/data/memory_measured.csv); ROCm Megatron PR #161 budgets 7%.
constexpr double kFragmentationFraction = 0.08;
// The same with PYTORCH_ALLOC_CONF=expandable_segments:True (torchtitan's run_train.sh): one growing
// segment per stream mapped in 2 MiB pages (../shared/reference/FRAMEWORK_NOTES.md §1.11). Measured
// by tests/gpu on one H100 (tests/data/gpu_memory_measured.csv), PEFT LoRA on a plain model: peak
// reserved minus peak allocated over the step's transient was 4.7%, 6.0%, 7.0%, 10.6% and 16.0%
// (5 rows); the median, 0.07, is used.
constexpr double kExpandableSegmentsFragmentationFraction = 0.07;
// A replicated model (torch DDP, or one GPU) trained in full whose loop frees every gradient after
// the step (zero_grad(set_to_none=True)): each backward re-allocates the fp32 gradients between the
// activations it frees, and Adam's moments, created in the first step, sit in the first step's
// holes. Measured by tests/gpu (gpu_memory_measured.csv and gpu_memory_repeats.csv: every DDP row
// and the plain full fine-tunes, Llama and GPT-3 shapes, H100 and H200 hosts): steady peak reserved
// minus peak allocated over the step's transient, 42 rows, median 0.18 (quartiles 0.11 and 0.37,
// range 0.02-0.82), the same under expandable segments (34 rows, median 0.18) and the caching
// allocator (8 rows, 0.17). The spread is the allocator's: identical configurations differ by up to
// 6.2 GiB between runs (gpt3-1.3b 0.26 vs 5.17 GiB, ddp-1b 1.07 vs 5.68), so the median is what is
// used and the validation view reports the spread.
constexpr double kReallocatedGradsFragmentationFraction = 0.18;
// FSDP2 gathers and frees each block's parameters between the activations it saves, which leaves
// more holes in the default stream's pool. Measured by tests/gpu on one H100: the default pool held
// the model states plus 1.09, 1.15, 1.15 and 1.16 times the step's peak transient (the four *-pools
// rows, expandable segments), and the caching allocator's 1.19-1.37 times (median 1.21 over the four
// FSDP2 rows without expandable segments and no gradient accumulation). The gradients' own pool
// (memory_model.cpp grads_on_reduce_stream) is apart from these fractions.
constexpr double kFsdpExpandableFragmentationFraction = 0.15;
constexpr double kFsdpFragmentationFraction = 0.21;

// DeepSpeed defaults (deepspeed/runtime/zero/config.py): reduce_bucket_size = 5e8 elements,
// stage3_prefetch_bucket_size = 5e7 elements; buckets hold 16-bit gradients/parameters.
constexpr double kDeepSpeedReduceBucketElements = 5e8;
constexpr double kDeepSpeedPrefetchBucketElements = 5e7;
// ZeRO-3's optimizer step casts one sub-group's gradients to fp32 at a time (stage3.py
// _prepare_fp32_grad_for_sub_group): sub_group_size default 1e9 elements.
constexpr double kDeepSpeedSubGroupElements = 1e9;

// Peak bytes per logit element on the last stage (logits = s*b*v/(tp*cp) elements), by
// cross-entropy implementation (LossKind). ../shared/reference/FRAMEWORK_NOTES.md §1.6, §2.7, §4.5.
// Megatron vocab-parallel cross-entropy (tensor_parallel/cross_entropy.py _VocabParallelCrossEntropy):
// bf16 logits 2 + fp32 softmax 4, which backward reuses in place -> 6.
constexpr double kMegatronBytesPerLogit = 6.0;
// PyTorch eager F.cross_entropy(pred.float()) as torchtitan calls it (components/loss.py), with
// `del pred` before backward (train.py forward_backward_step): in the loss backward the saved fp32
// log_softmax 4 + nll_loss backward's dense fp32 grad 4 + log_softmax backward's fp32 output 4 -> 12
// (the forward end holds only 2 + 4 + 4 = 10).
constexpr double kPyTorchBytesPerLogit = 12.0;
// The same when the caller keeps the bf16 logits alive through backward (HF transformers
// LlamaForCausalLM returns `logits` in its output; loss_utils ForCausalLMLoss upcasts a copy): 12 + 2.
constexpr double kPyTorchKeepLogitsBytesPerLogit = 14.0;
// Compiled cross-entropy (torch.compile with "loss" in compile.components, torchtitan's default
// components): Inductor fuses the upcast, log_softmax and nll into kernels that keep the bf16
// logits 2 and write the bf16 gradient 2 (per-row logsumexp is O(rows)). Not read in source
// (FRAMEWORK_NOTES §1.6 "Compiled loss"), but measured by tests/gpu on one H100: the logit-dominated
// row 8b-l4-s16384-loss-compiled (2.1e9 logits) peaks at 41.63 GiB allocated, 41.62 predicted with 4.
constexpr double kCompiledBytesPerLogit = 4.0;
// Chunked loss (torchtune LinearCrossEntropyLoss, num_output_chunks = 8; torchtitan
// ChunkedLossWrapper): projection and eager CE per chunk, so the full logits never exist at once
// (TTUNE modules/loss/cross_entropy_loss.py). But every chunk's cross_entropy(logits.float()) saves
// its fp32 log_softmax output for backward, so 4 B per logit of the whole sequence stay until the
// backward, and only the backward's two fp32 gradient buffers (8 B) are per chunk: 4 + 8/8 = 5 B per
// logit. Measured by tests/gpu on one H100 (8b-l4-s16384-loss-chunked: forward end 20.07 GiB over
// the states = the eager run's 16.15 - its 3.92 GiB of bf16 logits + 7.83 GiB of fp32 log-probs;
// backward peak 1.96 GiB higher = 8 B over one chunk's logits).
constexpr double kSavedLogProbBytesPerLogit = 4.0;
// LitGPT's loss (finetune/lora.py: model(..., lm_head_chunk_size=128); utils.py chunked_cross_entropy):
// the head returns its bf16 logits in 128-token chunks, all kept through backward, and each chunk's
// F.cross_entropy runs in bf16 (no upcast), saving its bf16 log-probs; a chunk's gradients are
// 128 rows: 2 + 2 B per logit.
constexpr double kBf16ChunkedBytesPerLogit = 4.0;
constexpr double kChunkedLossChunks = 8.0;

// Activation offloading (torchtune training/_activation_offloading.py OffloadActivations
// max_fwd_stash_size default): saved tensors whose CPU copies may still be in flight, kept on the GPU.
constexpr double kOffloadStashTensors = 5.0;
// In backward: the tensor in use and the one brought back for the next node (the forward stash is
// dropped at the first backward node; unpack_tensor_with_streams frees a tensor one node later).
constexpr double kOffloadBackwardTensors = 2.0;

// PyTorch's ring attention for context parallelism (torch/distributed/tensor/experimental/
// _context_parallel/_attention.py, rotate method "allgather", torchtitan's default): in one layer's
// attention backward, the all-gathered K and V of the whole sequence (cp x local, bf16) live with
// the fp32 accumulators grad_query/grad_key/grad_value (3 x local x 4 B) and the rotating fp32
// dK||dV buffer (2 x local x 4 B). Transient, one layer at a time (FRAMEWORK_NOTES §1.10).
constexpr double kRingAttentionFp32GradBuffers = 5.0;  // local-sized fp32 tensors: dq, dk, dv, rotating dk||dv

// [SECTION] The table of these constants, for the validation view (`meshfit validate`, the page's
// Validation tab): what each stands for and where its value comes from, beside the measured rows.

enum class ConstantBasis {
  kSource,       // read from a framework's or library's source (a default, a dtype): derivable
  kMeasurement,  // set from public measurements (which ones: `source`)
  kAssumed,      // neither: an assumption, stated as one
};
template <> struct EnumNames<ConstantBasis> {
  static constexpr EnumName<ConstantBasis> table[] = {{ConstantBasis::kSource, "source", "from source"},
                                                      {ConstantBasis::kMeasurement, "measurement", "from measurements"},
                                                      {ConstantBasis::kAssumed, "assumed", "assumed"}};
};

struct NamedConstant {
  const char* name;     // the constant's name in core
  double value;
  const char* unit;     // "bytes", "fraction", "bytes per logit", ...
  const char* meaning;  // what it stands for
  const char* source;   // where the value comes from
  ConstantBasis basis;
};

inline constexpr NamedConstant kMemoryConstants[] = {
    {"kNcclBytesPerCommunicator", kNcclBytesPerCommunicator, "bytes", "NCCL buffers per communicator of size > 1, outside PyTorch's allocator",
     "Fujii et al. 2024 memory-estimator.js (~0.5 GB)", ConstantBasis::kMeasurement},
    {"kCudaContextBytes", kCudaContextBytes, "bytes", "CUDA context and lazily loaded kernels, outside PyTorch's allocator",
     "tests/gpu on one H100, driver 580.159.04, CUDA 13.0, PyTorch 2.11: 0.514 GiB at the first allocation, 0.643 GiB after a step",
     ConstantBasis::kMeasurement},
    {"kCublasWorkspaceBytes", kCublasWorkspaceBytes, "bytes", "cuBLAS/cuBLASLt workspaces inside PyTorch's allocator",
     "PyTorch CUBLAS_WORKSPACE_CONFIG default :4096:8 per handle, two handles", ConstantBasis::kSource},
    {"kFragmentationFraction", kFragmentationFraction, "fraction",
     "caching-allocator reserved minus allocated, as a share of the memory freed and re-allocated every step",
     "Megatron 4090 PP stage 0 (0.84 GiB over ~10 GiB), Leonardo 1.7B (3.0 GiB over ~39 GiB); ROCm Megatron PR #161 budgets 7%",
     ConstantBasis::kMeasurement},
    {"kExpandableSegmentsFragmentationFraction", kExpandableSegmentsFragmentationFraction, "fraction",
     "the same under PYTORCH_ALLOC_CONF=expandable_segments:True (torchtitan's launcher)",
     "tests/gpu on one H100, PEFT LoRA on a plain model: 4.7-16.0% of the step's transient (5 rows, median 7.0%)",
     ConstantBasis::kMeasurement},
    {"kReallocatedGradsFragmentationFraction", kReallocatedGradsFragmentationFraction, "fraction",
     "the same, either allocator, for a replicated model trained in full whose gradients are freed every step (torch DDP, one GPU)",
     "tests/gpu on H100 and H200, every DDP row and plain full fine-tune: 0.02-0.82 of the transient (42 rows, quartiles 0.11 "
     "and 0.37, median 0.18); identical runs differ by up to 6.2 GiB",
     ConstantBasis::kMeasurement},
    {"kFsdpExpandableFragmentationFraction", kFsdpExpandableFragmentationFraction, "fraction",
     "FSDP2 (per-block gathers) under expandable segments: default-stream pool beyond states and peak transient",
     "tests/gpu on one H100: 1.09-1.16x the transient (4 rows with per-stream pools, median 1.15)", ConstantBasis::kMeasurement},
    {"kFsdpFragmentationFraction", kFsdpFragmentationFraction, "fraction",
     "FSDP2 (per-block gathers) with the caching allocator: the same",
     "tests/gpu on one H100: 1.19-1.37x the transient (4 rows, median 1.21)", ConstantBasis::kMeasurement},
    {"kDeepSpeedReduceBucketElements", kDeepSpeedReduceBucketElements, "elements", "DeepSpeed gradient reduce bucket (16-bit)",
     "deepspeed/runtime/zero/config.py reduce_bucket_size default", ConstantBasis::kSource},
    {"kDeepSpeedPrefetchBucketElements", kDeepSpeedPrefetchBucketElements, "elements", "DeepSpeed ZeRO-3 prefetch bucket (16-bit)",
     "deepspeed/runtime/zero/config.py stage3_prefetch_bucket_size default", ConstantBasis::kSource},
    {"kDeepSpeedSubGroupElements", kDeepSpeedSubGroupElements, "elements",
     "DeepSpeed ZeRO-3 optimizer sub-group: its gradients are cast to fp32 (4 B each) inside the step",
     "deepspeed/runtime/zero/config.py sub_group_size default; stage3.py _prepare_fp32_grad_for_sub_group", ConstantBasis::kSource},
    {"kMegatronBytesPerLogit", kMegatronBytesPerLogit, "bytes per logit", "Megatron vocab-parallel cross-entropy peak",
     "Megatron-LM tensor_parallel/cross_entropy.py: bf16 logits + fp32 softmax reused in backward", ConstantBasis::kSource},
    {"kPyTorchBytesPerLogit", kPyTorchBytesPerLogit, "bytes per logit", "PyTorch eager F.cross_entropy on fp32 logits, backward peak",
     "torchtitan components/loss.py + train.py (del pred): saved log_softmax + two fp32 gradients", ConstantBasis::kSource},
    {"kPyTorchKeepLogitsBytesPerLogit", kPyTorchKeepLogitsBytesPerLogit, "bytes per logit",
     "the same with the bf16 logits kept through backward", "HF transformers LlamaForCausalLM returns logits; loss_utils upcasts a copy",
     ConstantBasis::kSource},
    {"kCompiledBytesPerLogit", kCompiledBytesPerLogit, "bytes per logit", "torch.compile'd cross-entropy (Inductor-fused)",
     "bf16 logits + bf16 gradient; tests/gpu H100 row 8b-l4-s16384-loss-compiled: 41.63 GiB peak measured, 41.62 predicted",
     ConstantBasis::kMeasurement},
    {"kChunkedLossChunks", kChunkedLossChunks, "chunks", "chunked loss: the backward's fp32 gradient buffers cover 1/chunks of the logits",
     "torchtune LinearCrossEntropyLoss num_output_chunks default", ConstantBasis::kSource},
    {"kSavedLogProbBytesPerLogit", kSavedLogProbBytesPerLogit, "bytes per logit",
     "chunked loss: every chunk's fp32 log_softmax saved for backward",
     "autograd of F.cross_entropy(logits.float()); tests/gpu H100 row 8b-l4-s16384-loss-chunked (+7.83 GiB at the forward end)",
     ConstantBasis::kMeasurement},
    {"kOffloadStashTensors", kOffloadStashTensors, "saved tensors",
     "activation offloading: the latest saved tensors kept on the GPU until their copies to CPU finish",
     "torchtune training/_activation_offloading.py OffloadActivations max_fwd_stash_size default", ConstantBasis::kSource},
    {"kBf16ChunkedBytesPerLogit", kBf16ChunkedBytesPerLogit, "bytes per logit",
     "LitGPT's chunked bf16 cross-entropy: the bf16 logit chunks and their bf16 log-probs, kept through backward",
     "litgpt finetune/lora.py (lm_head_chunk_size=128), utils.py chunked_cross_entropy", ConstantBasis::kSource},
    {"kOffloadBackwardTensors", kOffloadBackwardTensors, "saved tensors",
     "activation offloading in backward: the tensor in use and the next one brought back",
     "torchtune training/_activation_offloading.py unpack_tensor_with_streams (fwd_stash dropped at the first backward node)",
     ConstantBasis::kSource},
    {"kRingAttentionFp32GradBuffers", kRingAttentionFp32GradBuffers, "local-sized fp32 tensors",
     "PyTorch ring attention backward: dq, dk, dv accumulators and the rotating dk||dv buffer",
     "torch/distributed/tensor/experimental/_context_parallel/_attention.py", ConstantBasis::kSource},
};

}  // namespace meshfit
