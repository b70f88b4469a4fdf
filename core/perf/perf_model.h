// perf_model.h — predicted step time, tokens/s per GPU, MFU and HFU for one layout, built from
// kernels: per layer and micro-batch each GEMM at its shape's rate under the GPU's measured matmul
// ceiling, the attention kernel at FlashAttention rates (published for A100, measured on H100),
// memory-bound kernels at achieved HBM bandwidth, a per-kernel launch floor and the host's per-op
// dispatch; collectives at a message-size-dependent bus bandwidth on the link they use. Every constant
// is cited in perf_model.cpp (and listed in site/docs.html); sources: ../shared/reference/kernels/,
// tests/data/gpu_kernel_rates.csv (one H100, tests/gpu/kernel_rates.py) and THROUGHPUT_NOTES.md
// (Narayanan et al. SC'21, Korthikanti et al. 2022, Calculon).
#pragma once

#include <optional>
#include <string>

#include "spec/config.h"
#include "memory/memory_model.h"

namespace meshfit {

// Where fp8 runs cast the GEMM inputs and weights (memory-bound passes beside the fp8 GEMMs).
enum class Fp8Casts {
  kFusedIntoKernels,  // Transformer Engine: LayerNormLinear / LayerNormMLP emit fp8 from the norm and the
                      // activation; weights cast once per step (is_first_microbatch caching)
  kSeparatePass,      // torch.compile: Inductor fuses the amax into the cast, one pass per GEMM input
  kDynamicEager,      // torchao float8 in eager: per GEMM input an amax pass and a cast pass, and the
                      // weight cast again every micro-batch
};

// How a framework issues and overlaps its work (perf_model.cpp kFrameworkPerf); one record per
// framework and kernel mode, never per layout.
struct FrameworkPerf {
  const char* source = "";
  double gemm_fraction_of_ceiling = 0.84;  // training GEMMs vs the GPU's best-shape matmul rate (Megatron's fused profile: 0.87)
  double elementwise_fraction = 0.8;       // memory-bound kernels vs streaming bandwidth
  double host_ops_per_layer = 14;          // ops dispatched per layer forward (backward: 2x)
  double host_op_s = 0;                    // CPU time per op dispatch (0: graphs / negligible)
  double host_ops_per_microbatch = 30;     // embedding, LM head, loss, schedule bookkeeping
  double host_ops_per_sharded_unit = 0;    // FSDP2 fully_shard unit hooks per forward, in op dispatch times (backward: 2x)
  double dp_overlap = 0.9;                 // with overlap on: share of a micro-batch's backward hiding the gradient sync
  double param_gather_overlap = 0.9;       // with overlap on: ZeRO-1/2 parameter all-gather hidden behind forward
  bool dp_always_overlapped = false;       // FSDP2: reduce-scatter per block during backward, no flag
  double zero3_bandwidth_fraction = 1.0;   // ZeRO-3 gathers: achieved share of the link's bus bandwidth
  double zero3_overlap = 0.7;              // ZeRO-3 / FSDP per-micro-batch gathers hidden behind compute
  double cp_overlap = 0.9;                 // ring K/V exchange hidden behind attention
  bool fa3_on_hopper = false;              // Hopper attention via cuDNN / FlashAttention-3
  bool eager_fp32_loss = false;            // cross-entropy as eager PyTorch runs F.cross_entropy(logits.float()):
                                           // the measured chain (perf_model.cpp kEagerLossBytesPerLogit); else fused
  bool fused_softmax = false;              // without FlashAttention: scale, mask and softmax in one kernel each way
                                           // (Megatron's fused softmax, Inductor); else eager PyTorch ops (perf_model.cpp)
  bool eager_rmsnorm = false;              // RMSNorm as Hugging Face's LlamaRMSNorm: fp32 upcast, pow, mean,
                                           // rsqrt, two muls and the casts as separate ops (perf_model.cpp
                                           // kEagerRmsNormBytes); else one fused kernel each way
  bool pp_scatter_gather = false;          // without SP, a pipeline send goes as 1/tp per TP rank and is
                                           // all-gathered over NVLink after (Megatron-LM, perf_model.cpp)
  bool fused_grad_accumulation = true;     // wgrad GEMM accumulates into the main grad (Megatron
                                           // gradient_accumulation_fusion); else a memory-bound pass per micro-batch
  Fp8Casts fp8_casts = Fp8Casts::kDynamicEager;
};

FrameworkPerf framework_perf(Framework framework, Kernels kernels, bool dp_comm_overlap);

// Whether the step time prices RMSNorm as eager fp32 ops (norm_kernel resolved): the field when set,
// else the framework's profile, and eager for any fine-tune (its stack's own upcasting module); never
// under torch.compile (Inductor fuses it) or for a LayerNorm model (one PyTorch kernel).
bool runs_eager_rmsnorm(const Config& config);

struct StepBreakdown {       // seconds per optimizer step; the parts add up to step_time_s
  double compute_s = 0;      // forward + backward (+ recompute) on the slowest stage, all micro-batches
  double tp_comm_s = 0;      // exposed tensor-parallel collectives
  double cp_comm_s = 0;      // exposed context-parallel ring exchange
  double pp_bubble_s = 0;    // (pp-1)/vpp idle micro-batch slots
  double pp_p2p_s = 0;       // stage-to-stage activation transfers
  double dp_comm_s = 0;      // exposed gradient reduce / parameter gather (incl. ZeRO-3 per micro-batch)
  double optimizer_s = 0;    // the optimizer step and gradient clipping (memory-bound) and per-step fixed costs
};

// The validation error of the step-time model for a framework and GPU family: the median over the
// measured runs (the published ones of tests/data/layouts_measured.csv and tests/gpu's own one-GPU steps), computed from the compiled-in data on first use
// (io/throughput_runs.cpp, which defines it).
struct ErrorBand {
  double median_abs_error = 0;  // median |predicted / measured - 1| of tokens/s/GPU; 0 when runs == 0
  int runs = 0;                 // published runs behind it; 0 = no validation for this combination
  const char* basis = "";       // which sources
  int64_t min_gpus = 0;         // the GPU counts those runs used: a band from one-GPU steps says
  int64_t max_gpus = 0;         //   nothing measured about a 256-GPU job, and its text says so
  int exact_runs = -1;          // widened (prediction_error_band): the runs of the framework and GPU
                                //   family themselves, too few for a median; -1 = not widened
  int64_t job_gpus = 0;         // the prediction's GPU count (0 = not a prediction's band): past
                                //   max_gpus the text says the band was not measured at that scale
  int finetune_runs = 0;        // of them, fine-tunes (full, LoRA, QLoRA)
  bool finetune_unvalidated = false;  // a fine-tune's prediction whose family's runs are all pretraining
};
// The validation error of the measured runs of this framework on this GPU family.
ErrorBand throughput_error_band(Framework framework, const std::string& gpu_family);
// The band a prediction carries: throughput_error_band, or, when that rests on fewer than
// kMinBandRuns runs (3 Llama 3 runs read as "±1%"), the framework's runs on every GPU family
// (exact_runs says how many were its own); none stays "not validated". A fine-tune's prediction
// carries no band from runs that are all pretraining (an as-a-user review saw HF + ZeRO fine-tunes
// given the ±5% of 401 Megatron-derived 3D pretraining runs).
constexpr int kMinBandRuns = 10;
ErrorBand prediction_error_band(Framework framework, const std::string& gpu_family, bool finetune = false);
// "±6% on 30 measured runs of 8-512 GPUs" (or "each on 1 GPU"; a widened band names its family's
// runs), or "not validated ..."
std::string error_band_text(const ErrorBand& band);

struct StepReport {
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;                       // model FLOPs (PaLM-style, no recompute) / (time * gpus * bf16 peak)
  double hfu = 0;                       // hardware FLOPs (with recompute) / (time * gpus * bf16 peak)
  double model_flops_per_token = 0;     // 6*N_matmul + 12*L*a*d*s (see perf_model.cpp)
  double tflops_per_gpu = 0;            // model TFLOP/s per GPU
  StepBreakdown breakdown;
  double time_to_train_s = 0;           // tokens_to_train / (tokens/s/GPU * gpus); 0 when tokens_to_train is not given
  ErrorBand error_band;                 // validation error of tokens/s for this framework and GPU family (MFU
                                        // scales with tokens/s, time to train inversely: the same band covers all three)
  // Intermediates a front end can show.
  double microbatch_time_s = 0;         // slowest stage, one micro-batch, forward + backward + comm
  double bubble_fraction = 0;           // (pp-1)/(vpp*m)
  double gemm_efficiency = 0;           // achieved fraction of the GEMM peak over this layout's layer GEMMs
  double host_bound_fraction = 0;       // share of layer time spent waiting on host dispatch
  double memory_bound_bytes_per_s = 0;  // achieved HBM rate of memory-bound kernels (norms, activations, loss;
                                        // the fused optimizer step runs at optimizer_step_bytes_per_s)
  bool tp_crosses_nodes = false;
  bool dp_crosses_nodes = false;
};
// Every figure of a prediction finite and the step time not negative (extreme inputs, or a custom GPU
// without a network figure, can give inf or NaN): else the caller drops it and says so.
bool step_is_finite(const StepReport& step);
// Why a config has no step time at all, as the warning that says so: a GPU without a compute or
// bandwidth figure (a custom GPU given only its memory), or GPUs on several nodes with no network
// figure. None when the step-time model can run (estimate() and the methods ranking ask first).
std::optional<Issue> step_unpredictable(const Config& config);
// The caveat of a step whose layers wait on the host's op dispatch (host_bound_fraction of a quarter
// or more): the error band does not cover the host, whose speed the model takes as one figure; ""
// otherwise.
std::string host_bound_text(const StepReport& step);

// Model FLOPs per token (training: forward + backward, no recompute), PaLM convention with the
// matmul-exact parameter count: 6 * (L * matmul params per layer + V * h for the LM head)
// + 12 * L * a*d * s for attention scores (full s x s, as PaLM counts it; a*d = h unless the model
// sets head_dim apart, model_spec.h query_width).
double model_flops_per_token(const ModelSpec& model, int64_t seq);

// One GEMM (m x k by k x n) run alone, as a matmul benchmark times it: the GPU's measured ceiling
// (no framework fraction), wave and tile quantization on its SMs, operand traffic, the fixed cost.
// width_a/width_b: the operands' leading dimensions where known (a linear layer's input and output
// widths), whose byte alignment decides the kernel on Hopper and Blackwell; 0 = aligned.
double isolated_gemm_s(const GpuSpec& gpu, double m, double n, double k, bool fp8, double width_a = 0, double width_b = 0);

// Causal FlashAttention (FA convention: forward 2*b*a*s^2*d useful FLOPs, backward 2.5x) over `batch`
// sequences of `seq` tokens with `heads` heads of `head_dim`, run alone as an SDPA benchmark times it:
// the model's attention rate for the GPU (fa3_on_hopper: cuDNN / FlashAttention-3 on Hopper).
struct AttentionTime {
  double forward_s = 0;
  double forward_backward_s = 0;
};
AttentionTime isolated_attention_s(const GpuSpec& gpu, double batch, double heads, double seq, double head_dim,
                                   bool fa3_on_hopper);

// Achieved HBM rates the step-time model uses (bytes/s): a 1-load + 1-store stream (elementwise
// kernels, GEMM operand traffic), and the optimizer step: one fused kernel, or foreach lists where the
// training spec runs those (foreach_optimizer_step). perf_model.cpp cites each.
double streaming_bytes_per_s(const GpuSpec& gpu);
double optimizer_step_bytes_per_s(const GpuSpec& gpu, const TrainingSpec& training);
double elementwise_bytes_per_s(const GpuSpec& gpu, const FrameworkPerf& perf);  // norms, activations: stream x profile
// Cross-entropy over the logits, forward + backward, seconds per logit element, as the profile runs it.
double loss_s_per_logit(const GpuSpec& gpu, const FrameworkPerf& perf);

// Per-kernel floors (perf_model.cpp cites them).
double kernel_launch_floor_s();  // device time of the smallest kernel launched from a stream
double eager_host_op_s();        // host time to dispatch one PyTorch eager op

// Requires a valid config; plan from plan_memory(config).
StepReport predict_step(const Config& config, const MemoryPlan& plan);
// torch DDP's bucket copies for one micro-batch's backward over `parameters` gradients (each copied
// into its bucket before the all-reduce and back after it, 2 x (read + write), on the compute stream).
double ddp_bucket_copy_s(const Config& config, double parameters);

}  // namespace meshfit
