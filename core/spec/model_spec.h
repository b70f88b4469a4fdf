// model_spec.h — the transformer architecture input and its presets.
// Llama-family by default (RMSNorm, SwiGLU, GQA, untied embeddings); norm and MLP kinds make
// GPT/OPT-style models expressible too. Preset dimensions cite the models' published configs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/enum_names.h"

namespace meshfit {

enum class NormKind { kRmsNorm, kLayerNorm };  // RMSNorm: weight only; LayerNorm: weight + bias
enum class MlpKind { kSwiGlu, kGelu };         // SwiGLU: 3 matrices (gate, up, down); GeLU: 2

template <> struct EnumNames<NormKind> {
  static constexpr EnumName<NormKind> table[] = {{NormKind::kRmsNorm, "rmsnorm", "RMSNorm"},
                                                 {NormKind::kLayerNorm, "layernorm", "LayerNorm"}};
};
template <> struct EnumNames<MlpKind> {
  static constexpr EnumName<MlpKind> table[] = {{MlpKind::kSwiGlu, "swiglu", "SwiGLU"}, {MlpKind::kGelu, "gelu", "GeLU"}};
};

struct ModelSpec {
  std::string name = "custom";       // preset id, or "custom"
  int64_t hidden = 0;                // h: model width
  int64_t layers = 0;                // L: transformer blocks
  int64_t heads = 0;                 // a: attention (query) heads
  int64_t kv_heads = 0;              // k: key/value heads (k == a is MHA, k < a is GQA)
  int64_t ffn = 0;                   // f: MLP intermediate width
  int64_t vocab = 0;                 // v: vocabulary size (before any padding)
  bool tied_embeddings = false;      // LM head shares the input embedding matrix
  NormKind norm = NormKind::kRmsNorm;
  MlpKind mlp = MlpKind::kSwiGlu;
  bool linear_bias = false;          // biases on QKV/out/MLP projections (GPT-2/3, OPT)
  bool dropout = false;              // dropout after attention and MLP (GPT-3 era training)
  // Last, so that positional initialisers of the fields above stay valid.
  int64_t head_dim = 0;              // d: width of one attention head; 0 = hidden / heads (HF config.json
                                     // head_dim, Megatron --kv-channels: Qwen3, Gemma 2 set it apart)
  // An RMSNorm on every query and key head before RoPE (Qwen3, OLMo 2, Gemma 3; Megatron-LM
  // --qk-layernorm): each saves its input for backward (activation_memory.cpp).
  bool qk_norm = false;
};

// The attention widths every consumer uses (parameters, activations, FLOPs, CP traffic): the head
// dimension d (head_dim, or hidden / heads when 0), the query/output width a*d and the key/value
// width k*d. With head_dim 0 these are hidden and k*hidden/a exactly (validate() requires
// hidden % heads == 0 then), so configs without head_dim keep their results to the bit.
double attention_head_dim(const ModelSpec& model);  // d
double query_width(const ModelSpec& model);         // a*d: Wq output, attention output, Wo input
double kv_width(const ModelSpec& model);            // k*d: Wk and Wv outputs

struct ModelPreset {
  const char* id;      // e.g. "llama3.1-70b"
  const char* source;  // where the dimensions come from
  ModelSpec spec;
};

const std::vector<ModelPreset>& model_presets();
std::optional<ModelSpec> find_model_preset(const std::string& id);

}  // namespace meshfit
