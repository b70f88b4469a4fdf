// test_import_export.cpp — pasted Hugging Face config.json files (fields as published on the Hub
// for each model; trimmed to the keys that matter) map onto the presets' dimensions.
#include <doctest/doctest.h>

#include "fixtures.h"
#include "io/import_export.h"
#include "io/launch_config.h"
#include "spec/model_spec.h"

using namespace meshfit;

TEST_CASE("Llama 3.1 70B config.json imports to the preset's dimensions") {
  const HfImport import = import_hf_config(R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
    "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64, "num_hidden_layers": 80,
    "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": false, "rms_norm_eps": 1e-05})");
  REQUIRE(import.ok());
  const ModelSpec preset = *find_model_preset("llama3.1-70b");
  CHECK(import.model.hidden == preset.hidden);
  CHECK(import.model.layers == preset.layers);
  CHECK(import.model.heads == preset.heads);
  CHECK(import.model.kv_heads == preset.kv_heads);
  CHECK(import.model.ffn == preset.ffn);
  CHECK(import.model.vocab == preset.vocab);
  CHECK(import.model.mlp == MlpKind::kSwiGlu);
  CHECK(import.model.norm == NormKind::kRmsNorm);
}

TEST_CASE("GPT-2 config.json: LayerNorm, GeLU, tied, n_inner null means 4h") {
  const HfImport import = import_hf_config(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
    "n_inner": null, "vocab_size": 50257, "activation_function": "gelu_new"})");
  REQUIRE(import.ok());
  CHECK(import.model.ffn == 3072);
  CHECK(import.model.kv_heads == 12);
  CHECK(import.model.mlp == MlpKind::kGelu);
  CHECK(import.model.norm == NormKind::kLayerNorm);
  CHECK(import.model.tied_embeddings);
  CHECK(import.model.dropout);  // GPT2Config's pdrop defaults are 0.1: masks are saved in training
}

TEST_CASE("config.json dropout: any probability above 0 (or the class default) turns the masks on, and an export keeps it") {
  CHECK_FALSE(import_hf_config(R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
    "intermediate_size": 8192, "vocab_size": 128256, "attention_dropout": 0.0})").model.dropout);
  CHECK_FALSE(import_hf_config(R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
    "intermediate_size": 8192, "vocab_size": 128256})").model.dropout);
  CHECK(import_hf_config(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257,
    "resid_pdrop": 0.1, "attn_pdrop": 0.0, "embd_pdrop": 0.0})").model.dropout);
  CHECK_FALSE(import_hf_config(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257,
    "resid_pdrop": 0.0, "attn_pdrop": 0.0, "embd_pdrop": 0.0})").model.dropout);
  Config gpt = meshfit_test::preset_config("gpt3-175b", 1024, 8, 16);
  REQUIRE(gpt.model.dropout);
  const HfImport back = import_hf_config(export_launch_config(gpt, LaunchFormat::kHfConfig).text);
  REQUIRE(back.ok());
  CHECK(back.model.dropout);
}

// An as-a-user review: Gemma 3 (Gemma3TextConfig ties the LM head by default; its config.json omits
// the key) came in untied, and the vision tower beside text_config passed unsaid. A UTF-8 byte
// order mark hid the format from the detection.
TEST_CASE("Gemma 3 config.json: tied, gated, its vision tower said, a byte order mark read past") {
  const std::string gemma3 = R"({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 34,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 262208,
    "hidden_activation": "gelu_pytorch_tanh"}, "vision_config": {"hidden_size": 1152}})";
  const HfImport import = import_hf_config(gemma3);
  REQUIRE(import.ok());
  CHECK(import.model.tied_embeddings);
  CHECK(import.model.mlp == MlpKind::kSwiGlu);
  bool tower = false;
  for (const Issue& issue : import.issues) tower |= issue.field == "vision_config" && issue.severity == Severity::kWarning;
  CHECK(tower);
  CHECK(detect_launch_format("\xEF\xBB\xBF" + gemma3) == LaunchFormat::kHfConfig);
  CHECK(detect_launch_format("\xEF\xBB\xBF{\"zero_optimization\": {\"stage\": 2}}") == LaunchFormat::kDeepSpeed);
}

TEST_CASE("unsupported architectures and broken text come back as issues naming the key") {
  const HfImport moe = import_hf_config(R"({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
    "num_local_experts": 8})");
  REQUIRE_FALSE(moe.ok());
  CHECK(moe.issues.front().field == "num_local_experts");
  const HfImport mla = import_hf_config(R"({"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
    "num_attention_heads": 128, "vocab_size": 129280, "kv_lora_rank": 512})");
  CHECK_FALSE(mla.ok());
  const HfImport gemma = import_hf_config(R"({"model_type": "gemma", "hidden_size": 3072, "num_hidden_layers": 28,
    "num_attention_heads": 16, "head_dim": -256, "intermediate_size": 24576, "vocab_size": 256000})");
  REQUIRE_FALSE(gemma.ok());  // (Gemma's real head_dim 256 imports: test_head_dim.cpp)
  CHECK(gemma.issues.front().field == "head_dim");
  CHECK_FALSE(import_hf_config("not json").ok());
  CHECK_FALSE(import_hf_config("[1, 2]").ok());
  const HfImport missing = import_hf_config(R"({"model_type": "llama", "hidden_size": "big"})");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.issues.front().field == "hidden_size");
}
