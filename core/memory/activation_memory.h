// activation_memory.h — activation bytes saved for backward, per layer and per pipeline stage.
// Per-layer terms: Korthikanti et al. 2022 (arXiv 2205.05198) §4, generalised to SwiGLU and GQA as
// Fujii et al. 2024 (arXiv 2411.06465): sbh*(12 + 4k/a + 8f/h) with FlashAttention. In-flight
// micro-batches follow Megatron-LM's 1F1B / interleaved schedules (schedules.py warm-up counts).
#pragma once

#include <cstdint>

#include "spec/config.h"
#include "memory/parameter_count.h"

namespace meshfit {

// What "selective" recompute saves. Megatron-LM --recompute-granularity selective recomputes the
// attention core (Korthikanti §5). torchtitan's op-level selective AC (parallelize.py _save_list /
// _custom_policy) saves the outputs of every other matmul (wq, wv, w1, w2 of the 7 in a block),
// the SDPA outputs and the block input, and recomputes everything else.
enum class SelectiveKind { kAttentionCore, kAlternateMatmuls };

struct ActivationSettings {
  int64_t seq = 0;
  int64_t micro_batch = 0;
  int64_t tp = 1;
  int64_t cp = 1;
  bool sp = true;              // only effective at tp > 1
  bool flash = true;
  Recompute recompute = Recompute::kNone;
  SelectiveKind selective = SelectiveKind::kAttentionCore;  // what "selective" means (per framework)
};

// One layer, one micro-batch, one rank; every field in bytes (bf16 activations, 2 bytes/element).
struct LayerActivations {
  double sequence_terms = 0;   // norm inputs, block inputs, dropout masks: split by tp only with SP
  double tp_split_terms = 0;   // Q, K, V, projection input, MLP intermediates: always split by tp
  double attention_scores = 0; // eager: softmax (+ dropout) a*s^2 terms; flash: fp32 log-sum-exp
  double no_recompute = 0;     // sum of the three: what one layer saves with no recompute
  double stored = 0;           // what one layer keeps under the chosen recompute mode
};

LayerActivations layer_activations(const ModelSpec& model, const ActivationSettings& settings);

// Micro-batches (interleaved: chunk-micro-batches) whose activations are live on a stage at its
// peak. 1F1B: min(n_mb, pp - stage). Interleaved (Megatron schedules.py):
// min(n_mb*vpp, (pp - stage - 1)*2 + (vpp - 1)*pp + 1).
int64_t in_flight_microbatches(int64_t stage, int64_t pp, int64_t vpp, int64_t num_microbatches);

struct StageActivations {
  int64_t in_flight = 0;            // (chunk-)micro-batches live at the peak
  double layers_per_in_flight = 0;  // average layers per in-flight unit on this stage
  double layer_bytes = 0;           // LayerActivations::stored
  double layers_bytes = 0;          // in_flight * layers_per_in_flight * layer_bytes
  double recompute_working_bytes = 0;  // full recompute: one layer's activations rebuilt in backward
  double embedding_bytes = 0;       // first stage: token ids (int64) + embedding dropout mask
  double head_input_bytes = 0;      // last stage: final-norm input and LM-head input
  double total = 0;
};

StageActivations stage_activations(const ModelSpec& model, const ActivationSettings& settings,
                                   const StagePlacement& stage, int64_t pp, int64_t vpp,
                                   int64_t num_microbatches);

}  // namespace meshfit
