// activation_memory.cpp — see activation_memory.h for the sources.
// Byte counts use the papers' convention: "2sbh" is one bf16 tensor of s*b*h elements.
#include "memory/activation_memory.h"

#include <algorithm>

#include "memory/overheads.h"

namespace meshfit {

LayerActivations layer_activations(const ModelSpec& model, const ActivationSettings& settings) {
  const double t = double(settings.tp);
  const double t_sp = (settings.sp && settings.tp > 1) ? t : 1.0;  // SP splits the sequence terms
  const double s_local = double(settings.seq) / double(settings.cp);  // CP splits the sequence
  const double b = double(settings.micro_batch);
  const double h = double(model.hidden);
  const double a = double(model.heads);
  const double f = double(model.ffn);
  const double sbh = s_local * b * h;
  // The attention tensors are a*d (Q, attention output) and k*d (K, V) wide, not h, when head_dim
  // is set apart (Qwen3, Gemma 2). As ratios to h, 1 and k/a exactly when it is not, so the
  // papers' coefficients below keep their form and their bits.
  const double q_ratio = query_width(model) / h;
  const double kv_ratio = kv_width(model) / h;
  const double dropout_masks = model.dropout ? 2.0 : 0.0;  // 1-byte masks after attention and MLP

  LayerActivations act;
  // Korthikanti §4.1: LN inputs 4sbh, QKV input 2sbh, MLP input 2sbh, dropout masks 2sbh.
  const double residual_bytes = settings.fp32_residual ? 4.0 : 2.0;  // each LN input
  // Transformer Engine fp8 saves the QKV and MLP inputs as fp8: 1 B each (ActivationSettings::fp8_gemm_inputs).
  const double projection_input_bytes = settings.fp8_gemm_inputs ? 1.0 : 2.0;
  act.sequence_terms = sbh * (2.0 * residual_bytes + 2.0 * projection_input_bytes + dropout_masks) / t_sp;
  if (settings.sp_saves_gathered_inputs && t_sp > 1)  // QKV and MLP inputs saved gathered (2sbh each)
    act.sequence_terms = sbh * (4.0 + dropout_masks) / t_sp + 4.0 * sbh;
  // Under autocast over fp32 weights the norm's output is fp32 and every projection that reads it
  // casts its own bf16 copy, which F.linear saves for the weight gradient (autocast caches only the
  // casts of leaf weights). Llama-family blocks, as HF transformers and torchtitan write them, have
  // separate q/k/v and gate/up projections: 2 + 1 copies more than the one QKV and one MLP input
  // counted above, 6sbh; GPT-style blocks fuse QKV and have one MLP input. Measured by tests/gpu on
  // one H100: llama3.2-3b plain s1024 mb4 (28 layers) 2.00 GiB above the model without them (6sbh:
  // 2.06), ddp-1b (16 layers, s4096) 0.77 (0.75), ddp-8b-l4 0.41 (0.38); the GPT-3 rows 0.3%.
  if (settings.fp32_residual && model.mlp == MlpKind::kSwiGlu) act.sequence_terms += 6.0 * sbh / t_sp;
  // Q 2sbh, K and V 2sbh*k/a each (GQA, Fujii 2024), output-projection input 2sbh (h read as a*d
  // and k*d for the attention tensors: q_ratio, kv_ratio);
  // MLP: GeLU input + output 2*2sbf (Korthikanti 16sbh at f = 4h); SwiGLU gate, up, act(gate),
  // product 4*2sbf (Fujii 2024: 8f/h).
  // Compiled: half the f-wide tensors (see ActivationSettings::compiled).
  // Megatron's fused SwiGLU saves the fc1 output (gate and up, 4sbf) and the product (2sbf): 6sbf.
  const double swiglu_terms = settings.fused_swiglu ? 6.0 * f / h : 8.0 * f / h;
  const double mlp_terms = (model.mlp == MlpKind::kSwiGlu ? swiglu_terms : 4.0 * f / h) * (settings.compiled ? 0.5 : 1.0);
  // TE fp8: the fc2 input (SwiGLU product or GeLU output) is saved as fp8, 1 B of its 2; the output
  // projection saves an fp8 copy of the attention output, 1 B more (TE linear.py saved_inputmat).
  const double fp8_terms = settings.fp8_gemm_inputs ? q_ratio - f / h : 0.0;
  // Eager torchtitan attention: K and V expanded to all heads, 4sbh(1 - k/a) more than GQA's, and
  // the contiguous copy of the SDPA output, 2sbh (a*d and k*d for h*1 and h*k/a) (FRAMEWORK_NOTES §1.7 "No-AC activations").
  const double attention_copies =
      (settings.eager_attention_copies && !settings.compiled)
          ? 4.0 * (q_ratio - kv_ratio) + (settings.flash ? 0.0 : 2.0 * q_ratio)
          : 0.0;
  // QK-norm: the per-head RMSNorms on Q and K save their inputs, the projections' outputs (2 B, a*d
  // and k*d wide); their outputs go on through RoPE to the attention, counted above.
  const double qk_norm_inputs = model.qk_norm ? 2.0 * (q_ratio + kv_ratio) : 0.0;
  act.tp_split_terms =
      sbh * (2.0 * q_ratio + 4.0 * kv_ratio + 2.0 * q_ratio + mlp_terms + fp8_terms + attention_copies + qk_norm_inputs) / t;
  if (settings.flash) {
    act.attention_scores = 4.0 * a * s_local * b / t;  // fp32 log-sum-exp per query row
  } else {
    // Softmax output 2as^2b (+ dropout mask as^2b and output 2as^2b): Korthikanti 5as^2b.
    // With CP each rank holds its s/cp queries against all s keys.
    const double score_bytes = (settings.fp32_math_attention ? 4.0 : 2.0) + (model.dropout ? 3.0 : 0.0);
    act.attention_scores = score_bytes * a * s_local * double(settings.seq) * b / t;
  }
  act.no_recompute = act.sequence_terms + act.tp_split_terms + act.attention_scores + settings.frozen_base_delta_bytes;
  switch (settings.recompute) {
    case Recompute::kNone: act.stored = act.no_recompute; break;
    // Selective recomputes the attention core (Korthikanti §5): its saved tensors are dropped.
    case Recompute::kSelective:
      if (settings.selective == SelectiveKind::kAttentionCore) {
        act.stored = act.sequence_terms + act.tp_split_terms + settings.frozen_base_delta_bytes;
      } else {
        // Saved: block input and w2 output (2sbh each, sequence terms); wq output 2sbh, wv output
        // 2sbh*k/a, SDPA output 2sbh (+ its log-sum-exp) and w1 output 2sbf (split by tp).
        act.stored = 4.0 * sbh / t_sp + sbh * (2.0 * q_ratio + 2.0 * kv_ratio + 2.0 * q_ratio + 2.0 * f / h) / t +
                     (settings.flash ? act.attention_scores : 0.0);
      }
      break;
    // Full recompute keeps only the layer input, 2sbh (split by tp with SP).
    case Recompute::kFull: act.stored = residual_bytes * sbh / t_sp; break;
  }
  return act;
}

int64_t in_flight_microbatches(int64_t stage, int64_t pp, int64_t vpp, int64_t num_microbatches) {
  if (vpp <= 1) return std::min(num_microbatches, pp - stage);
  // Megatron-LM schedules.py, forward_backward_pipelining_with_interleaving: warm-up
  // (pp - rank - 1) * 2 + (vpp - 1) * pp chunk-micro-batches, then one more forward.
  const int64_t warmup = (pp - stage - 1) * 2 + (vpp - 1) * pp;
  return std::min(num_microbatches * vpp, warmup + 1);
}

double offloaded_layers_on_gpu(bool all_layers_recomputed, bool in_backward) {
  if (!all_layers_recomputed) return 1.0;
  return in_backward ? kOffloadBackwardTensors : kOffloadStashTensors;
}

double recomputed_layers(Recompute recompute, int64_t recompute_layers, double stage_layers, int64_t vpp) {
  if (recompute != Recompute::kFull) return 0.0;
  if (recompute_layers <= 0) return stage_layers;
  return std::min(double(recompute_layers) * double(std::max<int64_t>(vpp, 1)), stage_layers);
}

StageActivations stage_activations(const ModelSpec& model, const ActivationSettings& settings,
                                   const StagePlacement& stage, int64_t pp, int64_t vpp,
                                   int64_t num_microbatches) {
  const LayerActivations layer = layer_activations(model, settings);
  const double t_sp = (settings.sp && settings.tp > 1) ? double(settings.tp) : 1.0;
  const double s_local = double(settings.seq) / double(settings.cp);
  const double sb = s_local * double(settings.micro_batch);
  const double sbh = sb * double(model.hidden);

  StageActivations out;
  out.in_flight = in_flight_microbatches(stage.stage, pp, vpp, num_microbatches);
  out.layers_per_in_flight = double(stage.layers) / double(vpp);
  out.layer_bytes = layer.stored;
  // Full recompute on the first N layers of each chunk only (Megatron --recompute-method block): the
  // other layers of every in-flight micro-batch keep all their activations.
  double per_in_flight = out.layers_per_in_flight * layer.stored;
  const double recomputed = recomputed_layers(settings.recompute, settings.recompute_layers, out.layers_per_in_flight, 1);
  if (settings.recompute == Recompute::kFull && recomputed < out.layers_per_in_flight) {
    per_in_flight = recomputed * layer.stored + (out.layers_per_in_flight - recomputed) * layer.no_recompute;
    out.layer_bytes = per_in_flight / out.layers_per_in_flight;
  }
  out.layers_bytes = double(out.in_flight) * per_in_flight;
  if (settings.offload && out.layers_bytes > 0) {
    const double saved_layers = double(out.in_flight) * out.layers_per_in_flight;
    const bool all_recomputed = settings.recompute == Recompute::kFull && recomputed >= out.layers_per_in_flight;
    const double on_gpu = std::min(saved_layers, offloaded_layers_on_gpu(all_recomputed)) * out.layer_bytes;
    out.offloaded_bytes = out.layers_bytes - on_gpu;
    out.layers_bytes = on_gpu;
    out.offload_backward_release =
        on_gpu - std::min(saved_layers, offloaded_layers_on_gpu(all_recomputed, /*in_backward=*/true)) * out.layer_bytes;
  }
  if (settings.recompute == Recompute::kFull && stage.layers > 0)
    out.recompute_working_bytes = layer.no_recompute;  // one layer rebuilt at a time in backward
  if (stage.has_embedding) {
    // Megatron theoretical_memory_usage.py: 8sbp token ids (int64) + sbhp embedding dropout mask.
    const double first_stage_in_flight = double(in_flight_microbatches(0, pp, 1, num_microbatches));
    out.embedding_bytes = first_stage_in_flight * (8.0 * sb + (model.dropout ? sbh / t_sp : 0.0));
  }
  if (stage.has_lm_head) out.head_input_bytes = (settings.head_in_loss ? 2.0 : 4.0) * sbh / t_sp;  // final-norm + LM-head inputs
  out.total = out.layers_bytes + out.recompute_working_bytes + out.embedding_bytes + out.head_input_bytes;
  return out;
}

}  // namespace meshfit
