// parameter_count.cpp — see parameter_count.h.
#include "memory/parameter_count.h"

#include <algorithm>

#include "spec/checked.h"

namespace meshfit {

namespace {
double norm_width(const ModelSpec& model) { return model.norm == NormKind::kRmsNorm ? 1.0 : 2.0; }
}  // namespace

LayerParameters layer_parameters(const ModelSpec& model) {
  const double h = double(model.hidden);
  const double q_width = query_width(model);      // a*d (== h unless head_dim is set apart)
  const double kv_width = meshfit::kv_width(model);  // k*d
  const double f = double(model.ffn);
  const double matrices = model.mlp == MlpKind::kSwiGlu ? 3.0 : 2.0;
  LayerParameters params;
  params.attention = h * q_width + 2.0 * h * kv_width + q_width * h;  // Wq, Wk, Wv, Wo
  params.mlp = matrices * h * f;                                      // gate?, up, down
  if (model.linear_bias) {
    params.attention += q_width + 2.0 * kv_width + h;                   // bq, bk, bv, bo
    params.mlp += (matrices - 1.0) * f + h;                             // up(/gate) and down biases
  }
  params.norms = 2.0 * norm_width(model) * h;                         // two norms per block
  return params;
}

double layer_parameters_on_tp_rank(const ModelSpec& model, int64_t tp) {
  const LayerParameters full = layer_parameters(model);
  const double t = double(tp);
  const double h = double(model.hidden);
  // Row-parallel biases (attention out, MLP down: h each) are replicated, not split.
  const double replicated_bias = model.linear_bias ? 2.0 * h : 0.0;
  return (full.attention + full.mlp - replicated_bias) / t + replicated_bias + full.norms;
}

double linear_weights_on_tp_rank(const ModelSpec& model, int64_t tp) {
  ModelSpec no_bias = model;
  no_bias.linear_bias = false;
  const LayerParameters matrices = layer_parameters(no_bias);
  return (matrices.attention + matrices.mlp) / double(tp);
}

int64_t padded_vocab(int64_t vocab, int64_t pad_multiple, int64_t tp) {
  // Checked: vocab and tp are user inputs; unpadded when the padded size would not fit in int64.
  const std::optional<int64_t> multiple = checked_mul(std::max<int64_t>(1, pad_multiple), std::max<int64_t>(1, tp));
  if (!multiple) return vocab;
  const std::optional<int64_t> rounded_up = checked_add(vocab, *multiple - 1);
  if (!rounded_up) return vocab;
  return *rounded_up / *multiple * *multiple;
}

double final_norm_parameters(const ModelSpec& model) { return norm_width(model) * double(model.hidden); }

double total_parameters(const ModelSpec& model) {
  const double embedding = double(model.vocab) * double(model.hidden);
  const double head = model.tied_embeddings ? 0.0 : embedding;
  return double(model.layers) * layer_parameters(model).total() + embedding + head +
         final_norm_parameters(model);
}

double nanotron_head_cost_layers(const ModelSpec& model) {
  // d_qkv = hidden / heads there, so the attention term is 4h^2 whatever head_dim is.
  const double h = double(model.hidden);
  const double layer = 4.0 * h * h + 3.0 * double(model.ffn) * h;
  return layer > 0 ? double(model.vocab) * h / layer : 0.0;
}

namespace {

// nanotron's split (src/nanotron/models/base.py build_model): the pipeline blocks in order (embedding
// 0, the layers 1 each, final norm 0, head `head_cost`, then the zero-cost fp32 cast and loss) are
// built on the current rank; after each, if its running cost passes that rank's share
// (total * (rank+1) / pp), the next block goes to the next rank. Fills the layers per rank and the
// head's rank.
struct CostSplit {
  std::vector<int64_t> layers;  // per rank
  int64_t head_rank = 0;
};
CostSplit cost_balanced_split(int64_t layers, int64_t pp, double head_cost) {
  CostSplit split;
  split.layers.assign(size_t(pp), 0);
  const double total = double(layers) + head_cost;
  int64_t rank = 0;
  const auto built = [&](double cumulative) {
    if (cumulative > total * double(rank + 1) / double(pp) && rank + 1 < pp) ++rank;
  };
  built(0.0);  // the embedding
  for (int64_t layer = 1; layer <= layers; ++layer) {
    ++split.layers[size_t(rank)];
    built(double(layer));
  }
  built(double(layers));  // the final norm
  split.head_rank = rank;
  return split;
}

// Whether the framework's cost-balanced split applies (no explicit first/last counts, no interleaving).
bool cost_balanced(const Layout& layout, const SplitRule& rule) {
  return layout.pp_first_stage_layers == 0 && layout.pp_last_stage_layers == 0 && rule.head_cost_layers >= 0 &&
         layout.vpp == 1 && layout.pp > 1;
}

// Layers of virtual stage j (0 .. pp*vpp-1) under the split rule of virtual_stage_layers (not the
// cost-balanced one, which is computed for all stages at once).
int64_t chunk_layers(int64_t layers, const Layout& layout, int64_t j, int64_t edge_weight) {
  const int64_t chunks = layout.pp * layout.vpp;
  if (chunks == 1) return layers;
  const int64_t first = layout.pp_first_stage_layers;
  const int64_t last = layout.pp_last_stage_layers;
  if (first == 0 && last == 0 && edge_weight > 0) {
    // torchtitan distributed/pipeline_parallel.py generate_llm_fqn_per_model_part: the embedding
    // and the norm+output count as edge_weight layers each; the E = L + 2w effective layers are
    // spread floor(E/S) per stage, the first E mod S stages taking one more.
    const int64_t effective = layers + 2 * edge_weight;
    int64_t count = effective / chunks + (j < effective % chunks ? 1 : 0);
    if (j == 0) count -= edge_weight;
    if (j == chunks - 1) count -= edge_weight;
    return std::max<int64_t>(0, count);
  }
  if (first > 0 && j == 0) return first;
  if (last > 0 && j == chunks - 1) return last;
  const int64_t begin = first > 0 ? 1 : 0;
  const int64_t middle = (last > 0 ? chunks - 1 : chunks) - begin;
  const int64_t remaining = layers - checked_add(first, last).value_or(layers);  // validate() refuses overflow
  const int64_t index = j - begin;
  if (middle <= 0) return 0;
  return remaining / middle + (index < remaining % middle ? 1 : 0);
}

}  // namespace

std::vector<int64_t> virtual_stage_layers(int64_t layers, const Layout& layout, const SplitRule& rule) {
  if (cost_balanced(layout, rule)) return cost_balanced_split(layers, layout.pp, rule.head_cost_layers).layers;
  std::vector<int64_t> counts(size_t(layout.pp * layout.vpp));
  for (int64_t j = 0; j < int64_t(counts.size()); ++j)
    counts[size_t(j)] = chunk_layers(layers, layout, j, rule.edge_weight);
  return counts;
}

int64_t head_stage(int64_t layers, const Layout& layout, const SplitRule& rule) {
  return cost_balanced(layout, rule) ? cost_balanced_split(layers, layout.pp, rule.head_cost_layers).head_rank : layout.pp - 1;
}

StagePlacement place_stage(int64_t layers, const Layout& layout, int64_t stage, const SplitRule& rule) {
  StagePlacement placement;
  placement.stage = stage;
  if (cost_balanced(layout, rule)) {
    const CostSplit split = cost_balanced_split(layers, layout.pp, rule.head_cost_layers);
    placement.layers = split.layers[size_t(stage)];
    placement.has_lm_head = stage == split.head_rank;
  } else {
    for (int64_t chunk = 0; chunk < layout.vpp; ++chunk)
      placement.layers += chunk_layers(layers, layout, chunk * layout.pp + stage, rule.edge_weight);
    placement.has_lm_head = stage == layout.pp - 1;
  }
  placement.has_embedding = stage == 0;
  return placement;
}

}  // namespace meshfit
