// memory_model.cpp — per-rank memory from model states, activations and overheads.
// Model states: Megatron-LM theoretical_memory_usage.py (bytes per parameter 18 or 6 + 12/d),
// DeepSpeed estimate_zero2/zero3_model_states_mem_needs, torchtitan FSDP2 (16/(dp*cp) + unsharded
// transients); activations: activation_memory.h; overheads: overheads.h.
#include "memory/memory_model.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "memory/finetune.h"
#include "memory/overheads.h"
#include "memory/parameter_count.h"
#include "spec/validate.h"

namespace meshfit {

// [SECTION] Framework profiles (data, not branches in the formulas)

namespace {

const FrameworkProfile kProfiles[] = {
    [] {
      FrameworkProfile p;
      p.framework = Framework::kMegatron;
      p.source = "Megatron-LM (mcore DDP contiguous buffers, --use-distributed-optimizer)";
      p.zero_stages = {"off (plain DDP)", "on (ZeRO-1)", nullptr, nullptr};  // --use-distributed-optimizer
      p.default_zero = 1;
      // theoretical_memory_usage.py: 18 B/param, or 6 + 12/d with the distributed optimizer. The
      // fp32 main-grad buffer (4) is not sharded; without it gradients are bf16 (2), not sharded.
      p.states.optimizer_sharded_from_zero = 1;
      p.states.fp32_grads_from_zero = 0;
      p.states.bf16_grads_dropped_from_zero = 0;
      p.even_middle_split = true;            // arguments.py: layers split evenly over the middle stages
      // --optimizer-cpu-offload (core/optimizer/cpu_offloading/hybrid_optimizer.py HybridDeviceOptimizer,
      // inside the distributed optimizer): the shard's fp32 master and Adam moments live on the CPU and
      // the step runs there; the bf16 params and the fp32 main-grad buffer stay on the GPU. Each step the
      // shard's fp32 gradients go to the host and its fp32 updated params come back (param_update_in_fp32):
      // 4 + 4 B per parameter. From Megatron-LM's source as remembered, NOT re-read here; parameters
      // have no offload (--cpu-offloading is TE's activation offload, not modelled).
      p.offloads_params = false;
      p.offload_mechanism = "Megatron-LM --optimizer-cpu-offload";
      p.offload_pcie_bytes_per_param = 8;
      p.interleave_needs_pp_multiple = true; // interleaved 1F1B: num_microbatches % pp == 0
      // arguments.py --num-distributed-optimizer-instances (needs --use-distributed-optimizer): the
      // optimizer is sharded inside each instance; param_and_grad_buffer.py start_grad_sync
      // reduce-scatters in the intra-instance group, then all-reduces across instances. The instances
      // slice the data-parallel-with-cp group: parallel_state.py initialize_model_parallel asserts
      // (dp x cp) % instances == 0 and builds intra-partial groups of dp x cp / instances ranks
      // (the distributed optimizer shards over dp x cp, FRAMEWORK_NOTES §2.1).
      p.replicas_mechanism = "Megatron-LM --num-distributed-optimizer-instances";
      p.replicas_from_zero = 1;
      p.replicas_span_cp = true;
      p.vocab_pad_multiple = 128;            // --make-vocab-size-divisible-by 128 (times tp)
      p.default_loss = LossKind::kVocabParallel;  // tensor_parallel/cross_entropy.py
      // Transformer Engine caches the fp8 weight and its fp8 transpose (Hopper) between the
      // micro-batches of a step (TE Linear.forward is_first_microbatch; Megatron
      // extensions/transformer_engine.py): 1 + 1 B per GEMM weight. NOT verified against a measurement.
      p.fp8_weight_cache_bytes = 2;
      p.fused_swiglu = true;  // --bias-swiglu-fusion (default on): fused_bias_swiglu.py SwiGLUFunction
      p.fp8_saves_gemm_inputs = true;  // Transformer Engine's modules (transformer_engine.py TELinear etc.)
      p.te_modules_by_default = true;
      // Plain Megatron-LM leaves --overlap-grad-reduce / --overlap-param-gather off (arguments.py
      // store_true); the Megatron-Bridge / NeMo recipes that runs are launched with turn them on
      // (FRAMEWORK_NOTES §2.2), and auto follows the recipes. A 2021/2022-style run is off.
      p.dp_overlap_default_from_zero = 0;
      p.dp_overlap_default_source =
          "Megatron-Bridge/NeMo recipes set --overlap-grad-reduce and --overlap-param-gather (plain Megatron-LM leaves them off)";
      return p;
    }(),
    [] {
      FrameworkProfile p;
      p.framework = Framework::kFsdp;
      p.source = "PyTorch FSDP2 fully_shard as configured by torchtitan (bf16 params, fp32 reduce)";
      p.offload_mechanism = "FSDP CPUOffload";
      p.offloads_activations = false;  // torchtitan has no activation offloading
      // torchtitan: DDP, reshard_after_forward=False (SHARD_GRAD_OP), full sharding (the default).
      p.zero_stages = {"0 (DDP)", nullptr, "2 (reshard_after_forward=False)", "3 (full sharding)"};
      // HSDP: data_parallel_replicate_degree x data_parallel_shard_degree, sharded over dp_shard x cp
      // (FRAMEWORK_NOTES §1.1 "Mesh"); with dp_shard = cp = 1 torchtitan applies DDP instead.
      p.replicas_mechanism = "HSDP, torchtitan data_parallel_replicate_degree";
      p.replicas_from_zero = 2;
      p.default_zero = 3;
      p.weights_sharded_from_zero = 2;
      // FSDP2: the fp32 parameters are the master copy; fp32 gradients; 16/(dp*cp) B/param sharded
      // (torchtitan docs). zero 0 = DDP: everything replicated.
      p.states.weight_bytes = 4;
      p.states.master_bytes = 0;
      p.states.optimizer_sharded_from_zero = 2;
      p.states.fp32_grads_always = true;
      p.states.fp32_grads_sharded_from_zero = 2;
      p.grad_reduce_in_fp32 = true;
      p.vocab_pad_multiple = 1;
      p.default_loss = LossKind::kEager;               // components/loss.py cross_entropy_loss
      p.compiled_loss_when_compiled = true;            // compile.components = ["model", "loss"]
      // torchao float8 saves the high-precision weight and casts per use (float8_linear.py); the
      // fp8 all-gather is off by default (enable_fsdp_float8_all_gather = False): no cache.
      p.fp8_weight_cache_bytes = 0;
      p.pipeline_edge_weight = 1;   // pipeline_parallel_first/last_stage_less_layers = 1
      p.unsharded_under_pp = true;  // fsdp_reshard_after_forward "default" = not pp_enabled
      p.ddp_bucket_copy = true;     // torch DDP's gradient buckets
      p.grads_on_reduce_stream = true;  // _fsdp_collectives.py foreach_reduce runs on the reduce-scatter stream
      p.cp_ring_allgather = true;   // PT-CP _templated_ring_attention with _AllGatherRotater
      p.grads_set_to_none = true;   // train.py: optimizers.zero_grad() (set_to_none=True)
      p.pp_buffers_per_microbatch = true;  // torch.distributed.pipelining schedules
      p.expandable_segments = true;        // run_train.sh PYTORCH_ALLOC_CONF="expandable_segments:True"
      p.selective = SelectiveKind::kAlternateMatmuls;  // torchtitan ac_mode selective, op
      p.eager_attention_copies = true;     // torchtitan's llama3 model.py
      p.fp32_math_attention = true;        // SDPA's math backend upcasts bf16 (allow_fp16_bf16_reduction_math_sdp off)
      p.sp_saves_gathered_inputs = true;   // torchtitan's DTensor SP
      p.gathers_whole_blocks = true;       // fully_shard per transformer block, and [norm, output]
      p.grad_buckets = GradBuckets::kPerBlock;
      p.comm_buffers = CommBufferScheme::kFsdpUnits;
      // FSDP2 reduce-scatters each block's gradients during the backward (and DDP's buckets
      // all-reduce as they fill): there is no flag to turn it off (FRAMEWORK_NOTES §1.4).
      p.dp_overlap_default_from_zero = 0;
      p.dp_overlap_default_source = "FSDP2 reduce-scatters each block's gradients during the backward (no flag)";
      return p;
    }(),
    [] {
      FrameworkProfile p;
      p.framework = Framework::kDeepSpeed;
      p.source = "DeepSpeed ZeRO (Megatron-DeepSpeed), estimate_zero*_model_states_mem_needs";
      p.offload_mechanism = "DeepSpeed ZeRO-Offload (offload_optimizer, offload_param)";
      p.zero_stages = {"0 (off)", "1", "2", "3"};
      p.default_zero = 1;
      p.weights_sharded_from_zero = 3;
      // MiCS (zero_optimization.mics_shard_size, runtime/zero/mics.py): ZeRO-3 partitions inside
      // groups of mics_shard_size ranks, replicated across groups; stages 1-2 shard over all ranks.
      p.replicas_mechanism = "DeepSpeed MiCS, mics_shard_size = dp / dp_replicate";
      p.replicas_from_zero = 3;
      p.cp_all_to_all = true;  // Megatron-DeepSpeed's sequence parallelism is Ulysses (--ds-sequence-parallel-size)
      // DeepSpeed's PipelineEngine (runtime/pipe/engine.py) asserts "ZeRO-2 and ZeRO-3 are
      // incompatible with pipeline parallelism", and its TrainSchedule (pipe/schedule.py) is plain
      // 1F1B: no virtual stages.
      p.pp_max_zero = 1;
      p.pp_zero_source = "runtime/pipe/engine.py: \"ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism\"";
      p.interleaved_schedule = false;
      p.schedules = "its PipelineEngine runs plain 1F1B";
      // ZeRO paper (Rajbhandari 2020) stage 0: 2 + 2 + 12. Stage 1 follows
      // estimate_zero2_model_states_mem_needs: 4*P + 16*P/N (bf16 weights and gradients
      // replicated; fp32 gradients, master and moments partitioned). Stage 2 keeps only its
      // gradient partition (stage_1_and_2.py frees other grads after each reduce bucket; the
      // Polaris log's 13.83 GiB at rest = 2 + 12/dp B/param). Stage 3 follows
      // estimate_zero3_model_states_mem_needs: 18*P/N (+ the largest module, in comm buffers).
      p.states.optimizer_sharded_from_zero = 1;
      p.states.fp32_grads_from_zero = 1;
      p.states.fp32_grads_sharded_from_zero = 1;
      p.states.bf16_grads_dropped_from_zero = 3;
      p.states.bf16_grads_sharded_from_zero = 2;
      p.grad_reduce_in_bf16 = true;
      p.vocab_pad_multiple = 128;
      p.default_loss = LossKind::kVocabParallel;  // Megatron's vocab-parallel cross-entropy
      p.fp8_weight_cache_bytes = 2;               // Transformer Engine, as Megatron
      p.fp8_saves_gemm_inputs = true;             // and its fp8 saved inputs
      p.fused_linear_loss = true;                 // Hugging Face models with use_liger_kernel
      p.grad_buckets = GradBuckets::kDeepSpeed;
      p.casts_base_to_bf16 = true;
      p.comm_buffers = CommBufferScheme::kDeepSpeedBuckets;
      // zero_optimization.overlap_comm defaults to None, made True only for stage 3 (DeepSpeed
      // runtime/zero/config.py validator overlap_comm_valid; FRAMEWORK_NOTES §3.1). Stage 0 has no
      // ZeRO optimizer: the engine all-reduces the gradients after the backward, at the
      // accumulation boundary (runtime/engine.py allreduce_gradients).
      p.dp_overlap_default_from_zero = 3;
      p.dp_overlap_default_source = "DeepSpeed's overlap_comm defaults to true only at ZeRO-3";
      return p;
    }(),
    [] {
      FrameworkProfile p;
      p.framework = Framework::kNanotron;
      p.source = "nanotron (Hugging Face): bf16 params, fp32 gradient accumulator, optional ZeRO-1";
      // config zero_stage: 0 (default) or 1 (optim/zero.py ZeroDistributedOptimizer).
      p.zero_stages = {"0 (off)", "1 (ZeRO-1: master and moments)", nullptr, nullptr};
      p.default_zero = 0;
      // accumulate_grad_in_fp32 (the examples' default): the fp32 accumulator beside the bf16
      // gradients, neither sharded by ZeRO-1 — 2 + 2 + 4 + 4 + 8 = 20 B/param, the Ultra-Scale
      // Playbook's "libraries that keep fp32 grads (nanotron does) add another 4N" (MEMORY_NOTES §6).
      p.states.optimizer_sharded_from_zero = 1;
      p.states.fp32_grads_from_zero = 0;
      p.states.bf16_grads_dropped_from_zero = 4;
      p.cost_balanced_split = true;
      p.interleaved_schedule = false;
      p.schedules = "its pp_engine is 1f1b or afab";
      p.vocab_pad_multiple = 1;                   // TensorParallelEmbedding: the vocabulary split over tp
      // The pipeline's cast_to_fp32 block, then sharded_cross_entropy (parallel/tensor_parallel/
      // functional.py): fp32 logits exponentiated in place and reused as the backward's gradient,
      // Megatron's vocab-parallel scheme.
      p.default_loss = LossKind::kVocabParallel;
      p.fp8_weight_cache_bytes = 0;               // no fp8 training path modelled for nanotron
      p.offloads_optimizer = p.offloads_params = false;  // its config has no CPU offload
      p.offloads_activations = false;
      // Gradients go through torch DDP's bucket hooks during the backward (parallel/data_parallel).
      p.dp_overlap_default_from_zero = 0;
      p.dp_overlap_default_source = "nanotron reduces gradients in torch DDP bucket hooks during the backward";
      return p;
    }(),
};
static_assert(std::size(kProfiles) == enum_count<Framework>(), "one profile per framework, in enum order");

}  // namespace

const FrameworkProfile& framework_profile(Framework framework) {
  const FrameworkProfile& profile = kProfiles[size_t(framework)];
  MESHFIT_ASSERT(profile.framework == framework, "framework profiles out of enum order");
  return profile;
}

SplitRule split_rule(const FrameworkProfile& profile, const ModelSpec& model) {
  SplitRule rule;
  rule.edge_weight = profile.pipeline_edge_weight;
  if (profile.cost_balanced_split) rule.head_cost_layers = nanotron_head_cost_layers(model);
  return rule;
}

std::vector<int64_t> candidate_stages(const Config& config, const FrameworkProfile& profile) {
  const int64_t pp = config.layout.pp;
  std::vector<int64_t> stages = {0};
  const auto add = [&stages](int64_t stage) {
    if (std::find(stages.begin(), stages.end(), stage) == stages.end()) stages.push_back(stage);
  };
  if (pp > 1) add(1);
  if (pp > 2) add(pp - 1);
  if (profile.cost_balanced_split && config.layout.vpp == 1 && pp > 2) {
    const SplitRule rule = split_rule(profile, config.model);
    const std::vector<int64_t> counts = virtual_stage_layers(config.model.layers, config.layout, rule);
    std::vector<int64_t> seen;
    for (int64_t stage = 1; stage < pp; ++stage) {
      if (std::find(seen.begin(), seen.end(), counts[size_t(stage)]) != seen.end()) continue;
      seen.push_back(counts[size_t(stage)]);
      add(stage);
    }
    add(head_stage(config.model.layers, config.layout, rule));
  }
  return stages;
}

// Plain PyTorch mixed precision: fp32 parameters that torch.autocast casts per GEMM. The FSDP
// profile's unsharded stage (ZeRO 0: DDP or a plain loop; torchtitan's maybe_enable_amp) in bf16 mixed
// or fp8 precision, full training. FSDP2's MixedPrecisionPolicy and Megatron/DeepSpeed's bf16 copies
// do not cast per use.
bool fp8_weights_gathered(const Config& config, const FrameworkProfile& profile) {
  const TrainingSpec& t = config.training;
  return t.fp8_all_gather && t.precision == Precision::kFp8 && profile.gathers_whole_blocks &&
         profile.weights_sharded(config.layout.zero) && shard_group_ranks(config) > 1;
}

bool runs_under_autocast(const Config& config, const FrameworkProfile& profile) {
  const TrainingSpec& t = config.training;
  return t.framework == Framework::kFsdp && !profile.weights_sharded(config.layout.zero) && t.precision != Precision::kPureBf16;
}

bool autocast_over_fp32_weights(const Config& config, const FrameworkProfile& profile) {
  const FinetuneMethod method = config.training.finetune;
  return runs_under_autocast(config, profile) && (method == FinetuneMethod::kNone || method == FinetuneMethod::kFull);
}

// An as-a-user review of the memory model (derived from PEFT utils/other.py
// prepare_model_for_kbit_training, transformers LlamaRMSNorm, bitsandbytes Linear4bit.forward's
// out.to(inp_dtype)): every checkpointed layer input is 4 B per element, not 2. Checked against the
// Unsloth README's HF + FA2 maximum contexts (tests/data/finetune_measured.csv, one per GPU size,
// 8B on 12-80 GB and 70B on 80 GB): they now read 93.5-96.9% of capacity (85.5-91.5% before),
// each label unchanged. The frozen fp32 LM head's bf16 cast, which F.linear would also save, is
// not added: with it the 12 and 16 GB maximum contexts read out of memory.
bool qlora_fp32_stream(const Config& config, const FrameworkProfile& profile) {
  const TrainingSpec& t = config.training;
  return runs_under_autocast(config, profile) && t.precision == Precision::kBf16 && t.finetune == FinetuneMethod::kQlora &&
         t.kbit_upcast;
}

bool dp_comm_overlapped(const TrainingSpec& training, int64_t zero) {
  switch (training.dp_comm_overlap) {
    case DpCommOverlap::kOn: return true;
    case DpCommOverlap::kOff: return false;
    case DpCommOverlap::kAuto: break;
  }
  return zero >= framework_profile(training.framework).dp_overlap_default_from_zero;
}

ModelStateRule model_state_rule(Framework framework, int64_t zero, bool fp32_grad_buffer, Precision precision) {
  const FrameworkProfile& profile = framework_profile(framework);
  const ModelStateBytes& bytes = profile.states;
  ModelStateRule rule;
  rule.weight_bytes = bytes.weight_bytes;
  rule.weights_sharded = profile.weights_sharded(zero);
  const bool fp32_grads = bytes.fp32_grads_always || (fp32_grad_buffer && zero >= bytes.fp32_grads_from_zero);
  rule.grad_fp32_bytes = fp32_grads ? 4 : 0;
  rule.grads_fp32_sharded = zero >= bytes.fp32_grads_sharded_from_zero;
  const bool bf16_grads = !bytes.fp32_grads_always && !(fp32_grad_buffer && zero >= bytes.bf16_grads_dropped_from_zero);
  rule.grad_bytes = bf16_grads ? 2 : 0;
  rule.grads_sharded = zero >= bytes.bf16_grads_sharded_from_zero;
  rule.master_bytes = bytes.master_bytes;
  rule.master_sharded = rule.moments_sharded = zero >= bytes.optimizer_sharded_from_zero;
  if (precision == Precision::kPureBf16) {
    // Pure bf16: the bf16 weights are the only copy (no master), gradients are bf16 like the
    // params they belong to, sharded as the framework shards gradients (FRAMEWORK_NOTES §4.1;
    // Megatron --main-params-dtype/--main-grads-dtype bf16; FSDP2 grads take the param dtype).
    rule.weight_bytes = 2;
    rule.grads_sharded = rule.grad_fp32_bytes > 0 ? rule.grads_fp32_sharded : rule.grads_sharded;
    rule.grad_bytes = 2;
    rule.grad_fp32_bytes = 0;
    rule.master_bytes = 0;
  }
  return rule;
}

LossKind effective_loss(const FrameworkProfile& profile, const TrainingSpec& training, int64_t tp) {
  if (training.loss != LossKind::kAuto) return training.loss;
  if (runs_compiled(training, tp) && profile.compiled_loss_when_compiled) return LossKind::kCompiled;
  return profile.default_loss;
}

double fused_linear_loss_bytes(double tokens, double hidden, double vocab, double input_bytes) {
  if (tokens <= 0 || hidden <= 0 || vocab <= 0) return 0.0;
  const double inc_factor = std::ceil(vocab / hidden);
  double chunk_rows = 1.0;  // triton.next_power_of_2(cdiv(BT, inc_factor)), at most BT rows used
  while (chunk_rows < std::ceil(tokens / inc_factor)) chunk_rows *= 2.0;
  chunk_rows = std::min(chunk_rows, tokens);
  return tokens * hidden * input_bytes + chunk_rows * vocab * input_bytes + 4.0 * tokens;
}

double loss_bytes_per_logit(const FrameworkProfile& profile, const TrainingSpec& training, int64_t tp) {
  switch (effective_loss(profile, training, tp)) {
    case LossKind::kAuto:  // resolved above
    case LossKind::kVocabParallel: return kMegatronBytesPerLogit;
    case LossKind::kEager: return kPyTorchBytesPerLogit;
    case LossKind::kEagerKeepLogits: return kPyTorchKeepLogitsBytesPerLogit;
    case LossKind::kCompiled: return kCompiledBytesPerLogit;
    case LossKind::kChunked:
      return kSavedLogProbBytesPerLogit + (kPyTorchBytesPerLogit - kSavedLogProbBytesPerLogit) / kChunkedLossChunks;
    case LossKind::kFusedLinear: return 0.0;  // no logits tensor: fused_linear_loss_bytes
    case LossKind::kBf16Chunked: return kBf16ChunkedBytesPerLogit;
  }
  return kPyTorchBytesPerLogit;
}

double optimizer_moment_bytes(Optimizer optimizer, Precision precision) {
  // torch.optim creates the moments with zeros_like(param): bf16 under pure bf16 (adam.py _init_group).
  const double width = precision == Precision::kPureBf16 ? 2.0 : 4.0;
  switch (optimizer) {
    case Optimizer::kAdamW: return 2 * width;  // m and v
    case Optimizer::kSgd: return width;        // momentum
    case Optimizer::kAdam8bit: return 2;  // bitsandbytes: 1-byte m and v (block scales negligible)
    case Optimizer::kPagedAdamW: return 2 * width;  // bitsandbytes PagedAdamW32bit: fp32 m and v, paged
    case Optimizer::kPagedAdam8bit: return 2;       // PagedAdamW8bit
    // HF Adafactor (beta1=None): no first moment; the second moment is factored into a row and a
    // column vector per matrix, 4*(rows + cols) bytes, under 0.01 B/param at h >= 1024: counted 0.
    case Optimizer::kAdafactor: return 0;
  }
  return 8;
}

double spatial_temporal_buffer_bytes(const Config& config) {
  const Layout& layout = config.layout;
  if (!spatial_temporal(layout)) return 0.0;
  const ModelSpec& model = config.model;
  const double m = double(layout.tp);
  const double tokens = double(config.training.seq) / double(layout.cp) * double(config.training.micro_batch);
  const double h = double(model.hidden), f = double(model.ffn);
  const double q = query_width(model), kv = kv_width(model);  // a*d and k*d (model_spec.h)
  const double mlp_in = (model.mlp == MlpKind::kSwiGlu ? 2.0 : 1.0) * f;
  // (N, K) of the four projections: QKV, attention out, MLP in, MLP out (PrimePar Eq. 1 notation).
  const double shapes[4][2] = {{h, q + 2.0 * kv}, {q, h}, {h, mlp_in}, {f, h}};
  double largest = 0.0;
  for (const auto& shape : shapes) {
    const double n = shape[0], k = shape[1];
    // bf16: two receive buffers of (activation block + weight block) (Fig. 4 double buffering; the
    // activation block is the wider of I and dO), plus the dW partial of the gradient phase.
    const double bytes = 2.0 * (2.0 * (tokens * std::max(n, k) + n * k) / m + n * k / m);
    largest = std::max(largest, bytes);
  }
  return largest;
}

// [SECTION] Estimation

namespace {

const char* role_name(int64_t stage, int64_t pp) {
  if (pp == 1) return "only";
  if (stage == 0) return "first";
  if (stage == pp - 1) return "last";
  return "middle";
}

int64_t count_communicators(const Layout& layout, int64_t dp) {
  int64_t count = 0;
  if (dp > 1) ++count;
  if (layout.dp_replicate > 1) count += 2;  // the shard group and the replica group beside the whole dp group
  if (layout.hpz_partition_size > 1) ++count;  // DeepSpeed hpZ's zero_param_intra_parallel group
  if (layout.tp > 1) ++count;
  if (layout.pp > 1) ++count;
  if (layout.cp > 1) ++count;
  if (dp > 1 && layout.cp > 1) ++count;  // the combined dp x cp group that reduces gradients
  return count;
}

// DeepSpeed's IPG reduce bucket(s): reduce_bucket_size 16-bit elements (at most the trained
// parameters), allocated at setup and kept across steps. ZeRO-1/2 allocate a second one when
// overlap_comm is on, "double buffers" (stage_1_and_2.py setup_buckets; FRAMEWORK_NOTES §3.2), so
// that one bucket fills while the other is reduced; ZeRO-3 keeps one (stage3.py, §3.3), and stage
// 0's buffered all-reduce flattens one bucket at a time (engine.py allreduce_gradients).
double deepspeed_reduce_bucket_bytes(const Config& config, double trained) {
  const int64_t zero = config.layout.zero;
  const bool double_buffered = (zero == 1 || zero == 2) && dp_comm_overlapped(config.training, zero);
  return (double_buffered ? 2.0 : 1.0) * 2.0 * std::min(trained, kDeepSpeedReduceBucketElements);
}

// Buffers for sharded or bucketed gradient/parameter communication on one rank, at the two moments
// a stage can peak: the loss (end of the last forward) and inside a block's backward.
struct CommBuffers {
  double at_loss = 0;
  double in_backward = 0;
};

CommBuffers comm_buffer_bytes(const Config& config, const RankIntermediates& rank) {
  const int64_t zero = config.layout.zero;
  const double layer = rank.layer_parameters;
  const double largest = rank.largest_unit_parameters;
  const auto both = [](double bytes) { return CommBuffers{bytes, bytes}; };
  // Fine-tuning with a frozen base (finetune.h): only the adapters have gradients to bucket or
  // reduce; the gathered base is bf16, or NF4 packed in a bf16 quant_storage under QLoRA.
  const bool frozen_base = has_adapters(config.training);
  const double trained = frozen_base ? rank.trainable_parameters : rank.parameters;
  const double trained_layer =
      frozen_base && rank.layers > 0 ? (rank.trainable_parameters - rank.trained_module_parameters) / double(rank.layers) : layer;
  const double gathered_bytes = config.training.finetune == FinetuneMethod::kQlora ? kNf4BytesPerParam : 2.0;
  const FrameworkProfile& profile = framework_profile(config.training.framework);
  switch (profile.comm_buffers) {
    case CommBufferScheme::kInPlace:
      return both(0);  // mcore DDP reduces and gathers in place in its contiguous buffers
    case CommBufferScheme::kDeepSpeedBuckets:
      if (zero >= 3) {
        // estimate_zero3: 4 * largest layer (its 16-bit params + grads unsharded; frozen: params
        // only), plus the prefetch bucket and the reduce bucket (at most the trainable parameters).
        const double unit = frozen_base ? gathered_bytes * largest : 4.0 * largest;
        return both(unit + 2.0 * std::min(layer, kDeepSpeedPrefetchBucketElements) +
                    deepspeed_reduce_bucket_bytes(config, trained));
      }
      return both(deepspeed_reduce_bucket_bytes(config, trained));  // one or two 16-bit reduce buckets
    case CommBufferScheme::kFsdpUnits: {
      // DDP bucket copies of the fp32 gradients, only when there is a DDP group (torchtitan wraps
      // with DDP only when dp_replicate > 1; at one rank there is nothing to reduce).
      if (zero == 0)
        return both(profile.ddp_bucket_copy && effective_dp(config) * config.layout.cp > 1
                        ? 4.0 * trained
                        : 0.0);
      // HSDP: the reduce-scatter's fp32 output shard is then all-reduced across the replicas and held
      // in _all_reduce_state across blocks (FRAMEWORK_NOTES §1.3 "HSDP"): one block's, 4 B per shard element.
      const double hsdp_all_reduce =
          config.layout.dp_replicate > 1 ? 4.0 * trained_layer / double(shard_group_ranks(config)) : 0.0;
      if (rank.unsharded_parameter_bytes > 0) {
        // Under PP the stage stays unsharded (counted apart); in a block's backward its bf16
        // gradient (2) lives until it is added into the fp32 accumulated gradient
        // (_fsdp_param.py accumulate_unsharded_grad_if_needed).
        return {rank.unsharded_parameter_bytes,
                rank.unsharded_parameter_bytes + 2.0 * std::max(layer, rank.lm_head_parameters) + hsdp_all_reduce};
      }
      if (frozen_base) {
        // The block and the prefetched next one gathered, plus the adapters' gradient and fp32
        // reduce-scatter input (6 B per trainable parameter); the frozen head gathered alone.
        const double kept = zero == 2 ? gathered_bytes * rank.parameters : 0.0;
        return {2.0 * rank.lm_head_parameters + kept,
                std::max(2.0 * gathered_bytes * layer + 6.0 * trained_layer, 2.0 * rank.lm_head_parameters) + kept +
                    hsdp_all_reduce};
      }
      // SHARD_GRAD_OP (zero 2) keeps every unit unsharded between forward and backward. With fp8
      // all-gather each block's Linear weights are gathered at 1 B, not 2 (fp8_saved per block).
      const double fp8_saved = rank.fp8_gathered_layer_parameters;
      const double kept_unsharded = zero == 2 ? 2.0 * rank.parameters - double(rank.layers) * fp8_saved : 0.0;
      // At the loss only the [norm, output] unit is unsharded: torchtitan never reshards it after
      // forward (reshard_after_forward = policy == "always", FRAMEWORK_NOTES §1.2); the blocks'
      // gathers start with the backward. In a block's backward: the block and the prefetched next
      // one all-gathered in bf16 (2 + 2), its unsharded bf16 gradient (2) and the fp32 reduce-scatter
      // input (4): 10 B per block parameter; in the head's backward: its params (2), gradient (2)
      // and fp32 reduce-scatter input (4): 8 B per head parameter (§1.4).
      // With a shard group of one rank the reduce-scatter's fp32 input is itself the new sharded
      // gradient (counted with the gradients), so those 4 B go: 6 and 4 B (measured by tests/gpu on
      // H100: 70b-l1's backward peak is the states, every gradient and 4 B per embedding parameter).
      // A tied head is the embedding's matrix: the root unit that holds it is the one gathered and
      // reduced last (its parameters are counted with the embedding).
      const double rs_input = shard_group_ranks(config) == 1 ? 0.0 : 4.0;
      const double edge_unit = config.model.tied_embeddings && rank.lm_head_parameters > 0
                                   ? rank.lm_head_parameters + rank.embedding_parameters
                                   : rank.lm_head_parameters;
      return {2.0 * edge_unit + kept_unsharded,
              std::max((6.0 + rs_input) * layer - 2.0 * fp8_saved, (4.0 + rs_input) * edge_unit) + kept_unsharded +
                  hsdp_all_reduce};
    }
  }
  return both(0);
}

// [SECTION] Optimizer step
//
// Inside optimizer.step() the activations are gone but the step allocates its own temporaries, per
// framework (FRAMEWORK_NOTES §1.12, §3.2-3.3, §4.4):
// - Megatron-LM: TE/Apex FusedAdam updates in place (MLM core/optimizer/__init__.py): none.
// - PyTorch (torchtitan, plain loops): fused=True updates in place (torchtitan's default,
//   optimizer.implementation = "fused"); foreach AdamW allocates exp_avg_sq_sqrt = _foreach_sqrt(v),
//   a copy of v for every tensor (torch/optim/adamw.py _multi_tensor_adamw).
// - DeepSpeed ZeRO-1/2 (stage_1_and_2.py step): the partition's flat 16-bit gradient is flattened
//   (2 B/param/d) and cast to fp32 (flat_grad_partition.to(fp32), 4 B/param/d). ZeRO-3 (stage3.py
//   _prepare_fp32_grad_for_sub_group): the sub-group's gradients cast to fp32, 4 B x
//   min(sub_group_size, P/d). With offload the step runs on the CPU.
// DeepSpeed's step tensors (and its moments, created over the flat fp32 partition) are one flat
// tensor per group, larger than the tensors of forward/backward: no cached block can hold one, and
// PyTorch's caching allocator maps a new segment (CUDACachingAllocator.cpp:
// a block never spans segments; cached segments are released only by empty_cache or an OOM retry),
// so its bytes add to the reserved pool on top of the activations' cached segments.
struct StepTransient {
  double bytes = 0;
  bool new_segments = false;
};

StepTransient optimizer_step_transient(const Config& config, const MemoryPlan& plan, double trained_on_rank) {
  const TrainingSpec& training = config.training;
  StepTransient out;
  if (training.offload != Offload::kNone || training.optimizer_in_backward) return out;  // step on the CPU / in backward
  const double shard = double(plan.optimizer_shard_ranks);
  if (training.framework == Framework::kDeepSpeed) {
    const int64_t zero = config.layout.zero;
    if (zero >= 3) out.bytes = 4.0 * std::min(kDeepSpeedSubGroupElements, trained_on_rank / shard);
    else if (zero >= 1) out.bytes = (4.0 + 2.0) * trained_on_rank / shard;
    // Counted as new segments whenever there is a step tensor (an upper bound when the partition
    // is small enough for a cached activation block; always so keeps memory monotone in batch and seq).
    out.new_segments = out.bytes > 0;
  }
  if (foreach_optimizer_step(training)) {
    const ModelStateRule rule = model_state_rule(training.framework, config.layout.zero, training.fp32_grad_buffer, training.precision);
    const double width = training.precision == Precision::kPureBf16 ? 2.0 : 4.0;  // v's dtype
    out.bytes += width * trained_on_rank / (rule.moments_sharded ? shard : 1.0);
  }
  return out;
}

}  // namespace

MemoryPlan plan_memory(const Config& config) {
  const ModelSpec& model = config.model;
  const TrainingSpec& training = config.training;
  const Layout& layout = config.layout;
  MESHFIT_ASSERT(layout.tp > 0 && layout.pp > 0 && layout.cp > 0 && layout.vpp > 0 && layout.pp * layout.vpp <= model.layers &&
                     effective_dp(config) > 0 && config.training.micro_batch > 0,
                 "plan_memory needs a validated config");
  MemoryPlan plan;
  plan.profile = framework_profile(training.framework);
  const ModelStateRule rule =
      model_state_rule(training.framework, layout.zero, training.fp32_grad_buffer, training.precision);
  plan.dp = effective_dp(config);
  plan.num_microbatches = num_microbatches(config);
  plan.optimizer_shard_ranks = shard_group_ranks(config);
  plan.padded_vocab = padded_vocab(model.vocab, plan.profile.vocab_pad_multiple, layout.tp);
  plan.nccl_communicators = count_communicators(layout, plan.dp);

  ActivationSettings& settings = plan.activation_settings;
  settings.seq = training.seq;
  settings.micro_batch = training.micro_batch;
  settings.tp = layout.tp;
  settings.cp = layout.cp;
  // Spatial-temporal (PrimePar §3.3): every tensor is one block of the square, nothing replicated,
  // so the activations divide by the whole model-parallel group as under SP (PRIMEPAR_NOTES §5).
  settings.sp = training.sp || spatial_temporal(layout);
  settings.flash = training.flash;
  settings.recompute = training.recompute;
  settings.recompute_layers = training.recompute_layers;
  settings.selective = plan.profile.selective;
  settings.eager_attention_copies = plan.profile.eager_attention_copies;
  settings.fused_swiglu = plan.profile.fused_swiglu;
  // Transformer Engine's modules run where the profile's fused kernels do (FrameworkProfile::te_modules_by_default).
  const bool te_modules = training.kernels == Kernels::kFused ||
                          (training.kernels == Kernels::kAuto && plan.profile.te_modules_by_default);
  settings.fp8_gemm_inputs = plan.profile.fp8_saves_gemm_inputs && te_modules && training.precision == Precision::kFp8;
  settings.fp32_math_attention = plan.profile.fp32_math_attention;
  settings.fp32_residual = autocast_over_fp32_weights(config, plan.profile) || qlora_fp32_stream(config, plan.profile);
  settings.sp_saves_gathered_inputs = plan.profile.sp_saves_gathered_inputs && !spatial_temporal(layout);
  settings.compiled = runs_compiled(training, layout.tp);
  settings.offload = training.offload_activations;
  settings.head_in_loss = effective_loss(plan.profile, training, layout.tp) == LossKind::kFusedLinear;
  // Autocast over the adapters' fp32 weights: the plain loop or DDP, as HF Trainer runs it (the
  // function itself asks for bf16 mixed precision).
  settings.frozen_base_delta_bytes =
      lora_activation_delta_bytes(model, training, double(training.seq) / double(layout.cp) * double(training.micro_batch),
                                  layout.tp, runs_under_autocast(config, plan.profile));
  plan.layer_activations = layer_activations(model, settings);

  const double shard = double(plan.optimizer_shard_ranks);
  const auto per_param = [shard](double bytes, bool sharded) { return sharded ? bytes / shard : bytes; };
  plan.weight_bytes_per_param = per_param(rule.weight_bytes, rule.weights_sharded);
  plan.grad_bytes_per_param = per_param(rule.grad_bytes, rule.grads_sharded) +
                              per_param(rule.grad_fp32_bytes, rule.grads_fp32_sharded);
  plan.optimizer_bytes_per_param = per_param(rule.master_bytes, rule.master_sharded) +
                                   per_param(optimizer_moment_bytes(training.optimizer, training.precision), rule.moments_sharded);
  plan.layer_parameters = layer_parameters_on_tp_rank(model, layout.tp);
  // torchao float8 with enable_fsdp_float8_all_gather (FRAMEWORK_NOTES §1.9): the blocks' Linear
  // weights are all-gathered and kept unsharded as fp8 (1 B); norms, embedding and the filtered
  // output projection stay bf16.
  if (fp8_weights_gathered(config, plan.profile))
    plan.fp8_gathered_layer_parameters = linear_weights_on_tp_rank(model, layout.tp);
  plan.vocab_parameters = double(plan.padded_vocab) * double(model.hidden) / double(layout.tp);
  return plan;
}

StageShape stage_shape(const Config& config, const MemoryPlan& plan, int64_t stage_index) {
  MESHFIT_ASSERT(stage_index >= 0 && stage_index < config.layout.pp, "pipeline stage out of range");
  StageShape shape;
  shape.placement = place_stage(config.model.layers, config.layout, stage_index, split_rule(plan.profile, config.model));
  shape.embedding_parameters = shape.placement.has_embedding ? plan.vocab_parameters : 0.0;
  // The LM head: its own matrix when untied; when tied and split over stages, Megatron keeps a
  // copy of the embedding on the last stage (synchronised by the embedding group).
  const bool head_matrix = !config.model.tied_embeddings || config.layout.pp > 1;
  shape.lm_head_parameters =
      shape.placement.has_lm_head ? (head_matrix ? plan.vocab_parameters : 0.0) + final_norm_parameters(config.model) : 0.0;
  shape.parameters = double(shape.placement.layers) * plan.layer_parameters + shape.embedding_parameters +
                     shape.lm_head_parameters;
  return shape;
}

namespace {

// The stage's role, interleaved chunks and the intermediates every formula below reads (parameters,
// bytes per parameter, activations, gathered unit, PP buffers, bytes per logit).
void describe_stage(const Config& config, const MemoryPlan& plan, const StageShape& shape, bool with_chunks,
                    RankMemory& rank) {
  const ModelSpec& model = config.model;
  const TrainingSpec& training = config.training;
  const Layout& layout = config.layout;
  const StagePlacement& stage = shape.placement;
  rank.role = role_name(stage.stage, layout.pp);
  rank.pp_stage = stage.stage;
  if (with_chunks) {
    int64_t first_layer = 0;
    const std::vector<int64_t> counts = virtual_stage_layers(model.layers, layout, split_rule(plan.profile, model));
    for (int64_t j = 0; j < int64_t(counts.size()); ++j) {
      if (j % layout.pp == stage.stage) rank.chunks.push_back({j / layout.pp, first_layer, counts[size_t(j)]});
      first_layer += counts[size_t(j)];
    }
  }
  RankIntermediates& in = rank.intermediates;
  in.layers = stage.layers;
  in.layer_parameters = plan.layer_parameters;
  in.fp8_gathered_layer_parameters = plan.fp8_gathered_layer_parameters;
  in.embedding_parameters = shape.embedding_parameters;
  in.lm_head_parameters = shape.lm_head_parameters;
  in.parameters = shape.parameters;
  // The unit that ZeRO-3 gathers whole: FSDP2 wraps each block (torchtitan apply_fsdp); DeepSpeed
  // gathers leaf modules, the largest being a projection or the (un)embedding. FSDP: the input
  // embedding's unsharded weight and gradient live only in its own backward, which runs last,
  // after every activation is freed, so it never joins the peak.
  const double largest_projection =  // h x max(f, h, a*d): Wq/Wo are h x a*d (model_spec.h query_width)
      double(model.hidden) * std::max({double(model.ffn), double(model.hidden), query_width(model)}) / double(layout.tp);
  in.largest_unit_parameters = plan.profile.gathers_whole_blocks
                                   ? std::max(plan.layer_parameters, in.lm_head_parameters)
                                   : std::max({largest_projection, in.embedding_parameters, in.lm_head_parameters});
  in.weight_bytes_per_param = plan.weight_bytes_per_param;
  in.grad_bytes_per_param = plan.grad_bytes_per_param;
  in.optimizer_bytes_per_param = plan.optimizer_bytes_per_param;
  in.activations = stage_activations(model, plan.activation_settings, stage, layout.pp, layout.vpp, plan.num_microbatches);
  if (autocast_over_fp32_weights(config, plan.profile)) {
    // torch.autocast casts each fp32 weight to bf16 for its GEMM and F.linear saves the bf16 copy
    // for backward, so at the loss every saved layer's GEMM weights exist twice more in bf16, and
    // the LM head's (tied: the embedding matrix). Full recompute drops the layers' copies with their
    // saved tensors (the autocast cache dies when the forward's autocast context exits). Measured
    // by tests/gpu on H100 (DDP rows: 1B step transient 15.48 GiB against 12.2 without this).
    const double saved_layers = double(stage.layers) - recomputed_layers(training.recompute, training.recompute_layers, double(stage.layers), layout.vpp);
    const double head = stage.has_lm_head ? plan.vocab_parameters : 0.0;
    in.activations.autocast_weight_bytes = 2.0 * (saved_layers * plan.layer_parameters + head);
    in.activations.total += in.activations.autocast_weight_bytes;
  }
  in.in_flight_microbatches = in.activations.in_flight;
  in.nccl_communicators = plan.nccl_communicators;
  // FSDP2 under PP (FRAMEWORK_NOTES §1.2-1.3): with reshard_after_forward = False and
  // set_reshard_after_backward(False) / set_requires_gradient_sync(False) on every backward but
  // the last (torch pipelining stage.py backward_maybe_with_nosync, _post_backward), the stage's
  // bf16 params stay unsharded all step (2 B x P_st) and the gradients are kept unsharded in the
  // reduce dtype, fp32, across micro-batches (_fsdp_param.py to_accumulated_grad_if_needed: 4 B x P_st).
  if (plan.profile.unsharded_under_pp && layout.pp > 1 && plan.profile.weights_sharded(layout.zero)) {
    in.unsharded_parameter_bytes = 2.0 * in.parameters - double(stage.layers) * in.fp8_gathered_layer_parameters;
    in.unsharded_gradient_bytes = 4.0 * in.parameters;
  }
  in.bytes_per_logit = loss_bytes_per_logit(plan.profile, training, config.layout.tp);
  if (plan.profile.pp_buffers_per_microbatch && layout.pp > 1) {
    // PT-PP stage.py: the last stage's output stays in fwd_cache until its backward, so the eager
    // loss runs with the bf16 logits alive (torchtitan's `del pred` only applies without PP).
    if (effective_loss(plan.profile, training, config.layout.tp) == LossKind::kEager) in.bytes_per_logit = kPyTorchKeepLogitsBytesPerLogit;
    // PT-PP stage.py _prepare_forward_infra: one receive buffer of the stage input (bf16, b*s*h,
    // sequence-sharded under SP) per micro-batch of the step, on every non-first stage.
    if (stage.stage > 0) {
      const double t_input = ((training.sp || spatial_temporal(layout)) && layout.tp > 1) ? double(layout.tp) : 1.0;
      in.pp_receive_buffer_bytes = double(plan.num_microbatches) * 2.0 * double(training.seq) / double(layout.cp) *
                                   double(training.micro_batch) * double(model.hidden) / t_input;
    }
  }

}

// Buffers of one moment of the step, not kept: the logits and loss at the end of a forward, one
// layer's backward temporaries, SP's gathered input; sets logits_elements and cp_ring_bytes.
struct StageTransients {
  double logits = 0;
  double backward_temporaries = 0;
  double sp_gather = 0;
};

StageTransients stage_transients(const Config& config, const MemoryPlan& plan, const StagePlacement& stage,
                                 RankIntermediates& in) {
  const ModelSpec& model = config.model;
  const TrainingSpec& training = config.training;
  const Layout& layout = config.layout;
  StageTransients out;
  if (stage.has_lm_head) {
    in.logits_elements = double(training.seq) / double(layout.cp) * double(training.micro_batch) *
                         double(plan.padded_vocab) / double(layout.tp);
    out.logits = in.logits_elements * in.bytes_per_logit;
    if (plan.activation_settings.head_in_loss) {  // loss=fused_linear
      const double tokens = double(training.seq) / double(layout.cp) * double(training.micro_batch);
      const double input_bytes = plan.activation_settings.fp32_residual ? 4.0 : 2.0;
      out.logits = fused_linear_loss_bytes(tokens, double(model.hidden), double(plan.padded_vocab) / double(layout.tp), input_bytes);
      // A trained head: grad_weight = zeros_like(weight) is made in the forward and kept for backward
      // (a frozen base's head too when modules_to_save trains its copy).
      if (!has_adapters(training))
        out.logits += in.lm_head_parameters * (autocast_over_fp32_weights(config, plan.profile) ? 4.0 : 2.0);
      else if (training.lm_head_trained)
        out.logits += plan.vocab_parameters * base_unquantized_bytes(training);
    }
  }

  // Backward temporaries of one layer: the f-wide gradients (SwiGLU: d(gate), d(up), d(product);
  // GeLU: two) and the gradients of the block input/output, plus SP's all-gathered input.
  const bool st = spatial_temporal(layout);
  const bool sequence_parallel = (training.sp || st) && layout.tp > 1;
  const double sb = double(training.seq) / double(layout.cp) * double(training.micro_batch);
  const double f_grads = model.mlp == MlpKind::kSwiGlu ? 3.0 : 2.0;
  const double t_sp = sequence_parallel ? double(layout.tp) : 1.0;
  // Without FlashAttention the attention core's backward holds the gradient of the softmax output
  // and of the scores (autograd of softmax and QK^T: 2as^2b each, bf16, split by tp) beside the
  // saved probabilities; the MLP's and the attention's temporaries are not live at once.
  const double score_bytes = plan.profile.fp32_math_attention ? 4.0 : 2.0;
  const double eager_attention_grads =
      training.flash ? 0.0 : 2.0 * score_bytes * double(model.heads) / double(layout.tp) * sb * double(training.seq);
  out.backward_temporaries = std::max(f_grads * 2.0 * sb * double(model.ffn) / double(layout.tp), eager_attention_grads) +
                             2.0 * 2.0 * sb * double(model.hidden) / t_sp;
  // Spatial-temporal squares never gather a full activation (PrimePar §3.3): no SP gather buffer.
  out.sp_gather = sequence_parallel && !st ? 2.0 * sb * double(model.hidden) : 0.0;
  in.st_buffer_bytes = spatial_temporal_buffer_bytes(config);
  // Context parallelism, ring attention backward of one layer (overheads.h
  // kRingAttentionFp32GradBuffers): the all-gathered K and V of the whole sequence, bf16, plus five
  // local-sized fp32 gradient buffers. Transient: joins the backward moment only.
  if (plan.profile.cp_ring_allgather && layout.cp > 1 && stage.layers > 0) {
    // torchtitan passes K/V after repeat_kv, so all heads (a*d wide: h unless head_dim is set
    // apart) go round the ring, and dq, dk, dv are that wide too.
    const double ring_width = query_width(model) / double(layout.tp);
    const double local_tokens = sb;
    const double full_tokens = sb * double(layout.cp);
    in.cp_ring_bytes = 2.0 * 2.0 * full_tokens * ring_width +
                       kRingAttentionFp32GradBuffers * 4.0 * local_tokens * query_width(model) / double(layout.tp);
  }

  return out;
}

// The components at the peak moment, in Component order, each with its source.
void place_components(const Config& config, const MemoryPlan& plan, const StagePlacement& stage,
                      const StageStateBytes& states, const CommBuffers& comm, const StageTransients& transients,
                      RankMemory& rank) {
  const TrainingSpec& training = config.training;
  RankIntermediates& in = rank.intermediates;
  auto& c = rank.component_bytes;
  // FP8 weight caches cover the GEMM weights of the transformer layers (the embedding is a lookup;
  // Megatron's output layer is not a TE module).
  // Megatron-LM --fp8-param-gather keeps the GEMM weights themselves as TE fp8 tensors (1 B, plus
  // the 1 B Hopper transpose) in place of the bf16 copy and the cache: 2 B, as the bf16 weights.
  const bool fp8_params = training.fp8_all_gather && training.framework == Framework::kMegatron;
  const double fp8_cache = training.precision == Precision::kFp8 && !fp8_params
                               ? plan.profile.fp8_weight_cache_bytes * double(stage.layers) * plan.layer_parameters
                               : 0.0;
  c[size_t(Component::kWeights)] = states.weights + fp8_cache;
  const double gradient_bytes = states.gradients + in.unsharded_gradient_bytes;
  // torch.optim's zero_grad(set_to_none=True) (the default since PyTorch 2.0; torchtitan's and HF
  // Trainer's loops call it) frees .grad after every step, so with one micro-batch per step and no
  // unsharded accumulation the gradients are created during backward as the activations they come
  // from are freed: none exist at the loss, all of them at the end of backward. Megatron's and
  // DeepSpeed's contiguous gradient buffers persist instead.
  in.gradients_built_during_backward =
      plan.profile.grads_set_to_none && plan.num_microbatches == 1 && in.unsharded_gradient_bytes == 0;
  c[size_t(Component::kGradients)] = in.gradients_built_during_backward ? 0.0 : gradient_bytes;
  c[size_t(Component::kOptimizerStates)] = states.optimizer;
  c[size_t(Component::kPagedOptimizer)] = states.paged_optimizer;
  c[size_t(Component::kActivations)] =
      in.activations.total - (in.peak_at_backward ? in.activations.offload_backward_release : in.activations.recompute_working_bytes);
  c[size_t(Component::kLogitsLoss)] = in.peak_at_backward ? 0.0 : transients.logits;
  c[size_t(Component::kCommBuffers)] = (in.peak_at_backward ? comm.in_backward : comm.at_loss) + in.pp_receive_buffer_bytes + in.st_buffer_bytes;
  c[size_t(Component::kWorkspace)] = kCublasWorkspaceBytes + transients.sp_gather + states.transient_bytes +
                                     (in.peak_at_backward ? transients.backward_temporaries + in.cp_ring_bytes : 0.0);
  if (in.gradients_built_during_backward) {
    // The end of backward: every gradient, no activation left.
    double during = 0, at_end = 0;
    for (int i = 0; i <= int(Component::kWorkspace); ++i) during += c[size_t(i)];
    // The end of backward is inside the last block's backward: its buffers are the backward ones,
    // whichever moment won above (using the chosen moment's buffers made memory fall as seq grew).
    const double comm_at_end = comm.in_backward + in.pp_receive_buffer_bytes + in.st_buffer_bytes;
    at_end = c[size_t(Component::kWeights)] + gradient_bytes + c[size_t(Component::kOptimizerStates)] + comm_at_end +
             kCublasWorkspaceBytes;
    in.loss_moment_allocated_bytes = during;
    in.backward_end_allocated_bytes = at_end;
    if (at_end > during) {
      in.peak_at_backward = true;
      c[size_t(Component::kGradients)] = gradient_bytes;
      c[size_t(Component::kCommBuffers)] = comm_at_end;
      c[size_t(Component::kActivations)] = c[size_t(Component::kLogitsLoss)] = 0;
      c[size_t(Component::kWorkspace)] = kCublasWorkspaceBytes;
    }
  }
}

// Fragmentation over the dynamic part, the fixed overheads, the three totals and LLMem's sections.
void sum_totals(const Config& config, const MemoryPlan& plan, const StageStateBytes& states, const CommBuffers& comm,
                RankMemory& rank) {
  const TrainingSpec& training = config.training;
  RankIntermediates& in = rank.intermediates;
  auto& c = rank.component_bytes;
  const double dynamic = c[size_t(Component::kActivations)] + c[size_t(Component::kLogitsLoss)] +
                         c[size_t(Component::kCommBuffers)] + c[size_t(Component::kWorkspace)];
  const bool expandable = training.allocator == AllocatorMode::kAuto
                              ? plan.profile.expandable_segments
                              : training.allocator == AllocatorMode::kExpandableSegments;
  const bool sharded = plan.profile.weights_sharded(config.layout.zero);
  const bool gathers_per_block = plan.profile.gathers_whole_blocks && sharded;
  const bool reallocated_grads = !sharded && plan.profile.grads_set_to_none && !has_adapters(training);
  in.fragmentation_fraction = gathers_per_block   ? (expandable ? kFsdpExpandableFragmentationFraction : kFsdpFragmentationFraction)
                              : reallocated_grads ? kReallocatedGradsFragmentationFraction
                              : expandable        ? kExpandableSegmentsFragmentationFraction
                                                  : kFragmentationFraction;
  c[size_t(Component::kFragmentation)] = in.fragmentation_fraction * dynamic;

  // The optimizer-step moment ([SECTION] Optimizer step): states, the gradients the step reads
  // (FSDP2's unsharded accumulation is reduce-scattered and freed by then), the buffers that persist
  // across steps (DeepSpeed's IPG bucket, DDP's buckets) and the step's temporaries.
  const StepTransient step = optimizer_step_transient(config, plan, states.trainable_parameters);
  in.optimizer_step_transient_bytes = step.bytes;
  in.optimizer_step_new_segments = step.new_segments;
  const double persistent_comm =
      training.framework == Framework::kDeepSpeed ? deepspeed_reduce_bucket_bytes(config, states.trainable_parameters)
      : (training.framework == Framework::kFsdp && config.layout.zero == 0) ? comm.at_loss
                                                                     : 0.0;
  in.optimizer_step_allocated_bytes = c[size_t(Component::kWeights)] + states.gradients + c[size_t(Component::kOptimizerStates)] +
                                      persistent_comm + kCublasWorkspaceBytes + step.bytes;
  double forward_backward_allocated = 0;
  for (int i = 0; i <= int(Component::kWorkspace); ++i) forward_backward_allocated += c[size_t(i)];
  const double forward_backward_reserved = forward_backward_allocated + c[size_t(Component::kFragmentation)];
  // New segments sit beside the activations' cached ones; otherwise the step reuses cached blocks.
  const double reserved = step.new_segments ? forward_backward_reserved + step.bytes
                                            : std::max(forward_backward_reserved, in.optimizer_step_allocated_bytes);
  double pooled_reserved = 0;
  if (plan.profile.grads_on_reduce_stream && sharded) {
    // FSDP2: the gradients live in the reduce-scatter stream's pool, which the default stream
    // cannot reuse, so reserved = the default stream's peak (every moment's allocations less the
    // gradients it holds then) with its fragmentation, plus the gradient pool. The activations'
    // peak at the loss and the gradients' at the end of backward add up in reserved even though
    // they never coexist in allocated (H100 rows: the default pool held the states plus 1.09-1.16x
    // the loss moment's transient, the side pool exactly the sharded gradients).
    const double grads = states.gradients + in.unsharded_gradient_bytes;
    const double fb_default = in.gradients_built_during_backward
                                  ? std::max(in.loss_moment_allocated_bytes, in.backward_end_allocated_bytes - grads)
                                  : forward_backward_allocated - c[size_t(Component::kGradients)];
    // The weights and optimizer states are the same at every moment; the rest moves.
    const double fb_dynamic = in.gradients_built_during_backward
                                  ? in.loss_moment_allocated_bytes - c[size_t(Component::kWeights)] -
                                        c[size_t(Component::kOptimizerStates)]
                                  : dynamic;
    const double default_peak =
        std::max(fb_default + in.fragmentation_fraction * fb_dynamic, in.optimizer_step_allocated_bytes - states.gradients);
    pooled_reserved = default_peak + grads;
  }
  if (in.optimizer_step_allocated_bytes > forward_backward_allocated) {
    in.peak_at_optimizer_step = true;
    c[size_t(Component::kGradients)] = states.gradients;
    c[size_t(Component::kActivations)] = c[size_t(Component::kLogitsLoss)] = 0;
    c[size_t(Component::kCommBuffers)] = persistent_comm;
    c[size_t(Component::kWorkspace)] = kCublasWorkspaceBytes + step.bytes;
    c[size_t(Component::kFragmentation)] = std::max(0.0, reserved - in.optimizer_step_allocated_bytes);
  } else {
    c[size_t(Component::kFragmentation)] = reserved - forward_backward_allocated;
  }
  c[size_t(Component::kNccl)] = double(plan.nccl_communicators) * kNcclBytesPerCommunicator;
  c[size_t(Component::kCudaContext)] = kCudaContextBytes;

  for (int i = 0; i <= int(Component::kWorkspace); ++i) rank.peak_allocated_bytes += c[size_t(i)];
  if (pooled_reserved > 0) c[size_t(Component::kFragmentation)] = std::max(0.0, pooled_reserved - rank.peak_allocated_bytes);
  rank.peak_reserved_bytes = rank.peak_allocated_bytes + c[size_t(Component::kFragmentation)];
  rank.device_bytes = rank.peak_reserved_bytes + c[size_t(Component::kNccl)] + c[size_t(Component::kCudaContext)] +
                      c[size_t(Component::kPagedOptimizer)];
  // LLMem (Kim et al. 2024 §3) allocates the output section (LM head, logits, loss) apart from the
  // transformer body: the head's states, its input saved for backward and, at a forward-end peak,
  // the logits and loss buffers.
  in.output_section_bytes = states.output_section_bytes +
                            (c[size_t(Component::kActivations)] > 0 ? in.activations.head_input_bytes : 0.0) +
                            c[size_t(Component::kLogitsLoss)];
  in.body_section_bytes = rank.peak_allocated_bytes - in.output_section_bytes;
}

}  // namespace

// The stage's shape and intermediates, its transient buffers, its model states, the peak moment
// (end of forward or inside a backward), the components and the totals. The per-config constants
// come precomputed in `plan` (the search calls this per candidate).
RankMemory stage_memory(const Config& config, const MemoryPlan& plan, int64_t stage_index, bool with_chunks) {
  const StageShape shape = stage_shape(config, plan, stage_index);
  const StagePlacement& stage = shape.placement;
  RankMemory rank;
  describe_stage(config, plan, shape, with_chunks, rank);
  RankIntermediates& in = rank.intermediates;
  const StageTransients transients = stage_transients(config, plan, stage, in);
  // Model states, pretraining or fine-tuning, from the one hook (finetune.h).
  const StageStateBytes states = stage_state_bytes(config, plan, shape);
  in.trainable_parameters = states.trainable_parameters;
  in.trained_module_parameters = states.trained_module_parameters;
  in.frozen_parameters = states.frozen_parameters;
  in.quantized_parameters = states.quantized_parameters;
  in.dequantized_transient_bytes = states.transient_bytes;
  in.hpz_secondary_bytes = states.hpz_secondary;
  // Offloaded activations wait in (pinned) CPU memory beside any offloaded states.
  rank.host_bytes = states.host + in.activations.offloaded_bytes;
  // A stage peaks either at the end of a forward (logits and loss buffers live) or inside a
  // layer's backward (recomputed layer + gradient temporaries live); never both at once, since
  // the loss buffers are freed before any layer's backward runs.
  const CommBuffers comm = comm_buffer_bytes(config, in);
  const double forward_end_extra = transients.logits + comm.at_loss;
  const double backward_extra = in.activations.recompute_working_bytes - in.activations.offload_backward_release +
                                transients.backward_temporaries + in.cp_ring_bytes + comm.in_backward;
  in.peak_at_backward = backward_extra >= forward_end_extra;
  in.logits_bytes = transients.logits;
  in.backward_working_bytes = backward_extra - comm.in_backward;

  place_components(config, plan, stage, states, comm, transients, rank);
  sum_totals(config, plan, states, comm, rank);
  return rank;
}

double paged_spill_bytes(const RankMemory& rank, double capacity_bytes) {
  const double paged = rank.bytes(Component::kPagedOptimizer);
  return std::min(paged, std::max(0.0, rank.device_bytes - capacity_bytes));
}

double resident_bytes(const RankMemory& rank) { return rank.device_bytes - rank.bytes(Component::kPagedOptimizer); }

RankMemory worst_stage_memory(const Config& config, const MemoryPlan& plan) {
  RankMemory worst = stage_memory(config, plan, 0, false);
  for (int64_t stage : candidate_stages(config, plan.profile)) {
    if (stage == 0) continue;
    RankMemory candidate = stage_memory(config, plan, stage, false);
    if (candidate.device_bytes > worst.device_bytes) worst = candidate;
  }
  return worst;
}

Verdict verdict_for(double device_bytes, double capacity_bytes, double headroom, double pageable_bytes) {
  if (device_bytes - pageable_bytes > capacity_bytes) return Verdict::kOutOfMemory;
  if (device_bytes > capacity_bytes) return Verdict::kTight;
  if (device_bytes >= headroom * capacity_bytes) return Verdict::kTight;
  return Verdict::kFits;
}

MemoryReport estimate_memory(const Config& config) {
  MemoryReport report;
  report.issues = validate(config);
  report.capacity_bytes = config.gpu.memory_bytes;
  report.headroom = config.training.headroom;
  if (!report.valid()) return report;

  const MemoryPlan plan = plan_memory(config);
  report.dp = plan.dp;
  report.num_microbatches = plan.num_microbatches;
  report.optimizer_shard_ranks = plan.optimizer_shard_ranks;
  report.total_parameters = total_parameters(config.model);
  report.padded_vocab = plan.padded_vocab;
  report.layer_activations = plan.layer_activations;
  for (int64_t stage = 0; stage < config.layout.pp; ++stage)
    report.ranks.push_back(stage_memory(config, plan, stage, /*with_chunks=*/true));

  for (size_t i = 1; i < report.ranks.size(); ++i)
    if (report.ranks[i].device_bytes > report.ranks[size_t(report.worst_rank)].device_bytes)
      report.worst_rank = int64_t(i);
  report.verdict = verdict_for(report.worst().device_bytes, report.capacity_bytes, report.headroom,
                               report.worst().bytes(Component::kPagedOptimizer));
  return report;
}

}  // namespace meshfit
