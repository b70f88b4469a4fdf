// memory_model.cpp — per-rank memory from model states, activations and overheads.
// Model states: Megatron-LM theoretical_memory_usage.py (bytes per parameter 18 or 6 + 12/d),
// DeepSpeed estimate_zero2/zero3_model_states_mem_needs, torchtitan FSDP2 (16/(dp*cp) + unsharded
// transients); activations: activation_memory.h; overheads: overheads.h.
#include "memory/memory_model.h"

#include <algorithm>
#include <iterator>

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
      p.even_middle_split = true;            // arguments.py: layers split evenly over the middle stages
      p.interleave_needs_pp_multiple = true; // interleaved 1F1B: num_microbatches % pp == 0
      p.vocab_pad_multiple = 128;            // --make-vocab-size-divisible-by 128 (times tp)
      p.bytes_per_logit = kMegatronBytesPerLogit;
      p.fp8_weight_cache_bytes = 1;          // Transformer Engine keeps an fp8 copy of GEMM weights
      return p;
    }(),
    [] {
      FrameworkProfile p;
      p.framework = Framework::kFsdp;
      p.source = "PyTorch FSDP2 fully_shard as configured by torchtitan (bf16 params, fp32 reduce)";
      // torchtitan: DDP, reshard_after_forward=False (SHARD_GRAD_OP), full sharding (the default).
      p.zero_stages = {"0 (DDP)", nullptr, "2 (reshard_after_forward=False)", "3 (full sharding)"};
      p.default_zero = 3;
      p.weights_sharded_from_zero = 2;
      p.grad_reduce_in_fp32 = true;
      p.vocab_pad_multiple = 1;
      p.bytes_per_logit = kPyTorchBytesPerLogit;
      p.fp8_weight_cache_bytes = 0;                    // torchtitan float8 casts per step, no cache
      p.selective = SelectiveKind::kAlternateMatmuls;  // torchtitan ac_mode selective, op
      return p;
    }(),
    [] {
      FrameworkProfile p;
      p.framework = Framework::kDeepSpeed;
      p.source = "DeepSpeed ZeRO (Megatron-DeepSpeed), estimate_zero*_model_states_mem_needs";
      p.zero_stages = {"0 (off)", "1", "2", "3"};
      p.default_zero = 1;
      p.weights_sharded_from_zero = 3;
      p.grad_reduce_in_bf16 = true;
      p.vocab_pad_multiple = 128;
      p.bytes_per_logit = kMegatronBytesPerLogit;  // Megatron's vocab-parallel cross-entropy
      p.fp8_weight_cache_bytes = 1;
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

ModelStateRule model_state_rule(Framework framework, int64_t zero, bool fp32_grad_buffer) {
  ModelStateRule rule;
  switch (framework) {
    case Framework::kMegatron:
      // theoretical_memory_usage.py: 18 B/param, or 6 + 12/d with the distributed optimizer.
      // The fp32 main-grad buffer (4) is not sharded; without it gradients are bf16 (2).
      rule.weight_bytes = 2;
      rule.grad_fp32_bytes = fp32_grad_buffer ? 4 : 0;
      rule.grad_bytes = fp32_grad_buffer ? 0 : 2;
      rule.master_bytes = 4;
      rule.master_sharded = rule.moments_sharded = zero >= 1;
      break;
    case Framework::kDeepSpeed:
      // ZeRO paper (Rajbhandari 2020) stage 0: 2 + 2 + 12. Stage 1 follows
      // estimate_zero2_model_states_mem_needs: 4*P + 16*P/N (bf16 weights and gradients
      // replicated; fp32 gradients, master and moments partitioned). Stage 2 keeps only its
      // gradient partition (stage_1_and_2.py frees other grads after each reduce bucket; the
      // Polaris log's 13.83 GiB at rest = 2 + 12/dp B/param). Stage 3 follows
      // estimate_zero3_model_states_mem_needs: 18*P/N (+ the largest module, in comm buffers).
      rule.weight_bytes = 2;
      rule.weights_sharded = zero >= 3;
      rule.grad_bytes = (zero >= 3 && fp32_grad_buffer) ? 0 : 2;
      rule.grads_sharded = zero >= 2;  // stage 2 frees .grad outside the rank's partition after each bucket
      rule.grad_fp32_bytes = (zero >= 1 && fp32_grad_buffer) ? 4 : 0;
      rule.grads_fp32_sharded = zero >= 1;
      rule.master_bytes = 4;
      rule.master_sharded = rule.moments_sharded = zero >= 1;
      break;
    case Framework::kFsdp:
      // FSDP2: the fp32 parameters are the master copy; fp32 gradients; 16/(dp*cp) B/param
      // sharded (torchtitan docs). zero 0 = DDP: everything replicated.
      rule.weight_bytes = 4;
      rule.weights_sharded = zero >= 2;
      rule.grad_fp32_bytes = 4;
      rule.grads_fp32_sharded = zero >= 2;
      rule.master_bytes = 0;
      rule.moments_sharded = zero >= 2;
      break;
  }
  return rule;
}

double optimizer_moment_bytes(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kAdamW: return 8;     // fp32 m and v
    case Optimizer::kSgd: return 4;       // fp32 momentum
    case Optimizer::kAdam8bit: return 2;  // bitsandbytes: 1-byte m and v (block scales negligible)
  }
  return 8;
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
  if (layout.tp > 1) ++count;
  if (layout.pp > 1) ++count;
  if (layout.cp > 1) ++count;
  if (dp > 1 && layout.cp > 1) ++count;  // the combined dp x cp group that reduces gradients
  return count;
}

// Transient buffers for sharded or bucketed gradient/parameter communication on one rank.
double comm_buffer_bytes(const Config& config, const RankIntermediates& rank) {
  const int64_t zero = config.layout.zero;
  const double layer = rank.layer_parameters;
  const double largest = rank.largest_unit_parameters;
  switch (config.training.framework) {
    case Framework::kMegatron:
      return 0;  // mcore DDP reduces and gathers in place in its contiguous buffers
    case Framework::kDeepSpeed:
      if (zero >= 3) {
        // estimate_zero3: 4 * largest layer (its 16-bit params + grads unsharded), plus the
        // prefetch bucket and the reduce bucket.
        return 4.0 * largest + 2.0 * std::min(layer, kDeepSpeedPrefetchBucketElements) +
               2.0 * kDeepSpeedReduceBucketElements;
      }
      return 2.0 * kDeepSpeedReduceBucketElements;  // one 16-bit reduce bucket
    case Framework::kFsdp:
      if (zero == 0) return 4.0 * rank.parameters;  // DDP bucket copies of the fp32 gradients
      // In a block's backward: the block and the prefetched next one all-gathered in bf16 (2 + 2),
      // its unsharded bf16 gradient (2) and the fp32 reduce-scatter input (4): 10 B per block
      // parameter. At the start of backward on the last stage: the LM head kept unsharded after
      // forward (2), its gradient (2) and fp32 reduce-scatter input (4): 8 B per head parameter.
      // SHARD_GRAD_OP (zero 2) also keeps every unit unsharded between forward and backward.
      return std::max(10.0 * layer, 8.0 * rank.lm_head_parameters) + (zero == 2 ? 2.0 * rank.parameters : 0.0);
  }
  return 0;
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
  const ModelStateRule rule = model_state_rule(training.framework, layout.zero, training.fp32_grad_buffer);
  plan.dp = effective_dp(config);
  plan.num_microbatches = num_microbatches(config);
  plan.optimizer_shard_ranks = plan.dp * layout.cp;
  plan.padded_vocab = padded_vocab(model.vocab, plan.profile.vocab_pad_multiple, layout.tp);
  plan.nccl_communicators = count_communicators(layout, plan.dp);

  ActivationSettings& settings = plan.activation_settings;
  settings.seq = training.seq;
  settings.micro_batch = training.micro_batch;
  settings.tp = layout.tp;
  settings.cp = layout.cp;
  settings.sp = training.sp;
  settings.flash = training.flash;
  settings.recompute = training.recompute;
  settings.selective = plan.profile.selective;
  plan.layer_activations = layer_activations(model, settings);

  const double shard = double(plan.optimizer_shard_ranks);
  const auto per_param = [shard](double bytes, bool sharded) { return sharded ? bytes / shard : bytes; };
  plan.weight_bytes_per_param = per_param(rule.weight_bytes, rule.weights_sharded) +
                                (training.precision == Precision::kFp8 ? plan.profile.fp8_weight_cache_bytes : 0.0);
  plan.grad_bytes_per_param = per_param(rule.grad_bytes, rule.grads_sharded) +
                              per_param(rule.grad_fp32_bytes, rule.grads_fp32_sharded);
  plan.optimizer_bytes_per_param = per_param(rule.master_bytes, rule.master_sharded) +
                                   per_param(optimizer_moment_bytes(training.optimizer), rule.moments_sharded);
  plan.layer_parameters = layer_parameters_on_tp_rank(model, layout.tp);
  plan.vocab_parameters = double(plan.padded_vocab) * double(model.hidden) / double(layout.tp);
  return plan;
}

StageShape stage_shape(const Config& config, const MemoryPlan& plan, int64_t stage_index) {
  MESHFIT_ASSERT(stage_index >= 0 && stage_index < config.layout.pp, "pipeline stage out of range");
  StageShape shape;
  shape.placement = place_stage(config.model.layers, config.layout, stage_index);
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

// One component after another in Component order, each with its source; the per-config constants
// come precomputed in `plan` (the search calls this per candidate).
RankMemory stage_memory(const Config& config, const MemoryPlan& plan, int64_t stage_index, bool with_chunks) {
  const ModelSpec& model = config.model;
  const TrainingSpec& training = config.training;
  const Layout& layout = config.layout;
  const StageShape shape = stage_shape(config, plan, stage_index);
  const StagePlacement& stage = shape.placement;

  RankMemory rank;
  rank.role = role_name(stage.stage, layout.pp);
  rank.pp_stage = stage.stage;
  if (with_chunks) {
    int64_t first_layer = 0;
    const std::vector<int64_t> counts = virtual_stage_layers(model.layers, layout);
    for (int64_t j = 0; j < int64_t(counts.size()); ++j) {
      if (j % layout.pp == stage.stage) rank.chunks.push_back({j / layout.pp, first_layer, counts[size_t(j)]});
      first_layer += counts[size_t(j)];
    }
  }
  RankIntermediates& in = rank.intermediates;
  in.layers = stage.layers;
  in.layer_parameters = plan.layer_parameters;
  in.embedding_parameters = shape.embedding_parameters;
  in.lm_head_parameters = shape.lm_head_parameters;
  in.parameters = shape.parameters;
  // The unit that ZeRO-3 gathers whole: FSDP2 wraps each block (torchtitan apply_fsdp); DeepSpeed
  // gathers leaf modules, the largest being a projection or the (un)embedding. FSDP: the input
  // embedding's unsharded weight and gradient live only in its own backward, which runs last,
  // after every activation is freed, so it never joins the peak.
  const double largest_projection =
      double(model.hidden) * double(std::max(model.ffn, model.hidden)) / double(layout.tp);
  in.largest_unit_parameters = training.framework == Framework::kFsdp
                                   ? std::max(plan.layer_parameters, in.lm_head_parameters)
                                   : std::max({largest_projection, in.embedding_parameters, in.lm_head_parameters});
  in.weight_bytes_per_param = plan.weight_bytes_per_param;
  in.grad_bytes_per_param = plan.grad_bytes_per_param;
  in.optimizer_bytes_per_param = plan.optimizer_bytes_per_param;
  in.activations = stage_activations(model, plan.activation_settings, stage, layout.pp, layout.vpp, plan.num_microbatches);
  in.in_flight_microbatches = in.activations.in_flight;
  in.nccl_communicators = plan.nccl_communicators;

  double logits = 0;
  if (stage.has_lm_head) {
    in.logits_elements = double(training.seq) / double(layout.cp) * double(training.micro_batch) *
                         double(plan.padded_vocab) / double(layout.tp);
    logits = in.logits_elements * plan.profile.bytes_per_logit;
  }

  // Backward temporaries of one layer: the f-wide gradients (SwiGLU: d(gate), d(up), d(product);
  // GeLU: two) and the gradients of the block input/output, plus SP's all-gathered input.
  const bool sequence_parallel = training.sp && layout.tp > 1;
  const double sb = double(training.seq) / double(layout.cp) * double(training.micro_batch);
  const double f_grads = model.mlp == MlpKind::kSwiGlu ? 3.0 : 2.0;
  const double t_sp = sequence_parallel ? double(layout.tp) : 1.0;
  const double backward_temporaries =
      f_grads * 2.0 * sb * double(model.ffn) / double(layout.tp) + 2.0 * 2.0 * sb * double(model.hidden) / t_sp;
  const double sp_gather = sequence_parallel ? 2.0 * sb * double(model.hidden) : 0.0;

  // A stage peaks either at the end of a forward (logits and loss buffers live) or inside a
  // layer's backward (recomputed layer + gradient temporaries live); never both at once, since
  // the loss buffers are freed before any layer's backward runs.
  const double forward_end_extra = logits;
  const double backward_extra = in.activations.recompute_working_bytes + backward_temporaries;
  in.peak_at_backward = backward_extra >= forward_end_extra;
  in.logits_bytes = logits;
  in.backward_working_bytes = backward_extra;

  auto& c = rank.component_bytes;
  c[size_t(Component::kWeights)] = in.parameters * plan.weight_bytes_per_param;
  c[size_t(Component::kGradients)] = in.parameters * plan.grad_bytes_per_param;
  c[size_t(Component::kOptimizerStates)] = in.parameters * plan.optimizer_bytes_per_param;
  c[size_t(Component::kActivations)] =
      in.activations.total - (in.peak_at_backward ? 0.0 : in.activations.recompute_working_bytes);
  c[size_t(Component::kLogitsLoss)] = in.peak_at_backward ? 0.0 : logits;
  c[size_t(Component::kCommBuffers)] = comm_buffer_bytes(config, in);
  c[size_t(Component::kWorkspace)] = kCublasWorkspaceBytes + sp_gather + (in.peak_at_backward ? backward_temporaries : 0.0);
  const double dynamic = c[size_t(Component::kActivations)] + c[size_t(Component::kLogitsLoss)] +
                         c[size_t(Component::kCommBuffers)] + c[size_t(Component::kWorkspace)];
  c[size_t(Component::kFragmentation)] = kFragmentationFraction * dynamic;
  c[size_t(Component::kNccl)] = double(plan.nccl_communicators) * kNcclBytesPerCommunicator;
  c[size_t(Component::kCudaContext)] = kCudaContextBytes;

  for (int i = 0; i <= int(Component::kWorkspace); ++i) rank.peak_allocated_bytes += c[size_t(i)];
  rank.peak_reserved_bytes = rank.peak_allocated_bytes + c[size_t(Component::kFragmentation)];
  rank.device_bytes = rank.peak_reserved_bytes + c[size_t(Component::kNccl)] + c[size_t(Component::kCudaContext)];
  return rank;
}

RankMemory worst_stage_memory(const Config& config, const MemoryPlan& plan) {
  const int64_t pp = config.layout.pp;
  RankMemory worst = stage_memory(config, plan, 0, false);
  for (int64_t stage : {int64_t(1), pp - 1}) {
    if (stage <= 0 || stage >= pp) continue;
    RankMemory candidate = stage_memory(config, plan, stage, false);
    if (candidate.device_bytes > worst.device_bytes) worst = candidate;
  }
  return worst;
}

Verdict verdict_for(double device_bytes, double capacity_bytes, double headroom) {
  if (device_bytes > capacity_bytes) return Verdict::kOutOfMemory;
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
  report.verdict = verdict_for(report.worst().device_bytes, report.capacity_bytes, report.headroom);
  return report;
}

}  // namespace meshfit
