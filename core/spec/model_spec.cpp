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

// A Llama-style block whose attention head dimension is set apart from hidden / heads.
ModelSpec with_head_dim(ModelSpec spec, int64_t head_dim) {
  spec.head_dim = head_dim;
  return spec;
}

// Qwen3's q_norm / k_norm (HF Qwen3Attention): RMSNorm over each head's d before RoPE.
ModelSpec with_qk_norm(ModelSpec spec) {
  spec.qk_norm = true;
  return spec;
}

// GPT/OPT/BLOOM-style block: LayerNorm, two-matrix MLP (GeLU; OPT's ReLU has the same shapes),
// biases on every projection.
ModelSpec gpt_style(const char* id, int64_t h, int64_t layers, int64_t heads, int64_t ffn, int64_t vocab, bool tied) {
  ModelSpec spec = llama(id, h, layers, heads, heads, ffn, vocab, tied);
  spec.norm = NormKind::kLayerNorm;
  spec.mlp = MlpKind::kGelu;
  spec.linear_bias = true;
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
  const char* kQwen25 = "HF Qwen/Qwen2.5-{0.5B,1.5B,3B,7B,14B,32B,72B} config.json";
  const char* kLlama32 = "HF meta-llama/Llama-3.2-1B and -3B config.json (tied embeddings)";
  const char* kQwen3 = "HF Qwen/Qwen3-{0.6B,1.7B,4B,8B,14B,32B} config.json (head_dim 128)";
  const char* kGpt3Small = "Brown et al. 2020, GPT-3, Table 2.1 (d_ff = 4 d_model, tied GPT-2 BPE vocab 50257)";
  const char* kGemma2 = "HF google/gemma-2-{2b,9b,27b} config.json; Gemma Team 2024, Gemma 2, Table 2 (parameter counts)";
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
      {"llama3.3-70b", "HF meta-llama/Llama-3.3-70B-Instruct config.json",
       llama("llama3.3-70b", 8192, 80, 64, 8, 28672, 128256)},
      // Qwen2.5 (HF Qwen/Qwen2.5-*/config.json): q/k/v carry biases (0.01% of the parameters,
      // not counted: linear_bias would add them to every projection); 0.5B-3B tie the embeddings.
      {"qwen2.5-0.5b", kQwen25, llama("qwen2.5-0.5b", 896, 24, 14, 2, 4864, 151936, true)},
      {"qwen2.5-1.5b", kQwen25, llama("qwen2.5-1.5b", 1536, 28, 12, 2, 8960, 151936, true)},
      {"qwen2.5-3b", kQwen25, llama("qwen2.5-3b", 2048, 36, 16, 2, 11008, 151936, true)},
      {"qwen2.5-7b", kQwen25, llama("qwen2.5-7b", 3584, 28, 28, 4, 18944, 152064)},
      {"qwen2.5-14b", kQwen25, llama("qwen2.5-14b", 5120, 48, 40, 8, 13824, 152064)},
      {"qwen2.5-32b", kQwen25, llama("qwen2.5-32b", 5120, 64, 40, 8, 27648, 152064)},
      {"qwen2.5-72b", kQwen25, llama("qwen2.5-72b", 8192, 80, 64, 8, 29568, 152064)},
      // Qwen3 dense (HF Qwen/Qwen3-*/config.json): head_dim 128 whatever the width (0.6B: 1024 / 16
      // would be 64; 32B: 5120 / 64 would be 80); 0.6B-4B tie the embeddings. The per-head q/k
      // RMSNorms (qk_norm) save their inputs; their 2 x 128 weights a layer are not counted (under
  // 0.0001% of the parameters).
      {"qwen3-0.6b", kQwen3, with_qk_norm(with_head_dim(llama("qwen3-0.6b", 1024, 28, 16, 8, 3072, 151936, true), 128))},
      {"qwen3-1.7b", kQwen3, with_qk_norm(with_head_dim(llama("qwen3-1.7b", 2048, 28, 16, 8, 6144, 151936, true), 128))},
      {"qwen3-4b", kQwen3, with_qk_norm(with_head_dim(llama("qwen3-4b", 2560, 36, 32, 8, 9728, 151936, true), 128))},
      {"qwen3-8b", kQwen3, with_qk_norm(with_head_dim(llama("qwen3-8b", 4096, 36, 32, 8, 12288, 151936), 128))},
      {"qwen3-14b", kQwen3, with_qk_norm(with_head_dim(llama("qwen3-14b", 5120, 40, 40, 8, 17408, 151936), 128))},
      {"qwen3-32b", kQwen3, with_qk_norm(with_head_dim(llama("qwen3-32b", 5120, 64, 64, 8, 25600, 151936), 128))},
      // Gemma 2 (HF google/gemma-2-*/config.json): head_dim 256 / 256 / 128, not hidden / heads (2304 / 8,
      // 3584 / 16, 4608 / 32); GeGLU MLP (three matrices, SwiGLU's shapes); tied embeddings. Not
      // modelled: the post-attention and post-MLP RMSNorms (2h weights a layer, 0.004%), the sliding
      // window of every other layer (4096 tokens: attention FLOPs above seq 4096 are over-counted)
      // and the logit soft-capping.
      {"gemma2-2b", kGemma2, with_head_dim(llama("gemma2-2b", 2304, 26, 8, 4, 9216, 256000, true), 256)},
      {"gemma2-9b", kGemma2, with_head_dim(llama("gemma2-9b", 3584, 42, 16, 8, 14336, 256000, true), 256)},
      {"gemma2-27b", kGemma2, with_head_dim(llama("gemma2-27b", 4608, 46, 32, 16, 36864, 256000, true), 128)},
      {"mistral-nemo-12b", "HF mistralai/Mistral-Nemo-Base-2407 config.json (head_dim 128, not 5120 / 32 = 160)",
       with_head_dim(llama("mistral-nemo-12b", 5120, 40, 32, 8, 14336, 131072), 128)},
      // LLMem's models (Kim et al. 2024).
      {"opt-1.3b", "HF facebook/opt-1.3b config.json (ReLU MLP; learned positions not counted)",
       gpt_style("opt-1.3b", 2048, 24, 32, 8192, 50272, true)},
      {"bloom-1b1", "HF bigscience/bloom-1b1 config.json (ALiBi, no position embeddings)",
       gpt_style("bloom-1b1", 1536, 24, 16, 6144, 250880, true)},
      {"codegen-350m", "HF Salesforce/codegen-350M-mono config.json (n_embd 1024, n_layer 20, n_head 16, untied head)",
       gpt_style("codegen-350m", 1024, 20, 16, 4096, 51200, false)},
      {"mistral-7b", "HF mistralai/Mistral-7B-v0.1 config.json",
       llama("mistral-7b", 4096, 32, 32, 8, 14336, 32000)},
      {"gpt3-175b", "Brown et al. 2020, GPT-3, Table 2.1 (d_ff = 4 d_model, GPT-2 BPE vocab)",
       gpt3_175b()},
      // The smaller GPT-3 shapes that Megatron-LM/Megatron-DeepSpeed examples train (Brown et al.
      // 2020, Table 2.1: d_ff = 4 d_model, tied GPT-2 BPE vocab 50257; learned positions not
      // counted, seq x h). The table's 1.3B row says 24 heads of 128 over d_model 2048, which does
      // not multiply out; Megatron-DeepSpeed's examples (examples_deepspeed/*gpt*1.3B*) use 16.
      {"gpt3-125m", kGpt3Small, gpt_style("gpt3-125m", 768, 12, 12, 3072, 50257, true)},
      {"gpt3-350m", kGpt3Small, gpt_style("gpt3-350m", 1024, 24, 16, 4096, 50257, true)},
      {"gpt3-760m", kGpt3Small, gpt_style("gpt3-760m", 1536, 24, 16, 6144, 50257, true)},
      {"gpt3-1.3b", kGpt3Small, gpt_style("gpt3-1.3b", 2048, 24, 16, 8192, 50257, true)},
      {"gpt3-2.7b", kGpt3Small, gpt_style("gpt3-2.7b", 2560, 32, 32, 10240, 50257, true)},
      {"gpt3-6.7b", kGpt3Small, gpt_style("gpt3-6.7b", 4096, 32, 32, 16384, 50257, true)},
  };
}

}  // namespace

double attention_head_dim(const ModelSpec& model) {
  return model.head_dim > 0 ? double(model.head_dim) : double(model.hidden) / double(model.heads);
}
double query_width(const ModelSpec& model) { return double(model.heads) * attention_head_dim(model); }
double kv_width(const ModelSpec& model) { return double(model.kv_heads) * attention_head_dim(model); }

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = make_presets();
  return presets;
}

std::optional<ModelSpec> find_model_preset(const std::string& id) { return find_preset(model_presets(), id); }

}  // namespace meshfit
