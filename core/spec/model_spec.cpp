// model_spec.cpp — the model presets.
// Dimensions from each model's published config (HF config.json or paper table), cited per row.
#include "spec/model_spec.h"

#include "spec/preset_table.h"

namespace meshfit {

namespace {

ModelSpec llama(const char* id, int64_t h, int64_t layers, int64_t heads, int64_t kv, int64_t ffn,
                int64_t vocab, bool tied = false) {
  ModelSpec spec;
  spec.name = id;
  spec.hidden = h;
  spec.layers = layers;
  spec.heads = heads;
  spec.kv_heads = kv;
  spec.ffn = ffn;
  spec.vocab = vocab;
  spec.tied_embeddings = tied;
  return spec;
}

ModelSpec gpt3_175b() {
  ModelSpec spec = llama("gpt3-175b", 12288, 96, 96, 96, 49152, 50257, /*tied=*/true);
  spec.norm = NormKind::kLayerNorm;
  spec.mlp = MlpKind::kGelu;
  spec.linear_bias = true;
  spec.dropout = true;
  return spec;
}

std::vector<ModelPreset> make_presets() {
  const char* kLlama1 = "Touvron et al. 2023, LLaMA, Table 2; HF huggyllama/llama-* config.json";
  const char* kLlama2 = "Touvron et al. 2023, Llama 2; HF meta-llama/Llama-2-*-hf config.json";
  const char* kLlama3 = "Llama 3 herd paper (Dubey et al. 2024) Table 3; HF meta-llama/Meta-Llama-3*/config.json";
  const char* kLlama32 = "HF meta-llama/Llama-3.2-1B and -3B config.json (tied embeddings)";
  return {
      {"llama1-7b", kLlama1, llama("llama1-7b", 4096, 32, 32, 32, 11008, 32000)},
      {"llama1-13b", kLlama1, llama("llama1-13b", 5120, 40, 40, 40, 13824, 32000)},
      {"llama1-30b", kLlama1, llama("llama1-30b", 6656, 60, 52, 52, 17920, 32000)},
      {"llama1-65b", kLlama1, llama("llama1-65b", 8192, 80, 64, 64, 22016, 32000)},
      {"llama2-7b", kLlama2, llama("llama2-7b", 4096, 32, 32, 32, 11008, 32000)},
      {"llama2-13b", kLlama2, llama("llama2-13b", 5120, 40, 40, 40, 13824, 32000)},
      {"llama2-70b", kLlama2, llama("llama2-70b", 8192, 80, 64, 8, 28672, 32000)},
      {"llama3-8b", kLlama3, llama("llama3-8b", 4096, 32, 32, 8, 14336, 128256)},
      {"llama3-70b", kLlama3, llama("llama3-70b", 8192, 80, 64, 8, 28672, 128256)},
      {"llama3.1-8b", kLlama3, llama("llama3.1-8b", 4096, 32, 32, 8, 14336, 128256)},
      {"llama3.1-70b", kLlama3, llama("llama3.1-70b", 8192, 80, 64, 8, 28672, 128256)},
      {"llama3.1-405b", kLlama3, llama("llama3.1-405b", 16384, 126, 128, 8, 53248, 128256)},
      {"llama3.2-1b", kLlama32, llama("llama3.2-1b", 2048, 16, 32, 8, 8192, 128256, true)},
      {"llama3.2-3b", kLlama32, llama("llama3.2-3b", 3072, 28, 24, 8, 8192, 128256, true)},
      {"mistral-7b", "HF mistralai/Mistral-7B-v0.1 config.json",
       llama("mistral-7b", 4096, 32, 32, 8, 14336, 32000)},
      {"gpt3-175b", "Brown et al. 2020, GPT-3, Table 2.1 (d_ff = 4 d_model, GPT-2 BPE vocab)",
       gpt3_175b()},
  };
}

}  // namespace

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = make_presets();
  return presets;
}

std::optional<ModelSpec> find_model_preset(const std::string& id) { return find_preset(model_presets(), id); }

}  // namespace meshfit
