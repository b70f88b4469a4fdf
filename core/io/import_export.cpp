// import_export.cpp — see import_export.h. Key names follow transformers' configuration classes
// (LlamaConfig, MistralConfig, Qwen2Config, GPT2Config, GPTNeoXConfig, OPTConfig).
#include "io/import_export.h"

#include <cmath>

#include "io/json_text.h"
#include "io/serialize.h"
#include "spec/checked.h"
#include "spec/validate.h"

namespace meshfit {

using nlohmann::json;

namespace {

// The first of `keys` present as a positive integer; 0 when none is.
int64_t first_count(const json& config, std::initializer_list<const char*> keys, std::string& found) {
  for (const char* key : keys) {
    if (!config.contains(key)) continue;
    const json& value = config[key];
    if (value.is_number_integer() && value.get<int64_t>() > 0) {
      found = key;
      return value.get<int64_t>();
    }
  }
  return 0;
}

// Typed look-ups that fall back instead of throwing on a missing key or another type.
bool bool_or(const json& config, const char* key, bool fallback) {
  return config.contains(key) && config[key].is_boolean() ? config[key].get<bool>() : fallback;
}
std::string string_or(const json& config, const char* key, const std::string& fallback) {
  return config.contains(key) && config[key].is_string() ? config[key].get<std::string>() : fallback;
}

}  // namespace

HfImport import_hf_config(const std::string& text) {
  HfImport out;
  out.model.name = "custom";
  const std::optional<json> parsed = parse_json_text(text, "config.json", out.issues);
  if (!parsed || has_errors(out.issues)) return out;
  const json& config = *parsed;
  if (!config.is_object()) {
    out.issues.push_back({IssueCode::kUnknownValue, Severity::kError, "config.json",
                          "the pasted text is not a JSON object (paste the whole config.json)."});
    return out;
  }
  // Multimodal and wrapper configs keep the language model under text_config.
  const json& c = config.contains("text_config") && config["text_config"].is_object() ? config["text_config"] : config;
  out.model_type = string_or(c, "model_type", string_or(config, "model_type", ""));

  const auto unsupported = [&](const char* key, const std::string& why) {
    out.issues.push_back({IssueCode::kUnknownValue, Severity::kError, key, why});
  };
  for (const char* key : {"num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts"}) {
    if (c.contains(key) && c[key].is_number() && c[key].get<double>() > 1)
      unsupported(key, std::string("mixture of experts (") + key + "=" + describe(c[key]) +
                           ") is not modelled yet: meshfit covers dense decoders.");
  }
  if (c.contains("kv_lora_rank") && !c["kv_lora_rank"].is_null())
    unsupported("kv_lora_rank", "multi-head latent attention (DeepSeek MLA) is not modelled yet.");

  std::string key;
  const int64_t hidden = first_count(c, {"hidden_size", "n_embd", "d_model"}, key);
  const int64_t layers = first_count(c, {"num_hidden_layers", "n_layer", "num_layers"}, key);
  const int64_t heads = first_count(c, {"num_attention_heads", "n_head"}, key);
  int64_t kv_heads = first_count(c, {"num_key_value_heads", "multi_query_group_num"}, key);
  if (bool_or(c, "multi_query", false)) kv_heads = 1;
  const int64_t vocab = first_count(c, {"vocab_size", "padded_vocab_size"}, key);
  int64_t ffn = first_count(c, {"intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"}, key);
  const std::pair<const char*, int64_t> required[] = {
      {"hidden_size", hidden}, {"num_hidden_layers", layers}, {"num_attention_heads", heads}, {"vocab_size", vocab}};
  for (const auto& [name, value] : required)
    if (value == 0)
      out.issues.push_back({IssueCode::kMissingModel, Severity::kError, name,
                            std::string("config.json has no positive ") + name + "."});
  if (!out.ok()) return out;
  // Documented model-size limits (validate.h), checked here so that no product below can overflow.
  const std::pair<const char*, std::pair<int64_t, int64_t>> sizes[] = {
      {"hidden_size", {hidden, kMaxHidden}}, {"num_hidden_layers", {layers, kMaxLayers}},
      {"num_attention_heads", {heads, kMaxHeads}}, {"num_key_value_heads", {kv_heads, kMaxHeads}},
      {"intermediate_size", {ffn, kMaxFfn}}, {"vocab_size", {vocab, kMaxVocab}}};
  for (const auto& [name, size] : sizes)
    if (size.first > size.second)
      out.issues.push_back({IssueCode::kOutOfRange, Severity::kError, name,
                            std::string(name) + "=" + std::to_string(size.first) +
                                " exceeds the supported maximum of " + std::to_string(size.second) + "."});
  if (!out.ok()) return out;

  const std::string act = string_or(c, "hidden_act", string_or(c, "activation_function", "silu"));
  const bool gated = act == "silu" || act == "swiglu" || act == "swish" || act == "gelu_pytorch_tanh" ||
                     out.model_type == "llama" || out.model_type == "mistral" || out.model_type == "qwen2";
  const bool gpt_style = out.model_type == "gpt2" || out.model_type == "gpt_neox" || out.model_type == "opt" ||
                         out.model_type == "gptj" || out.model_type == "gpt_bigcode";
  ModelSpec& m = out.model;
  m.hidden = hidden;
  m.layers = layers;
  m.heads = heads;
  m.kv_heads = kv_heads > 0 ? kv_heads : heads;
  m.vocab = vocab;
  m.mlp = gated && !gpt_style ? MlpKind::kSwiGlu : MlpKind::kGelu;
  m.ffn = ffn > 0 ? ffn : checked_mul(4, hidden).value_or(0);  // GPT-2 n_inner = null means 4h
  if (m.ffn > kMaxFfn)
    unsupported("n_inner", "the default MLP width 4*hidden_size = " + std::to_string(m.ffn) +
                               " exceeds the supported maximum of " + std::to_string(kMaxFfn) + ".");
  m.norm = gpt_style ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  m.linear_bias = gpt_style || bool_or(c, "attention_bias", false) || bool_or(c, "mlp_bias", false);
  m.tied_embeddings = bool_or(c, "tie_word_embeddings", gpt_style);

  // Checked: head_dim is user input and head_dim * heads may overflow.
  if (c.contains("head_dim") && c["head_dim"].is_number_integer() &&
      checked_mul(c["head_dim"].get<int64_t>(), heads) != std::optional<int64_t>(hidden))
    unsupported("head_dim", "head_dim=" + describe(c["head_dim"]) + " times " + std::to_string(heads) +
                                " heads is not hidden_size=" + std::to_string(hidden) +
                                ": decoupled head dimensions are not modelled yet.");
  if (out.model_type == "qwen2")
    out.issues.push_back({IssueCode::kUnknownValue, Severity::kWarning, "model_type",
                          "qwen2 has biases on Q, K and V only; they are left out (under 0.01% of parameters)."});
  return out;
}

json hf_import_to_json(const HfImport& import) { return model_to_json(import.model); }

}  // namespace meshfit
