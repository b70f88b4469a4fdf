// memory_model.h — per-rank training memory: every pipeline stage's breakdown into named
// components, three figures per rank (peak allocated / peak reserved / device), and a verdict.
// Sources per term in memory_model.cpp; framework differences are data (FrameworkProfile).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "memory/activation_memory.h"
#include "spec/config.h"
#include "spec/issue.h"

namespace meshfit {

// Fixed order: charts and JSON keep every component, zero or not.
enum class Component {
  kWeights,          // compute-precision (or FSDP's sharded fp32) weights, fp8 caches
  kGradients,        // gradient buffers (bf16 and/or fp32 main grads)
  kOptimizerStates,  // fp32 master weights + optimizer moments
  kActivations,      // saved for backward, all in-flight micro-batches
  kLogitsLoss,       // last stage: logits and cross-entropy buffers
  kCommBuffers,      // ZeRO-3/FSDP unsharded layers and prefetch, reduce buckets
  kWorkspace,        // cuBLAS workspace, backward gradient temporaries, SP all-gather buffer
  kFragmentation,    // caching-allocator reserve beyond allocations
  kNccl,             // NCCL buffers per communicator (outside PyTorch's allocator)
  kCudaContext,      // CUDA context and kernels (outside PyTorch's allocator)
  kPagedOptimizer,   // bitsandbytes paged optimizer states in CUDA managed memory (outside PyTorch's allocator)
};
// Key: the JSON name ("optimizer_states"); label: the display name ("Optimizer states").
template <> struct EnumNames<Component> {
  static constexpr EnumName<Component> table[] = {
      {Component::kWeights, "weights", "Weights"},
      {Component::kGradients, "gradients", "Gradients"},
      {Component::kOptimizerStates, "optimizer_states", "Optimizer states"},
      {Component::kActivations, "activations", "Activations"},
      {Component::kLogitsLoss, "logits_loss", "Logits & loss"},
      {Component::kCommBuffers, "comm_buffers", "Comm buffers"},
      {Component::kWorkspace, "workspace", "Workspace"},
      {Component::kFragmentation, "fragmentation", "Fragmentation"},
      {Component::kNccl, "nccl", "NCCL"},
      {Component::kCudaContext, "cuda_context", "CUDA context"},
      {Component::kPagedOptimizer, "paged_optimizer", "Paged optimizer"}};
};
constexpr int kComponentCount = int(enum_count<Component>());
inline const char* component_label(Component component) { return enum_label(component); }

enum class Verdict { kFits, kTight, kOutOfMemory };
template <> struct EnumNames<Verdict> {
  static constexpr EnumName<Verdict> table[] = {
      {Verdict::kFits, "fits", "FITS"}, {Verdict::kTight, "tight", "TIGHT"}, {Verdict::kOutOfMemory, "oom", "OUT OF MEMORY"}};
};

// How a framework lays out model states, as bytes per parameter (bf16 mixed precision).
// "sharded" states are divided over the dp*cp ranks of the optimizer group.
struct ModelStateRule {
  double weight_bytes = 2;        bool weights_sharded = false;
  double grad_bytes = 0;          bool grads_sharded = false;     // 16-bit gradients
  double grad_fp32_bytes = 0;     bool grads_fp32_sharded = false;
  double master_bytes = 4;        bool master_sharded = false;    // fp32 master copy
  bool moments_sharded = false;                                    // optimizer moments
};

enum class GradBuckets { kMegatronDdp, kDeepSpeed, kPerBlock };
enum class CommBufferScheme { kInPlace, kDeepSpeedBuckets, kFsdpUnits };

// Bytes per parameter a framework keeps for its model states, and from which ZeRO stage each is
// sharded over the data-parallel group (stage 4 = never): the data behind model_state_rule.
struct ModelStateBytes {
  double weight_bytes = 2;                 // 2 = bf16 weights beside an fp32 master; 4 = fp32 params (FSDP2)
  double master_bytes = 4;                 // fp32 master copy beside the weights (0: the params are the master)
  int64_t optimizer_sharded_from_zero = 1; // master copy and moments
  bool fp32_grads_always = false;          // gradients take the fp32 params' dtype, whatever fp32_grad_buffer says
  int64_t fp32_grads_from_zero = 0;        // with fp32_grad_buffer: the fp32 gradient copy exists from this stage
  int64_t fp32_grads_sharded_from_zero = 4;
  int64_t bf16_grads_dropped_from_zero = 0;  // with fp32 gradients: no 16-bit gradient kept from this stage
  int64_t bf16_grads_sharded_from_zero = 4;
};

// Everything that differs between frameworks, as one record: read by the memory and performance
// models, by validate(), the layout search and the page's choosers (never re-stated as branches).
struct FrameworkProfile {
  Framework framework = Framework::kMegatron;
  const char* source = "";
  std::array<const char*, 4> zero_stages{};  // meaning of each ZeRO stage offered; nullptr = not offered
  int64_t default_zero = 1;          // the stage a config gets when it names none
  int64_t weights_sharded_from_zero = 4;  // weights gathered per micro-batch from this stage (4 = never)
  ModelStateBytes states;            // bytes per parameter of weights, gradients, master and moments
  bool even_middle_split = false;    // pipeline chunks between first and last must hold equal layers
  // Sharding over a sub-group of the dp ranks with replicas across groups (Layout::dp_replicate):
  // the framework's name for it (nullptr = not offered) and the lowest ZeRO stage it applies to.
  const char* replicas_mechanism = nullptr;
  int64_t replicas_from_zero = 4;
  // The replicas divide the dp x cp ranks, not dp alone (Megatron-LM's instances are slices of the
  // data-parallel-with-cp group); else they divide dp and each group keeps its cp ranks (HSDP, MiCS).
  bool replicas_span_cp = false;
  bool interleave_needs_pp_multiple = false;  // vpp > 1 needs micro-batches per step % pp == 0
  bool grad_reduce_in_bf16 = false;  // gradients reduced in bf16 whatever the buffer (DeepSpeed)
  bool grad_reduce_in_fp32 = false;  // gradients reduced in fp32 whatever the buffer (FSDP2 DP sync)
  int64_t vocab_pad_multiple = 1;    // vocabulary padded to a multiple of this * tp
  LossKind default_loss = LossKind::kVocabParallel;  // what loss=auto means (compile: compiled_loss_when_compiled)
  bool compiled_loss_when_compiled = false;  // compile also compiles the loss (torchtitan compile.components)
  double fp8_weight_cache_bytes = 0; // extra bytes per GEMM weight kept for FP8 GEMMs
  // Pipeline split: the embedding and the norm+head each count as this many layers when stages
  // are cut (torchtitan generate_llm_fqn_per_model_part input_weight/output_weight = 1); 0 = the
  // layers alone are split (Megatron without account_for_embedding_in_pipeline_split).
  int64_t pipeline_edge_weight = 0;
  // nanotron's split (src/nanotron/models/base.py build_model): every pipeline block gets a compute
  // cost (models/llama.py get_block_compute_costs: a decoder layer 4*a*d*h + 3*f*h, the LM head v*h,
  // the embedding and the final norm 0) and blocks go, in order, to the current rank until their
  // running cost passes that rank's share of the total; the head may end on a rank before the last.
  bool cost_balanced_split = false;
  bool interleaved_schedule = true;  // vpp > 1 offered (nanotron's pp_engine: 1f1b or afab only)
  const char* schedules = "";        // where interleaving is not offered: the schedules there are
  int64_t pp_max_zero = 3;           // the highest ZeRO stage offered with pp > 1
  const char* pp_zero_source = "";   // where that limit is stated
  // FSDP2 under PP (torchtitan reshard_after_forward = not pp_enabled; torch pipelining
  // stage.py backward_maybe_with_nosync): the stage's params stay unsharded from the first
  // forward to the last backward, and gradients accumulate unsharded in the reduce dtype.
  bool unsharded_under_pp = false;
  // DDP (zero 0) keeps gradient buckets (a copy of the gradients) only when there is a data-parallel
  // group to reduce over; at dp*cp = 1 torchtitan applies no DDP wrapper.
  bool ddp_bucket_copy = false;
  // FSDP2 allocates each reduce-scatter's output, the sharded gradient, on its reduce-scatter
  // stream, and the caching allocator keeps one pool per stream: the gradients' pool stays
  // reserved beside the default stream's (measured: tests/data/gpu_memory_measured.csv *-pools rows).
  bool grads_on_reduce_stream = false;
  // Context parallelism is PyTorch's ring attention with the all-gather rotater (torchtitan
  // context_parallel_rotate_method = "allgather"); Megatron-DeepSpeed's "cp" rows are Ulysses.
  bool cp_ring_allgather = false;
  // DeepSpeed-Ulysses (sequence/layer.py DistributedAttention): cp is an all-to-all of q, k and v
  // from sequence shards to head shards before attention and of the output back after it, forward
  // and backward, in the attention's own stream of work (nothing to hide behind).
  bool cp_all_to_all = false;
  // The training loop frees gradients after each step (torch.optim zero_grad(set_to_none=True));
  // Megatron (persistent main_grad buffer) and DeepSpeed (contiguous gradient buffers) do not.
  bool grads_set_to_none = false;
  // torch.distributed.pipelining (PT-PP stage.py): a non-first stage allocates a receive buffer of
  // its input for each of the step's micro-batches (_prepare_forward_infra), and the last stage
  // keeps its output (the logits) in fwd_cache until that micro-batch's backward.
  bool pp_buffers_per_microbatch = false;
  bool expandable_segments = false;  // the launcher sets PYTORCH_ALLOC_CONF=expandable_segments:True
  SelectiveKind selective = SelectiveKind::kAttentionCore;  // meaning of recompute=selective
  bool eager_attention_copies = false;   // the model's attention makes eager q/k/v copies (torchtitan llama3 model.py)
  // SwiGLU through Megatron-LM's fused bias_swiglu_impl (core/fusions/fused_bias_swiglu.py
  // SwiGLUFunction saves only its input, the fc1 output, and recomputes silu in backward; on by
  // default: --no-bias-swiglu-fusion turns it off, NeMo's Llama configs set bias_activation_fusion):
  // the MLP saves 6sbf, not the eager 8sbf (gate, up, silu(gate), product).
  bool fused_swiglu = false;
  // precision=fp8 through Transformer Engine (Megatron-LM, and the TE path Megatron-DeepSpeed takes):
  // every GEMM module saves its input for the weight gradient as the fp8 tensor it already cast
  // (TE pytorch/module/linear.py _Linear.forward: saved_inputmat is the quantized input, column-wise
  // usage only; layernorm_linear.py saves the fp8 ln_out), 1 B, not 2 (FRAMEWORK_NOTES §2.3
  // "Activations"). torchao float8 (torchtitan) saves the bf16 inputs and casts again in backward.
  bool fp8_saves_gemm_inputs = false;
  // kernels=auto runs Transformer Engine's modules (Megatron-LM; --transformer-impl local is
  // kernels=eager); otherwise only kernels=fused does (Megatron-DeepSpeed's Megatron kernels).
  bool te_modules_by_default = false;
  // Pretraining memory switches it ships (validate.cpp warns for the others): saved activations to
  // CPU memory (Megatron-LM --cpu-offloading, DeepSpeed cpu_checkpointing) and Liger's fused linear
  // cross-entropy (the Hugging Face models DeepSpeed trains).
  bool offloads_activations = true;
  bool fused_linear_loss = false;
  bool fp32_math_attention = false;      // without flash, PyTorch SDPA's math backend keeps fp32 scores (4 B, not 2)
  bool sp_saves_gathered_inputs = false; // SP saves the all-gathered block inputs (torchtitan's DTensor SP)
  // The largest unit gathered at once under sharding: one transformer block (or the head), as FSDP2
  // wraps per block; false = the largest single module (DeepSpeed ZeRO-3 fetches by module).
  bool gathers_whole_blocks = false;
  // CPU offload of the optimizer (offload=optimizer: ZeRO-Offload offload_optimizer, FSDP CPUOffload,
  // Megatron-LM --optimizer-cpu-offload) and of the parameters (offload=params: ZeRO-3 offload_param,
  // FSDP CPUOffload(offload_params=True)); the framework's name for it, in messages.
  bool offloads_optimizer = true;
  bool offloads_params = true;
  const char* offload_mechanism = "";
  // Bytes per trained parameter of the rank's shard crossing PCIe each step with offload=optimizer:
  // gradients to the host and updated weights back.
  double offload_pcie_bytes_per_param = 4;
  bool casts_base_to_bf16 = false;     // bf16 mode casts the whole module, a frozen fp32 base included
                                       // (DeepSpeed engine.py _configure_distributed_model)
  // How gradients are bucketed for the DP reduce (step time): Megatron's DDP buckets (40M elements,
  // at least 1M per rank), DeepSpeed's reduce bucket, or one bucket per block (FSDP2).
  GradBuckets grad_buckets = GradBuckets::kMegatronDdp;
  // Communication buffers beside the model states (memory_model.cpp comm_buffers): reduced in place
  // in contiguous buffers (mcore DDP), DeepSpeed's reduce/prefetch buckets, or FSDP2's gathered units.
  CommBufferScheme comm_buffers = CommBufferScheme::kInPlace;
  // dp_comm_overlap=auto: the ZeRO stage from which the framework, left at its own defaults,
  // overlaps its data-parallel gradient reduce and parameter gather with compute (4 = never), and
  // why (shown beside the page's chooser). dp_comm_overlapped below is the one rule.
  int64_t dp_overlap_default_from_zero = 0;
  const char* dp_overlap_default_source = "";

  bool offers_zero(int64_t zero) const { return zero >= 0 && zero <= 3 && zero_stages[size_t(zero)] != nullptr; }
  bool weights_sharded(int64_t zero) const { return zero >= weights_sharded_from_zero; }
};

const FrameworkProfile& framework_profile(Framework framework);
// The framework's own stage split for this model (parameter_count.h SplitRule).
SplitRule split_rule(const FrameworkProfile& profile, const ModelSpec& model);
// The pipeline stages whose memory or time can be the worst: first, the first middle one (most
// layers under an uneven split, most in-flight micro-batches among the middle) and last; every
// stage under a cost-balanced split, the first of each layer count there (in-flight micro-batches
// fall with the stage index), the head's stage and the last.
std::vector<int64_t> candidate_stages(const Config& config, const FrameworkProfile& profile);
// Whether the data-parallel gradient reduce (and a sharded optimizer's parameter gather) overlaps
// compute: dp_comm_overlap on/off as given, auto = the framework's default at ZeRO stage `zero`
// (FrameworkProfile dp_overlap_default_from_zero). Both models read it: the step time
// (perf_model.cpp framework_perf) and the memory model (DeepSpeed's second IPG bucket).
bool dp_comm_overlapped(const TrainingSpec& training, int64_t zero);
// The rule for a framework and ZeRO stage (validated: the stage exists for the framework).
// Pure bf16 drops the fp32 master and keeps gradients and moments in bf16.
ModelStateRule model_state_rule(Framework framework, int64_t zero, bool fp32_grad_buffer,
                                Precision precision = Precision::kBf16);
// Bytes per logit element of the cross-entropy the config uses (overheads.h).
double loss_bytes_per_logit(const FrameworkProfile& profile, const TrainingSpec& training, int64_t tp);
// Fused linear cross-entropy (loss=fused_linear), Liger-Kernel ops/fused_linear_cross_entropy.py
// fused_linear_cross_entropy_forward: the LM head's GEMM and the loss run chunk by chunk inside the
// forward, so no logits tensor exists. What lives: grad_input (tokens x h, the input's dtype),
// computed in the forward and kept for backward; one chunk of logits, next_power_of_2(ceil(tokens /
// ceil(V/h))) rows x V, whose gradient the kernel writes in place; the fp32 per-token loss; with a
// trained head, grad_weight (its size, made in the forward; stage_transients adds it). Apple's
// Cut Cross-Entropy (blockwise in on-chip memory, grad_input in backward) keeps less: an upper bound.
double fused_linear_loss_bytes(double tokens, double hidden, double vocab, double input_bytes);
LossKind effective_loss(const FrameworkProfile& profile, const TrainingSpec& training, int64_t tp);
// AdamW / paged AdamW 8 (pure bf16: 4), SGD 4 (2), 8-bit Adam / paged 8-bit 2, Adafactor ~0.
double optimizer_moment_bytes(Optimizer optimizer, Precision precision = Precision::kBf16);

// The quantities behind one rank's numbers, so a front end can show each formula filled in.
struct RankIntermediates {
  int64_t layers = 0;                   // transformer layers on this rank (all chunks)
  double parameters = 0;                // parameters on this rank (after tp and pp split)
  double layer_parameters = 0;          // one layer on one TP rank
  double fp8_gathered_layer_parameters = 0;  // of those, Linear weights gathered in fp8 (MemoryPlan)
  double embedding_parameters = 0;      // v_pad*h/tp if the rank holds the embedding
  double lm_head_parameters = 0;        // v_pad*h/tp (+ final norm) if the rank holds the head
  double weight_bytes_per_param = 0;    // after sharding
  double hpz_secondary_bytes = 0;       // DeepSpeed ZeRO++ hpZ's second weight partition (in the weights)
  double grad_bytes_per_param = 0;      // after sharding
  double optimizer_bytes_per_param = 0; // master + moments, after sharding
  int64_t in_flight_microbatches = 0;   // micro-batches (interleaved: chunk-micro-batches) live
  StageActivations activations;         // the activation terms of this stage
  double logits_elements = 0;           // s*b*v_pad/(tp*cp) on the last stage, else 0
  double logits_bytes = 0;              // logits and loss buffers at the end of a forward
  double backward_working_bytes = 0;    // recomputed layer + gradient temporaries in a backward
  bool peak_at_backward = true;         // which of the two moments is the stage's peak
  // The optimizer step (memory_model.cpp [SECTION] Optimizer step): its temporaries, whether they
  // land in new allocator segments (flat tensors larger than any cached block), and whether the
  // step, not forward/backward, is the stage's allocated peak.
  double optimizer_step_transient_bytes = 0;
  bool optimizer_step_new_segments = false;
  bool peak_at_optimizer_step = false;
  double optimizer_step_allocated_bytes = 0;  // everything allocated inside optimizer.step()
  double largest_unit_parameters = 0;   // largest unit gathered whole (FSDP: block; DeepSpeed: module)
  double unsharded_parameter_bytes = 0; // FSDP2 under PP: the stage's params unsharded all step
  double unsharded_gradient_bytes = 0;  // FSDP2 under PP: unsharded grads accumulated over micro-batches
  double bytes_per_logit = 0;           // of the cross-entropy in use
  double cp_ring_bytes = 0;             // ring-attention buffers of one layer's backward (cp > 1)
  bool gradients_built_during_backward = false;  // no gradient exists at the loss (see memory_model.cpp)
  double loss_moment_allocated_bytes = 0;        // allocated at the loss, when gradients are built during backward
  double backward_end_allocated_bytes = 0;       // allocated at the end of backward, likewise
  double pp_receive_buffer_bytes = 0;   // torch pipelining: one input buffer per micro-batch
  double st_buffer_bytes = 0;           // spatial-temporal: double buffers of the largest linear's blocks
  double fragmentation_fraction = 0;    // of the per-step allocations (overheads.h)
  int64_t nccl_communicators = 0;
  // Fine-tuning (finetune.h): what is trained, what is frozen, and LLMem's two sections.
  double trainable_parameters = 0;      // parameters with gradients on this rank's stage
  double trained_module_parameters = 0; // of those, the trainable embedding/head copies (modules_to_save)
  double frozen_parameters = 0;         // frozen base parameters on this stage
  double quantized_parameters = 0;      // of which NF4 (QLoRA)
  double dequantized_transient_bytes = 0;  // QLoRA: one projection dequantised to bf16
  double output_section_bytes = 0;      // LM head + final norm states, head input, logits and loss at the peak
  double body_section_bytes = 0;        // the rest of peak allocated: embedding and transformer body
};

struct RankMemory {
  const char* role = "only";            // "only" | "first" | "middle" | "last"
  int64_t pp_stage = 0;
  std::vector<ChunkLayers> chunks;      // interleaved chunks held by this rank
  std::array<double, kComponentCount> component_bytes{};  // indexed by Component
  double peak_allocated_bytes = 0;      // ~ torch.cuda.max_memory_allocated
  double peak_reserved_bytes = 0;       // ~ torch.cuda.max_memory_reserved
  double device_bytes = 0;              // ~ nvidia-smi used memory
  double host_bytes = 0;                // CPU memory for offloaded states (offload != none)
  RankIntermediates intermediates;

  double bytes(Component component) const { return component_bytes[size_t(component)]; }
};

struct MemoryReport {
  std::vector<RankMemory> ranks;       // one per pipeline stage
  int64_t worst_rank = 0;              // index into ranks with the largest device_bytes
  double capacity_bytes = 0;
  double headroom = 0.8;               // "tight" threshold as a fraction of capacity
  Verdict verdict = Verdict::kFits;
  std::vector<Issue> issues;           // validation issues; errors leave ranks empty
  // Model-level quantities.
  double total_parameters = 0;
  int64_t padded_vocab = 0;
  int64_t dp = 0;
  int64_t num_microbatches = 0;
  int64_t optimizer_shard_ranks = 0;   // dp * cp: the group that shards optimizer states
  LayerActivations layer_activations;  // one layer, one micro-batch
  bool optimizer_state_after_first_step = true;  // Adam moments are created lazily at step 1

  bool valid() const { return !has_errors(issues); }
  bool fits() const { return valid() && verdict != Verdict::kOutOfMemory; }
  const RankMemory& worst() const { return ranks[size_t(worst_rank)]; }
};

// The step runs under torch.autocast: the FSDP profile unsharded (a plain loop or DDP, as torchtitan's
// maybe_enable_amp and HF Trainer's bf16=True run it) in mixed precision (not pure bf16).
bool runs_under_autocast(const Config& config, const FrameworkProfile& profile);
// fp32 parameters cast per GEMM by torch.autocast (the FSDP profile at ZeRO 0, mixed precision).
bool autocast_over_fp32_weights(const Config& config, const FrameworkProfile& profile);
// QLoRA after PEFT's prepare_model_for_kbit_training under autocast (HF Trainer bf16=True): the
// embedding and the norms are fp32, and bitsandbytes' Linear4bit returns its input's dtype, so the
// residual stream, each checkpointed layer input, is fp32 (FINETUNE_NOTES §2.2).
bool qlora_fp32_stream(const Config& config, const FrameworkProfile& profile);

// The blocks' Linear weights all-gathered in fp8 (TrainingSpec::fp8_all_gather, FRAMEWORK_NOTES §1.9):
// asked for, under precision fp8, by a profile that gathers whole blocks with sharded weights, and
// over a shard group of more than one rank (torchtitan's converter: dp_shard_enabled and the flag).
bool fp8_weights_gathered(const Config& config, const FrameworkProfile& profile);

// Validates, then estimates every pipeline stage. Invalid input: ranks empty, issues filled.
MemoryReport estimate_memory(const Config& config);

// The per-configuration constants behind every stage's numbers, computed once (the layout
// search evaluates a few stages per candidate with them, without building a whole report).
struct MemoryPlan {
  FrameworkProfile profile;
  ActivationSettings activation_settings;
  LayerActivations layer_activations;
  int64_t dp = 0;
  int64_t num_microbatches = 0;
  int64_t optimizer_shard_ranks = 0;
  int64_t padded_vocab = 0;
  int64_t nccl_communicators = 0;
  double weight_bytes_per_param = 0;
  double grad_bytes_per_param = 0;
  double optimizer_bytes_per_param = 0;
  double layer_parameters = 0;   // one layer on one TP rank
  double vocab_parameters = 0;   // v_pad * h / tp
  // FSDP2 fp8 all-gather (TrainingSpec::fp8_all_gather): one layer's Linear weights on a TP rank,
  // gathered and held unsharded at 1 B instead of 2; 0 when the weights are gathered in bf16.
  double fp8_gathered_layer_parameters = 0;
};

// Spatial-temporal model parallelism (layout.st_q > 1), PrimePar (Wang et al. ASPLOS'24) §3.3 and
// Fig. 4: the double buffers that receive the next step's blocks while the current one computes,
// for the linear that needs the most (PRIMEPAR_NOTES §5: ~2(T*N + N*K)/m elements, plus a dW
// accumulation block of N*K/m), in bytes. 0 for Megatron TP.
double spatial_temporal_buffer_bytes(const Config& config);

// Requires a valid config (validate() returned no errors).
MemoryPlan plan_memory(const Config& config);

// One pipeline stage's shape, the one count both the memory and the performance model use.
struct StageShape {
  StagePlacement placement;             // layers, embedding / LM head placement
  double embedding_parameters = 0;      // v_pad*h/tp on the first stage
  double lm_head_parameters = 0;        // head matrix (untied, or tied but split over stages) + final norm
  double parameters = 0;                // layers * layer parameters + embedding + head, on one TP rank
};
StageShape stage_shape(const Config& config, const MemoryPlan& plan, int64_t stage);
// One stage's memory; `with_chunks` fills RankMemory::chunks (the search leaves it empty).
RankMemory stage_memory(const Config& config, const MemoryPlan& plan, int64_t stage, bool with_chunks);
// The worst of candidate_stages' memory.
RankMemory worst_stage_memory(const Config& config, const MemoryPlan& plan);
// fits / tight / out of memory. `pageable_bytes` (bitsandbytes paged optimizer states, in CUDA managed
// memory) may exceed the capacity: the driver evicts those pages to host memory (FINETUNE_NOTES §2.3),
// so a rank is out of memory only when the rest does not fit, and tight while its pages spill.
Verdict verdict_for(double device_bytes, double capacity_bytes, double headroom, double pageable_bytes = 0);
// Paged states the GPU cannot hold (spilled to host memory by the driver): 0 without paged states.
double paged_spill_bytes(const RankMemory& rank, double capacity_bytes);
// What must fit on the GPU: the device figure less the paged optimizer states the driver can evict.
double resident_bytes(const RankMemory& rank);

}  // namespace meshfit
