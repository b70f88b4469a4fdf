// parameter_count.h — parameters per layer, embedding and head, per tensor-parallel rank and
// per pipeline stage (with interleaved chunks and uneven splits).
// Layer formula as in Megatron-LM megatron/training/theoretical_memory_usage.py (P_layer), with
// the norm count taken from the model (RMSNorm h, LayerNorm 2h) and GQA K/V widths exact.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/config.h"

namespace meshfit {

struct LayerParameters {
  double attention = 0;   // Q, K, V, output projections (+ biases)
  double mlp = 0;         // gate/up/down (SwiGLU) or up/down (GeLU) (+ biases)
  double norms = 0;       // the two norms of the block
  double total() const { return attention + mlp + norms; }
};

// One transformer block, unsplit.
LayerParameters layer_parameters(const ModelSpec& model);
// One transformer block on one TP rank: projections divided by tp, norms (and row-parallel
// biases) replicated, as in Megatron-LM's ColumnParallelLinear/RowParallelLinear.
double layer_parameters_on_tp_rank(const ModelSpec& model, int64_t tp);
// The block's projection weight matrices on one TP rank (no biases or norms): what torchao's float8
// conversion turns into Float8Linear weights (FRAMEWORK_NOTES §1.9).
double linear_weights_on_tp_rank(const ModelSpec& model, int64_t tp);
// Vocabulary padded to a multiple of pad_multiple * tp (Megatron --make-vocab-size-divisible-by).
int64_t padded_vocab(int64_t vocab, int64_t pad_multiple, int64_t tp);
// Norm parameters of the final norm (h for RMSNorm, 2h for LayerNorm).
double final_norm_parameters(const ModelSpec& model);
// Whole model, unpadded vocabulary, tied head counted once.
double total_parameters(const ModelSpec& model);

struct ChunkLayers {
  int64_t chunk = 0;        // virtual stage index on this rank (0 .. vpp-1)
  int64_t first_layer = 0;  // global index of the chunk's first layer
  int64_t layers = 0;       // layers in this chunk
};

struct StagePlacement {
  int64_t stage = 0;
  int64_t layers = 0;             // sum over chunks
  bool has_embedding = false;     // first stage (input embedding)
  bool has_lm_head = false;       // last stage (output layer, final norm, loss)
};

// How a framework cuts the layers into stages when the config names no first/last stage counts.
struct SplitRule {
  int64_t edge_weight = 0;       // > 0: torchtitan's split, the embedding and the head counting as that many layers
  double head_cost_layers = -1;  // >= 0: nanotron's cost-balanced split, the head costing this many layers
};
// nanotron's head cost in layers (models/llama.py get_block_compute_costs): v*h over 4*a*d*h + 3*f*h.
double nanotron_head_cost_layers(const ModelSpec& model);

// Layers per virtual stage: an even split, or the explicit first/last counts with the rest spread
// evenly (remainder to the earliest middle chunks), or the framework's own rule. Requires a
// validated layout.
std::vector<int64_t> virtual_stage_layers(int64_t layers, const Layout& layout, const SplitRule& rule = {});
// The rank that holds the LM head: the last, or where a cost-balanced split puts it.
int64_t head_stage(int64_t layers, const Layout& layout, const SplitRule& rule = {});
// One pipeline stage: virtual stage j lives on rank j % pp (Megatron interleaving).
StagePlacement place_stage(int64_t layers, const Layout& layout, int64_t stage, const SplitRule& rule = {});

}  // namespace meshfit
