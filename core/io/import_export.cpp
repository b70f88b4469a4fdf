// import_export.cpp — see import_export.h. Key names follow transformers' configuration classes
// (LlamaConfig, MistralConfig, Qwen2Config, GPT2Config, GPTNeoXConfig, OPTConfig).
#include "io/import_export.h"

#include <cmath>

#include "io/import_common.h"
#include "io/json_text.h"
#include "io/serialize.h"
#include "spec/checked.h"
#include "spec/validate.h"

namespace meshfit {

using nlohmann::json;

namespace {

// The first of `keys` present as a positive integer; 0 when none is. A value beyond
// kMaxImportCount is an error; a second key of the list with another value is a conflict.
int64_t first_count(const json& config, std::initializer_list<const char*> keys, std::string& found,
                    std::vector<Issue>& issues) {
  int64_t result = 0;
  std::string first_key;
  for (const char* key : keys) {
    if (!config.contains(key)) continue;
    const json& value = config[key];
    if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(kMaxImportCount)) {
      issues.push_back({IssueCode::kOutOfRange, Severity::kError, key,
                        std::string(key) + "=" + value.dump() + " is beyond any real model (limit 2^40)."});
      continue;
    }
    if (!value.is_number_integer() || value.get<int64_t>() <= 0) continue;
    if (result > 0 && value.get<int64_t>() != result) {
      issues.push_back({IssueCode::kConflictingSettings, Severity::kWarning, key,
                        std::string(key) + "=" + value.dump() + " disagrees with " + first_key + "=" +
                            std::to_string(result) + "; " + first_key + " is used."});
      continue;
    }
    if (result == 0) {
      result = value.get<int64_t>();
      first_key = key;
      found = key;
    }
  }
  return result;
}

// Keys of config.json files with no effect on training memory (tokens, initialisation, RoPE/ALiBi
// settings, inference options, provenance). Any other key is reported as unknown.
constexpr const char* kIgnoredHfKeys[] = {
    "architectures", "model_type", "_name_or_path", "transformers_version", "torch_dtype", "dtype", "use_cache",
    "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id", "initializer_range",
    "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon", "rope_theta", "rope_scaling",
    "rotary_emb_base", "rotary_pct", "partial_rotary_factor", "max_position_embeddings", "n_positions", "n_ctx",
    "pretraining_tp", "attention_dropout", "hidden_dropout", "attn_pdrop", "resid_pdrop", "embd_pdrop",
    "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels", "summary_first_dropout",
    "task_specific_params", "scale_attn_weights", "reorder_and_upcast_attn", "scale_attn_by_inverse_layer_idx",
    "sliding_window", "use_sliding_window", "max_window_layers", "use_parallel_residual", "classifier_dropout",
    "dropout", "activation_dropout", "layerdrop", "do_layer_norm_before", "enable_bias", "init_std",
    "_remove_final_layer_norm", "prefix", "apply_residual_connection_post_layernorm", "attention_softmax_in_fp32",
    "bias_dropout_fusion", "masked_softmax_fusion", "slow_but_exact", "offset_alibi", "skip_bias_add",
    "skip_bias_add_qkv", "seq_length", "quantization_config", "use_bfloat16", "tokenizer_class", "bias",
    "hidden_act", "hidden_activation", "activation_function", "hidden_size", "n_embd", "n_embed", "d_model", "num_hidden_layers", "n_layer",
    "num_layers", "num_attention_heads", "n_head", "num_key_value_heads", "multi_query_group_num", "multi_query",
    "vocab_size", "padded_vocab_size", "intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size",
    "tie_word_embeddings", "attention_bias", "mlp_bias", "head_dim", "text_config", "word_embed_proj_dim",
    "num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts", "kv_lora_rank", "id2label",
    "label2id", "is_decoder", "is_encoder_decoder", "output_attentions", "output_hidden_states", "return_dict",
    "pruned_heads", "torchscript", "use_return_dict", "problem_type", "finetuning_task", "qkv_bias", "_attn_implementation",
    "attention_multiplier", "rope_type", "max_sequence_length", "attn_implementation", "num_experts_per_tok", "unk_token_id", "use_mrope"};

// Typed look-ups that fall back instead of throwing on a missing key or another type.
bool bool_or(const json& config, const char* key, bool fallback) {
  return config.contains(key) && config[key].is_boolean() ? config[key].get<bool>() : fallback;
}
std::string string_or(const json& config, const char* key, const std::string& fallback) {
  return config.contains(key) && config[key].is_string() ? config[key].get<std::string>() : fallback;
}

}  // namespace

// Not a hot path (once per paste): config.json's keys in the order transformers documents them.
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

  // A multimodal wrapper: the encoders beside text_config are not counted (the same review saw a
  // Gemma 3 vision tower of ~0.4 B parameters pass without a word).
  if (&c != &config)
    for (const char* tower : {"vision_config", "audio_config", "vision_tower_config", "speech_config"})
      if (config.contains(tower))
        out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, tower,
                              std::string("config.json's ") + tower +
                                  " (an encoder beside the language model) is not counted: meshfit models text_config's "
                                  "decoder only, so its weights, gradients and activations are missing from the estimate."});
  for (const auto& [name, value] : c.items()) {
    bool known = false;
    for (const char* ignored : kIgnoredHfKeys) known |= name == ignored;
    if (!known)
      out.issues.push_back({IssueCode::kUnknownField, Severity::kWarning, name,
                            "config.json key " + quote_text(name) + " is not known to meshfit; ignored."});
  }
  std::string key;
  std::vector<Issue>& issues = out.issues;
  const int64_t hidden = first_count(c, {"hidden_size", "n_embd", "n_embed", "d_model"}, key, issues);
  const int64_t layers = first_count(c, {"num_hidden_layers", "n_layer", "num_layers"}, key, issues);
  const int64_t heads = first_count(c, {"num_attention_heads", "n_head"}, key, issues);
  int64_t kv_heads = first_count(c, {"num_key_value_heads", "multi_query_group_num"}, key, issues);
  if (bool_or(c, "multi_query", false)) kv_heads = 1;
  const int64_t vocab = first_count(c, {"vocab_size", "padded_vocab_size"}, key, issues);
  int64_t ffn = first_count(c, {"intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"}, key, issues);
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

  // Gemma names its activation hidden_activation (GemmaConfig); Gemma, Gemma 2 and Qwen3 MLPs are gated.
  const std::string act =
      string_or(c, "hidden_act", string_or(c, "hidden_activation", string_or(c, "activation_function", "silu")));
  const bool gemma = out.model_type == "gemma" || out.model_type == "gemma2" || out.model_type == "gemma3" ||
                     out.model_type == "gemma3_text";
  const bool gated = act == "silu" || act == "swiglu" || act == "swish" || act == "gelu_pytorch_tanh" ||
                     out.model_type == "llama" || out.model_type == "mistral" || out.model_type == "qwen2" ||
                     out.model_type == "qwen3" || gemma;
  const bool gpt_style = out.model_type == "gpt2" || out.model_type == "gpt_neox" || out.model_type == "opt" ||
                         out.model_type == "gptj" || out.model_type == "gpt_bigcode" || out.model_type == "bloom";
  // Learned absolute position embeddings (GPT-2 wpe, OPT embed_positions) are not counted.
  const bool learned_positions = out.model_type == "gpt2" || out.model_type == "opt" || out.model_type == "gpt_bigcode";
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
  // Per-head q/k RMSNorms: transformers' Qwen3Attention (q_norm, k_norm), Olmo2Attention, Gemma3Attention.
  m.qk_norm = out.model_type == "qwen3" || out.model_type == "olmo2" || out.model_type == "gemma3" || out.model_type == "gemma3_text";
  m.linear_bias = gpt_style || bool_or(c, "attention_bias", false) || bool_or(c, "mlp_bias", false);
  // transformers' defaults: GPTNeoXConfig ties nothing; GPT-2, OPT and BLOOM tie the LM head, and so
  // do GemmaConfig, Gemma2Config and Gemma3TextConfig (tie_word_embeddings=True; their config.json
  // files omit the key: an as-a-user review saw Gemma-3-4B imported untied, 4.55 B instead of 3.88 B).
  m.tied_embeddings = bool_or(c, "tie_word_embeddings", (gpt_style && out.model_type != "gpt_neox") || gemma);
  // Dropout layers (1-byte masks saved in training mode): any of transformers' dropout probabilities
  // above 0; absent, the config class's defaults (GPT2Config resid/attn/embd_pdrop 0.1, OPTConfig
  // dropout 0.1; Llama, Qwen, Mistral, GPT-NeoX and BLOOM 0.0).
  constexpr const char* kDropoutKeys[] = {"attention_dropout", "hidden_dropout", "attn_pdrop", "resid_pdrop", "embd_pdrop", "dropout"};
  bool dropout_given = false;
  m.dropout = false;
  for (const char* dropout_key : kDropoutKeys) {
    const bool number = c.contains(dropout_key) && c[dropout_key].is_number();
    dropout_given |= number;
    m.dropout |= number && c[dropout_key].get<double>() > 0;
  }
  if (!dropout_given) m.dropout = out.model_type == "gpt2" || out.model_type == "opt";
  if (learned_positions)
    out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, "max_position_embeddings",
                          out.model_type + " learns absolute position embeddings (positions x hidden parameters); "
                          "meshfit does not count them."});
  if (act == "relu")
    out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, "activation_function",
                          "ReLU is counted as the 2-matrix GeLU MLP (same parameters, GeLU's activation memory)."});
  if (c.contains("word_embed_proj_dim") && c["word_embed_proj_dim"].is_number_integer() &&
      c["word_embed_proj_dim"].get<int64_t>() != hidden)
    out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, "word_embed_proj_dim",
                          "word_embed_proj_dim differs from hidden_size: OPT's project_in/out matrices are not counted."});

  // head_dim (Qwen3, Gemma, Mistral-Nemo: transformers' LlamaConfig.head_dim, default hidden_size //
  // num_attention_heads). Kept only when it differs from hidden / heads, so that configs whose
  // head_dim is the default import exactly as before. Checked: heads * head_dim may overflow.
  if (c.contains("head_dim") && !c["head_dim"].is_null()) {
    const json& given = c["head_dim"];
    // Unsigned first: a value beyond int64 is too large, not negative.
    const bool whole = given.is_number_unsigned() ? given.get<uint64_t>() > 0
                                                  : given.is_number_integer() && given.get<int64_t>() > 0;
    const bool too_large = whole && given.get<uint64_t>() > uint64_t(kMaxHeadDim);
    const std::optional<int64_t> width =
        whole && !too_large ? checked_mul(given.get<int64_t>(), heads) : std::nullopt;
    if (!whole)
      unsupported("head_dim", "head_dim=" + describe(given) + " is not a positive integer.");
    else if (too_large || !width || *width > kMaxAttentionWidth)
      out.issues.push_back({IssueCode::kOutOfRange, Severity::kError, "head_dim",
                            "head_dim=" + describe(given) + " exceeds the supported maximum of " +
                                std::to_string(kMaxHeadDim) + " (or heads x head_dim exceeds " +
                                std::to_string(kMaxAttentionWidth) + ")."});
    else if (*width != hidden)
      m.head_dim = given.get<int64_t>();
  }
  if (out.model_type == "qwen2")
    out.issues.push_back({IssueCode::kUnknownValue, Severity::kWarning, "model_type",
                          "qwen2 has biases on Q, K and V only; they are left out (under 0.01% of parameters)."});
  return out;
}

json hf_import_to_json(const HfImport& import) { return model_to_json(import.model); }

}  // namespace meshfit
