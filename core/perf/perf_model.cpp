// perf_model.cpp — see perf_model.h. Per pipeline stage and micro-batch: compute at a GEMM
// efficiency that falls for small per-GPU GEMMs, exposed TP/CP collectives, P2P; then the 1F1B
// pipeline (m + (pp-1)/vpp) * T_mb, exposed DP/ZeRO traffic and the optimizer step.
#include "perf/perf_model.h"

#include <algorithm>
#include <cmath>

#include "memory/parameter_count.h"

namespace meshfit {

// [SECTION] Calibration

PerfCalibration perf_calibration(Framework framework, Precision precision) {
  PerfCalibration c;
  // bf16 GEMM efficiency: Hagemann et al. 2023 reach 70.5% MFU (13B, pure DP, A100, FA2 +
  // fused RMSNorm), which needs ~0.73 of peak on the large GEMMs once attention and
  // memory-bound kernels are counted; cuBLAS reaches 0.8-0.88 on isolated large GEMMs.
  switch (framework) {
    case Framework::kMegatron: c.gemm_efficiency = 0.73; break;
    case Framework::kDeepSpeed: c.gemm_efficiency = 0.73; break;
    // torchtitan FSDP2 (eager, no fused kernels by default): 8B on 64 A100 at ~0.5 MFU
    // (torchtitan docs/performance.md) -> lower GEMM/kernel efficiency.
    case Framework::kFsdp: c.gemm_efficiency = 0.62; c.hbm_efficiency = 0.55; break;
  }
  // FP8 GEMMs reach a smaller fraction of their (doubled) peak: casts, amax and scaling kernels
  // (Megatron-Bridge / NeMo FP8 results: ~1.3-1.5x over bf16 end to end, not 2x).
  if (precision == Precision::kFp8) c.gemm_efficiency *= 0.72;
  return c;
}

// [SECTION] FLOPs

namespace {

double matmul_parameters_per_layer(const ModelSpec& model) {
  const LayerParameters layer = layer_parameters(model);
  return layer.attention + layer.mlp;  // biases included: they cost one flop pair each too
}

constexpr double kPcieBytesPerS = 32e9;      // PCIe Gen4 x16, one direction (no NVLink)
constexpr double kFlashBackwardFactor = 2.5;  // FA2 backward ~2.5x its forward FLOP time
constexpr double kLogitsElementBytes = 12.0;  // cross-entropy passes over fp32 logits (fwd + bwd)

struct Link {
  double bytes_per_s = 0;
  double latency_s = 0;
  bool crosses_nodes = false;
};

int64_t nvlink_domain(const Config& config) {
  const GpuSpec& gpu = config.gpu;
  if (gpu.nvlink_bytes_per_s <= 0) return 1;
  // NVL72-style domains span nodes; otherwise NVLink ends at the node.
  return gpu.nvlink_domain > config.cluster.gpus_per_node ? gpu.nvlink_domain
                                                          : std::min(gpu.nvlink_domain, config.cluster.gpus_per_node);
}

// A group whose members span `span` consecutive ranks (Megatron order: tp, cp, dp, pp).
Link link_for_span(const Config& config, const PerfCalibration& cal, int64_t span) {
  Link link;
  if (span <= nvlink_domain(config)) {
    link.bytes_per_s = config.gpu.nvlink_bytes_per_s / 2.0 * cal.nvlink_efficiency;  // csv: both directions
    link.latency_s = cal.intra_latency_s;
  } else if (span <= config.cluster.gpus_per_node) {
    link.bytes_per_s = kPcieBytesPerS * cal.network_efficiency;
    link.latency_s = cal.intra_latency_s;
  } else {
    link.bytes_per_s = config.gpu.internode_bytes_per_s * cal.network_efficiency;
    link.latency_s = cal.inter_latency_s;
    link.crosses_nodes = true;
  }
  return link;
}

double log2_steps(int64_t members) { return std::ceil(std::log2(double(std::max<int64_t>(members, 2)))); }

// Ring collectives over `members` ranks on a buffer of `bytes` (the whole, unsharded buffer).
double all_reduce_s(const Link& link, int64_t members, double bytes) {
  if (members <= 1 || bytes <= 0) return 0;
  const double n = double(members);
  return 2.0 * (n - 1.0) / n * bytes / link.bytes_per_s + 2.0 * log2_steps(members) * link.latency_s;
}
double gather_or_scatter_s(const Link& link, int64_t members, double bytes) {
  if (members <= 1 || bytes <= 0) return 0;
  const double n = double(members);
  return (n - 1.0) / n * bytes / link.bytes_per_s + log2_steps(members) * link.latency_s;
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

struct LayerCompute {
  double gemm_efficiency = 0;   // reached on this layer's GEMMs
  double matmul_rate = 0;       // flop/s of the GEMMs
  double hbm_rate = 0;          // bytes/s of memory-bound kernels
  double matmul_fwd_flops = 0;  // GEMM flops of one forward
  double attention_fwd_s = 0;
  double forward_s = 0;
  double backward_s = 0;
  double recompute_s = 0;       // extra forward work in the backward
  double recompute_flops = 0;
};

// The sizes every per-micro-batch term uses, as doubles: tp, hidden, heads, kv heads, sequence,
// tokens per rank per micro-batch (s*b/cp), and the SP divisor of sequence-sharded tensors.
struct Dims {
  double t, h, a, k, seq, tokens, t_sp;
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
          config.training.sp && layout.tp > 1 ? t : 1.0};
}

// One layer on one rank for one micro-batch: forward, backward and recomputation times, and the
// rates behind them (GEMM efficiency falls for small per-GPU GEMMs, after Calculon).
LayerCompute layer_compute(const Config& config, const MemoryPlan& plan, const PerfCalibration& cal) {
  const ModelSpec& model = config.model;
  const TrainingSpec& training = config.training;
  const Dims dims = dims_of(config);  // plain names (C++17 lambdas cannot capture structured bindings)
  const double t = dims.t, h = dims.h, a = dims.a, k = dims.k, seq = dims.seq, tokens = dims.tokens, t_sp = dims.t_sp;
  const double f = double(model.ffn);
  const double bf16_peak = config.gpu.bf16_flops;
  const double gemm_peak = training.precision == Precision::kFp8 && config.gpu.fp8_flops > 0 ? config.gpu.fp8_flops : bf16_peak;
  LayerCompute out;

  // Per layer, per micro-batch, one rank: forward FLOPs of the GEMMs and the attention core.
  const double layer_matmul_fwd = 2.0 * tokens * matmul_parameters_per_layer(model) / t;
  // Causal attention: QK^T and AV over the visible half of the s x s scores (flash skips masked
  // blocks; eager computes them all).
  const double attention_fwd = (training.flash ? 2.0 : 4.0) * tokens * seq * h / t;
  const double gemm_size = layer_matmul_fwd / 4.0;  // QKV, out-projection, gate/up, down
  out.gemm_efficiency = cal.gemm_efficiency * gemm_size / (gemm_size + cal.gemm_half_efficiency_flops);
  out.matmul_rate = gemm_peak * out.gemm_efficiency;
  const double attention_rate = bf16_peak * (training.flash ? cal.attention_efficiency : cal.eager_attention_efficiency);
  out.hbm_rate = config.gpu.hbm_bytes_per_s * cal.hbm_efficiency;
  // Memory-bound kernels, forward bytes per token: norms 8h, residual adds 12h, rotary
  // 4h(1 + k/a), SwiGLU/GeLU 6f (2-byte elements read and written).
  const double elementwise_fwd_bytes = tokens * ((20.0 * h) / t_sp + 4.0 * h * (1.0 + k / a) / t + 6.0 * f / t);

  const double matmul_fwd_s = layer_matmul_fwd / out.matmul_rate;
  out.attention_fwd_s = attention_fwd / attention_rate;
  const double attention_fwd_s = out.attention_fwd_s;
  const double elementwise_fwd_s = elementwise_fwd_bytes / out.hbm_rate;
  out.forward_s = matmul_fwd_s + attention_fwd_s + elementwise_fwd_s;
  out.backward_s = 2.0 * matmul_fwd_s + kFlashBackwardFactor * attention_fwd_s + 2.0 * elementwise_fwd_s;
  out.matmul_fwd_flops = layer_matmul_fwd;
  double& recompute_s = out.recompute_s;
  double& recompute_flops = out.recompute_flops;
  switch (training.recompute) {
    case Recompute::kNone: break;
    case Recompute::kFull:
      recompute_s = out.forward_s;
      recompute_flops = layer_matmul_fwd + attention_fwd;
      break;
    case Recompute::kSelective:
      if (plan.activation_settings.selective == SelectiveKind::kAttentionCore) {
        recompute_s = attention_fwd_s;
        recompute_flops = attention_fwd;
      } else {
        // torchtitan op-level SAC recomputes wk, wo and w3 (every second matmul) + elementwise.
        const double d = h / a;
        const double recomputed = (h * k * d + h * h + h * f) / matmul_parameters_per_layer(model);
        recompute_s = recomputed * matmul_fwd_s + elementwise_fwd_s;
        recompute_flops = recomputed * layer_matmul_fwd;
      }
      break;
  }
  return out;
}

}  // namespace

double model_flops_per_token(const ModelSpec& model, int64_t seq) {
  const double l = double(model.layers);
  const double h = double(model.hidden);
  return 6.0 * (l * matmul_parameters_per_layer(model) + double(model.vocab) * h) + 12.0 * l * h * double(seq);
}

// [SECTION] Step time

// Long on purpose: the step's terms in the order of the formula (links, TP, CP, ZeRO-3, stages,
// bubble, DP, optimizer), each with its source, sharing the per-config quantities above them;
// the per-layer compute lives in layer_compute().
StepReport predict_step(const Config& config, const MemoryPlan& plan) {
  const ModelSpec& model = config.model;
  const TrainingSpec& training = config.training;
  const Layout& layout = config.layout;
  const PerfCalibration cal = perf_calibration(training.framework, training.precision);
  StepReport report;

  const Dims dims = dims_of(config);  // plain names (C++17 lambdas cannot capture structured bindings)
  const double t = dims.t, h = dims.h, a = dims.a, k = dims.k, seq = dims.seq, tokens = dims.tokens, t_sp = dims.t_sp;
  const double bf16_peak = config.gpu.bf16_flops;

  const LayerCompute layer = layer_compute(config, plan, cal);
  report.gemm_efficiency = layer.gemm_efficiency;
  const double matmul_rate = layer.matmul_rate;
  const double hbm_rate = layer.hbm_rate;
  const double attention_fwd_s = layer.attention_fwd_s;
  const double layer_fwd_s = layer.forward_s;
  const double layer_bwd_s = layer.backward_s;
  const double recompute_s = layer.recompute_s;

  // Communication links (Megatron rank order tp, cp, dp, pp).
  const int64_t dp = plan.dp;
  const Link tp_link = link_for_span(config, cal, layout.tp);
  const Link cp_link = link_for_span(config, cal, layout.tp * layout.cp);
  const Link dp_link = link_for_span(config, cal, layout.tp * layout.cp * dp);
  const Link pp_link = link_for_span(config, cal, 2 * layout.tp * layout.cp * dp);
  report.tp_crosses_nodes = layout.tp > 1 && tp_link.crosses_nodes;
  report.dp_crosses_nodes = dp * layout.cp > 1 && dp_link.crosses_nodes;

  // TP: 2 all-reduce equivalents forward, 2 backward, 2 more in a full-recompute forward
  // (with SP: all-gather + reduce-scatter pairs, the same volume). Not overlapped (Megatron default).
  const double tp_collectives = 4.0 + (training.recompute == Recompute::kFull ? 2.0 : 0.0);
  const double tp_layer_s = tp_collectives * all_reduce_s(tp_link, layout.tp, tokens * h * 2.0);
  // CP ring: c-1 hops of this rank's K and V forward, ~2x backward (K, V and their gradients),
  // hidden behind the attention compute up to cp_overlap.
  const double kv_bytes = 2.0 * tokens * k * (h / a) * 2.0;
  const double cp_traffic_s = layout.cp > 1 ? 3.0 * double(layout.cp - 1) * (kv_bytes / cp_link.bytes_per_s + cp_link.latency_s) : 0.0;
  const double cp_layer_s = std::max(0.0, cp_traffic_s - cal.cp_overlap * (1.0 + kFlashBackwardFactor) * attention_fwd_s);

  // ZeRO-3 / FSDP gather and scatter every micro-batch.
  const FrameworkProfile& profile = plan.profile;
  const bool sharded_weights = profile.weights_sharded(layout.zero);
  const int64_t shard_ranks = plan.optimizer_shard_ranks;
  const double reduce_bytes = profile.grad_reduce_in_bf16 ? 2.0 : (training.fp32_grad_buffer ? 4.0 : 2.0);

  const auto stage_time = [&](int64_t stage_index) {
    const StageShape shape = stage_shape(config, plan, stage_index);
    const StagePlacement& stage = shape.placement;
    StageTime st;
    const double layers = double(stage.layers);
    st.forward = layers * layer_fwd_s;
    st.backward = layers * (layer_bwd_s + recompute_s);
    if (stage.has_lm_head) {
      const double head_fwd = 2.0 * tokens * double(plan.padded_vocab) * h / t;
      const double logits_s = tokens * double(plan.padded_vocab) / t * kLogitsElementBytes / hbm_rate;
      st.forward += head_fwd / matmul_rate + logits_s / 2.0;
      st.backward += 2.0 * head_fwd / matmul_rate + logits_s / 2.0;
    }
    st.compute = st.forward + st.backward;
    st.tp = layers * tp_layer_s;
    st.cp = layers * cp_layer_s;
    if (layout.pp > 1) {
      // Each chunk boundary: activations forward, their gradients backward (scattered over tp with SP).
      const double activation_bytes = tokens * h * 2.0 / t_sp;
      st.p2p = 2.0 * double(layout.vpp) * (activation_bytes / pp_link.bytes_per_s + pp_link.latency_s);
    }
    if (sharded_weights) {
      const double params = shape.parameters;
      const bool gather_again = layout.zero == 3;  // FULL_SHARD re-gathers for backward
      const double traffic = gather_or_scatter_s(dp_link, shard_ranks, params * 2.0) * (gather_again ? 2.0 : 1.0) +
                             gather_or_scatter_s(dp_link, shard_ranks, params * reduce_bytes);
      st.zero3 = std::max(0.0, traffic - cal.zero3_overlap * st.compute);
    }
    return st;
  };

  StageTime slowest = stage_time(0);
  for (int64_t stage : {int64_t(1), layout.pp - 1}) {
    if (stage <= 0 || stage >= layout.pp) continue;
    const StageTime candidate = stage_time(stage);
    if (candidate.total() > slowest.total()) slowest = candidate;
  }

  const double m = double(plan.num_microbatches);
  const double bubble_slots = double(layout.pp - 1) / double(layout.vpp);
  report.microbatch_time_s = slowest.total();
  report.bubble_fraction = bubble_slots / m;

  // DP once per step (not ZeRO-3): gradient reduce-scatter (sharded optimizer) or all-reduce,
  // hidden behind the last micro-batch's backward; the parameter all-gather of a sharded optimizer
  // behind the next step's first forward.
  double dp_exposed = 0;
  const double stage_params = stage_shape(config, plan, 0).parameters;  // the first stage (embedding; at pp=1 the head too)
  if (!sharded_weights && shard_ranks > 1) {
    const bool sharded_optimizer = layout.zero >= 1;
    const double grad_bytes = stage_params * (profile.grad_reduce_in_fp32 ? 4.0 : reduce_bytes);
    const double grad_sync = sharded_optimizer ? gather_or_scatter_s(dp_link, shard_ranks, grad_bytes)
                                               : all_reduce_s(dp_link, shard_ranks, grad_bytes);
    const double param_gather = sharded_optimizer ? gather_or_scatter_s(dp_link, shard_ranks, stage_params * 2.0) : 0.0;
    dp_exposed = std::max(0.0, grad_sync - cal.dp_overlap * slowest.backward) +
                 std::max(0.0, param_gather - cal.dp_overlap * slowest.forward);
  }
  // Optimizer step: reads and writes the sharded states, reads gradients, writes weights.
  const double optimizer_bytes = stage_params * (2.0 * plan.optimizer_bytes_per_param + plan.grad_bytes_per_param +
                                                 plan.weight_bytes_per_param);

  StepBreakdown& b = report.breakdown;
  b.compute_s = m * slowest.compute;
  b.tp_comm_s = m * slowest.tp;
  b.cp_comm_s = m * slowest.cp;
  b.pp_p2p_s = m * slowest.p2p;
  b.pp_bubble_s = bubble_slots * slowest.total();
  b.dp_comm_s = dp_exposed + m * slowest.zero3;
  b.optimizer_s = optimizer_bytes / hbm_rate;
  report.step_time_s = b.compute_s + b.tp_comm_s + b.cp_comm_s + b.pp_p2p_s + b.pp_bubble_s + b.dp_comm_s + b.optimizer_s;

  const double gpus = double(config.cluster.gpus);
  const double tokens_per_step = double(training.global_batch) * seq;
  report.tokens_per_s_per_gpu = tokens_per_step / report.step_time_s / gpus;
  report.model_flops_per_token = model_flops_per_token(model, training.seq);
  report.tflops_per_gpu = report.model_flops_per_token * report.tokens_per_s_per_gpu / 1e12;
  report.mfu = report.model_flops_per_token * report.tokens_per_s_per_gpu / bf16_peak;
  // HFU adds the recomputed FLOPs, per layer, relative to the layer's model FLOPs (PaLM count:
  // 3x forward, full s x s attention).
  const double layer_model_flops = 3.0 * (layer.matmul_fwd_flops + 4.0 * tokens * seq * h / t);
  report.hfu = report.mfu * (1.0 + layer.recompute_flops / layer_model_flops);
  return report;
}

}  // namespace meshfit
