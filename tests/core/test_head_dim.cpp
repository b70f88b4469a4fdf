// test_head_dim.cpp — models whose attention head dimension is not hidden / heads (Hugging Face
// config.json head_dim, Megatron --kv-channels: Qwen3, Gemma 2, Mistral-Nemo): parameter counts
// against the published sizes, the attention widths in activations and FLOPs, validation, import and
// export, and head_dim == hidden / heads changing no figure at all.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "api.h"
#include "csv.h"
#include "fixtures.h"
#include "io/import_export.h"
#include "io/launch_config.h"
#include "io/serialize.h"
#include "io/url_state.h"
#include "memory/activation_memory.h"
#include "memory/parameter_count.h"
#include "perf/perf_model.h"
#include "spec/model_spec.h"
#include "spec/validate.h"

using namespace meshfit;
using nlohmann::json;

namespace {

std::string read_launch_data(const std::string& name) {
  std::ifstream file(meshfit_test::data_path("launch/" + name), std::ios::binary);
  REQUIRE_MESSAGE(file.good(), "missing test data launch/" << name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

double embedding_and_head(const ModelSpec& m) {
  return double(m.vocab) * double(m.hidden) * (m.tied_embeddings ? 1.0 : 2.0);
}

// The estimate as the CLI prints it, less the echo of the input (config, state).
json figures(const json& input) {
  json out = run_estimate(input);
  out.erase("config");
  out.erase("state");
  return out;
}

bool has_issue(const std::vector<Issue>& issues, IssueCode code, const std::string& field) {
  for (const Issue& issue : issues)
    if (issue.code == code && issue.field == field) return true;
  return false;
}

std::vector<Issue> issues_for(const json& object) {
  ParsedConfig parsed = parse_config(object);
  std::vector<Issue> issues = parsed.issues;
  if (has_errors(issues)) return issues;
  const std::vector<Issue> structural = validate(parsed.config);
  issues.insert(issues.end(), structural.begin(), structural.end());
  return issues;
}

std::string messages(const std::vector<Issue>& issues) {
  std::string text;
  for (const Issue& issue : issues) text += std::string(to_string(issue.code)) + " " + issue.field + ": " + issue.message + "\n";
  return text;
}

}  // namespace

// [SECTION] Parameter counts against the published sizes

TEST_CASE("Qwen3 presets match the model cards' total and non-embedding parameter counts") {
  // HF Qwen/Qwen3-*/README.md "Number of Parameters" and "Number of Paramaters (Non-Embedding)", in
  // billions as printed: the count must round to the printed figure (half its last digit).
  struct Card {
    const char* id;
    double total, total_half_digit, non_embedding, non_embedding_half_digit;
  };
  const Card cards[] = {{"qwen3-0.6b", 0.6, 0.05, 0.44, 0.005}, {"qwen3-1.7b", 1.7, 0.05, 1.4, 0.05},
                        {"qwen3-4b", 4.0, 0.05, 3.6, 0.05},     {"qwen3-8b", 8.2, 0.05, 6.95, 0.005},
                        {"qwen3-14b", 14.8, 0.05, 13.2, 0.05},  {"qwen3-32b", 32.8, 0.05, 31.2, 0.05}};
  for (const Card& card : cards) {
    const ModelSpec model = *find_model_preset(card.id);
    const double total = total_parameters(model) / 1e9;
    const double non_embedding = (total_parameters(model) - embedding_and_head(model)) / 1e9;
    CAPTURE(card.id);
    CAPTURE(total);
    CAPTURE(non_embedding);
    CHECK(model.head_dim == 128);
    CHECK(std::fabs(total - card.total) <= card.total_half_digit);
    CHECK(std::fabs(non_embedding - card.non_embedding) <= card.non_embedding_half_digit);
  }
  // The old assumption (head dimension = hidden / heads = 5120 / 64 = 80) misses Qwen3-32B's card by
  // over 2 B: the case the field exists for.
  ModelSpec assumed = *find_model_preset("qwen3-32b");
  assumed.head_dim = 0;
  const double assumed_non_embedding = (total_parameters(assumed) - embedding_and_head(assumed)) / 1e9;
  CAPTURE(assumed_non_embedding);
  CHECK(std::fabs(assumed_non_embedding - 31.2) > 2.0);
}

TEST_CASE("Gemma 2 presets match the Gemma 2 report's non-embedding parameter counts") {
  // Gemma Team 2024, "Gemma 2: Improving Open Language Models at a Practical Size", Table 2,
  // non-embedding parameters. Gemma 2 has four RMSNorms a block (pre and post attention and MLP);
  // meshfit counts two, so the report's figure is meshfit's plus 2*h per layer, to the parameter.
  const std::pair<const char*, double> published[] = {
      {"gemma2-2b", 2024517888.0}, {"gemma2-9b", 8324201984.0}, {"gemma2-27b", 26047480320.0}};
  for (const auto& entry : published) {
    const char* id = entry.first;  // (not a structured binding: CAPTURE captures it in a lambda)
    const ModelSpec model = *find_model_preset(id);
    const double non_embedding = total_parameters(model) - embedding_and_head(model);
    const double uncounted_post_norms = 2.0 * double(model.hidden) * double(model.layers);
    CAPTURE(id);
    CAPTURE(non_embedding);
    CHECK(model.head_dim * model.heads != model.hidden);
    CHECK(non_embedding + uncounted_post_norms == entry.second);
  }
}

TEST_CASE("Gemma 7B's config.json imports with head_dim 256 and the Gemma report's non-embedding parameter count") {
  // HF google/gemma-7b config.json (architecture keys): hidden 3072, 16 heads of 256 (not 3072 / 16 =
  // 192), MHA, GeGLU MLP 24576, tied embeddings by GemmaConfig's default. Gemma Team 2024, "Gemma: Open
  // Models Based on Gemini Research and Technology", Table 2: 7,751,248,896 non-embedding parameters.
  const HfImport gemma = import_hf_config(R"({"architectures": ["GemmaForCausalLM"], "model_type": "gemma",
    "hidden_act": "gelu", "hidden_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
    "num_key_value_heads": 16, "head_dim": 256, "intermediate_size": 24576, "vocab_size": 256000})");
  INFO(messages(gemma.issues));
  REQUIRE(gemma.ok());
  CHECK(gemma.model.head_dim == 256);
  CHECK(gemma.model.mlp == MlpKind::kSwiGlu);  // gated: three matrices
  CHECK(gemma.model.tied_embeddings);
  CHECK(total_parameters(gemma.model) - embedding_and_head(gemma.model) == 7751248896.0);
}

TEST_CASE("Mistral-Nemo 12B (head_dim 128, not 5120 / 32 = 160) counts its published 12 B") {
  // Mistral AI, "Mistral NeMo" announcement (2024-07-18): 12B parameters.
  const double billions = total_parameters(*find_model_preset("mistral-nemo-12b")) / 1e9;
  CAPTURE(billions);
  CHECK(std::fabs(billions - 12.0) < 0.5);
}

// [SECTION] The attention widths

// Qwen3's q_norm / k_norm (HF Qwen3Attention; Megatron-LM --qk-layernorm): each saves its input, the
// projection's output, a*d and k*d wide at 2 B; nothing else of the layer changes.
TEST_CASE("QK-norm saves the query and key projections' outputs: 2(a*d + k*d) bytes per token per layer") {
  const ModelSpec qwen3 = *find_model_preset("qwen3-8b");
  REQUIRE(qwen3.qk_norm);
  ModelSpec plain = qwen3;
  plain.qk_norm = false;
  ActivationSettings settings;
  settings.seq = 4096;
  settings.micro_batch = 1;
  settings.flash = true;
  const LayerActivations with = layer_activations(qwen3, settings), without = layer_activations(plain, settings);
  CHECK(with.sequence_terms == without.sequence_terms);
  CHECK(with.tp_split_terms - without.tp_split_terms == doctest::Approx(2.0 * 4096.0 * (32.0 * 128 + 8.0 * 128)));
  settings.tp = 4;  // Q and K are split by heads
  CHECK(layer_activations(qwen3, settings).tp_split_terms - layer_activations(plain, settings).tp_split_terms ==
        doctest::Approx(2.0 * 4096.0 * (32.0 * 128 + 8.0 * 128) / 4));
}

TEST_CASE("a wider head dimension widens Q, K, V, the attention output and the attention FLOPs, not the hidden-wide tensors") {
  // Qwen3-0.6B: hidden 1024, 16 heads, 8 KV heads, head_dim 128 against the hidden / heads = 64 default.
  // (Its per-head q/k RMSNorms apart: the next test.)
  ModelSpec wide = *find_model_preset("qwen3-0.6b");
  wide.qk_norm = false;
  ModelSpec narrow = wide;
  narrow.head_dim = 0;
  const double h = double(wide.hidden), a = double(wide.heads), k = double(wide.kv_heads);
  const double delta_d = 128.0 - h / a;
  REQUIRE(delta_d == 64.0);

  // Wq (h x a*d), Wk and Wv (h x k*d), Wo (a*d x h).
  const LayerParameters wide_layer = layer_parameters(wide), narrow_layer = layer_parameters(narrow);
  CHECK(wide_layer.attention - narrow_layer.attention == 2.0 * h * (a + k) * delta_d);
  CHECK(wide_layer.mlp == narrow_layer.mlp);
  CHECK(wide_layer.norms == narrow_layer.norms);

  // Activations (2-byte elements): Q and the attention output a*d wide, K and V k*d wide; the norm,
  // block and MLP inputs stay h wide and the flash log-sum-exp stays one per head and row.
  ActivationSettings settings;
  settings.seq = 4096;
  settings.micro_batch = 2;
  settings.flash = true;
  settings.recompute = Recompute::kNone;
  const double sb = 4096.0 * 2.0;
  const LayerActivations wide_act = layer_activations(wide, settings), narrow_act = layer_activations(narrow, settings);
  CHECK(wide_act.sequence_terms == narrow_act.sequence_terms);
  CHECK(wide_act.attention_scores == narrow_act.attention_scores);
  CHECK(wide_act.tp_split_terms - narrow_act.tp_split_terms == doctest::Approx(2.0 * sb * (2.0 * a + 2.0 * k) * delta_d));

  // FLOPs per token: 6 x the matmul parameters plus the attention core, 12 * L * s * a*d.
  const double seq = 4096.0, layers = double(wide.layers);
  CHECK(model_flops_per_token(wide, 4096) - model_flops_per_token(narrow, 4096) ==
        doctest::Approx(6.0 * layers * 2.0 * h * (a + k) * delta_d + 12.0 * layers * seq * a * delta_d));

  // The whole estimate: more memory and a longer step with the wider heads.
  const json base = {{"gpus", 8}, {"seq", 4096}, {"global_batch", 64}, {"micro_batch", 2}};
  json wide_input = base, narrow_input = base;
  wide_input["model"] = narrow_input["model"] = "qwen3-0.6b";
  narrow_input["head_dim"] = 64;
  const json wide_out = run_estimate(wide_input), narrow_out = run_estimate(narrow_input);
  REQUIRE(wide_out["ok"].get<bool>());
  REQUIRE(narrow_out["ok"].get<bool>());
  CHECK(wide_out["step_time_s"].get<double>() > narrow_out["step_time_s"].get<double>());
  CHECK(wide_out["model_flops_per_token"].get<double>() > narrow_out["model_flops_per_token"].get<double>());
}

TEST_CASE("head_dim equal to hidden / heads changes no figure: memory, step time and FLOPs to the bit") {
  // Configs over the mechanisms that read the attention widths: GQA with k/a = 1/3 (not a binary
  // fraction), TP + SP, CP ring buffers, eager attention, FP8, selective recompute of both kinds,
  // ZeRO-3 gather units, LoRA and QLoRA projections, a spatial-temporal square.
  const json cases[] = {
      {{"model", "llama3.2-3b"}, {"gpus", 8}, {"seq", 4096}, {"global_batch", 64}},
      {{"model", "llama3.1-8b"}, {"gpus", 16}, {"tp", 2}, {"cp", 2}, {"seq", 8192}, {"global_batch", 64}, {"framework", "fsdp"}},
      {{"model", "qwen2.5-7b"}, {"gpus", 8}, {"tp", 4}, {"flash", false}, {"seq", 2048}, {"global_batch", 32}},
      {{"model", "llama3.1-70b"}, {"gpus", 64}, {"tp", 8}, {"pp", 4}, {"precision", "fp8"}, {"recompute", "selective"}, {"seq", 4096}, {"global_batch", 256}},
      {{"model", "llama3.1-8b"}, {"gpus", 8}, {"framework", "fsdp"}, {"recompute", "selective"}, {"seq", 4096}, {"global_batch", 32}},
      {{"model", "llama2-13b"}, {"gpus", 8}, {"framework", "deepspeed"}, {"zero", 3}, {"seq", 4096}, {"global_batch", 32}},
      {{"model", "llama3.1-8b"}, {"gpus", 1}, {"finetune", "lora"}, {"seq", 2048}, {"global_batch", 8}},
      {{"model", "llama3.2-3b"}, {"gpus", 1}, {"finetune", "qlora"}, {"seq", 1024}, {"global_batch", 4}},
      {{"model", "llama3.1-70b"}, {"gpus", 64}, {"tp", 4}, {"spatial_temporal_q", 2}, {"seq", 4096}, {"global_batch", 64}},
      {{"model", "gpt3-175b"}, {"gpus", 128}, {"tp", 8}, {"pp", 16}, {"seq", 2048}, {"global_batch", 1536}},
  };
  for (const json& input : cases) {
    const ModelSpec preset = *find_model_preset(input["model"].get<std::string>());
    json explicit_input = input;
    explicit_input["head_dim"] = preset.hidden / preset.heads;
    const std::string dump = input.dump();
    CAPTURE(dump);
    const json without = figures(input), with = figures(explicit_input);
    REQUIRE(without["ok"].get<bool>());
    CHECK(without.dump() == with.dump());
  }
}

// [SECTION] Validation

TEST_CASE("head_dim is 0 (hidden / heads) or a bounded positive integer, and frees hidden from heads") {
  const json base = {{"model", "llama3-8b"}, {"gpus", 8}, {"seq", 4096}, {"global_batch", 64}};
  json negative = base;
  negative["head_dim"] = -1;
  CHECK(has_issue(issues_for(negative), IssueCode::kNotPositive, "head_dim"));
  json huge = base;
  huge["head_dim"] = kMaxHeadDim + 1;
  CHECK(has_issue(issues_for(huge), IssueCode::kOutOfRange, "head_dim"));
  json wide = base;  // 32 heads x 16384 = 2^19 is fine; 4096 heads x 2048 = 2^23 is not
  wide["heads"] = 4096;
  wide["kv_heads"] = 8;
  wide["head_dim"] = 2048;
  const std::vector<Issue> wide_issues = issues_for(wide);
  CHECK(has_issue(wide_issues, IssueCode::kOutOfRange, "head_dim"));
  CHECK(messages(wide_issues).find("heads x head_dim = 4096 x 2048") != std::string::npos);

  // 40 heads do not divide 4096: refused without head_dim (the message names head_dim), fine with it.
  json uneven = base;
  uneven["heads"] = 40;
  const std::vector<Issue> without = issues_for(uneven);
  REQUIRE(has_issue(without, IssueCode::kHeadsNotDivideHidden, "heads"));
  CHECK(messages(without).find("head_dim") != std::string::npos);
  uneven["head_dim"] = 128;
  const std::vector<Issue> with = issues_for(uneven);
  INFO(messages(with));
  CHECK_FALSE(has_errors(with));
}

TEST_CASE("tp must still divide the heads and KV heads with a head_dim set apart") {
  const json qwen3 = {{"model", "qwen3-0.6b"}, {"gpus", 16}, {"tp", 16}, {"seq", 4096}, {"global_batch", 16}};
  CHECK(has_issue(issues_for(qwen3), IssueCode::kTpNotDivideKvHeads, "tp"));  // 8 KV heads
  json eight = qwen3;
  eight["gpus"] = 8;
  eight["tp"] = 8;
  CHECK_FALSE(has_errors(issues_for(eight)));
}

// [SECTION] Import, export, state

TEST_CASE("config.json head_dim: Qwen3 and Gemma-2-9B import to their presets, and a default head_dim imports as 0") {
  // Qwen3-0.6B's config.json (HF Qwen/Qwen3-0.6B), trimmed to the architecture keys: head_dim 128, not 1024 / 16.
  const HfImport small = import_hf_config(R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
    "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 3072, "num_attention_heads": 16,
    "num_hidden_layers": 28, "num_key_value_heads": 8, "head_dim": 128, "tie_word_embeddings": true,
    "vocab_size": 151936})");
  INFO(messages(small.issues));
  REQUIRE(small.ok());
  CHECK(small.model.head_dim == 128);
  CHECK(model_to_json(small.model) == model_to_json(*find_model_preset("qwen3-0.6b")));

  // Qwen3-8B writes head_dim 128 = 4096 / 32: the same model as its preset, head_dim implied.
  const LaunchImport qwen3 = import_hf_launch(read_launch_data("qwen3-8b.config.json"));
  INFO(messages(qwen3.issues));
  REQUIRE(qwen3.ok());
  CHECK_FALSE(has_issue(qwen3.issues, IssueCode::kUnknownField, "head_dim"));
  const HfImport qwen3_model = import_hf_config(read_launch_data("qwen3-8b.config.json"));
  ModelSpec qwen3_preset = *find_model_preset("qwen3-8b");
  CHECK(attention_head_dim(qwen3_model.model) == 128.0);
  CHECK(total_parameters(qwen3_model.model) == total_parameters(qwen3_preset));
  qwen3_preset.head_dim = 0;
  CHECK(model_to_json(qwen3_model.model) == model_to_json(qwen3_preset));

  const HfImport gemma = import_hf_config(read_launch_data("gemma-2-9b.config.json"));
  INFO(messages(gemma.issues));
  REQUIRE(gemma.ok());
  CHECK(model_to_json(gemma.model) == model_to_json(*find_model_preset("gemma2-9b")));  // head_dim 256, tied, gated

  // Llama 3.2 1B writes head_dim 64 = 2048 / 32: imported as 0, so its links and results are unchanged.
  const HfImport llama = import_hf_config(read_launch_data("llama3.2-1b.config.json"));
  REQUIRE(llama.ok());
  CHECK(llama.model.head_dim == 0);

  const HfImport fraction = import_hf_config(R"({"model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 28,
    "num_attention_heads": 16, "vocab_size": 151936, "intermediate_size": 3072, "head_dim": 127.5})");
  CHECK_FALSE(fraction.ok());
  CHECK(has_issue(fraction.issues, IssueCode::kUnknownValue, "head_dim"));
  const HfImport beyond_int64 = import_hf_config(R"({"model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 28,
    "num_attention_heads": 16, "vocab_size": 151936, "intermediate_size": 3072, "head_dim": 18446744073709551615})");
  CHECK_FALSE(beyond_int64.ok());
  CHECK(has_issue(beyond_int64.issues, IssueCode::kOutOfRange, "head_dim"));
  const HfImport null_head_dim = import_hf_config(R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008, "head_dim": null})");
  CHECK(null_head_dim.ok());
  CHECK(null_head_dim.model.head_dim == 0);
}

TEST_CASE("Megatron --kv-channels reads and writes head_dim, and the HF config.json export writes it") {
  const std::string qwen3_args =
      "--num-layers 28 --hidden-size 1024 --num-attention-heads 16 --group-query-attention --num-query-groups 8 "
      "--kv-channels 128 --ffn-hidden-size 3072 --swiglu --vocab-size 151936";
  const LaunchImport import = import_megatron_args(qwen3_args);
  INFO(messages(import.issues));
  REQUIRE(import.ok());
  CHECK(import.fields["head_dim"] == 128);
  // --kv-channels equal to hidden / heads (Llama 2 7B: 4096 / 32) sets nothing.
  const LaunchImport llama = import_megatron_args("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --kv-channels 128");
  CHECK_FALSE(llama.fields.contains("head_dim"));

  Config config = meshfit_test::preset_config("qwen3-32b", 8, 8);
  const LaunchExport megatron = export_launch_config(config, LaunchFormat::kMegatron);
  CHECK(megatron.text.find("--kv-channels 128") != std::string::npos);
  const LaunchImport back = import_megatron_args(megatron.text);
  REQUIRE(back.ok());
  CHECK(back.fields["head_dim"] == 128);

  const LaunchExport hf = export_launch_config(config, LaunchFormat::kHfConfig);
  const HfImport reread = import_hf_config(hf.text);
  REQUIRE(reread.ok());
  CHECK(reread.model.head_dim == 128);
  // A model without head_dim exports none (the file is unchanged from before the field).
  const LaunchExport llama_hf = export_launch_config(meshfit_test::preset_config("llama3.1-8b", 8), LaunchFormat::kHfConfig);
  CHECK(llama_hf.text.find("head_dim") == std::string::npos);
}

TEST_CASE("a link keeps head_dim: a preset's stays implied, a custom one is written and read back") {
  Config preset = meshfit_test::preset_config("qwen3-8b", 8);
  CHECK(encode_state(preset).find("head_dim") == std::string::npos);
  CHECK(decode_state(encode_state(preset)).config.model.head_dim == 128);
  Config custom = preset;
  custom.model.name = "custom";
  custom.model.head_dim = 96;
  const std::string state = encode_state(custom);
  CHECK(state.find("head_dim=96") != std::string::npos);
  CHECK(decode_state(state).config.model.head_dim == 96);
}
