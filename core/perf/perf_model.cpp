// perf_model.cpp — see perf_model.h. Index:
//   [SECTION] Cited constants       every rate, floor and fraction, with its source
//   [SECTION] Framework profiles    how each framework issues kernels and overlaps communication
//   [SECTION] Kernel times          GEMM, attention, memory-bound kernels, launch and host floors
//   [SECTION] Collectives           bus bandwidth by message size on NVLink / NVLS / network
//   [SECTION] Step time             per stage and micro-batch, then the 1F1B pipeline, DP and optimizer
//   [SECTION] Error bands           validation error per framework and GPU family
#include "perf/perf_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "memory/finetune.h"
#include "memory/parameter_count.h"
#include "spec/gpu_catalog.h"
#include "spec/structure.h"

namespace meshfit {

// [SECTION] Cited constants
// Files are under ../shared/reference/kernels/ (each row there carries its full citation).

namespace {

// GEMM: fixed cost per GEMM call (launch, prologue/epilogue, tail wave). Azure AI-benchmarking-guide
// H200 fp8 cublaslt sweep (gemm_rates.csv): 1024^3 runs 5.33 us where the 32768^3 rate (1333 TF)
// would need 1.61 us -> ~3.7 us fixed; 2048^3 leaves 2.2 us. 3 us taken.
constexpr double kGemmFixedS = 3e-6;
// GEMM operand alignment: cuBLAS's tensor-core kernels load operands in 16-byte vectors, so a
// dimension whose bytes are not a multiple of 16 (a bf16 vocabulary of 50257, GPT-2's, unpadded)
// sends the GEMM to kernels that load less per instruction (on H100, sm75 CUTLASS kernels: profile
// of gpt-125m in tests/gpu). Measured on H100 (gpu_kernel_rates.csv head.* rows: the LM head's
// forward, dgrad and wgrad at h 768/2048/4096, 8192/32768 tokens): vocab 50257 (2-byte aligned)
// runs at 95-155 TFLOP/s where 50272 and 50304 (16-byte) run at 590-754, 0.19 of the aligned rate
// (median of 18 pairs); 50260 (8-byte) at 250-294, 0.39. A 4-byte alignment was not measured and
// takes the 2-byte rate. Frameworks that pad the vocabulary (Megatron's 128 x tp) never see it.
constexpr double kGemmAlign8ByteFraction = 0.39;
constexpr double kGemmAlignUnder8ByteFraction = 0.19;
// Memory-bound kernels: achieved fraction of datasheet HBM bandwidth for a 1-load + 1-store stream
// (memory_bound_rates.csv, gpu-benches 'scale': A100 80GB 1732/2039 = 0.85, A100 40GB 1381/1555 =
// 0.89, H100 PCIe 1704/2000 = 0.85; H200 BabelStream copy 4.01/4.8 = 0.84). H100 SXM measured
// (tests/data/gpu_kernel_rates.csv: copy 2962.6, add 3036.6, silu 2992.2 GB/s of 3350 = 0.88-0.91)
// sits 4-6% above it: one card, so 0.85 stays the cross-GPU median. The widening cast bf16 -> fp32
// reaches only 1976.8 GB/s = 0.59 there.
constexpr double kHbmStreamFraction = 0.85;
// The optimizer step: every framework here runs one fused multi-tensor AdamW kernel (torchtitan
// optimizer.implementation "fused", Megatron-LM / DeepSpeed FusedAdam), not the elementwise chains the
// profiles' elementwise_fraction describes. Measured on H100 SXM (gpu_kernel_rates.csv optimizer
// adamw_fused float32: 28 bytes per parameter, 512M parameters in 5.742 ms = 2617.8 GB/s of 3350):
// 0.78 of datasheet bandwidth. torchtitan with optimizer.implementation "foreach" (optimizer_impl =
// foreach): adamw_foreach float32, the same 28 bytes counted, 16.02 ms = 938.1 GB/s = 0.28.
constexpr double kFusedOptimizerHbmFraction = 0.78;
constexpr double kForeachOptimizerHbmFraction = 0.28;
// Per-kernel device launch floor for stream launches: gpu-benches gpu-small-kernels fit
// (memory_bound_rates.csv): A100 2.555 us, H200 2.433 us, L40 1.6 us, MI210 1.956 us. Inside a CUDA
// graph a tiny kernel costs less: 1.0 us on H100 (gpu_kernel_rates.csv launch graph_kernel), 1.26 us on
// H200 (gpu-benches h200_graph); no profile here replays graphs, so the stream floor is used.
constexpr double kKernelLaunchFloorS = 2.5e-6;
// Host dispatch per PyTorch eager op, derived: stas00 torch.compile table on B200 (memory_bound_rates
// .csv, step_time_launch_vs_compute_bound): Llama-3.2-1B forward at 1 x 512 tokens takes 8.1 ms eager
// and 1.9 ms with CUDA graphs; (8.1 - 1.9) ms over 16 layers x ~35 ops per eager Llama layer = 11 us.
// Measured directly on H100 (gpu_kernel_rates.csv launch eager_op_issue: 5000 x.add_ back to back,
// PyTorch 2.11): 11.0 us per op. That host is a Firecracker VM, where host-side costs (ioctl, doorbell
// writes) may exceed bare metal's; the two sources agree, so 11 us stays.
constexpr double kEagerHostOpS = 11e-6;
// FSDP2's per-unit host work (fully_shard pre/post-forward and pre/post-backward hooks: all-gather
// copy-in and copy-out, the collective's launch, reshard, reduce-scatter with its chunk_cat and the
// DTensor gradient accumulation), in eager-op dispatch times per unit per forward, the backward
// twice. Measured by tests/gpu on one H100 (gpu_memory_measured.csv), in the rows whose step is
// host-bound (the GPU idles between small kernels): 1b-ga4-s2048 (127 ms per micro-batch over 17
// units), 3b-s2048 (214 ms over 29 units) and 8b-l4-s512 (61 ms over 7 units), after the model's
// 35 eager ops per layer and the optimizer step, give 193, 189 and 243 op times per unit and pass;
// the median is used. Hidden whenever a layer's GPU work is longer (large models, long sequences).
constexpr double kFsdpUnitHostOps = 193;
// FSDP2's copies around each collective (PT-FSDP _fsdp_collectives.py; FRAMEWORK_NOTES §1.4), bytes
// per element. foreach_all_gather_copy_out (split_with_sizes_copy of the flat output into the unsharded
// params, 2 read + 2 written) runs on the compute stream in wait_for_unshard, before the unit's forward
// (and its backward under FULL_SHARD): never hidden. On the side streams, hidden like the collectives:
// the copy-in, per shard element (the shard cast to bf16, 4 + 2, then copied into the flat input,
// 2 + 2); the reduce-scatter's chunk_cat (bf16 gradients read, fp32 input written: 2 + 4); with one
// rank the reduce-scatter is itself a local copy of the fp32 input (4 + 4).
constexpr double kFsdpCopyOutBytes = 4;
constexpr double kFsdpCopyInBytesPerShardElement = 10;
constexpr double kFsdpChunkCatBytes = 6;
constexpr double kFsdpLocalReduceScatterBytes = 8;
// FlashAttention-2 forward+backward, causal, bf16, TFLOP/s on A100 (attention_rates.csv: FA repo figures,
// A100 80GB SXM4, batch*seq = 16k, FA FLOP convention) by head dim 64 / 128 and sequence 512, 1k, 2k,
// 4k, 8k, 16k.
constexpr double kFlashSeq[] = {512, 1024, 2048, 4096, 8192, 16384};
constexpr double kFa2A100Causal64[] = {88, 119, 140, 156, 165, 171};
constexpr double kFa2A100Causal128[] = {99, 133, 155, 173, 182, 189};
// Hopper: FlashAttention-2 as PyTorch 2.11's SDPA flash backend runs it on one H100 80GB HBM3
// (tests/data/gpu_kernel_rates.csv rows attention/sdpa_fwd and sdpa_fwd_bwd, backend flash: causal,
// bf16, batch*seq = 16k, 32 heads (16 at d 256), FA FLOP convention), by head dim 64 / 128 / 256 and
// sequence 512 ... 32k; forward alone and forward+backward. The forward+backward rows are timed by
// tests/gpu/kernel_rates.py calling backward on leaf q, k, v with requires_grad, so every repetition
// after the first also accumulates into q.grad, k.grad and v.grad: three bf16 adds (read, read, write:
// 18 bytes per element of q) at the measured add_bf16 rate, 3036.6 GB/s, which a training step does
// not run. That time (0.40 ms at d 128: 17% of the 512 row, 0.8% of the 32k row) is taken out:
// rate = FLOPs / (median_ms - accumulation). tests/core/test_kernel_rates.cpp recomputes every entry.
constexpr double kHopperFlashSeq[] = {512, 1024, 2048, 4096, 8192, 16384, 32768};
constexpr double kHopperFlashHeadDims[] = {64, 128, 256};
constexpr double kFa2H100Forward[3][7] = {{155.2, 214.0, 262.2, 283.9, 288.8, 294.4, 303.2},
                                          {190.6, 254.3, 296.4, 314.5, 304.8, 330.7, 323.7},
                                          {222.3, 253.7, 280.3, 291.4, 289.8, 291.9, 285.5}};
constexpr double kFa2H100ForwardBackward[3][7] = {{110.3, 162.5, 209.5, 242.6, 266.6, 281.6, 292.7},
                                                  {128.2, 185.9, 237.3, 275.1, 297.6, 317.2, 321.7},
                                                  {121.6, 171.1, 210.6, 239.0, 260.8, 268.0, 268.5}};
constexpr double kFa2H100At8kD128 = kFa2H100ForwardBackward[1][4];  // 297.6: the anchor of the ratios below
// Attention without FlashAttention (training.flash = false) runs as separate kernels over the whole
// s x s score tensor of every head: QK^T is computed in full and the causal mask applied after it
// (Megatron-LM megatron/core/transformer/dot_product_attention.py: baddbmm, FusedScaleMaskSoftmax,
// dropout, bmm; PyTorch aten/src/ATen/native/transformers/attention.cpp
// _scaled_dot_product_attention_math: matmul, add_ of the causal mask, _safe_softmax, matmul). Its
// time is b*a*s^2/t score elements times what each element costs:
// - six batched GEMMs, two forward (S = QK^T, O = PV) and four backward (dP = dO V^T, dV = P^T dO,
//   dQ = dS K, dK = dS^T Q), each 2*d flops per score element at the GEMM rate plus its score-sized
//   operand read or written once (kScoreGemmHbmFraction). The two terms add: at d = 128 they are
//   about equal on A100 (256 flop per 2 bytes is its ridge point), and the K = d GEMMs store their
//   s-wide output after a main loop of only a few steps, so neither hides the other;
// - the memory-bound passes over the scores between them (bytes per score element below), at the
//   streaming rate, every pass counted from the source rather than folded into a fraction.
constexpr double kScoreGemmsForward = 2;
constexpr double kScoreGemmsBackward = 4;
// The score operand's traffic inside those GEMMs, as a fraction of datasheet HBM bandwidth: from the
// FlashAttention repo's "PyTorch standard attention" forward+backward (attention_rates.csv: A100 80GB
// and H100 SXM5, d 64 and 128, seq 512-8k, causal and not; batched QK^T, softmax, PV; bf16): each
// row's time less the GEMM compute at the GEMM rate and the softmax (10 bytes per element, +6 for the
// causal mask add) at the streaming rate leaves the six score passes; they run at 0.25-0.73 of
// datasheet (lowest at seq 512, highest at 8k non-causal), median 0.48 over the 40 rows.
constexpr double kScoreGemmHbmFraction = 0.48;
// Eager path (Megatron-LM FusedScaleMaskSoftmax.forward_torch_softmax with softmax_in_fp32, the
// fallback its fused kernel replaces; Hagemann's attn_kernel=torch): forward input.float() (read 2,
// write 4), masked_fill_ (4 + 4), softmax (4 + 4), .bfloat16() (4 + 2) = 28 bytes; backward, the
// autograd of each in reverse: grad.float() (2 + 4), _softmax_backward_data (read dP and P, write dS:
// 12), masked_fill(mask, 0) (4 + 4), grad.to(bf16) (4 + 2) = 32 bytes.
constexpr double kEagerSoftmaxForwardBytes = 28;
constexpr double kEagerSoftmaxBackwardBytes = 32;
// SDPA math backend since PyTorch 2.5 (FrameworkProfile::fp32_math_attention: q, k, v upcast to fp32
// unless allow_fp16_bf16_reduction_math_sdp): fp32 scores (4 bytes) and fp32 GEMMs. Forward: add_ of
// the causal mask (read scores and mask, write: 12), _safe_softmax = softmax (4 + 4), eq(-inf)
// (4 + 1), all() (1), where() (4 + 4), then the returned weights' attn.to(bf16) (4 + 2) = 40 bytes;
// backward: _softmax_backward_data (12), the mask add's gradient passes through.
constexpr double kSdpaMathForwardBytes = 40;
constexpr double kSdpaMathBackwardBytes = 12;
// Fused softmax (Megatron's scaled_masked_softmax CUDA kernels, or Inductor's fusion under
// torch.compile): scale, mask and softmax in one read and one write of the scores forward; backward
// reads dP and P and writes dS. In elements of the score type.
constexpr double kFusedSoftmaxForwardPasses = 2;
constexpr double kFusedSoftmaxBackwardPasses = 3;
// Attention dropout on the probabilities (model.dropout): native_dropout reads and writes them and
// writes a 1-byte mask; its backward reads the gradient and the mask and writes. Per direction.
constexpr double kDropoutMaskBytes = 1;
// RMSNorm forward bytes per element, one norm. Fused (Transformer Engine, apex, nanotron's Triton
// kernel, PyTorch's F.rms_norm): read 2, write 2. F.rms_norm's forward is one kernel on the H100
// measured here: 2431 GB/s at 4 B per element (gpu_kernel_rates.csv rms_norm_fwd, 16384 x 2048), where
// the eager chain's 36 B would need 9x that. Hugging Face's LlamaRMSNorm
// (transformers models/llama/modeling_llama.py) runs it as eager ops, counted per element:
// .to(float32) 2+4, pow(2) 4+4, mean 4, x * rsqrt(var + eps) 4+4, .to(bf16) 4+2, weight * x 2+2 =
// 36. Backward is twice the forward, as for the rest of the elementwise chain (the autograd chain
// counts ~76). Checked against Hagemann et al. 2023's same-layout pairs with and without their
// fused RMS kernel (22 pairs, FA2, no recompute, A100): the step-time ratio of a pair is predicted
// within a median -1.5% (|error| 2.3%; test_hagemann_mechanisms.cpp): predicted 1.07-1.25x,
// measured 1.03-1.30x.
constexpr double kFusedRmsNormBytes = 4;
constexpr double kEagerRmsNormBytes = 36;
// FP32 GEMMs (the math backend's, TF32 off: PyTorch's default torch.backends.cuda.matmul.allow_tf32
// = False) run on the CUDA cores: H100 SXM measured 50.51 and 50.79 TFLOP/s (tests/data/
// gpu_kernel_rates.csv gemm square fp32 4096^3 and 8192^3) of its 989 bf16 TFLOP/s. (A100's datasheet
// ratio, 19.5 / 312 = 0.0625, before its achieved fraction, is close.)
constexpr double kFp32GemmFractionOfBf16Peak = 50.65 / 989.0;
// FA3 / cuDNN attention on Hopper inside a training step: stas00 Llama-3.1-8B at 8k on H200 (FA3
// 447 TF fwd+bwd) over the Hopper FA2 rate at 8k, d=128, causal (297.6 TF above): x1.50. (cuDNN
// through SDPA measures 518.0 TF there with the same accumulation taken out, gpu_kernel_rates.csv
// backend cudnn: 1.74x flash; torchtitan's SDPA is priced at flash, site/docs.html known gaps.)
constexpr double kFa3OverFa2Hopper = 447.0 / kFa2H100At8kD128;
// Blackwell: FA4 in the same stas00 step on B200, 834 TF = 0.37 of 2250, over the Hopper FA2
// fraction of peak at the same shape (297.6 / 989 = 0.30): Hopper FA2 fractions x 1.23.
constexpr double kBlackwellOverHopperAttentionFraction = (834.0 / 2250.0) / (kFa2H100At8kD128 / 989.0);
constexpr double kFlashBackwardShare = 2.5 / 3.5;  // FA convention: fwd+bwd = 3.5x forward FLOPs
// Collectives (collective_rates.csv). Ring all-reduce bus bandwidth saturates at 0.78 of the
// per-direction NVLink rate (8x A100 SXM nccl-tests: 234.9 of 300 GB/s; GB200 NVL72 ring 680 of
// 900); NVLink SHARP (NVLS, Hopper and later NVSwitch systems) reaches 1.06 (Azure ND H100 v5:
// 478.9 of 450 GB/s). Half of it is reached at ~25 MB (A100 busbw 138 GB/s at 32 MB, 171 at 64 MB;
// H100 NVLS 234 at 16 MB, 362 at 64 MB).
constexpr double kRingBusbwFraction = 0.78;
constexpr double kNvlsBusbwFraction = 1.06;
constexpr double kNvlinkHalfBandwidthBytes = 25e6;
// Across nodes: per-GPU NIC at 0.74 (AWS p6-b200 4 nodes: 381.8 GB/s busbw = ~37 GB/s per 50 GB/s
// NIC, kernels/README.md); half of it at ~100 MB (same sweep: 91 GB/s at 32 MB, 198 at 128 MB).
constexpr double kNetworkBusbwFraction = 0.74;
constexpr double kNetworkHalfBandwidthBytes = 100e6;
// Smallest collective time: nccl-tests 8-GPU all-reduce at 32 KB-4 MB runs 44-101 us (A100) and
// 25-57 us (H100 NVLS); 40 us taken as the floor of the latency term.
constexpr double kCollectiveFloorS = 40e-6;
constexpr double kPcieBytesPerS = 32e9;        // PCIe Gen4 x16, one direction (no NVLink)
// Host-side optimizer step with offload (DeepSpeed CPU-Adam, FSDP CPUOffload's torch step):
// memory-bound over fp32 master, moments and gradients (16 B/param read and written) at this
// share of a socket's DDR bandwidth per GPU. An assumed constant, NOT verified against a measurement.
constexpr double kHostOptimizerBytesPerS = 25e9;
constexpr double kLogitsElementBytes = 12.0;   // fused cross-entropy passes over fp32 logits (fwd + bwd)
// Eager F.cross_entropy(logits.float()) forward + backward (torchtitan's loss; HF models' upcast loss):
// H100 SXM 9.996 ms for 4096 x 128256 logits and 39.53 ms for 16384 x 128256 (gpu_kernel_rates.csv
// cross_entropy_eager_fwd_bwd) = 63.7 and 63.0 bytes of datasheet bandwidth (3.35 TB/s) per logit
// element. Counted passes give at least 36 bytes (fp32 upcast 2+4, log_softmax 4+4, zero-filled NLL
// gradient 4, log_softmax backward 4+4+4, downcast 4+2); the rest is the widening cast running at 0.59
// of datasheet (cast_bf16_to_fp32 row) and the softmax reductions re-reading each 128k-wide row. The
// torch.compile'd loss measures 15.9 bytes (2.499 ms), which kLogitsElementBytes at the compiled
// profile's rate (17.6) covers.
constexpr double kEagerLossBytesPerLogit = 63.0;
// Megatron DDP bucket: max(40M, 1M x dp) elements (FRAMEWORK_NOTES.md §2.2); DeepSpeed
// reduce/allgather_bucket_size 5e8 elements (§3.1).
constexpr double kMegatronBucketElements = 40e6;
constexpr double kDeepSpeedBucketElements = 5e8;

// [SECTION] Framework profiles

// gemm_fraction_of_ceiling: training GEMMs against the GPU's best-shape matmul rate (its MAMF
// ceiling), one calibration per kernel profile (THROUGHPUT_NOTES.md §7, item 10). Eager stacks keep
// the FrameworkPerf default 0.84, where meshfit's own H100 and H200 steps (132 runs, signed +2.6% and
// +4.3%) and Hagemann et al.'s 401 runs (+0.1%) center. Megatron-LM's fused profile runs its GEMMs
// at 0.87, where Narayanan 2021, Korthikanti 2022 (priced as they ran: no FlashAttention, Megatron's
// pipeline scatter/gather, Narayanan's fp16 gradient all-reduce) and Llama 3 405B center: 27 runs,
// median |error| 2.4%, signed -0.3% (per source 1.2%, 3.9%, 1.4%); with 0.84 they read 2.6%, signed
// -2.6% (Korthikanti 6.3%).
// Wave and tile quantization are modelled per GEMM shape (wave_quantized_s).
constexpr double kMegatronGemmFractionOfCeiling = 0.87;

FrameworkPerf megatron_fused() {
  FrameworkPerf p;
  p.source = "Megatron-LM + Transformer Engine: fused norm+GEMM, RoPE, SwiGLU, bias-dropout-add; cuDNN attention";
  p.host_ops_per_layer = 14;
  p.host_op_s = kEagerHostOpS;
  p.elementwise_fraction = 0.8;
  p.fa3_on_hopper = true;
  p.fused_softmax = true;  // Megatron-LM FusedScaleMaskSoftmax (megatron/core/fusions/fused_softmax.py)
  p.fp8_casts = Fp8Casts::kFusedIntoKernels;
  p.gemm_fraction_of_ceiling = kMegatronGemmFractionOfCeiling;
  return p;
}

FrameworkPerf eager(const char* source) {
  FrameworkPerf p;
  p.source = source;
  p.host_ops_per_layer = 35;  // the stas00 derivation's eager Llama layer
  p.host_op_s = kEagerHostOpS;
  p.elementwise_fraction = 0.55;  // unfused elementwise: several passes, fp32 upcasts in norms
  p.host_ops_per_microbatch = 40;
  p.eager_fp32_loss = true;
  return p;
}

FrameworkPerf compiled(FrameworkPerf p) {
  p.source = "torch.compile: Inductor fuses the elementwise chain into ~10 kernels per layer";
  p.host_ops_per_layer = 10;
  p.elementwise_fraction = 0.8;
  p.host_ops_per_microbatch = 15;
  p.eager_fp32_loss = false;  // Inductor fuses the upcast, softmax and gradient
  p.eager_rmsnorm = false;    // and the norm's chain
  p.fused_softmax = true;     // and, without flash, the attention's scale, mask and softmax
  if (p.fp8_casts == Fp8Casts::kDynamicEager) p.fp8_casts = Fp8Casts::kSeparatePass;
  return p;
}

}  // namespace

FrameworkPerf framework_perf(Framework framework, Kernels kernels, bool dp_comm_overlap) {
  FrameworkPerf p;
  switch (framework) {
    case Framework::kMegatron: p = kernels == Kernels::kEager ? eager("Megatron-LM's layers in eager PyTorch (no Transformer Engine)")
                                                             : megatron_fused();
      // Narayanan et al. SC'21 §4.1 "scatter/gather communication optimization": without SP each TP
      // rank sends 1/tp of the boundary activation to the next stage, which all-gathers it over
      // NVLink (arguments.py scatter_gather_tensors_in_pipeline, on unless
      // --no-scatter-gather-tensors-in-pipeline).
      p.pp_scatter_gather = true;
      break;
    case Framework::kNanotron:
      // Eager PyTorch layers with flash_attn's FlashAttention-2 (no FA3/cuDNN path) and a Triton
      // RMSNorm; the fp32 accumulator adds each micro-batch's bf16 gradients in a backward hook
      // (accumulate_grad_in_fp32) and the sharded cross-entropy runs as eager fp32 ops.
      p = eager("nanotron: eager PyTorch, FlashAttention-2, fp32 gradient accumulator");
      p.fused_grad_accumulation = false;
      // ZeRO-1 (optim/zero.py ZeroDistributedOptimizer): the gradients are reduce-scattered in the
      // backward hooks, but the updated shards are all-gathered after the optimizer step, before the
      // next forward starts: never hidden. Why ZeRO-0 can beat ZeRO-1 at the same degrees.
      p.param_gather_overlap = 0.0;
      if (kernels == Kernels::kFused) p = megatron_fused();
      break;
    case Framework::kFsdp:
      p = eager("torchtitan / FSDP2, eager (default), SDPA attention");
      if (kernels == Kernels::kFused) p = megatron_fused();
      p.dp_always_overlapped = true;
      break;
    case Framework::kDeepSpeed:
      p = eager("DeepSpeed engine with Hugging Face models: eager RMSNorm and softmax (Megatron-DeepSpeed: kernels = fused)");
      p.host_ops_per_layer = 28;
      // Backward hooks copy/accumulate each micro-batch's gradients into the (fp32) accumulation
      // buffer (DeepSpeed stage_1_and_2 IPG buffer / BF16_Optimizer, FRAMEWORK_NOTES §3.2).
      p.fused_grad_accumulation = false;
      p.elementwise_fraction = 0.7;
      p.eager_rmsnorm = true;  // HF models' LlamaRMSNorm; Megatron-DeepSpeed's fused kernels: kernels = fused
      // ZeRO-1/2 all-gather the updated partitions after the step (FRAMEWORK_NOTES §3.2): never hidden.
      p.param_gather_overlap = 0.0;
      // ZeRO-3 parameter fetches: calibrated on Narayanan et al. 2021 Table 2 (175B/530B, 384-2240
      // A100): the collapse from 144 to 44 TFLOP/s matches gathers at one NIC per GPU, 1/8 of the
      // node's rails that nccl-tests reach (collective_rates.csv). One constant, 6 runs.
      p.zero3_bandwidth_fraction = 1.0 / 8.0;
      if (kernels == Kernels::kFused) {  // Megatron-DeepSpeed with Megatron's fused kernels
        p.host_ops_per_layer = 14;
        p.eager_fp32_loss = false;
        p.fused_softmax = true;
        p.fused_grad_accumulation = true;
        p.eager_rmsnorm = false;
      }
      break;
  }
  if (kernels == Kernels::kCompiled) p = compiled(p);
  // Without overlap the gradient sync and the parameter gather run after the compute (plain
  // Megatron-LM's flags and DeepSpeed below ZeRO-3 by default: dp_comm_overlapped resolves auto).
  if (!dp_comm_overlap && !p.dp_always_overlapped) p.dp_overlap = p.param_gather_overlap = 0.0;
  return p;
}

namespace {

// The kernels the step is timed with: compiled under torch.compile, which AsyncTP implies
// (runs_compiled, as the memory model reads it), else the config's own.
Kernels timed_kernels(const TrainingSpec& training, int64_t tp) {
  return runs_compiled(training, tp) ? Kernels::kCompiled : training.kernels;
}

// norm_kernel resolved against the profile's own default (`profile_eager`, framework_perf's).
bool eager_rmsnorm_resolved(const Config& config, bool profile_eager) {
  const TrainingSpec& t = config.training;
  if (config.model.norm != NormKind::kRmsNorm || runs_compiled(t, config.layout.tp)) return false;
  if (t.norm_kernel != NormKernel::kAuto) return t.norm_kernel == NormKernel::kEager;
  // auto: a fine-tune runs its stack's own module, Hugging Face's LlamaRMSNorm (PEFT, Axolotl,
  // DeepSpeed/FSDP through Accelerate), torchtune's modules/rms_norm.py or litgpt's RMSNorm, each an
  // x.float() chain of separate ops; otherwise the framework's profile says.
  return t.finetune != FinetuneMethod::kNone || profile_eager;
}

}  // namespace

bool runs_eager_rmsnorm(const Config& config) {
  const TrainingSpec& t = config.training;
  return eager_rmsnorm_resolved(config, framework_perf(t.framework, timed_kernels(t, config.layout.tp), true).eager_rmsnorm);
}

// [SECTION] Kernel times

namespace {

// Linear in log2(x) between tabulated points, clamped to the table's ends.
template <size_t N>
double interpolate_log2(const double (&xs)[N], const double (&ys)[N], double x) {
  const double lx = std::log2(std::clamp(x, xs[0], xs[N - 1]));
  for (size_t i = 0; i + 1 < N; ++i) {
    const double x0 = std::log2(xs[i]), x1 = std::log2(xs[i + 1]);
    if (lx <= x1) return ys[i] + (ys[i + 1] - ys[i]) * (lx - x0) / (x1 - x0);
  }
  return ys[N - 1];
}

// A Hopper FA2 table at (head_dim, seq): log2 interpolation in sequence, then in head dim (64..256).
double hopper_fa2_tflops(const double (&table)[3][7], double head_dim, double seq) {
  const double by_dim[3] = {interpolate_log2(kHopperFlashSeq, table[0], seq), interpolate_log2(kHopperFlashSeq, table[1], seq),
                            interpolate_log2(kHopperFlashSeq, table[2], seq)};
  return interpolate_log2(kHopperFlashHeadDims, by_dim, head_dim);
}

// FlashAttention forward+backward (causal, useful FLOPs) as a fraction of bf16 peak, and the forward's
// share of its time.
struct FlashRate {
  double fraction_of_peak = 0;
  double forward_share = 1.0 - kFlashBackwardShare;
};
FlashRate flash_rate(const std::string& family, double head_dim, double seq, bool fa3_on_hopper) {
  const bool hopper_or_later = family == "hopper" || family == "blackwell";
  FlashRate rate;
  if (!hopper_or_later) {
    const double wide = std::clamp((head_dim - 64.0) / 64.0, 0.0, 1.0);  // 64 -> 0, >= 128 -> 1
    const double a = interpolate_log2(kFlashSeq, kFa2A100Causal64, seq), b = interpolate_log2(kFlashSeq, kFa2A100Causal128, seq);
    rate.fraction_of_peak = (a + (b - a) * wide) / 312.0;
    return rate;
  }
  const double total = hopper_fa2_tflops(kFa2H100ForwardBackward, head_dim, seq);
  // Forward time / forward+backward time = (F / forward rate) / (3.5 F / total rate).
  rate.forward_share = total / (3.5 * hopper_fa2_tflops(kFa2H100Forward, head_dim, seq));
  rate.fraction_of_peak = total / 989.0;
  if (family == "blackwell") rate.fraction_of_peak *= kBlackwellOverHopperAttentionFraction;
  else if (fa3_on_hopper) rate.fraction_of_peak *= kFa3OverFa2Hopper;
  return rate;
}

// Attention without FlashAttention: forward and backward time of `score_elements` = b*a*s^2/t scores
// per rank (the constants above). fp32_scores: the SDPA math backend (fp32 scores and GEMMs, its own
// pass count unless the softmax is fused); fused_softmax: one kernel each way.
struct UnfusedAttentionTime {
  double forward_s = 0, backward_s = 0;
};
UnfusedAttentionTime unfused_attention_s(double score_elements, double head_dim, bool fp32_scores, bool fused_softmax,
                                         bool dropout, double bf16_gemm_flops, double fp32_gemm_flops, double hbm_rate,
                                         double score_gemm_hbm_rate) {
  const double element = fp32_scores ? 4.0 : 2.0;
  const double gemm_flops = fp32_scores ? fp32_gemm_flops : bf16_gemm_flops;
  const double per_gemm_s = 2.0 * head_dim / gemm_flops + element / score_gemm_hbm_rate;  // per score element
  double forward_bytes = fused_softmax ? kFusedSoftmaxForwardPasses * element
                         : fp32_scores ? kSdpaMathForwardBytes : kEagerSoftmaxForwardBytes;
  double backward_bytes = fused_softmax ? kFusedSoftmaxBackwardPasses * element
                          : fp32_scores ? kSdpaMathBackwardBytes : kEagerSoftmaxBackwardBytes;
  if (dropout) {
    forward_bytes += 2.0 * element + kDropoutMaskBytes;
    backward_bytes += 2.0 * element + kDropoutMaskBytes;
  }
  UnfusedAttentionTime out;
  out.forward_s = score_elements * (kScoreGemmsForward * per_gemm_s + forward_bytes / hbm_rate);
  out.backward_s = score_elements * (kScoreGemmsBackward * per_gemm_s + backward_bytes / hbm_rate);
  return out;
}

struct Rates {
  double gemm_flops = 0;        // achieved large-GEMM rate (precision of the GEMMs)
  double bf16_gemm_flops = 0;   // for the GEMMs that stay in bf16 (LM head)
  double hbm_bytes_per_s = 0;   // memory-bound kernels
  double hbm_stream = 0;        // GEMM operand traffic (roofline)
  int64_t sms = 0;              // SMs the GEMM tiles spread over (0 = unknown: no wave quantization)
};

// Tile and wave quantization (NVIDIA Deep Learning Performance Documentation, "Matrix Multiplication
// Background User's Guide", sections "Tile Quantization" and "Wave Quantization"): cuBLAS computes C in
// output tiles, one thread block per tile and one tile per SM at a time, so a GEMM runs
// ceil(tiles / SMs) waves at the full-wave rate, and tiles that overhang the matrix edge or leave SMs
// idle in the last wave do no useful work. The library picks the tile shape, and a split of the
// reduction dimension (split-K: more work units, plus an fp32 partial-sum pass), that finishes first.
// Smaller tiles reuse less data per SM and run below the large tile's rate: kTileRates are assumed,
// checked against the A100 cuBLASLt square sweep (gemm_rates.csv, Azure AI-benchmarking-guide ND A100
// v4: 1024^3 119.4, 2048^3 221.8, 1024x2145x1024 132.8 TFLOP/s; tests/core/test_perf_model.cpp).
struct TileShape {
  double m, n, rate;  // tile rows, columns, and its full-wave rate as a fraction of the large tile's
};
constexpr TileShape kTileRates[] = {{256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.95},
                                    {128, 64, 0.85}, {64, 128, 0.85}, {64, 64, 0.7}};
constexpr double kSplitKMinDepth = 512;  // split-K only while each part keeps this much of K

// Compute time of a GEMM of m x n (reduction k) on `sms` SMs at `flops_rate` for full waves of large
// tiles: the best tile shape and split-K, the split's fp32 partial sums written and read back at
// `hbm_rate`. Without an SM count (0), the full-wave time.
double wave_quantized_s(double m, double n, double k, int64_t sms, double flops_rate, double hbm_rate) {
  const double ideal = 2.0 * m * n * k / flops_rate;
  if (sms <= 0) return ideal;
  double best = INFINITY;
  for (const TileShape& tile : kTileRates) {
    for (int split : {1, 2, 4}) {
      if (split > 1 && k / split < kSplitKMinDepth) continue;
      const double units = std::ceil(m / tile.m) * std::ceil(n / tile.n) * split;
      const double waves = std::ceil(units / double(sms));
      const double tile_s = 2.0 * tile.m * tile.n * (k / split) / (flops_rate / double(sms) * tile.rate);
      const double partial_sums_s = split > 1 ? 2.0 * 4.0 * m * n * split / hbm_rate : 0.0;
      best = std::min(best, waves * tile_s + partial_sums_s);
    }
  }
  return best;
}

// One GEMM of m x k by k x n: the larger of its compute (wave-quantized) and operand-traffic times,
// plus the fixed cost.
// The share of the aligned rate a GEMM keeps given the byte alignment of its operands' leading
// dimensions, which for a linear layer are its input and output widths in all three passes (the
// tokens never are): see kGemmAlign8ByteFraction. Hopper and Blackwell only: their TMA/wgmma
// kernels are the ones that need 16 bytes; Ampere and older were not measured and keep 1. A
// fractional width (an uneven shard) counts as unaligned.
double gemm_alignment_fraction(const GpuSpec& gpu, double width_a, double width_b, double element_bytes) {
  if (gpu.family != "hopper" && gpu.family != "blackwell") return 1.0;
  double worst = 16;
  for (double width : {width_a, width_b}) {
    const double bytes = width * element_bytes;
    const bool whole = bytes == std::floor(bytes);
    worst = std::min(worst, whole && std::fmod(bytes, 16.0) == 0 ? 16.0 : whole && std::fmod(bytes, 8.0) == 0 ? 8.0 : 0.0);
  }
  return worst >= 16 ? 1.0 : worst >= 8 ? kGemmAlign8ByteFraction : kGemmAlignUnder8ByteFraction;
}

double gemm_s(double m, double n, double k, double flops_rate, double hbm_rate, double element_bytes, int64_t sms,
              double alignment = 1.0) {
  const double compute = wave_quantized_s(m, n, k, sms, flops_rate, hbm_rate) / alignment;
  const double traffic = element_bytes * (m * k + k * n + m * n) / hbm_rate;
  return std::max(compute, traffic) + kGemmFixedS;
}

// [SECTION] Collectives

struct Link {
  double busbw_max = 0;     // saturated bus bandwidth, bytes/s
  double half_bytes = 0;    // message size reaching half of it
  bool nvls = false;        // all-reduce through NVLink SHARP
  bool crosses_nodes = false;
};

double collective_s(const Link& link, double factor, double bytes) {
  if (bytes <= 0 || factor <= 0) return 0;
  const double curve = factor * (bytes + link.half_bytes) / link.busbw_max;  // = factor*S / busbw(S)
  return std::min(curve, kCollectiveFloorS + factor * bytes / link.busbw_max);
}
double all_reduce_s(const Link& link, int64_t members, double bytes) {
  if (members <= 1) return 0;
  const double n = double(members);
  Link l = link;
  if (link.nvls) l.busbw_max *= kNvlsBusbwFraction / kRingBusbwFraction;
  return collective_s(l, 2.0 * (n - 1.0) / n, bytes);
}
double gather_or_scatter_s(const Link& link, int64_t members, double bytes) {
  if (members <= 1) return 0;
  const double n = double(members);
  return collective_s(link, (n - 1.0) / n, bytes);
}
double send_s(const Link& link, double bytes) { return collective_s(link, 1.0, bytes); }

// NVL72-style domains span nodes; otherwise NVLink ends at the node (structure.h).
int64_t nvlink_domain(const Config& config) { return nvlink_domain_gpus(config); }

// A group of `members` ranks spaced `stride` apart (Megatron order: tp, cp, dp, pp).
Link link_for_group(const Config& config, int64_t stride, int64_t members) {
  Link link;
  const int64_t span = stride * members;
  const double per_direction_nvlink = config.gpu.nvlink_bytes_per_s / 2.0;
  if (span <= nvlink_domain(config)) {
    link.busbw_max = per_direction_nvlink * kRingBusbwFraction;
    link.half_bytes = kNvlinkHalfBandwidthBytes;
    link.nvls = config.gpu.nvlink_bytes_per_s >= 900e9 && config.gpu.nvlink_domain >= 8;
  } else if (span <= config.cluster.gpus_per_node) {
    link.busbw_max = kPcieBytesPerS * kNetworkBusbwFraction;
    link.half_bytes = kNetworkHalfBandwidthBytes;
  } else {
    // NCCL runs one ring per NIC: members sharing a node use their NICs in parallel.
    const int64_t local = std::max<int64_t>(1, std::min(members, config.cluster.gpus_per_node / std::max<int64_t>(stride, 1)));
    link.busbw_max = config.gpu.internode_bytes_per_s * kNetworkBusbwFraction * double(local);
    if (config.gpu.nvlink_bytes_per_s > 0) link.busbw_max = std::min(link.busbw_max, per_direction_nvlink * kRingBusbwFraction);
    link.half_bytes = kNetworkHalfBandwidthBytes;
    link.crosses_nodes = true;
  }
  return link;
}

// [SECTION] Spatial-temporal model parallelism
// PrimePar (Wang et al., "PrimePar: Efficient Spatial-temporal Tensor Partitioning for Large
// Transformer Model Training", ASPLOS '24, DOI 10.1145/3620666.3651357): the tp group is
// t_c = tp/q^2 conventional splits times a q x q square running P_{qxq} (Cannon's algorithm).
// Per projection and phase (forward F, activation gradient B, weight gradient G), each GPU runs q
// sub-GEMMs while receiving the next step's blocks point-to-point (Table 1, p.805; Fig. 4): a step
// costs max(sub-GEMM, block transfer), the first needs no transfer (Eq. 7, p.808: sum over t of
// max(compute, ring)). The weight-gradient phase's last step moves the dW partial (Table 1, t = q-1),
// and each projection's input is re-laid out into the skewed Cannon layout at its boundary (Eq. 9,
// p.808, the inter-operator redistribution). Conventional splits (t_c > 1) keep Megatron's
// blocking collectives on 1/q^2 of the activation. Nothing here is calibrated against PrimePar's
// measurements (the paper gives only normalised figures); tests/core/test_spatial_temporal.cpp
// compares the ratios.

struct StLinear {
  double n = 0, k = 0;  // input and output width on one conventional split (the square splits both q ways)
};

int64_t st_q_of(const Config& config) { return std::max<int64_t>(1, config.layout.st_q); }
int64_t st_conventional(const Config& config) { return config.layout.tp / (st_q_of(config) * st_q_of(config)); }

// The layer's four projections (QKV, attention out, MLP in, MLP out), the conventional split taken
// Megatron's way: column-parallel on K for QKV and MLP in, row-parallel on N for the other two.
std::array<StLinear, 4> st_linears(const Config& config) {
  const ModelSpec& model = config.model;
  const double tc = double(st_conventional(config));
  const double h = double(model.hidden), f = double(model.ffn);
  const double q = query_width(model), kv = kv_width(model);  // a*d and k*d (model_spec.h)
  const double mlp_in = (model.mlp == MlpKind::kSwiGlu ? 2.0 : 1.0) * f;
  return {StLinear{h, (q + 2.0 * kv) / tc}, StLinear{q / tc, h}, StLinear{h, mlp_in / tc}, StLinear{f / tc, h}};
}

struct StPhaseTimes {
  double compute_s = 0;        // one phase's q sub-GEMMs (each phase has the same FLOPs)
  double exposed_fwd_s = 0;    // forward: transfer time not hidden under the sub-GEMMs, plus the input re-layout
  double exposed_bwd_s = 0;    // backward B + G phases, dW realignment, gradient re-layout
};

StPhaseTimes st_linear_time(const Config& config, const StLinear& linear, const Rates& rate, double gemm_bytes) {
  const double q = double(st_q_of(config));
  const double tokens = double(config.training.seq) / double(config.layout.cp) * double(config.training.micro_batch);
  const double n = linear.n, k = linear.k;
  // The square lies inside the NVLink domain (validated): its ring shifts use NVLink point-to-point.
  const Link link = link_for_group(config, 1, st_q_of(config) * st_q_of(config));
  const double step_compute = gemm_s(tokens / q, k / q, n / q, rate.gemm_flops, rate.hbm_stream, gemm_bytes, rate.sms);
  // Blocks received per step (Table 1), bf16: F: I [T/q x N/q] + W [N/q x K/q]; B: dO [T/q x K/q] + W;
  // G: I + dO. The two arrive from different neighbours over the GPU's NVLink at once.
  const double w_block = 2.0 * n * k / (q * q);
  const double i_block = 2.0 * tokens * n / (q * q), o_block = 2.0 * tokens * k / (q * q);
  const auto phase = [&](double bytes) {
    const double transfer = send_s(link, bytes);
    return (q - 1.0) * std::max(0.0, transfer - step_compute);  // exposed beyond the q sub-GEMMs
  };
  StPhaseTimes out;
  out.compute_s = q * step_compute;
  out.exposed_fwd_s = phase(i_block + w_block) + send_s(link, i_block);  // + input skew (Eq. 9)
  // G: steps 0..q-2 receive the next I and dO blocks; the last step receives the dW partial
  // accumulated so far while computing its own share (Table 1, t = q-1).
  // B's last step also moves W back to the forward layout (Table 1, t = q-1).
  const double last_w = std::max(0.0, send_s(link, w_block) - step_compute);
  out.exposed_bwd_s = phase(o_block + w_block) + last_w + phase(i_block + o_block) +
                      last_w +                  // dW realignment (a block of W's size)
                      send_s(link, o_block);    // dO skew
  return out;
}

struct StageTime {
  double compute = 0;      // forward + backward (+ recompute), one micro-batch
  double forward = 0;
  double backward = 0;
  double tp = 0;
  double cp = 0;
  double p2p = 0;
  double zero3 = 0;        // exposed per micro-batch
  double total() const { return compute + tp + cp + p2p + zero3; }
};

double matmul_parameters_per_layer(const ModelSpec& model) {
  const LayerParameters layer = layer_parameters(model);
  return layer.attention + layer.mlp;  // biases included: they cost one flop pair each too
}

// The sizes every per-micro-batch term uses, as doubles: tp, hidden, heads, kv heads, sequence,
// tokens per rank per micro-batch (s*b/cp), the SP divisor of sequence-sharded tensors, and the
// attention head dimension d (head_dim, or h/a: model_spec.h attention_head_dim).
struct Dims {
  double t, h, a, k, seq, tokens, t_sp, d;
};
Dims dims_of(const Config& config) {
  const Layout& layout = config.layout;
  const double seq = double(config.training.seq);
  const double t = double(layout.tp);
  return {t,
          double(config.model.hidden),
          double(config.model.heads),
          double(config.model.kv_heads),
          seq,
          seq / double(layout.cp) * double(config.training.micro_batch),
          (config.training.sp || spatial_temporal(layout)) && layout.tp > 1 ? t : 1.0,
          attention_head_dim(config.model)};
}

struct LayerCompute {
  Rates rate;                    // achieved GEMM and memory-bound rates on this GPU and framework
  double gemm_efficiency = 0;    // reached on this layer's GEMMs, of the GEMM peak
  double matmul_fwd_flops = 0;   // GEMM flops of one forward
  double matmul_fwd_s = 0;
  double matmul_dgrad_s = 0;     // backward: input gradients of the same GEMMs
  double matmul_wgrad_s = 0;     // backward: weight gradients (reduction over the tokens)
  double attention_fwd_flops = 0;
  double attention_fwd_s = 0;
  double attention_total_s = 0;  // forward + backward
  double elementwise_fwd_s = 0;
  double forward_s = 0;          // max(device, host dispatch)
  double backward_s = 0;
  double host_bound_fraction = 0;
  double host_wait_s = 0;        // forward_s + backward_s less the device's time: the GPU idles on the host's dispatch
  double recompute_s = 0;        // extra forward work in the backward
  double recompute_flops = 0;
};

// One layer on one rank for one micro-batch, from its kernels: four GEMMs by shape, the attention
// kernel, the memory-bound kernels, launch floors, and the host's dispatch of the layer's ops.
// (~85 lines: the kernels in the order the layer runs them, each one term with its source; split,
// the dozen shape terms would travel between the parts.)
// The share of a stage's layers that recompute=full rebuilds in backward: 1, or recompute_layers
// per chunk over the chunk's layers (Megatron's block method), on the average stage; 0 otherwise.
double full_recompute_share(const Config& config) {
  const double stage_layers = double(config.model.layers) / double(std::max<int64_t>(config.layout.pp, 1));
  if (!(stage_layers > 0)) return 0.0;
  const TrainingSpec& t = config.training;
  return recomputed_layers(t.recompute, t.recompute_layers, stage_layers, config.layout.vpp) / stage_layers;
}

LayerCompute layer_compute(const Config& config, const MemoryPlan& plan, const FrameworkPerf& perf) {
  const ModelSpec& model = config.model;
  const TrainingSpec& training = config.training;
  const GpuSpec& gpu = config.gpu;
  const Dims dims = dims_of(config);  // plain names (C++17 lambdas cannot capture structured bindings)
  const double t = dims.t, h = dims.h, a = dims.a, k = dims.k, seq = dims.seq, tokens = dims.tokens, t_sp = dims.t_sp;
  const double f = double(model.ffn);
  const double d = dims.d, q = a * d;  // head dimension and the query/output width a*d (h unless head_dim is set apart)
  const bool fp8 = training.precision == Precision::kFp8 && gpu.fp8_flops > 0;
  const double clock = power_cap_clock_fraction(gpu);
  const double bf16_peak = gpu.bf16_flops;
  LayerCompute out;

  Rates& rate = out.rate;
  rate.bf16_gemm_flops = bf16_peak * gpu.bf16_gemm_ceiling * perf.gemm_fraction_of_ceiling * clock;
  rate.gemm_flops = fp8 ? gpu.fp8_flops * gpu.fp8_gemm_ceiling * perf.gemm_fraction_of_ceiling * clock : rate.bf16_gemm_flops;
  rate.hbm_stream = streaming_bytes_per_s(gpu);
  rate.hbm_bytes_per_s = elementwise_bytes_per_s(gpu, perf);
  rate.sms = gpu.sms;
  const double gemm_bytes = fp8 ? 1.0 : 2.0;

  // Layer GEMMs per rank and micro-batch: QKV, attention out, MLP in (gate+up), MLP out, each as
  // (output width n, reduction k) of the forward T x k by k x n. The backward runs each twice with
  // other shapes, so other wave counts: the input gradient T x n by n x k, and the weight gradient
  // k x T by T x n (the weight's shape, reduced over the tokens).
  const bool gated = model.mlp == MlpKind::kSwiGlu;
  const double qkv_n = (q + 2.0 * k * d) / t, mlp_in_n = (gated ? 2.0 : 1.0) * f / t;
  const double linears[4][2] = {{qkv_n, h}, {h, q / t}, {mlp_in_n, h}, {h, f / t}};
  for (const auto& linear : linears) {
    const double n = linear[0], reduction = linear[1];
    const double align = gemm_alignment_fraction(gpu, n, reduction, gemm_bytes);
    out.matmul_fwd_s += gemm_s(tokens, n, reduction, rate.gemm_flops, rate.hbm_stream, gemm_bytes, rate.sms, align);
    out.matmul_dgrad_s += gemm_s(tokens, reduction, n, rate.gemm_flops, rate.hbm_stream, gemm_bytes, rate.sms, align);
    out.matmul_wgrad_s += gemm_s(reduction, n, tokens, rate.gemm_flops, rate.hbm_stream, gemm_bytes, rate.sms, align);
  }
  if (spatial_temporal(config.layout)) {
    // P_{qxq} runs each projection as q sequential sub-GEMMs of 1/q^3 of its FLOPs (PrimePar §3.3):
    // rows T/q, inner N/q, columns K/q, each at its own (smaller-shape) rate; every phase (forward,
    // input gradient, weight gradient) has the same sub-GEMMs.
    out.matmul_fwd_s = 0;
    for (const StLinear& linear : st_linears(config)) out.matmul_fwd_s += st_linear_time(config, linear, rate, gemm_bytes).compute_s;
    out.matmul_dgrad_s = out.matmul_wgrad_s = out.matmul_fwd_s;
  }
  out.matmul_fwd_flops = 2.0 * tokens * matmul_parameters_per_layer(model) / t;
  out.gemm_efficiency = out.matmul_fwd_flops / out.matmul_fwd_s / (fp8 ? gpu.fp8_flops : bf16_peak);

  // Attention core: useful FLOPs are causal QK^T and AV over the visible half of the scores (FA
  // convention, 2*T*s*a*d/t). FlashAttention at its measured rate; without it, the unfused kernels
  // over the full s x s scores (unfused_attention_s).
  out.attention_fwd_flops = 2.0 * tokens * seq * q / t;
  if (training.flash) {
    const FlashRate attention_rate = flash_rate(gpu.family, d, seq, perf.fa3_on_hopper);
    out.attention_total_s = std::max(3.5 * out.attention_fwd_flops / (bf16_peak * clock * attention_rate.fraction_of_peak),
                                     2.0 * kKernelLaunchFloorS);
    out.attention_fwd_s = out.attention_total_s * attention_rate.forward_share;
  } else {
    const UnfusedAttentionTime unfused =
        unfused_attention_s(tokens * seq * a / t, d, plan.profile.fp32_math_attention, perf.fused_softmax, model.dropout,
                            rate.bf16_gemm_flops, bf16_peak * clock * kFp32GemmFractionOfBf16Peak, rate.hbm_stream,
                            gpu.hbm_bytes_per_s * kScoreGemmHbmFraction);
    out.attention_fwd_s = std::max(unfused.forward_s, kKernelLaunchFloorS);
    out.attention_total_s = out.attention_fwd_s + std::max(unfused.backward_s, kKernelLaunchFloorS);
  }
  const double attention_bwd_s = out.attention_total_s - out.attention_fwd_s;

  // Memory-bound kernels, forward bytes per token: two norms 2 x 4h fused (eager RMSNorm 2 x 36h,
  // kEagerRmsNormBytes), residual adds 12h, rotary 4(a + k)d (written 4h(q/h + kd/h): 4h(1 + k/a) to
  // the bit without head_dim), SwiGLU/GeLU 6f (2-byte elements read and written); backward: twice
  // the forward traffic. Without SP the norms and residuals run whole on every TP rank.
  const double norm_bytes = perf.eager_rmsnorm ? kEagerRmsNormBytes : kFusedRmsNormBytes;  // resolved in step_terms
  double elementwise_fwd_bytes =
      tokens * ((12.0 * h + 2.0 * norm_bytes * h) / t_sp + 4.0 * h * (q / h + k * d / h) / t + 6.0 * f / t);
  if (fp8) {
    // FP8 casts, a cast reading 2 and writing 1 byte per element (an amax pass reads 2 more), of the
    // four GEMM inputs (2h + ad + f wide). Transformer Engine's LayerNormLinear / LayerNormMLP write
    // the norm's and the activation's output in fp8 (TE module docstrings; FRAMEWORK_NOTES §2.3:
    // LayerNormLinear saves its fp8 LN output), so only the attention output (the out-projection's
    // input) is cast on its own, and the weights are cast once per step (is_first_microbatch caching,
    // §2.3). torchao float8 (torchtitan, §1.9) casts each GEMM input with dynamic tensorwise scaling,
    // and in eager also recasts the layer's weights every micro-batch; under torch.compile the amax
    // fuses into the cast.
    const double inputs = (2.0 * h + q) / t_sp + f / t;
    switch (perf.fp8_casts) {
      case Fp8Casts::kFusedIntoKernels: elementwise_fwd_bytes += tokens * 3.0 * q / t; break;
      case Fp8Casts::kSeparatePass: elementwise_fwd_bytes += tokens * 3.0 * inputs; break;
      case Fp8Casts::kDynamicEager:
        elementwise_fwd_bytes += tokens * 5.0 * inputs + 5.0 * matmul_parameters_per_layer(model) / t;
        break;
    }
  }
  const double elementwise_kernels = std::max(4.0, perf.host_ops_per_layer - 5.0);
  out.elementwise_fwd_s = std::max(elementwise_fwd_bytes / rate.hbm_bytes_per_s, elementwise_kernels * kKernelLaunchFloorS);

  // Fine-tuning (finetune.h finetune_work): frozen weights skip the weight-gradient GEMMs; LoRA adds
  // skinny GEMMs, bandwidth-bound, ~2x their forward in backward; QLoRA dequantises every projection
  // once per forward and once per backward (a recompute, below, repeats the forward's).
  const FinetuneWork work = finetune_work(config, tokens);
  const double adapter_fwd_s = std::max(work.adapter_flops_fwd / rate.bf16_gemm_flops, work.adapter_bytes_fwd / rate.hbm_stream);
  const double dequant_s = work.dequant_bytes / rate.hbm_stream;
  const double dora_norm_s = std::max(work.dora_norm_flops / rate.bf16_gemm_flops, work.dora_norm_bytes / rate.hbm_stream);

  // Device time vs host dispatch: a layer takes the longer of the two (the host runs ahead otherwise).
  const double device_fwd_s = out.matmul_fwd_s + out.attention_fwd_s + out.elementwise_fwd_s + adapter_fwd_s + dequant_s + dora_norm_s;
  const double device_bwd_s = out.matmul_dgrad_s + work.weight_grad_fraction * out.matmul_wgrad_s + attention_bwd_s +
                              2.0 * out.elementwise_fwd_s + 2.0 * adapter_fwd_s + dequant_s;
  const double host_fwd_s = (perf.host_ops_per_layer + perf.host_ops_per_sharded_unit) * perf.host_op_s;
  out.forward_s = std::max(device_fwd_s, host_fwd_s);
  out.backward_s = std::max(device_bwd_s, 2.0 * host_fwd_s);
  out.host_bound_fraction = std::max(0.0, 1.0 - (device_fwd_s + device_bwd_s) / (out.forward_s + out.backward_s));
  out.host_wait_s = out.forward_s + out.backward_s - (device_fwd_s + device_bwd_s);

  switch (training.recompute) {
    case Recompute::kNone: break;
    case Recompute::kFull: {
      const double share = full_recompute_share(config);  // < 1 under the block method
      out.recompute_s = share * out.forward_s;
      out.recompute_flops = share * (out.matmul_fwd_flops + out.attention_fwd_flops);
      break;
    }
    case Recompute::kSelective:
      if (plan.activation_settings.selective == SelectiveKind::kAttentionCore) {
        out.recompute_s = out.attention_fwd_s;
        out.recompute_flops = out.attention_fwd_flops;
      } else {
        // torchtitan op-level SAC recomputes wk, wo and w3 (every second matmul) + elementwise.
        const double recomputed = (h * k * d + q * h + h * f) / matmul_parameters_per_layer(model);
        out.recompute_s = recomputed * out.matmul_fwd_s + out.elementwise_fwd_s;
        out.recompute_flops = recomputed * out.matmul_fwd_flops;
      }
      break;
  }
  return out;
}

}  // namespace

double isolated_gemm_s(const GpuSpec& gpu, double m, double n, double k, bool fp8, double width_a, double width_b) {
  const bool use_fp8 = fp8 && gpu.fp8_flops > 0;
  const double rate = (use_fp8 ? gpu.fp8_flops * gpu.fp8_gemm_ceiling : gpu.bf16_flops * gpu.bf16_gemm_ceiling) *
                      power_cap_clock_fraction(gpu);
  const double bytes = use_fp8 ? 1.0 : 2.0;
  const double align = width_a > 0 && width_b > 0 ? gemm_alignment_fraction(gpu, width_a, width_b, bytes) : 1.0;
  return gemm_s(m, n, k, rate, streaming_bytes_per_s(gpu), bytes, gpu.sms, align);
}

AttentionTime isolated_attention_s(const GpuSpec& gpu, double batch, double heads, double seq, double head_dim,
                                   bool fa3_on_hopper) {
  const double forward_flops = 2.0 * batch * heads * seq * seq * head_dim;  // causal: half of 4*b*a*s^2*d
  const FlashRate rate = flash_rate(gpu.family, head_dim, seq, fa3_on_hopper);
  AttentionTime out;
  out.forward_backward_s = std::max(3.5 * forward_flops / (gpu.bf16_flops * power_cap_clock_fraction(gpu) * rate.fraction_of_peak),
                                    2.0 * kKernelLaunchFloorS);
  out.forward_s = out.forward_backward_s * rate.forward_share;
  return out;
}

double streaming_bytes_per_s(const GpuSpec& gpu) { return gpu.hbm_bytes_per_s * kHbmStreamFraction; }
double optimizer_step_bytes_per_s(const GpuSpec& gpu, const TrainingSpec& training) {
  return gpu.hbm_bytes_per_s * (foreach_optimizer_step(training) ? kForeachOptimizerHbmFraction : kFusedOptimizerHbmFraction);
}
double elementwise_bytes_per_s(const GpuSpec& gpu, const FrameworkPerf& perf) {
  return streaming_bytes_per_s(gpu) * perf.elementwise_fraction;
}
double loss_s_per_logit(const GpuSpec& gpu, const FrameworkPerf& perf) {
  return perf.eager_fp32_loss ? kEagerLossBytesPerLogit / gpu.hbm_bytes_per_s : kLogitsElementBytes / elementwise_bytes_per_s(gpu, perf);
}
double kernel_launch_floor_s() { return kKernelLaunchFloorS; }
double eager_host_op_s() { return kEagerHostOpS; }

namespace {

// The parameters every token multiplies through: the layers' linears and the LM head.
double linear_parameters(const ModelSpec& model) {
  return double(model.layers) * matmul_parameters_per_layer(model) + double(model.vocab) * double(model.hidden);
}

}  // namespace

double model_flops_per_token(const ModelSpec& model, int64_t seq) {
  // Attention scores and values: 12 * L * s * a*d per token (a*d == h unless head_dim is set apart).
  return 6.0 * linear_parameters(model) + 12.0 * double(model.layers) * query_width(model) * double(seq);
}

// [SECTION] Step time

namespace {

// What every pipeline stage's time is built from, computed once per config (the search calls
// predict_step per candidate): links, the per-layer compute, TP and CP time per layer, the head.
struct StepTerms {
  StepTerms(const Config& step_config, const MemoryPlan& step_plan, const FrameworkPerf& framework)
      : config(step_config), plan(step_plan), perf(framework), layer(layer_compute(step_config, step_plan, framework)),
        dims(dims_of(step_config)) {}
  const Config& config;
  const MemoryPlan& plan;
  FrameworkPerf perf;
  LayerCompute layer;
  Dims dims;
  Link dp_link{}, zero3_link{}, pp_link{};
  Link replica_link{};  // across the replicas of a shard group (Layout::dp_replicate)
  Link hpz_link{};      // DeepSpeed ZeRO++ hpZ's group, which the backward gathers over
  bool tp_crosses_nodes = false, dp_crosses_nodes = false;
  double tp_layer_s = 0;     // TP collectives of one layer, exposed
  double cp_layer_s = 0;     // CP ring traffic of one layer, exposed
  bool sharded_weights = false;
  int64_t shard_ranks = 1;
  int64_t replicas = 1;
  double reduce_bytes = 2;   // bytes per gradient element in the reduce
  double head_fwd_s = 0;
  double pp_send_s = 0;      // one chunk boundary's activation (or its gradient) to the next stage
  FinetuneWork work;
};

StepTerms step_terms(const Config& config, const MemoryPlan& plan) {
  const TrainingSpec& training = config.training;
  const Layout& layout = config.layout;
  // dp_comm_overlap auto resolves per framework and ZeRO stage (memory_model.h dp_comm_overlapped).
  FrameworkPerf perf = framework_perf(training.framework, timed_kernels(training, layout.tp), dp_comm_overlapped(training, layout.zero));
  // A fine-tune runs its stack's model code (Hugging Face transformers, torchtune, litgpt: eager
  // PyTorch modules) under whichever wrapper, DDP, FSDP or DeepSpeed: the kernels, so the dispatch
  // count and the elementwise rate, are the stack's, not those of the pretraining profile the wrapper
  // stands for (DeepSpeed's eager profile is the one Hagemann's Megatron-derived code calibrates).
  // The wrapper keeps its own hooks, gathers and overlap.
  if (training.finetune != FinetuneMethod::kNone && !runs_compiled(training, layout.tp) && training.kernels != Kernels::kFused) {
    const FrameworkPerf stack = eager("the fine-tuning stack's eager PyTorch modules");
    perf.host_ops_per_layer = stack.host_ops_per_layer;
    perf.host_ops_per_microbatch = stack.host_ops_per_microbatch;
    perf.elementwise_fraction = stack.elementwise_fraction;
    perf.eager_fp32_loss = stack.eager_fp32_loss;
  }
  // A cross-entropy the config names is timed as itself: eager F.cross_entropy on fp32 logits (and
  // torchtune's chunked loss, eager per chunk) at the measured 63 B per logit, a compiled or fused one
  // (Megatron's vocab-parallel) at the fused rate. An as-a-user review saw --loss change memory only.
  if (training.loss != LossKind::kAuto)
    perf.eager_fp32_loss = training.loss == LossKind::kEager || training.loss == LossKind::kEagerKeepLogits ||
                           training.loss == LossKind::kChunked;
  perf.eager_rmsnorm = eager_rmsnorm_resolved(config, perf.eager_rmsnorm);  // the profile just built, not a second one
  if (plan.profile.gathers_whole_blocks && plan.profile.weights_sharded(layout.zero))
    perf.host_ops_per_sharded_unit = kFsdpUnitHostOps;  // one fully_shard unit per block
  StepTerms terms(config, plan, perf);
  const Dims& dims = terms.dims;  // plain names (C++17 lambdas cannot capture structured bindings)
  const double t = dims.t, h = dims.h, k = dims.k, tokens = dims.tokens, t_sp = dims.t_sp;
  const double d = dims.d;
  const bool sequence_parallel = t_sp > 1.0;
  const Rates& rate = terms.layer.rate;

  // Communication links (Megatron rank order tp, cp, dp, pp).
  const int64_t dp = plan.dp;
  const Link tp_link = link_for_group(config, 1, layout.tp);
  const Link cp_link = link_for_group(config, layout.tp, layout.cp);
  // With replicated shard groups (torchtitan order [pp, dp_replicate, dp_shard, cp, tp]) the
  // gathers and reduce-scatters run inside a group of dp / replicas neighbours and the reduced shard
  // is all-reduced across the replicas, ranks a whole group apart.
  // Megatron-LM's instances slice the dp x cp ranks (rank order tp, cp, dp): a group is
  // dp x cp / replicas neighbours at stride tp.
  terms.replicas = std::max<int64_t>(1, layout.dp_replicate);
  if (terms.replicas > 1 && plan.profile.replicas_span_cp) {
    const int64_t group = dp * layout.cp / terms.replicas;
    terms.dp_link = link_for_group(config, layout.tp, group);
    terms.replica_link = link_for_group(config, layout.tp * group, terms.replicas);
  } else {
    // The shards span dp_shard x cp (torchtitan's dp_shard_cp mesh; Megatron's and DeepSpeed's
    // data-parallel group with context parallelism): neighbours tp apart, so a node holds
    // gpus_per_node / tp of them, each on its own NIC (a review saw cp x fewer NICs priced).
    const int64_t dp_shard = dp / terms.replicas;
    terms.dp_link = link_for_group(config, layout.tp, dp_shard * layout.cp);
    terms.replica_link = link_for_group(config, layout.tp * layout.cp * dp_shard, terms.replicas);
  }
  // The ZeRO-3 share is a network one (one NIC's rail per GPU, its calibration's multi-node runs):
  // gathers inside a node run at the link's rate (an as-a-user review saw one node's NVLink priced
  // at 44 GB/s, an 8B ZeRO-3 step twice FSDP2's).
  terms.zero3_link = terms.dp_link;
  if (terms.zero3_link.crosses_nodes) terms.zero3_link.busbw_max *= perf.zero3_bandwidth_fraction;
  // hpZ (Layout::hpz_partition_size, tp = 1): consecutive ranks (utils/groups.py
  // _create_zero_param_parallel_group), gathered as DeepSpeed gathers (the same bandwidth share).
  if (layout.hpz_partition_size > 1) {
    terms.hpz_link = link_for_group(config, 1, layout.hpz_partition_size);
    if (terms.hpz_link.crosses_nodes) terms.hpz_link.busbw_max *= perf.zero3_bandwidth_fraction;
  }
  terms.pp_link = link_for_group(config, layout.tp * layout.cp * dp, 2);
  terms.tp_crosses_nodes = layout.tp > 1 && tp_link.crosses_nodes;
  terms.dp_crosses_nodes = dp * layout.cp > 1 && (terms.dp_link.crosses_nodes || terms.replica_link.crosses_nodes);

  // TP: 2 all-reduce equivalents forward, 2 backward, 2 more in a full-recompute forward (with SP:
  // all-gather + reduce-scatter pairs, the same volume). Overlapped with the GEMMs only with
  // Megatron --tp-comm-overlap / torchtitan AsyncTP (hidden up to the GEMM time it splits).
  const double recompute_share = full_recompute_share(config);
  const double tp_collectives = 4.0 + 2.0 * recompute_share;
  const double tp_message = tokens * h * 2.0;
  terms.tp_layer_s = sequence_parallel ? tp_collectives * 2.0 * gather_or_scatter_s(tp_link, layout.tp, tp_message)
                                       : tp_collectives * all_reduce_s(tp_link, layout.tp, tp_message);
  // Overlap budgets below: the kernels a transfer hides behind, plus the time the GPU waits on the
  // host's dispatch (a side stream's transfer runs while the compute stream idles), so a faster GPU
  // never exposes more of it.
  const double host_wait = terms.layer.host_wait_s;
  // AsyncTP (torchtitan's micro-pipelined all-gather/reduce-scatter matmuls) hides TP as
  // Megatron's --tp-comm-overlap does (an as-a-user review saw it change memory but not time).
  const bool tp_overlap = training.tp_comm_overlap || async_tp_applies(training, layout.tp);
  if (tp_overlap && layout.tp > 1)
    terms.tp_layer_s = std::max(0.0, terms.tp_layer_s - 0.9 * (3.0 + recompute_share) *
                                                            terms.layer.matmul_fwd_s - host_wait);
  if (spatial_temporal(layout)) {
    // Exposed point-to-point time of the square (forward, backward, and the forward again under full
    // recompute), plus the conventional splits' blocking collectives on 1/q^2 of the activation over
    // their own group (ranks q^2 apart; PRIMEPAR_NOTES §5, Fig. 9 inter-node reduces of size/4 at q=2).
    const double gemm_bytes = training.precision == Precision::kFp8 && config.gpu.fp8_flops > 0 ? 1.0 : 2.0;
    double exposed = 0;
    for (const StLinear& linear : st_linears(config)) {
      const StPhaseTimes times = st_linear_time(config, linear, rate, gemm_bytes);
      exposed += times.exposed_fwd_s * (1.0 + recompute_share) + times.exposed_bwd_s;
    }
    const int64_t square = st_q_of(config) * st_q_of(config);
    const int64_t conventional = st_conventional(config);
    const Link conventional_link = link_for_group(config, square, conventional);
    double collectives = tp_collectives * all_reduce_s(conventional_link, conventional, tp_message / double(square));
    if (tp_overlap && conventional > 1)
      collectives = std::max(0.0, collectives - 0.9 * (3.0 + recompute_share) * terms.layer.matmul_fwd_s - host_wait);
    terms.tp_layer_s = exposed + collectives;
    terms.tp_crosses_nodes = conventional > 1 && conventional_link.crosses_nodes;
  }
  // PP: one chunk boundary's activation, scattered over tp with SP, or with Megatron's scatter/gather
  // (1/tp over the link between stages, then an all-gather inside the TP group).
  if (layout.pp > 1) {
    const double activation_bytes = tokens * h * 2.0;
    if (!sequence_parallel && perf.pp_scatter_gather && layout.tp > 1)
      terms.pp_send_s = send_s(terms.pp_link, activation_bytes / t) + gather_or_scatter_s(tp_link, layout.tp, activation_bytes);
    else
      terms.pp_send_s = send_s(terms.pp_link, activation_bytes / t_sp);
  }
  // CP ring: c-1 hops of this rank's K and V forward, ~2x backward (K, V and their gradients),
  // hidden behind the attention compute up to cp_overlap.
  const double kv_bytes = 2.0 * tokens * k * d * 2.0;
  if (plan.profile.cp_all_to_all && layout.cp > 1) {
    // DeepSpeed-Ulysses: per pass, all-to-alls of q (a*d), k and v (k*d each) and the output (a*d)
    // of this rank's tokens, each sending (cp - 1)/cp of it; a forward, a backward, and the forward
    // again under recompute; exposed (a step-time review saw it priced as a hidden K/V ring).
    const double passes = training.recompute == Recompute::kNone ? 2.0 : 3.0;
    const double a_d = dims.a * d / t, k_d = k * d;
    terms.cp_layer_s = passes * (2.0 * gather_or_scatter_s(cp_link, layout.cp, tokens * a_d * 2.0) +
                                 2.0 * gather_or_scatter_s(cp_link, layout.cp, tokens * k_d * 2.0));
  } else {
    const double cp_traffic_s = layout.cp > 1 ? 3.0 * double(layout.cp - 1) * send_s(cp_link, kv_bytes) : 0.0;
    terms.cp_layer_s = std::max(0.0, cp_traffic_s - perf.cp_overlap * terms.layer.attention_total_s - host_wait);
  }

  // ZeRO-3 / FSDP gather and scatter every micro-batch, one layer's parameters per message.
  const FrameworkProfile& profile = plan.profile;
  terms.sharded_weights = profile.weights_sharded(layout.zero);
  terms.shard_ranks = plan.optimizer_shard_ranks;
  terms.reduce_bytes = profile.grad_reduce_in_bf16 ? 2.0 : (training.fp32_grad_buffer ? 4.0 : 2.0);
  const double head_width = double(plan.padded_vocab) / t;  // unpadded 50257 (GPT-2's) is 2-byte aligned
  terms.head_fwd_s = gemm_s(tokens, head_width, h, rate.bf16_gemm_flops, rate.hbm_stream, 2.0, rate.sms,
                            gemm_alignment_fraction(config.gpu, head_width, h, 2.0));
  terms.work = finetune_work(config, tokens);  // trainable share of gradient traffic and step
  return terms;
}

// Replicated shard groups: after a reduce-scatter of `bytes` inside the shard group, each rank's
// reduced shard (bytes / shard ranks) is all-reduced across the replicas (FSDP2 foreach_reduce's
// all_reduce on the replicate group; Megatron start_grad_sync's inter-instance all_reduce).
double replica_all_reduce_s(const StepTerms& terms, double bytes) {
  if (terms.replicas <= 1) return 0;
  return all_reduce_s(terms.replica_link, terms.replicas, bytes / double(std::max<int64_t>(1, terms.shard_ranks)));
}

// FSDP2 under pipeline parallelism (torchtitan: reshard_after_forward = not pp_enabled; the pipeline
// stage turns off resharding and gradient sync until its last backward, FRAMEWORK_NOTES §1.2-1.3):
// the stage is all-gathered once per step and reduce-scattered once, after the last micro-batch.
bool unsharded_for_step(const StepTerms& terms) {
  return terms.sharded_weights && terms.config.layout.pp > 1 && terms.plan.profile.unsharded_under_pp;
}

// One micro-batch on one pipeline stage: its layers, the head if it holds it, host work, gradient
// accumulation, TP/CP per layer, pipeline sends, and ZeRO-3 gathers (and offload copies).
StageTime stage_time(const StepTerms& terms, int64_t stage_index) {
  const Config& config = terms.config;
  const MemoryPlan& plan = terms.plan;
  const TrainingSpec& training = config.training;
  const Layout& layout = config.layout;
  const FrameworkPerf& perf = terms.perf;
  const Rates& rate = terms.layer.rate;
  const double tokens = terms.dims.tokens, t = terms.dims.t, h = terms.dims.h;
  const StageShape shape = stage_shape(config, plan, stage_index);
  const StagePlacement& stage = shape.placement;
  StageTime st;
  const double layers = double(stage.layers);
  st.forward = layers * terms.layer.forward_s;
  st.backward = layers * (terms.layer.backward_s + terms.layer.recompute_s);
  if (stage.has_lm_head) {
    const double logits_s = tokens * double(plan.padded_vocab) / t * loss_s_per_logit(config.gpu, perf);
    st.forward += terms.head_fwd_s + logits_s / 2.0;
    // A frozen head: dX only; a trained copy (modules_to_save lm_head) computes dW too.
    st.backward += (has_adapters(training) && !training.lm_head_trained ? 1.0 : 2.0) * terms.head_fwd_s + logits_s / 2.0;
  }
  // Parameters with gradients: the adapters' share of every layer, and the embedding/head copies
  // modules_to_save trains in full (finetune.h).
  const double copies = trained_module_parameters(training, plan, shape);
  const double trained = shape.parameters * terms.work.trainable_fraction + copies;
  // Per micro-batch host work (embedding, loss, schedule); hidden unless it exceeds the device work.
  // FSDP2's edge units (the embedding's, and [norm, output] unless tied to it) pass their hooks too.
  const double edge_units = (stage.has_embedding ? 1.0 : 0.0) + (stage.has_lm_head && !config.model.tied_embeddings ? 1.0 : 0.0);
  const double host_microbatch_s =
      (perf.host_ops_per_microbatch + 3.0 * edge_units * perf.host_ops_per_sharded_unit) * perf.host_op_s;
  st.forward += std::max(0.0, host_microbatch_s - 0.5 * st.forward);
  // Gradient accumulation without GEMM fusion: read the new gradient, read and write the buffer; a
  // frozen base has none (an as-a-user review saw DeepSpeed LoRA charged for all 8B parameters).
  if (!perf.fused_grad_accumulation && !terms.sharded_weights)
    st.backward += trained * (2.0 + 2.0 * (training.fp32_grad_buffer ? 4.0 : 2.0)) / rate.hbm_bytes_per_s;
  // Plain PyTorch mixed precision over fp32 weights (DDP or a one-GPU loop; memory_model.h
  // autocast_over_fp32_weights): torch.autocast casts every GEMM weight to bf16 in each forward (4 B
  // read, 2 written; its cast cache lives for one autocast region), again in a full-recompute forward.
  // Measured on one H100 (tests/gpu ddp rows): the bf16-mixed DDP steps ran 13-17% slower than the
  // model without these casts and the bucket copies below, the pure-bf16 one (neither) within 2.5%.
  if (autocast_over_fp32_weights(config, plan.profile) && training.precision == Precision::kBf16) {
    const double head = stage.has_lm_head ? double(plan.padded_vocab) * h / t : 0.0;
    const double cast_s = (layers * matmul_parameters_per_layer(config.model) / t + head) * 6.0 / rate.hbm_stream;
    st.forward += cast_s;
    st.backward += full_recompute_share(config) * cast_s;
  }
  if (plan.profile.ddp_bucket_copy && layout.zero == 0 && plan.dp * layout.cp > 1)
    st.backward += ddp_bucket_copy_s(config, trained);
  if (training.offload_activations && stage.layers > 0) {
    // Activation offloading (torchtune OffloadActivations, use_streams): the layers' saved tensors go
    // to the host over PCIe during the forward and come back during the backward, on a side stream
    // beside the compute; only a copy longer than its pass shows.
    const double copy_s = layers * plan.layer_activations.stored / kPcieBytesPerS;
    st.forward += std::max(0.0, copy_s - st.forward);
    st.backward += std::max(0.0, copy_s - st.backward);
  }
  st.compute = st.forward + st.backward;
  st.tp = layers * terms.tp_layer_s;
  st.cp = layers * terms.cp_layer_s;
  if (layout.pp > 1) {
    // Each chunk boundary: activations forward, their gradients backward (step_terms pp_send_s).
    st.p2p = 2.0 * double(layout.vpp) * terms.pp_send_s;
  }
  if (terms.sharded_weights && training.offload == Offload::kParams) {
    // ZeRO-Infinity offload_param / FSDP CPUOffload: each micro-batch copies the rank's 16-bit
    // shard host->device for forward and again for backward over PCIe, hidden behind that pass's
    // compute as the gathers are. Each pass hides only its own copy: a forward shorter than its copy
    // waits on PCIe whatever the backward leaves idle (an as-a-user review saw a 7B full fine-tune on
    // one RTX 4090 pay 0.16 s a micro-batch for 30 GB over PCIe, the whole copy hidden in the pool of
    // forward + backward).
    const double pass_copy_s = 2.0 * shape.parameters / double(terms.shard_ranks) / kPcieBytesPerS;
    st.zero3 += std::max(0.0, pass_copy_s - perf.zero3_overlap * st.forward) +
                std::max(0.0, pass_copy_s - perf.zero3_overlap * st.backward);
  }
  if (terms.sharded_weights && stage.layers > 0 && !unsharded_for_step(terms)) {
    const double layer_params = shape.parameters / layers;
    const double layer_trained = layer_params * terms.work.trainable_fraction;  // gradients reduced: trainable ones only
    const bool gather_again = layout.zero == 3;  // FULL_SHARD re-gathers for backward
    const double gathers = gather_again ? 2.0 : 1.0;
    const double gathered_bytes = layer_params * 2.0 - plan.fp8_gathered_layer_parameters;
    const double forward_gather_s = gather_or_scatter_s(terms.zero3_link, terms.shard_ranks, gathered_bytes);
    // DeepSpeed hpZ: the backward gathers from the second partition, inside the hpZ group
    // (partition_parameters.py: ds_secondary_tensor is used when not forward).
    const double backward_gather_s = !gather_again ? 0.0
                                     : layout.hpz_partition_size > 1
                                         ? gather_or_scatter_s(terms.hpz_link, layout.hpz_partition_size, gathered_bytes)
                                         : forward_gather_s;
    const double in_group = layers * (forward_gather_s + backward_gather_s +
                                      gather_or_scatter_s(terms.zero3_link, terms.shard_ranks, layer_trained * terms.reduce_bytes)) +
                            gather_or_scatter_s(terms.zero3_link, terms.shard_ranks, copies * terms.reduce_bytes);
    const double across_replicas = layers * replica_all_reduce_s(terms, layer_trained * terms.reduce_bytes);
    // FSDP2 HSDP: the all-reduce of one block's shard is left in flight (_all_reduce_state, held across
    // blocks, FRAMEWORK_NOTES §1.3) while the next block gathers and reduce-scatters; on a different
    // link (a shard group inside the NVLink domain, replicas across nodes) the two run side by side.
    const bool side_by_side = plan.profile.gathers_whole_blocks && terms.zero3_link.crosses_nodes != terms.replica_link.crosses_nodes;
    double traffic = side_by_side ? std::max(in_group, across_replicas) : in_group + across_replicas;
    if (plan.profile.gathers_whole_blocks) {  // FSDP2's copies (kFsdpCopyOutBytes and the side-stream ones)
      const double copy_out_s = shape.parameters * kFsdpCopyOutBytes / rate.hbm_stream;
      st.forward += copy_out_s;
      if (gather_again) st.backward += copy_out_s;
      st.compute = st.forward + st.backward;
      const double side_bytes =
          shape.parameters * gathers * kFsdpCopyInBytesPerShardElement / double(terms.shard_ranks) +
          shape.parameters * terms.work.trainable_fraction *
              (kFsdpChunkCatBytes + (terms.shard_ranks == 1 ? kFsdpLocalReduceScatterBytes : 0.0));
      traffic += side_bytes / rate.hbm_stream;
    }
    st.zero3 += std::max(0.0, traffic - perf.zero3_overlap * st.compute);
  }
  return st;
}

// Bytes per gradient element the data-parallel reduce moves: fp32 where the profile reduces in fp32
// (Megatron's main grads), else the step's reduce dtype.
double reduced_grad_bytes(const StepTerms& terms) {
  return terms.plan.profile.grad_reduce_in_fp32 ? 4.0 : terms.reduce_bytes;
}

// DP once per step (not ZeRO-3; FSDP2 under PP gathers and scatters here, once): gradient reduce-scatter (sharded optimizer) or all-reduce in
// buckets, hidden behind the last micro-batch's backward up to dp_overlap; the parameter
// all-gather of a sharded optimizer behind the next forward up to param_gather_overlap.
// `stage_params`, `stage_trained`: the first stage's parameters and trained ones; `stage_layers`: its layers.
double dp_sync_exposed_s(const StepTerms& terms, const StageTime& slowest, double stage_params, double stage_trained,
                         int64_t stage_layers) {
  const FrameworkProfile& profile = terms.plan.profile;
  const int64_t shard_ranks = terms.shard_ranks;
  if (unsharded_for_step(terms) && shard_ranks > 1) {
    // Once per step: the stage's all-gather, prefetched unit by unit behind the first micro-batch's
    // forward, and its fp32 reduce-scatter after the last backward, unit by unit with nothing left
    // to hide behind; the copy-out and chunk_cat passes once each (stage_time's per-micro-batch rule).
    // fp8 all-gather: the blocks' Linear weights travel at 1 B (MemoryPlan::fp8_gathered_layer_parameters).
    const double gathered_bytes = stage_params * 2.0 - double(stage_layers) * terms.plan.fp8_gathered_layer_parameters;
    const double gather = gather_or_scatter_s(terms.zero3_link, shard_ranks, gathered_bytes) +
                          stage_params * (kFsdpCopyOutBytes + kFsdpCopyInBytesPerShardElement / double(shard_ranks)) /
                              terms.layer.rate.hbm_stream;
    const double scatter = gather_or_scatter_s(terms.zero3_link, shard_ranks, stage_trained * terms.reduce_bytes) +
                           replica_all_reduce_s(terms, stage_trained * terms.reduce_bytes) +
                           stage_trained * kFsdpChunkCatBytes / terms.layer.rate.hbm_stream;
    return std::max(0.0, gather - terms.perf.zero3_overlap * slowest.forward) + scatter;
  }
  if (terms.sharded_weights || shard_ranks <= 1) return 0;
  const bool sharded_optimizer = terms.config.layout.zero >= 1;
  const double grad_element_bytes = reduced_grad_bytes(terms);
  const double grad_bytes = stage_trained * grad_element_bytes;
  double bucket_bytes = grad_bytes;
  switch (profile.grad_buckets) {
    case GradBuckets::kMegatronDdp:
      bucket_bytes = std::max(kMegatronBucketElements, 1e6 * double(shard_ranks)) * grad_element_bytes;
      break;
    case GradBuckets::kDeepSpeed: bucket_bytes = kDeepSpeedBucketElements * grad_element_bytes; break;
    case GradBuckets::kPerBlock:
      bucket_bytes = stage_trained / std::max<double>(1.0, double(stage_layers)) * grad_element_bytes;
      break;
  }
  bucket_bytes = std::min(bucket_bytes, grad_bytes);
  // Whole buckets, then the remainder as its own smaller one (the last bucket holds what is left: a
  // review saw 2.6 GB of gradients priced as three full 1 GB DeepSpeed buckets).
  const double full_buckets = std::floor(grad_bytes / bucket_bytes);
  const double remainder = grad_bytes - full_buckets * bucket_bytes;
  const Link& dp_link = terms.dp_link;
  const auto reduce_s = [&](double bytes) {
    if (bytes <= 0) return 0.0;
    return sharded_optimizer ? gather_or_scatter_s(dp_link, shard_ranks, bytes) + replica_all_reduce_s(terms, bytes)
                             : all_reduce_s(dp_link, shard_ranks, bytes);
  };
  const auto gather_s = [&](double grad_bucket_bytes) {
    return grad_bucket_bytes > 0 ? gather_or_scatter_s(dp_link, shard_ranks, grad_bucket_bytes / grad_element_bytes * 2.0) : 0.0;
  };
  const double grad_sync = full_buckets * reduce_s(bucket_bytes) + reduce_s(remainder);
  const double param_gather = sharded_optimizer ? full_buckets * gather_s(bucket_bytes) + gather_s(remainder) : 0.0;
  // DeepSpeed ZeRO-2 partitions the gradients, so it reduces them after every micro-batch's backward,
  // not only at the accumulation boundary (engine.py allreduce_gradients: "ZeRO stage >= 2
  // communicates during non gradient accumulation boundaries as well"; stage_1_and_2.py
  // reduce_ready_partitions_and_remove_grads), each as exposed as the last (a review: ZeRO-2 ranked
  // above ZeRO-1 and 0 with one reduce per step).
  const double reduces = profile.grad_buckets == GradBuckets::kDeepSpeed && terms.config.layout.zero >= 2
                             ? double(terms.plan.num_microbatches)
                             : 1.0;
  return reduces * std::max(0.0, grad_sync - terms.perf.dp_overlap * slowest.backward) +
         std::max(0.0, param_gather - terms.perf.param_gather_overlap * slowest.forward);
}

// Optimizer step: reads and writes the sharded states, reads gradients, writes weights; gradient
// clipping reads the gradients once more. Under ZeRO-Offload the step runs on the CPU instead.
double optimizer_step_s(const StepTerms& terms, double stage_trained) {
  const MemoryPlan& plan = terms.plan;
  const Layout& layout = terms.config.layout;
  const double optimizer_bytes = stage_trained * (2.0 * plan.optimizer_bytes_per_param + 2.0 * plan.grad_bytes_per_param +
                                                 plan.weight_bytes_per_param);
  if (terms.config.training.offload == Offload::kNone) return optimizer_bytes / optimizer_step_bytes_per_s(terms.config.gpu, terms.config.training);
  // ZeRO-Offload: the rank's gradient partition goes device->host (2 B) and its updated 16-bit
  // parameters come back (2 B) over PCIe each step; the step runs on the CPU (Ren et al. 2021,
  // ZeRO-Offload §4; DeepSpeed stage_1_and_2.py / stage3.py offload_optimizer). Megatron-LM's
  // hybrid optimizer moves fp32 both ways (the profile's offload_pcie_bytes_per_param).
  const double rank_trained = stage_trained / (layout.zero >= 1 ? double(terms.shard_ranks) : 1.0);
  const double pcie_bytes = framework_profile(terms.config.training.framework).offload_pcie_bytes_per_param;
  return pcie_bytes * rank_trained / kPcieBytesPerS + 16.0 * 2.0 * rank_trained / kHostOptimizerBytesPerS;
}

}  // namespace

double ddp_bucket_copy_s(const Config& config, double parameters) {
  // torch DDP (gradient_as_bucket_view=False, its default): the reducer copies each gradient into its
  // bucket (copy_grad_to_bucket) and, after the all-reduce, the bucket back into the gradient
  // (finalize_bucket_dense); gradients take the parameters' dtype, fp32 under autocast.
  const double grad_bytes = autocast_over_fp32_weights(config, framework_profile(config.training.framework)) ? 4.0 : 2.0;
  return parameters * 2.0 * 2.0 * grad_bytes / streaming_bytes_per_s(config.gpu);
}

// The step's terms in the order of the formula: per-config terms (step_terms), the slowest stage's
// micro-batch (stage_time), bubble, DP sync, optimizer; then the rates.
StepReport predict_step(const Config& config, const MemoryPlan& plan) {
  const TrainingSpec& training = config.training;
  const Layout& layout = config.layout;
  const StepTerms terms = step_terms(config, plan);
  const LayerCompute& layer = terms.layer;
  StepReport report;
  report.gemm_efficiency = layer.gemm_efficiency;
  report.host_bound_fraction = layer.host_bound_fraction;
  report.memory_bound_bytes_per_s = layer.rate.hbm_bytes_per_s;
  report.tp_crosses_nodes = terms.tp_crosses_nodes;
  report.dp_crosses_nodes = terms.dp_crosses_nodes;

  // Every stage's micro-batch time, once per distinct shape (layers, embedding, head): the slowest
  // sets the steady state, and the others fill the bubble. A micro-batch passes every stage in turn,
  // so the step is m x the slowest stage plus each other stage's time once (a flow shop: the sum of
  // t_i + (m - 1) x t_max; Narayanan et al. SC'21 §2.2's (p - 1) x t holds for equal stages only),
  // divided by vpp when interleaved. Pricing (p - 1) x the slowest over-charged pipelines whose
  // stage with the head or an uneven split is the slow one (a step-time review: 350M at pp 4 and one
  // micro-batch read 225 ms where the stages sum to ~150; nanotron's 1B at pp 8 +45%).
  // Past kStageScanChunks chunks (a crafted link's 10000-layer pipeline) the middle stages are taken
  // as stage 1, the only shape they have under an even split: the scan is linear in pp x vpp.
  constexpr int64_t kStageScanChunks = 1024;
  StageTime slowest = stage_time(terms, 0);
  double stages_sum = slowest.total();
  if (layout.pp > 1 && layout.pp * layout.vpp <= kStageScanChunks) {
    const SplitRule rule = split_rule(plan.profile, config.model);
    const std::vector<int64_t> chunks = virtual_stage_layers(config.model.layers, layout, rule);
    const int64_t head = head_stage(config.model.layers, layout, rule);
    struct Shape {
      int64_t layers, stages, example;
      bool head;
    };
    std::vector<Shape> shapes;  // the stages after the first (which has the embedding), by shape
    for (int64_t stage = 1; stage < layout.pp; ++stage) {
      int64_t layers = 0;
      for (size_t j = size_t(stage); j < chunks.size(); j += size_t(layout.pp)) layers += chunks[j];
      const bool has_head = stage == head;
      const auto same = std::find_if(shapes.begin(), shapes.end(), [&](const Shape& x) { return x.layers == layers && x.head == has_head; });
      if (same != shapes.end()) ++same->stages;
      else shapes.push_back({layers, 1, stage, has_head});
    }
    for (const Shape& shape : shapes) {
      const StageTime candidate = stage_time(terms, shape.example);
      stages_sum += double(shape.stages) * candidate.total();
      if (candidate.total() > slowest.total()) slowest = candidate;
    }
  } else if (layout.pp > 1) {
    for (int64_t stage : candidate_stages(config, plan.profile)) {
      if (stage == 0) continue;
      const StageTime candidate = stage_time(terms, stage);
      stages_sum += (stage == 1 && layout.pp > 2 ? double(layout.pp - 2) : 1.0) * candidate.total();
      if (candidate.total() > slowest.total()) slowest = candidate;
    }
  }

  const double m = double(plan.num_microbatches);
  const double bubble_slots = std::max(0.0, stages_sum - slowest.total()) / std::max(slowest.total(), 1e-30) / double(layout.vpp);
  report.microbatch_time_s = slowest.total();
  report.bubble_fraction = bubble_slots / m;

  const StageShape first_stage = stage_shape(config, plan, 0);
  const double stage_params = first_stage.parameters;  // the first stage (embedding; at pp=1 the head too)
  // Frozen weights: no gradient, no step; modules_to_save's copies are stepped in full.
  const double stage_trained = stage_params * terms.work.trainable_fraction + trained_module_parameters(training, plan, first_stage);
  const double dp_exposed = dp_sync_exposed_s(terms, slowest, stage_params, stage_trained, first_stage.placement.layers);

  StepBreakdown& b = report.breakdown;
  b.compute_s = m * slowest.compute;
  b.tp_comm_s = m * slowest.tp;
  b.cp_comm_s = m * slowest.cp;
  b.pp_p2p_s = m * slowest.p2p;
  b.pp_bubble_s = bubble_slots * slowest.total();
  // Tied embeddings under PP: the head's stage keeps a copy of the embedding, whose gradient is
  // all-reduced with the first stage's once per step, after the backward and before the optimizer
  // (Megatron-LM finalize_model_grads _allreduce_word_embedding_grads; DeepSpeed PipelineEngine
  // _exec_reduce_tied_grads for TiedLayerSpec), exposed; the two ranks are a pipeline apart (a
  // step-time review: GPT-3 1.3B at pp 2 over two nodes, ~11 ms of a 600 ms step, unpriced).
  double tied_sync = 0;
  if (config.model.tied_embeddings && layout.pp > 1) {
    const Link link = link_for_group(config, layout.tp * layout.cp * plan.dp * (layout.pp - 1), 2);
    tied_sync = all_reduce_s(link, 2, reduced_grad_bytes(terms) * plan.vocab_parameters * terms.work.trainable_fraction);
  }
  b.dp_comm_s = dp_exposed + m * slowest.zero3 + tied_sync;
  b.optimizer_s = optimizer_step_s(terms, stage_trained);
  // Paged optimizer states the GPU cannot hold live in host memory (the driver evicts managed pages,
  // FINETUNE_NOTES §2.3): every step reads and writes all of them, so the spilled part comes in and
  // goes back out over PCIe.
  if (pages_optimizer_states(training.optimizer))
    b.optimizer_s += 2.0 * paged_spill_bytes(worst_stage_memory(config, plan), config.gpu.memory_bytes) / kPcieBytesPerS;
  report.step_time_s = b.compute_s + b.tp_comm_s + b.cp_comm_s + b.pp_p2p_s + b.pp_bubble_s + b.dp_comm_s + b.optimizer_s;

  const double gpus = double(config.cluster.gpus);
  const double tokens_per_step = double(training.global_batch) * terms.dims.seq;
  report.tokens_per_s_per_gpu = tokens_per_step / report.step_time_s / gpus;
  report.model_flops_per_token = model_flops_per_token(config.model, training.seq);
  if (has_adapters(training)) {
    // LoRA/QLoRA: the frozen base (head included) needs no weight gradients: its linears count 4 FLOPs
    // per parameter and token (forward 2, activation gradient 2), not 6, and the adapters 3x their
    // forward; attention as trained. Counted at 6N an RTX 4090 LoRA read "MFU 66%".
    Config unsplit = config;
    unsplit.layout.tp = 1;
    report.model_flops_per_token -= 2.0 * linear_parameters(config.model);
    report.model_flops_per_token += 3.0 * double(config.model.layers) * finetune_work(unsplit, 1.0).adapter_flops_fwd;
  }
  report.tflops_per_gpu = report.model_flops_per_token * report.tokens_per_s_per_gpu / 1e12;
  report.mfu = report.model_flops_per_token * report.tokens_per_s_per_gpu / config.gpu.bf16_flops;
  // HFU adds the recomputed FLOPs, per layer, relative to the layer's model FLOPs (PaLM count:
  // 3x forward, full s x s attention; a frozen base's linears 2x).
  const double layer_model_flops =
      (has_adapters(training) ? 2.0 : 3.0) * layer.matmul_fwd_flops + 3.0 * (4.0 * terms.dims.tokens * terms.dims.seq * (terms.dims.a * terms.dims.d) / terms.dims.t);
  report.hfu = report.mfu * (1.0 + layer.recompute_flops / layer_model_flops);
  if (training.tokens_to_train > 0) report.time_to_train_s = training.tokens_to_train / (report.tokens_per_s_per_gpu * gpus);
  // GDDR parts are banded apart from the HBM parts of their family (gpu_catalog.h gddr_part): no run.
  report.error_band = prediction_error_band(
      training.framework, config.gpu.family + (gddr_part(config.gpu.id) ? " (GDDR)" : ""), is_finetune(training));
  report.error_band.job_gpus = config.cluster.gpus;
  return report;
}

// [SECTION] Error bands

// throughput_error_band is defined beside the data it summarizes (io/throughput_runs.cpp).

std::optional<Issue> step_unpredictable(const Config& config) {
  const GpuSpec& gpu = config.gpu;
  if (!(gpu.bf16_flops > 0) || !(gpu.hbm_bytes_per_s > 0))
    return Issue{IssueCode::kNotPositive, Severity::kWarning, "gpu",
                 gpu.name + " has no " + (gpu.bf16_flops > 0 ? "HBM bandwidth" : "dense BF16 TFLOPS") +
                     " figure: step time, tokens/s and MFU are not predicted."};
  // GPUs on several nodes with no network figure: their collectives cross the NIC at no bandwidth (a
  // review set --gpu-nic-gbps 0 and read a warning about no finite figure, and one about TFLOP/s).
  if (!(gpu.internode_bytes_per_s > 0) && config.cluster.gpus > config.cluster.gpus_per_node)
    return Issue{IssueCode::kNotPositive, Severity::kWarning, "gpu_nic_gbps",
                 "gpu_nic_gbps is 0 and the " + std::to_string(config.cluster.gpus) + " GPUs span nodes of " +
                     std::to_string(config.cluster.gpus_per_node) +
                     ": no network figure for what crosses them, so step time, tokens/s and MFU are not predicted."};
  return std::nullopt;
}

bool step_is_finite(const StepReport& step) {
  const StepBreakdown& b = step.breakdown;
  for (double value : {step.step_time_s, step.tokens_per_s_per_gpu, step.mfu, step.hfu, step.time_to_train_s,
                       step.bubble_fraction, b.compute_s, b.tp_comm_s, b.cp_comm_s, b.pp_p2p_s, b.pp_bubble_s,
                       b.dp_comm_s, b.optimizer_s})
    if (!std::isfinite(value)) return false;
  return step.step_time_s >= 0;
}

std::string error_band_text(const ErrorBand& band) {
  if (band.finetune_unvalidated) return "not validated for fine-tuning on this framework and GPU family: its measured runs are pretraining";
  if (band.runs == 0) return "not validated for this framework and GPU family";
  // A job larger than every run behind the band: its multi-node communication was never measured
  // (an as-a-user review read "±7% ... each on 1 GPU" beside a 2048-GPU layout as a confidence claim).
  const std::string scale = band.job_gpus > band.max_gpus && band.max_gpus > 0
                                ? "; none measured at " + std::to_string(band.job_gpus) + " GPUs"
                                : "";
  char text[160];
  if (band.exact_runs >= 0) {
    std::snprintf(text, sizeof text, "\xC2\xB1%.0f%%, the median error on %d measured runs of this framework on any GPU, %lld-%lld GPUs; %d on "
                  "this GPU family", 100.0 * band.median_abs_error, band.runs, (long long)band.min_gpus,
                  (long long)band.max_gpus, band.exact_runs);
    return text + scale;
  }
  if (band.max_gpus <= 0)
    std::snprintf(text, sizeof text, "\xC2\xB1%.0f%%, the median error on %d measured runs", 100.0 * band.median_abs_error, band.runs);
  else if (band.min_gpus == band.max_gpus)
    std::snprintf(text, sizeof text, "\xC2\xB1%.0f%%, the median error on %d measured runs, each on %lld GPU%s", 100.0 * band.median_abs_error,
                  band.runs, (long long)band.max_gpus, band.max_gpus == 1 ? "" : "s");  // "runs of 1 GPU" read odd beside an 8-GPU job
  else
    std::snprintf(text, sizeof text, "\xC2\xB1%.0f%%, the median error on %d measured runs of %lld-%lld GPUs", 100.0 * band.median_abs_error,
                  band.runs, (long long)band.min_gpus, (long long)band.max_gpus);
  return text + scale;
}

// The two hosts tests/gpu ran on dispatched a tiny eager op in 11.0 us (the H100 machine,
// gpu_kernel_rates.csv launch eager_op_issue) and 6.2 us (the H200 machine, gpu_kernel_rates_h200.csv),
// and the same host-bound steps ran up to 1.7x faster on the second (gpu_memory_measured.csv:
// llama3.2-1b s2048 FSDP2 17374 vs 26651 tokens/s, gpt3-125m DDP 57941 vs 100480).
std::string host_bound_text(const StepReport& step) {
  if (!(step.host_bound_fraction >= 0.25)) return "";
  char text[256];
  std::snprintf(text, sizeof text,
                "host-bound: the CPU's op dispatch sets %.0f%% of each layer's time; the model assumes %.0f us per op, and two "
                "hosts measured here took 11.0 and 6.2 us (the same steps ran up to 1.7x apart)",
                100.0 * step.host_bound_fraction, kEagerHostOpS * 1e6);
  return text;
}

}  // namespace meshfit
