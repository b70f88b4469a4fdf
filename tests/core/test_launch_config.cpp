// test_launch_config.cpp — import and export of real launch configs (core/io/): published config.json
// files, a Megatron-LM example command line, torchtitan's and Hugging Face's example configs map onto
// the right fields; exports are golden and round trips are stable; hostile text gives issues, never a
// crash. Data files and their sources: tests/data/launch/README.md.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "api.h"
#include "csv.h"
#include "fixtures.h"
#include "io/launch_config.h"
#include "io/serialize.h"
#include "memory/memory_model.h"
#include "io/text.h"
#include "spec/validate.h"

using namespace meshfit;
using nlohmann::json;

namespace {

std::string read_data(const std::string& name) {
  std::ifstream file(meshfit_test::data_path("launch/" + name), std::ios::binary);
  REQUIRE_MESSAGE(file.good(), "missing test data launch/" << name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool has_issue(const std::vector<Issue>& issues, IssueCode code, const std::string& field = "") {
  for (const Issue& issue : issues)
    if (issue.code == code && (field.empty() || issue.field == field)) return true;
  return false;
}

std::string issues_text(const std::vector<Issue>& issues) {
  std::string text;
  for (const Issue& issue : issues) text += std::string(to_string(issue.code)) + " " + issue.field + ": " + issue.message + "\n";
  return text;
}

// The import resolved over `overrides` and parsed, requiring a valid config.
Config imported_config(const LaunchImport& import, const json& overrides = json::object()) {
  std::vector<Issue> issues;
  const ParsedConfig parsed = parse_config(resolve_import(import, overrides, issues));
  INFO(issues_text(parsed.issues));
  REQUIRE_FALSE(has_errors(parsed.issues));
  const std::vector<Issue> structural = validate(parsed.config);
  INFO(issues_text(structural));
  REQUIRE_FALSE(has_errors(structural));
  return parsed.config;
}

// Compares a text with tests/data/launch/NAME, or rewrites the file when MESHFIT_UPDATE_GOLDEN is set.
void check_golden(const std::string& name, const std::string& text) {
  if (std::getenv("MESHFIT_UPDATE_GOLDEN")) {
    std::ofstream(meshfit_test::data_path("launch/" + name), std::ios::binary) << text;
    return;
  }
  CHECK(text == read_data(name));
}

bool same_model(const ModelSpec& a, const ModelSpec& b) {
  return a.hidden == b.hidden && a.layers == b.layers && a.heads == b.heads && a.kv_heads == b.kv_heads && a.ffn == b.ffn &&
         a.vocab == b.vocab && a.tied_embeddings == b.tied_embeddings && a.norm == b.norm && a.mlp == b.mlp &&
         a.linear_bias == b.linear_bias && a.dropout == b.dropout;
}

}  // namespace

// [SECTION] Hugging Face config.json files as published

TEST_CASE("published config.json files import with their published dimensions and no unknown keys") {
  struct Expected {
    const char* file;
    int64_t hidden, layers, heads, kv_heads, ffn, vocab;
    bool tied;
    NormKind norm;
    MlpKind mlp;
    bool bias;
    const char* preset;  // meshfit preset with the same dimensions, or nullptr
  };
  const Expected cases[] = {
      {"llama2-7b.config.json", 4096, 32, 32, 32, 11008, 32000, false, NormKind::kRmsNorm, MlpKind::kSwiGlu, false, "llama2-7b"},
      {"llama3.1-8b.config.json", 4096, 32, 32, 8, 14336, 128256, false, NormKind::kRmsNorm, MlpKind::kSwiGlu, false, "llama3.1-8b"},
      {"llama3.2-1b.config.json", 2048, 16, 32, 8, 8192, 128256, true, NormKind::kRmsNorm, MlpKind::kSwiGlu, false, "llama3.2-1b"},
      {"mistral-7b-v0.1.config.json", 4096, 32, 32, 8, 14336, 32000, false, NormKind::kRmsNorm, MlpKind::kSwiGlu, false, "mistral-7b"},
      {"qwen2.5-7b.config.json", 3584, 28, 28, 4, 18944, 152064, false, NormKind::kRmsNorm, MlpKind::kSwiGlu, false, nullptr},
      {"opt-1.3b.config.json", 2048, 24, 32, 32, 8192, 50272, true, NormKind::kLayerNorm, MlpKind::kGelu, true, nullptr},
      {"bloom-560m.config.json", 1024, 24, 16, 16, 4096, 250880, true, NormKind::kLayerNorm, MlpKind::kGelu, true, nullptr},
      {"bloom-176b.config.json", 14336, 70, 112, 112, 57344, 250880, true, NormKind::kLayerNorm, MlpKind::kGelu, true, nullptr},
      {"gpt-neox-20b.config.json", 6144, 44, 64, 64, 24576, 50432, false, NormKind::kLayerNorm, MlpKind::kGelu, true, nullptr},
  };
  for (const Expected& e : cases) {
    CAPTURE(e.file);
    const std::string text = read_data(e.file);
    CHECK(detect_launch_format(text) == LaunchFormat::kHfConfig);
    const LaunchImport import = import_hf_launch(text);
    INFO(issues_text(import.issues));
    REQUIRE(import.ok());
    CHECK_FALSE(has_issue(import.issues, IssueCode::kUnknownField));
    const Config c = imported_config(import, {{"gpus", 8}});
    CHECK(c.model.hidden == e.hidden);
    CHECK(c.model.layers == e.layers);
    CHECK(c.model.heads == e.heads);
    CHECK(c.model.kv_heads == e.kv_heads);
    CHECK(c.model.ffn == e.ffn);
    CHECK(c.model.vocab == e.vocab);
    CHECK(c.model.tied_embeddings == e.tied);
    CHECK(c.model.norm == e.norm);
    CHECK(c.model.mlp == e.mlp);
    CHECK(c.model.linear_bias == e.bias);
    if (e.preset) CHECK(same_model(c.model, *find_model_preset(e.preset)));
  }
}

TEST_CASE("OPT's ReLU and learned positions, and a key that disagrees with its alias, are reported") {
  const LaunchImport opt = import_hf_launch(read_data("opt-1.3b.config.json"));
  CHECK(has_issue(opt.issues, IssueCode::kUnsupportedSetting, "activation_function"));
  CHECK(has_issue(opt.issues, IssueCode::kUnsupportedSetting, "max_position_embeddings"));
  const LaunchImport both = import_hf_launch(R"({"model_type": "gpt2", "n_embd": 768, "hidden_size": 1024, "n_layer": 12,
    "n_head": 12, "vocab_size": 50257, "mystery_key": 1})");
  REQUIRE(both.ok());
  CHECK(both.fields["hidden"] == 1024);
  CHECK(has_issue(both.issues, IssueCode::kConflictingSettings, "n_embd"));
  CHECK(has_issue(both.issues, IssueCode::kUnknownField, "mystery_key"));
}

// [SECTION] Megatron-LM command lines

TEST_CASE("Megatron-LM's GPT-3 175B example imports as the gpt3-175b preset on 128 GPUs") {
  const std::string text = read_data("gpt3-175b.megatron.sh");
  CHECK(detect_launch_format(text) == LaunchFormat::kMegatron);
  const LaunchImport import = import_megatron_args(text);
  INFO(issues_text(import.issues));
  REQUIRE(import.ok());
  const Config c = imported_config(import);
  CHECK(same_model(c.model, *find_model_preset("gpt3-175b")));  // Megatron defaults: LayerNorm, GeLU 4h, tied, biases, dropout 0.1
  CHECK(c.cluster.gpus == 128);
  CHECK(c.cluster.gpus_per_node == 8);
  CHECK(c.layout.tp == 8);
  CHECK(c.layout.pp == 16);
  CHECK(effective_dp(c) == 1);
  CHECK(c.layout.zero == 0);           // no --use-distributed-optimizer
  CHECK_FALSE(c.training.sp);          // no --sequence-parallel
  CHECK(c.training.global_batch == 1536);
  CHECK(c.training.micro_batch == 1);
  CHECK(c.training.seq == 2048);
  CHECK(c.training.framework == Framework::kMegatron);
  CHECK(has_issue(import.issues, IssueCode::kUnsupportedSetting, "--fp16"));
  CHECK(has_issue(import.issues, IssueCode::kUnsupportedSetting, "--rampup-batch-size"));
  CHECK(has_issue(import.issues, IssueCode::kUnsupportedSetting, "--position-embedding-type"));
  CHECK_FALSE(has_issue(import.issues, IssueCode::kUnknownField));  // every flag of the example is known
}

TEST_CASE("a Megatron-LM command line without model flags leaves the preset whole: Megatron's defaults are not applied to it") {
  const LaunchImport snippet = import_megatron_args(
      "torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
      "--sequence-parallel --use-distributed-optimizer --seq-length 8192 --micro-batch-size 1 --global-batch-size 512 "
      "--recompute-granularity selective --bf16 --position-embedding-type rope");
  INFO(issues_text(snippet.issues));
  REQUIRE(snippet.ok());
  for (const char* key : {"mlp", "norm", "tied_embeddings", "linear_bias", "dropout", "ffn", "vocab"}) {
    CAPTURE(key);
    CHECK_FALSE(snippet.fields.contains(key));
  }
  CHECK(has_issue(snippet.issues, IssueCode::kMissingModel, "model"));
  const Config c = imported_config(snippet, {{"model", "llama3.1-70b"}});
  const Config preset = meshfit_test::preset_config("llama3.1-70b", 64, 8, 4);
  CHECK(same_model(c.model, preset.model));
  CHECK(c.model.name == "llama3.1-70b");
  // An architecture flag that is written still applies (and the model is then no longer the preset).
  const LaunchImport untied = import_megatron_args("--tensor-model-parallel-size 8 --untie-embeddings-and-output-weights --disable-bias-linear");
  CHECK(untied.fields["tied_embeddings"] == false);
  CHECK(untied.fields["linear_bias"] == false);
  CHECK_FALSE(untied.fields.contains("mlp"));
}

TEST_CASE("Megatron-LM: --transformer-impl local is the eager profile, torchrun --nproc_per_node=gpu asks for the count, a vpp without layers is said") {
  const std::string model = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 32000 --bf16 ";
  const LaunchImport local = import_megatron_args(model + "--transformer-impl local");
  INFO(issues_text(local.issues));
  REQUIRE(local.ok());
  CHECK(local.fields["kernels"] == "eager");
  CHECK_FALSE(import_megatron_args(model + "--transformer-impl transformer_engine").fields.contains("kernels"));
  CHECK_FALSE(import_megatron_args(model + "--transformer-impl tensorflow").ok());
  const LaunchImport device_count = import_megatron_args("torchrun --nproc_per_node=gpu pretrain_gpt.py " + model);
  CHECK(device_count.ok());  // valid torchrun: not an error
  CHECK(has_issue(device_count.issues, IssueCode::kMissingModel, "gpus"));
  const LaunchImport no_layers = import_megatron_args("--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4");
  CHECK(has_issue(no_layers.issues, IssueCode::kMissingModel, "vpp"));
}

TEST_CASE("a Megatron-DeepSpeed launch (deepspeed launcher, --deepspeed, --zero-stage) reads as DeepSpeed with Megatron's kernels") {
  const LaunchImport import = import_megatron_args(
      "deepspeed --num_gpus 8 --num_nodes 2 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
      "--seq-length 2048 --micro-batch-size 4 --global-batch-size 256 --bf16 --tokenizer-type GPT2BPETokenizer "
      "--deepspeed --deepspeed_config ds.json --zero-stage 2");
  INFO(issues_text(import.issues));
  REQUIRE(import.ok());
  CHECK(import.fields["framework"] == "deepspeed");
  CHECK(import.fields["zero"] == 2);
  CHECK(import.fields["kernels"] == "fused");
  CHECK(import.fields["gpus"] == 16);
  CHECK(has_issue(import.issues, IssueCode::kUnsupportedSetting, "--deepspeed_config"));
  CHECK_FALSE(has_issue(import.issues, IssueCode::kUnknownField));
  const LaunchImport plain = import_megatron_args("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --zero-stage 2");
  CHECK(plain.fields["framework"] == "megatron");
  CHECK(has_issue(plain.issues, IssueCode::kConflictingSettings, "--zero-stage"));
}

TEST_CASE("recompute block N is recompute_layers N both ways, and torchtitan's layer SAC every n is floor(layers / n) of them") {
  const std::string model = "--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 8 "
                            "--swiglu --normalization RMSNorm --vocab-size 128256 --bf16 --tensor-model-parallel-size 8 "
                            "--pipeline-model-parallel-size 4 --micro-batch-size 1 --global-batch-size 512 --seq-length 8192 ";
  const LaunchImport block = import_megatron_args(model + "--recompute-granularity full --recompute-method block --recompute-num-layers 5");
  INFO(issues_text(block.issues));
  REQUIRE(block.ok());
  CHECK(block.fields["recompute"] == "full");
  CHECK(block.fields["recompute_layers"] == 5);
  CHECK_FALSE(has_issue(block.issues, IssueCode::kUnsupportedSetting, "--recompute-method"));
  const Config c = imported_config(block, {{"gpus", 64}});
  const std::string flags = export_launch_config(c, LaunchFormat::kMegatron).text;
  CHECK(flags.find("--recompute-method block") != std::string::npos);
  CHECK(flags.find("--recompute-num-layers 5") != std::string::npos);
  // uniform groups stay every layer recomputed (and said when the groups are wider than one layer).
  const LaunchImport uniform = import_megatron_args(model + "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
  CHECK_FALSE(uniform.fields.contains("recompute_layers"));
  // torchtitan: every 2nd of the 8B's 32 blocks checkpointed (TT25 _apply_layer_sac) = 16 of them.
  const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 8\n"
                           "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"";
  const LaunchImport every2 = import_torchtitan_toml(toml + "2\"\n");
  INFO(issues_text(every2.issues));
  REQUIRE(every2.ok());
  CHECK(every2.fields["recompute"] == "full");
  CHECK(every2.fields["recompute_layers"] == 16);
  CHECK(export_launch_config(imported_config(every2, {}), LaunchFormat::kTorchtitan).text.find("selective_ac_option = '2'") !=
        std::string::npos);
  CHECK(import_torchtitan_toml(toml + "64\"\n").fields["recompute"] == "none");  // n beyond the blocks: none checkpointed
  CHECK(has_issue(import_torchtitan_toml(toml + "two\"\n").issues, IssueCode::kUnknownValue, "activation_checkpoint.selective_ac_option"));
}

TEST_CASE("Megatron-LM layers per virtual stage become vpp chunks, and SwiGLU's default ffn is 8h/3 in 64s") {
  const LaunchImport import = import_megatron_args(
      "--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 8 "
      "--swiglu --normalization RMSNorm --vocab-size 128256 --position-embedding-type rope --bf16 "
      "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 5 "
      "--micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --recompute-activations");
  INFO(issues_text(import.issues));
  REQUIRE(import.ok());
  const Config c = imported_config(import, {{"gpus", 64}});
  CHECK(c.layout.vpp == 4);                 // 80 / 4 / 5
  CHECK(c.model.ffn == 21824);              // int(4*8192*2/3 / 64) * 64 (arguments.py)
  CHECK(c.model.kv_heads == 8);
  CHECK(c.training.recompute == Recompute::kSelective);
  CHECK(has_issue(import.issues, IssueCode::kMissingModel, "gpus"));
}

TEST_CASE("Megatron-LM's embedding and loss in the pipeline split give 405B's 7 + 8 x 30 + 7 chunks") {
  const LaunchImport import = import_megatron_args(
      "--num-layers 126 --hidden-size 16384 --ffn-hidden-size 53248 --num-attention-heads 128 --group-query-attention "
      "--num-query-groups 8 --swiglu --normalization RMSNorm --untie-embeddings-and-output-weights --disable-bias-linear "
      "--vocab-size 128256 --position-embedding-type rope --bf16 --tensor-model-parallel-size 8 "
      "--pipeline-model-parallel-size 16 --num-layers-per-virtual-pipeline-stage 4 --account-for-embedding-in-pipeline-split "
      "--account-for-loss-in-pipeline-split --micro-batch-size 1 --global-batch-size 2048 --seq-length 8192 "
      "--use-distributed-optimizer --sequence-parallel --attention-dropout 0 --hidden-dropout 0");
  INFO(issues_text(import.issues));
  REQUIRE(import.ok());
  const Config c = imported_config(import, {{"gpus", 16384}});
  CHECK(same_model(c.model, *find_model_preset("llama3.1-405b")));
  CHECK(c.layout.vpp == 2);  // (126 + 2) / 16 / 4
  CHECK(c.layout.pp_first_stage_layers == 3);
  CHECK(c.layout.pp_last_stage_layers == 3);
  const LaunchExport flags = export_launch_config(c, LaunchFormat::kMegatron);
  const std::string text = flags.text;
  CHECK(text.find("--account-for-embedding-in-pipeline-split") != std::string::npos);
  CHECK(text.find("--num-layers-per-virtual-pipeline-stage 4") != std::string::npos);
}

// Megatron-LM's uneven first/last stage (transformer_block.py get_num_layers_to_build): at vpp 1 the
// counts are the first/last rank's layers, which meshfit's split expresses exactly; with vpp > 1
// Megatron divides each rank's count evenly over its vpp chunks, which meshfit's split (first and
// last chunk only) cannot express, so the import refuses with the flag named.
TEST_CASE("Megatron-LM --decoder-first/last-pipeline-num-layers: read at vpp 1, refused with interleaving") {
  const std::string model =
      "--num-layers 30 --hidden-size 4096 --num-attention-heads 32 --swiglu --normalization RMSNorm --vocab-size 32000 "
      "--position-embedding-type rope --bf16 --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 "
      "--micro-batch-size 1 --global-batch-size 64 --seq-length 4096 ";
  SUBCASE("vpp 1: first 6, last 6, middle (30 - 12) / 2 = 9") {
    const LaunchImport import =
        import_megatron_args(model + "--decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 6");
    INFO(issues_text(import.issues));
    REQUIRE(import.ok());
    const Config c = imported_config(import, {{"gpus", 4}});
    CHECK(c.layout.pp_first_stage_layers == 6);
    CHECK(c.layout.pp_last_stage_layers == 6);
    const LaunchExport back = export_launch_config(c, LaunchFormat::kMegatron);
    CHECK_FALSE(has_errors(back.issues));
    CHECK(back.text.find("--decoder-first-pipeline-num-layers 6") != std::string::npos);
  }
  SUBCASE("vpp 2 through --num-virtual-stages-per-pipeline-rank: refused, naming the flag and the reason") {
    for (const char* flag : {"--decoder-first-pipeline-num-layers 6", "--decoder-last-pipeline-num-layers 6"}) {
      const LaunchImport import = import_megatron_args(model + flag + " --num-virtual-stages-per-pipeline-rank 2");
      INFO(issues_text(import.issues));
      CHECK_FALSE(import.ok());
      const std::string name = std::string(flag).substr(0, std::string(flag).find(' '));
      REQUIRE(has_issue(import.issues, IssueCode::kUnsupportedSetting, name));
      for (const Issue& issue : import.issues)
        if (issue.field == name) CHECK(issue.message.find("get_num_layers_to_build") != std::string::npos);
      CHECK_FALSE(import.fields.contains("pp_first_stage_layers"));
      CHECK_FALSE(import.fields.contains("pp_last_stage_layers"));
    }
  }
  SUBCASE("with --num-layers-per-virtual-pipeline-stage, as arguments.py, a conflict") {
    const LaunchImport import =
        import_megatron_args(model + "--decoder-first-pipeline-num-layers 6 --num-layers-per-virtual-pipeline-stage 3");
    CHECK(has_issue(import.issues, IssueCode::kConflictingSettings, "--num-layers-per-virtual-pipeline-stage"));
  }
}

// [Page] Fetch from Hugging Face: the id is checked before a URL exists; every answer says why.
TEST_CASE("a Hugging Face model id is checked against the Hub's rule before a URL is built") {
  std::vector<Issue> issues;
  CHECK(hf_config_url("Qwen/Qwen2.5-7B", issues) == "https://huggingface.co/Qwen/Qwen2.5-7B/resolve/main/config.json");
  CHECK(hf_config_url("gpt2", issues) == "https://huggingface.co/gpt2/resolve/main/config.json");
  CHECK(hf_config_url("meta-llama/Llama-3.1-8B", issues).has_value());
  CHECK(hf_config_url("a/" + std::string(96, 'b'), issues).has_value());
  CHECK(issues.empty());
  struct Bad { std::string id; IssueCode code; const char* says; };
  const Bad bad[] = {
      {"", IssueCode::kInvalidText, "empty"},
      {"a/b/c", IssueCode::kInvalidText, "more than one"},
      {"../../api/whoami", IssueCode::kInvalidText, "more than one"},
      {"a/../b", IssueCode::kInvalidText, "more than one"},
      {"Qwen/Qwen 2", IssueCode::kInvalidText, "only A-Z"},
      {"Qwen/Qwen2?x=1", IssueCode::kInvalidText, "only A-Z"},
      {"Qwen/Qwen2#x", IssueCode::kInvalidText, "only A-Z"},
      {"evil.com\\x", IssueCode::kInvalidText, "only A-Z"},
      {"https://evil.example/x", IssueCode::kInvalidText, "more than one"},
      {"-a/b", IssueCode::kInvalidText, "start and end"},
      {"a/b.", IssueCode::kInvalidText, "start and end"},
      {"a/b--c", IssueCode::kInvalidText, "\"--\""},
      {"a/b..c", IssueCode::kInvalidText, "\"..\""},
      {"a/repo.git", IssueCode::kInvalidText, ".git"},
      {"/b", IssueCode::kInvalidText, "namespace is empty"},
      {"a/", IssueCode::kInvalidText, "name is empty"},
      {"a/" + std::string(97, 'b'), IssueCode::kInvalidText, "at most 96"},
      {std::string(300, 'a'), IssueCode::kInputTooLarge, "300 bytes"},
      {"caf\xC3\xA9/x", IssueCode::kInvalidText, "only A-Z"},
      {"a/\xFF", IssueCode::kInvalidText, "UTF-8"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.id);
    std::vector<Issue> found;
    CHECK_FALSE(hf_config_url(b.id, found).has_value());
    REQUIRE(found.size() == 1);
    CHECK(found[0].code == b.code);
    CHECK(found[0].field == "model_id");
    CHECK(found[0].message.find(b.says) != std::string::npos);
    CHECK(is_valid_utf8(found[0].message));
  }
}

TEST_CASE("a fetched config.json goes through the pasted-config importer, and gated, missing, offline and non-JSON answers say why") {
  const std::string qwen = read_data("qwen2.5-7b.config.json");
  const LaunchImport fetched = import_fetched_hf_config("Qwen/Qwen2.5-7B", 200, qwen);
  const LaunchImport pasted = import_hf_launch(qwen);
  CHECK(fetched.ok());
  CHECK(fetched.fields == pasted.fields);  // the same import path: nothing dropped, the same issues
  CHECK(issues_text(fetched.issues) == issues_text(pasted.issues));
  struct Case { int status; std::string body; IssueCode code; const char* says; };
  const Case cases[] = {
      {401, "Invalid username or password.", IssueCode::kFetchFailed, "HTTP 401"},
      {403, "Access to model is restricted", IssueCode::kFetchFailed, "gated"},
      {404, "Entry not found", IssueCode::kFetchFailed, "HTTP 404"},
      {0, "", IssueCode::kFetchFailed, "could not reach"},
      {500, "", IssueCode::kFetchFailed, "HTTP 500"},
      {200, "<!doctype html><title>Sign in</title>", IssueCode::kFetchFailed, "not JSON"},
      {200, "", IssueCode::kFetchFailed, "not JSON"},
      {200, "{\"hidden_size\": 4096,", IssueCode::kMalformedJson, ""},  // truncated: the JSON reader's message
  };
  for (const Case& c : cases) {
    CAPTURE(c.status);
    CAPTURE(c.body);
    const LaunchImport out = import_fetched_hf_config("Qwen/Qwen2.5-7B", c.status, c.body);
    INFO(issues_text(out.issues));
    CHECK_FALSE(out.ok());
    CHECK(has_issue(out.issues, c.code));
    CHECK(out.fields.empty());
    for (const Issue& issue : out.issues)
      if (issue.code == c.code) {
        CHECK(issue.message.find(c.says) != std::string::npos);
        if (c.code == IssueCode::kFetchFailed) CHECK(issue.message.find("\"Qwen/Qwen2.5-7B\"") != std::string::npos);
      }
  }
  // A bad id is refused before anything else, whatever the answer.
  CHECK(has_issue(import_fetched_hf_config("a b", 200, qwen).issues, IssueCode::kInvalidText, "model_id"));
}

TEST_CASE("Megatron-LM flags that are unknown, repeated, conflicting or not numbers are issues") {
  SUBCASE("unknown flag and stray word") {
    const LaunchImport import = import_megatron_args("--num-layers 2 --frobnicate 3 stray --hidden-size 64");
    CHECK(has_issue(import.issues, IssueCode::kUnknownField, "--frobnicate"));
    CHECK(has_issue(import.issues, IssueCode::kUnknownField, "args"));
    CHECK(import.fields["hidden"] == 64);
  }
  SUBCASE("a flag given twice with different values") {
    const LaunchImport import = import_megatron_args("--num-layers 2 --num-layers 4");
    CHECK(has_issue(import.issues, IssueCode::kConflictingSettings, "--num-layers"));
    CHECK(import.fields["layers"] == 4);  // argparse: the last one counts
  }
  SUBCASE("--bf16 with --fp16") {
    CHECK(has_issue(import_megatron_args("--bf16 --fp16 --num-layers 2").issues, IssueCode::kConflictingSettings, "--fp16"));
  }
  SUBCASE("a shell variable where a number belongs") {
    const LaunchImport import = import_megatron_args("--tensor-model-parallel-size $TP --num-layers 2");
    REQUIRE_FALSE(import.ok());
    CHECK(has_issue(import.issues, IssueCode::kNotInteger, "--tensor-model-parallel-size"));
  }
  SUBCASE("a huge number") {
    CHECK(has_issue(import_megatron_args("--num-layers 99999999999999999999999").issues, IssueCode::kOutOfRange));
  }
  SUBCASE("MoE") {
    CHECK_FALSE(import_megatron_args("--num-layers 2 --num-experts 8").ok());
  }
  SUBCASE("an unterminated quote") {
    const LaunchImport import = import_megatron_args("--num-layers '2");
    CHECK(has_issue(import.issues, IssueCode::kMalformedInput));
  }
  SUBCASE("a value missing at the end") {
    CHECK(has_issue(import_megatron_args("--num-layers 2 --hidden-size").issues, IssueCode::kMalformedInput, "--hidden-size"));
  }
}

// [SECTION] torchtitan and DeepSpeed

TEST_CASE("torchtitan's llama3_8b.toml imports as FSDP llama3.1-8b, micro-batch 1, op-level selective AC") {
  const std::string text = read_data("llama3-8b.torchtitan.toml");
  CHECK(detect_launch_format(text) == LaunchFormat::kTorchtitan);
  const LaunchImport import = import_torchtitan_toml(text);
  INFO(issues_text(import.issues));
  REQUIRE(import.ok());
  CHECK_FALSE(has_issue(import.issues, IssueCode::kUnknownField));
  CHECK(has_issue(import.issues, IssueCode::kMissingModel, "gpus"));  // data_parallel_shard_degree = -1
  const Config c = imported_config(import, {{"gpus", 8}});
  CHECK(c.model.name == "llama3.1-8b");
  CHECK(c.training.framework == Framework::kFsdp);
  CHECK(c.layout.zero == 3);
  CHECK(effective_dp(c) == 8);
  CHECK(c.training.micro_batch == 1);
  CHECK(c.training.global_batch == 8);  // global_batch_size -1 = local_batch_size x dp
  CHECK(c.training.seq == 8192);
  CHECK(c.training.recompute == Recompute::kSelective);
  CHECK(c.training.precision == Precision::kBf16);
  CHECK(c.training.kernels == Kernels::kAuto);  // [compile] enable = false
  CHECK(c.training.loss == LossKind::kAuto);
}

TEST_CASE("torchtitan: [compile] components, the 2024 [training] compile and norm_type, Async TP") {
  const auto imported = [](const std::string& text) {
    const bool layout_given = text.find("[parallelism]") != std::string::npos;
    const LaunchImport import = import_torchtitan_toml((layout_given ? "" : "[parallelism]\ndata_parallel_shard_degree = 8\n") + text);
    INFO(issues_text(import.issues));
    REQUIRE(import.ok());
    return import;
  };
  const auto config = [](const LaunchImport& import) { return imported_config(import, {{"model", "llama3.1-8b"}}); };
  SUBCASE("the default components compile the blocks and the loss") {
    const Config c = config(imported("[compile]\nenable = true\n"));
    CHECK(c.training.kernels == Kernels::kCompiled);
    CHECK(c.training.loss == LossKind::kCompiled);
  }
  SUBCASE("the model alone keeps the eager loss; the loss alone keeps eager blocks") {
    const Config model = config(imported("[compile]\nenable = true\ncomponents = [\"model\"]\n"));
    CHECK(model.training.kernels == Kernels::kCompiled);
    CHECK(model.training.loss == LossKind::kEager);
    const Config loss = config(imported("[compile]\nenable = true\ncomponents = [\"loss\"]\n"));
    CHECK(loss.training.kernels == Kernels::kAuto);
    CHECK(loss.training.loss == LossKind::kCompiled);
  }
  SUBCASE("a 2024 config: [training] compile and [model] norm_type") {
    const LaunchImport import = imported("[training]\ncompile = true\n[model]\nnorm_type = \"rmsnorm\"\n");
    CHECK_FALSE(has_issue(import.issues, IssueCode::kUnknownField));
    const Config c = config(import);
    CHECK(c.training.kernels == Kernels::kCompiled);
    // Compiled, Inductor fuses the norm whatever norm_type says: left to auto (no "has no effect" warning).
    CHECK(c.training.norm_kernel == NormKernel::kAuto);
    CHECK_FALSE(has_issue(import.issues, IssueCode::kUnsupportedSetting, "norm_kernel"));
    CHECK(config(imported("[model]\nnorm_type = \"rmsnorm\"\n")).training.norm_kernel == NormKernel::kEager);
    CHECK(config(imported("[model]\nnorm_type = \"fused_rmsnorm\"\n")).training.norm_kernel == NormKernel::kFused);
    CHECK(has_issue(imported("[model]\nnorm_type = \"np_layernorm\"\n").issues, IssueCode::kUnsupportedSetting, "model.norm_type"));
  }
  SUBCASE("Async TP: with TP it is read, under a compiled model or with a warning; at tp 1 it does nothing") {
    const LaunchImport on = imported("[parallelism]\ndata_parallel_shard_degree = 8\ntensor_parallel_degree = 8\nenable_async_tensor_parallel = true\n[compile]\nenable = true\n");
    CHECK_FALSE(has_issue(on.issues, IssueCode::kConflictingSettings));
    CHECK(config(on).training.async_tp);
    const LaunchImport eager = imported("[parallelism]\ndata_parallel_shard_degree = 8\ntensor_parallel_degree = 8\nenable_async_tensor_parallel = true\n");
    CHECK(has_issue(eager.issues, IssueCode::kConflictingSettings, "parallelism.enable_async_tensor_parallel"));
    CHECK(config(eager).training.async_tp);
    const LaunchImport tp1 = imported("[parallelism]\ndata_parallel_shard_degree = 8\nenable_async_tensor_parallel = true\n");
    CHECK(has_issue(tp1.issues, IssueCode::kUnsupportedSetting, "parallelism.enable_async_tensor_parallel"));
    CHECK_FALSE(config(tp1).training.async_tp);
  }
  SUBCASE("components that are not a list are an error naming the key") {
    const LaunchImport bad = import_torchtitan_toml("[compile]\nenable = true\ncomponents = \"model\"\n");
    CHECK(has_issue(bad.issues, IssueCode::kUnknownValue, "compile.components"));
  }
}

TEST_CASE("torchtitan: float8 converter, PP micro-batches, HSDP and broken TOML") {
  const LaunchImport pp = import_torchtitan_toml(R"(
[model]
name = "llama3"
flavor = "70B"
converters = ["float8"]
[training]
local_batch_size = 16
seq_len = 8192
[parallelism]
data_parallel_shard_degree = 4
tensor_parallel_degree = 8
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_microbatch_size = 2
[activation_checkpoint]
mode = "full"
)");
  INFO(issues_text(pp.issues));
  REQUIRE(pp.ok());
  const Config c = imported_config(pp);
  CHECK(c.cluster.gpus == 64);
  CHECK(c.training.precision == Precision::kFp8);
  CHECK(c.training.micro_batch == 2);
  CHECK(c.training.global_batch == 64);  // 16 x dp 4
  CHECK(c.layout.vpp == 2);
  CHECK(c.layout.zero == 2);             // "default" reshard = not pp_enabled
  CHECK(c.training.recompute == Recompute::kFull);
  const LaunchImport hsdp = import_torchtitan_toml("[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 4\n");
  INFO(issues_text(hsdp.issues));
  CHECK(hsdp.fields["dp_replicate"] == 2);  // HSDP: sharded over the 4, replicated twice
  CHECK(hsdp.fields["dp"] == 8);
  CHECK(hsdp.fields["zero"] == 3);
  CHECK_FALSE(has_issue(hsdp.issues, IssueCode::kUnsupportedSetting, "parallelism.data_parallel_replicate_degree"));
  const LaunchImport duplicate = import_torchtitan_toml("[training]\nseq_len = 1\nseq_len = 2\n");
  CHECK(has_issue(duplicate.issues, IssueCode::kMalformedInput));
  const LaunchImport wrong_type = import_torchtitan_toml("[training]\nseq_len = \"long\"\n");
  CHECK(has_issue(wrong_type.issues, IssueCode::kNotInteger));
  const LaunchImport unknown = import_torchtitan_toml("[training]\nseq_len = 4096\nturbo = true\n[warp_drive]\nx = 1\n");
  CHECK(has_issue(unknown.issues, IssueCode::kUnknownField, "training.turbo"));
  CHECK(has_issue(unknown.issues, IssueCode::kUnknownField, "warp_drive"));
  // A 2024 config's [experimental] pipeline degree is read (as its current key, and said), not dropped with the section.
  const LaunchImport experimental = import_torchtitan_toml("[experimental]\npipeline_parallel_degree = 4\ncustom_model_path = \"x\"\n");
  CHECK(has_issue(experimental.issues, IssueCode::kRenamedField, "experimental.pipeline_parallel_degree"));
  CHECK(experimental.fields["pp"] == 4);
  CHECK_FALSE(has_issue(experimental.issues, IssueCode::kUnsupportedSetting, "experimental.custom_model_path"));
}

TEST_CASE("torchtitan: a zero less_layers is torchtitan's own value, and wrong types are errors naming the key, each once") {
  const std::string pipeline = "[model]\nname = \"llama3\"\nflavor = \"70B\"\n[parallelism]\ndata_parallel_shard_degree = 4\n"
                               "tensor_parallel_degree = 8\npipeline_parallel_degree = 4\npipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                               "pipeline_parallel_layers_per_stage = 5\n";
  // (80 + 0 + 0) / 5 = 16 virtual stages over 4 ranks (pipeline_parallel.py).
  const LaunchImport zero = import_torchtitan_toml(pipeline + "pipeline_parallel_first_stage_less_layers = 0\npipeline_parallel_last_stage_less_layers = 0\n");
  INFO(issues_text(zero.issues));
  REQUIRE(zero.ok());
  CHECK(zero.fields["vpp"] == 4);
  const LaunchImport negative = import_torchtitan_toml(pipeline + "pipeline_parallel_first_stage_less_layers = -3\n");
  const auto errors_on = [](const LaunchImport& import, const std::string& needle) {
    return std::count_if(import.issues.begin(), import.issues.end(),
                         [&](const Issue& i) { return i.severity == Severity::kError && i.field.find(needle) != std::string::npos; });
  };
  CHECK(errors_on(negative, "first_stage_less_layers") == 1);
  CHECK(errors_on(negative, "layers_per_stage") == 0);  // no cascade from the bad value
  const LaunchImport types = import_torchtitan_toml(
      "[model]\nconverters = \"float8\"\n[training]\nenable_cpu_offload = \"true\"\nseq_len = nan\n[compile]\nenable = 1\n");
  CHECK(has_issue(types.issues, IssueCode::kUnknownValue, "model.converters"));
  CHECK(has_issue(types.issues, IssueCode::kUnknownValue, "training.enable_cpu_offload"));
  CHECK(has_issue(types.issues, IssueCode::kUnknownValue, "compile.enable"));
  const auto seq = std::find_if(types.issues.begin(), types.issues.end(), [](const Issue& i) { return i.field.find("seq_len") != std::string::npos; });
  REQUIRE(seq != types.issues.end());
  CHECK(seq->message.find("\"nan\"") != std::string::npos);  // not JSON's "null"
}

TEST_CASE("torchtitan with PP: gradient accumulation over pipeline schedules is said (the bubble is timed for one schedule)") {
  const std::string base = "[parallelism]\ndata_parallel_shard_degree = 4\npipeline_parallel_degree = 4\n"
                           "pipeline_parallel_microbatch_size = 1\n[training]\nlocal_batch_size = 8\nglobal_batch_size = ";
  CHECK(has_issue(import_torchtitan_toml(base + "256\n").issues, IssueCode::kUnsupportedSetting, "training.global_batch_size"));
  CHECK_FALSE(has_issue(import_torchtitan_toml(base + "32\n").issues, IssueCode::kUnsupportedSetting, "training.global_batch_size"));
}

TEST_CASE("torchtitan's 2024 layout keys ([training] degrees, [experimental] pipeline, enable_float8_linear) are read as today's") {
  const std::string text =
      "[model]\nname = \"llama3\"\nflavor = \"70B\"\n[training]\nbatch_size = 8\nseq_len = 8192\n"
      "data_parallel_replicate_degree = 1\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 8\ncompile = true\n"
      "[experimental]\npipeline_parallel_degree = 4\npipeline_parallel_schedule = \"Interleaved1F1B\"\n"
      "pipeline_parallel_microbatches = 4\nenable_async_tensor_parallel = true\n[activation_checkpoint]\nmode = 'full'\n"
      "[float8]\nenable_float8_linear = true\nenable_fsdp_float8_all_gather = true\n";
  const LaunchImport import = import_torchtitan_toml(text);
  INFO(issues_text(import.issues));
  REQUIRE(import.ok());
  CHECK(import.fields["tp"] == 8);
  CHECK(import.fields["pp"] == 4);
  CHECK(import.fields["vpp"] == 2);
  CHECK(import.fields["micro_batch"] == 2);  // the local batch 8 cut into 4 micro-batches
  CHECK(import.fields["precision"] == "fp8");
  CHECK(import.fields["fp8_all_gather"] == true);
  CHECK(import.fields["async_tp"] == true);
  CHECK(import.fields["kernels"] == "compiled");
  CHECK_FALSE(import.fields.contains("norm_kernel"));
  for (const char* key : {"training.tensor_parallel_degree", "experimental.pipeline_parallel_degree", "float8.enable_float8_linear",
                          "experimental.pipeline_parallel_microbatches"})
    CHECK(has_issue(import.issues, IssueCode::kRenamedField, key));
  CHECK_FALSE(has_issue(import.issues, IssueCode::kUnknownField));
  const Config c = imported_config(import, {{"gpus", 128}});
  CHECK(effective_dp(c) == 4);
  CHECK(c.training.global_batch == 32);  // batch_size per DP rank
  // Without a micro-batch count the 2024 pipeline used the degree; a current key wins over an old one.
  CHECK(import_torchtitan_toml("[training]\nbatch_size = 8\n[experimental]\npipeline_parallel_degree = 4\n").fields["micro_batch"] == 2);
  const LaunchImport both = import_torchtitan_toml("[training]\ntensor_parallel_degree = 4\n[parallelism]\ntensor_parallel_degree = 2\n");
  CHECK(both.fields["tp"] == 2);
  CHECK(has_issue(both.issues, IssueCode::kConflictingSettings, "training.tensor_parallel_degree"));
  CHECK(has_issue(import_torchtitan_toml("[training]\nbatch_size = 6\n[experimental]\npipeline_parallel_degree = 4\n").issues,
                  IssueCode::kBatchNotDivisible, "experimental.pipeline_parallel_microbatches"));
}

TEST_CASE("the HF Trainer's ZeRO-3 DeepSpeed config: stage 3, offload and auto values are reported") {
  const std::string text = read_data("hf-trainer-zero3.deepspeed.json");
  CHECK(detect_launch_format(text) == LaunchFormat::kDeepSpeed);
  const LaunchImport import = import_deepspeed_json(text);
  INFO(issues_text(import.issues));
  REQUIRE(import.ok());
  CHECK(import.fields["zero"] == 3);
  CHECK(import.fields["framework"] == "deepspeed");
  CHECK(import.fields["dp_comm_overlap"] == "on");  // the file's "overlap_comm": true
  // offload_optimizer and offload_param to the CPU at stage 3 (FRAMEWORK_NOTES §3.4) = offload=params.
  CHECK(import.fields["offload"] == "params");
  CHECK_FALSE(has_issue(import.issues, IssueCode::kUnsupportedSetting, "zero_optimization.offload_optimizer"));
  CHECK_FALSE(has_issue(import.issues, IssueCode::kUnsupportedSetting, "zero_optimization.offload_param"));
  CHECK(has_issue(import.issues, IssueCode::kMissingModel, "train_micro_batch_size_per_gpu"));
  CHECK_FALSE(has_issue(import.issues, IssueCode::kUnknownField));
}

TEST_CASE("DeepSpeed: the micro-batch follows from train_batch_size and accumulation at the resolved dp, said, in the CLI and the page alike") {
  const LaunchImport import = import_deepspeed_json(R"({"train_batch_size": 512, "gradient_accumulation_steps": 4,
    "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}})");
  INFO(issues_text(import.issues));
  REQUIRE(import.ok());
  CHECK(has_issue(import.issues, IssueCode::kMissingModel, "gpus"));  // a DeepSpeed JSON has no world size
  CHECK(has_issue(import.issues, IssueCode::kMissingModel, "seq"));   // nor a sequence length
  std::vector<Issue> issues;
  const json merged = resolve_import(import, {{"model", "llama3-8b"}, {"gpus", 64}}, issues);
  CHECK(merged["micro_batch"] == 2);  // 512 / (4 x 64)
  CHECK(has_issue(issues, IssueCode::kMissingModel, "micro_batch"));
  Config page = meshfit_test::preset_config("llama3-8b", 64, 1, 1);
  page.training.micro_batch = 7;
  std::vector<Issue> page_issues;
  const Config applied = apply_import(page, import, page_issues);
  CHECK(applied.training.micro_batch == 2);
  CHECK(applied.training.global_batch == 512);
  // Not a multiple: DeepSpeed refuses it, and so does the import.
  std::vector<Issue> refused;
  resolve_import(import, {{"model", "llama3-8b"}, {"gpus", 48}}, refused);
  CHECK(has_issue(refused, IssueCode::kBatchNotDivisible, "micro_batch"));
  // micro x accumulation per DP rank against an explicit train_batch_size: the page says the mismatch as the CLI does.
  const LaunchImport both = import_deepspeed_json(R"({"train_batch_size": 1024, "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 4, "bf16": {"enabled": true}})");
  std::vector<Issue> page_mismatch;
  apply_import(meshfit_test::preset_config("llama3-8b", 32, 1, 1), both, page_mismatch);
  CHECK(has_issue(page_mismatch, IssueCode::kConflictingSettings, "global_batch"));
}

TEST_CASE("DeepSpeed: sections of the wrong shape are errors naming them, and no text after a NUL byte is dropped unsaid") {
  CHECK(has_issue(import_deepspeed_json(R"({"bf16": true})").issues, IssueCode::kMalformedInput, "bf16"));
  CHECK(has_issue(import_deepspeed_json(R"({"optimizer": {"type": 5}})").issues, IssueCode::kMalformedInput, "optimizer.type"));
  CHECK(has_issue(import_deepspeed_json(R"({"optimizer": "AdamW"})").issues, IssueCode::kMalformedInput, "optimizer.type"));
  CHECK(import_deepspeed_json(R"({"optimizer": {"params": {"lr": 1e-4}}})").ok());  // no type: DeepSpeed's client optimizer
  const std::string with_nul = std::string(R"({"zero_optimization": {"stage": 3}})") + '\0' + R"({"train_batch_size": 8})";
  for (LaunchFormat format : {LaunchFormat::kDeepSpeed, LaunchFormat::kTorchtitan, LaunchFormat::kMegatron}) {
    const LaunchImport import = import_launch_config(format, with_nul);
    CHECK_FALSE(import.ok());
    CHECK(std::any_of(import.issues.begin(), import.issues.end(), [](const Issue& i) { return i.code == IssueCode::kInvalidText; }));
  }
}

TEST_CASE("DeepSpeed offload: each section read as DeepSpeed applies it, and what meshfit cannot express errs high") {
  const auto offload_of = [](const std::string& zero) {
    const LaunchImport import = import_deepspeed_json(R"({"bf16": {"enabled": true}, "zero_optimization": )" + zero + "}");
    INFO(zero);
    INFO(issues_text(import.issues));
    CHECK(import.ok());
    return std::make_pair(import.fields.value("offload", std::string("none")), import.issues);
  };
  CHECK(offload_of(R"({"stage": 2, "offload_optimizer": {"device": "cpu"}})").first == "optimizer");
  CHECK(offload_of(R"({"stage": 1, "cpu_offload": true})").first == "optimizer");  // the deprecated spelling
  CHECK(offload_of(R"({"stage": 3, "cpu_offload": true, "cpu_offload_params": true})").first == "params");
  CHECK(offload_of(R"({"stage": 3, "offload_optimizer": {"device": "none"}, "offload_param": {"device": "none"}})").first == "none");
  // NVMe frees the same GPU memory; the note says the step time is CPU offload's.
  const auto nvme = offload_of(R"({"stage": 3, "offload_optimizer": {"device": "nvme"}, "offload_param": {"device": "nvme"}})");
  CHECK(nvme.first == "params");
  CHECK(has_issue(nvme.second, IssueCode::kUnsupportedSetting, "zero_optimization.offload_optimizer"));
  // offload_param below stage 3 is ignored by DeepSpeed: the optimizer offload alone stays.
  const auto stage2 = offload_of(R"({"stage": 2, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}})");
  CHECK(stage2.first == "optimizer");
  CHECK(has_issue(stage2.second, IssueCode::kUnsupportedSetting, "zero_optimization.offload_param"));
  // Not expressible here: parameters alone, or a partial optimizer offload. Counted without, and said.
  const auto params_only = offload_of(R"({"stage": 3, "offload_param": {"device": "cpu"}})");
  CHECK(params_only.first == "none");
  CHECK(has_issue(params_only.second, IssueCode::kUnsupportedSetting, "zero_optimization.offload_param"));
  const auto partial = offload_of(R"({"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": 0.3}})");
  CHECK(partial.first == "none");
  CHECK(has_issue(partial.second, IssueCode::kUnsupportedSetting, "zero_optimization.offload_optimizer.ratio"));
  const auto stage0 = offload_of(R"({"stage": 0, "offload_optimizer": {"device": "cpu"}})");
  CHECK(stage0.first == "none");
  CHECK(has_issue(stage0.second, IssueCode::kConflictingSettings, "zero_optimization.offload_optimizer"));
  // A device DeepSpeed does not know is an error naming the key.
  const LaunchImport bad = import_deepspeed_json(R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "gpu"}}})");
  CHECK_FALSE(bad.ok());
  CHECK(has_issue(bad.issues, IssueCode::kUnknownValue, "zero_optimization.offload_optimizer.device"));
  // The offloaded estimate is the smaller one: what the import is for.
  const Config with = imported_config(import_deepspeed_json(R"({"bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 1,
    "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}})"),
                                      {{"model", "llama3-8b"}, {"gpus", 8}});
  Config without = with;
  without.training.offload = Offload::kNone;
  CHECK(with.training.offload == Offload::kOptimizer);
  const MemoryReport offloaded = estimate_memory(with), kept = estimate_memory(without);
  REQUIRE(offloaded.valid());
  REQUIRE(kept.valid());
  CHECK(offloaded.worst().peak_reserved_bytes < kept.worst().peak_reserved_bytes);
}

TEST_CASE("torchtitan: enable_cpu_offload and early_step_in_backward are read, refused where torchtitan refuses them") {
  const LaunchImport fsdp = import_torchtitan_toml(
      "[training]\nenable_cpu_offload = true\n[optimizer]\nearly_step_in_backward = true\n[parallelism]\ndata_parallel_shard_degree = 8\n");
  INFO(issues_text(fsdp.issues));
  REQUIRE(fsdp.ok());
  CHECK(fsdp.fields["offload"] == "params");
  CHECK(fsdp.fields["optimizer_in_backward"] == true);
  const LaunchImport ddp = import_torchtitan_toml(
      "[training]\nenable_cpu_offload = true\n[parallelism]\ndata_parallel_replicate_degree = 8\ndata_parallel_shard_degree = 1\n");
  CHECK_FALSE(ddp.fields.contains("offload"));
  CHECK(has_issue(ddp.issues, IssueCode::kConflictingSettings, "training.enable_cpu_offload"));
  const LaunchImport pp = import_torchtitan_toml(
      "[optimizer]\nearly_step_in_backward = true\n[parallelism]\npipeline_parallel_degree = 2\ndata_parallel_shard_degree = 4\n");
  CHECK_FALSE(pp.ok());
  CHECK(has_issue(pp.issues, IssueCode::kConflictingSettings, "optimizer.early_step_in_backward"));
}

TEST_CASE("DeepSpeed: global batch from micro x accumulation x dp, a mismatch is a warning, fp16 with bf16 an error") {
  const LaunchImport import = import_deepspeed_json(R"({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4,
    "bf16": {"enabled": true}, "zero_optimization": {"stage": 2, "reduce_bucket_size": 2e8}})");
  INFO(issues_text(import.issues));
  REQUIRE(import.ok());
  CHECK(has_issue(import.issues, IssueCode::kUnsupportedSetting, "zero_optimization.reduce_bucket_size"));
  const Config c = imported_config(import, {{"model", "llama3-8b"}, {"gpus", 32}});
  CHECK(c.training.global_batch == 256);
  CHECK(c.layout.zero == 2);
  std::vector<Issue> issues;
  const LaunchImport mismatch = import_deepspeed_json(R"({"train_batch_size": 100, "train_micro_batch_size_per_gpu": 2,
    "gradient_accumulation_steps": 4, "bf16": {"enabled": true}})");
  resolve_import(mismatch, {{"model", "llama3-8b"}, {"gpus", 32}}, issues);
  CHECK(has_issue(issues, IssueCode::kConflictingSettings, "global_batch"));
  CHECK_FALSE(import_deepspeed_json(R"({"fp16": {"enabled": true}, "bf16": {"enabled": true}})").ok());
  // A duplicate key is an error, as in every JSON input (io/json_text.h): which value was meant is unknown.
  const LaunchImport duplicate = import_deepspeed_json(R"({"train_batch_size": 8, "train_batch_size": 16})");
  CHECK(has_issue(duplicate.issues, IssueCode::kDuplicateKey, "train_batch_size"));
  CHECK_FALSE(duplicate.ok());
  // A nested one is named by its whole path.
  CHECK(has_issue(import_deepspeed_json(R"({"zero_optimization": {"stage": 2, "stage": 3}})").issues, IssueCode::kDuplicateKey,
                  "zero_optimization.stage"));
}

// [SECTION] Exports: golden files and stable round trips

namespace {

Config layout_config(const char* model, int64_t gpus, int64_t tp, int64_t pp, int64_t vpp, Framework framework) {
  Config c = meshfit_test::preset_config(model, gpus, tp, pp);
  c.layout.vpp = vpp;
  c.training.framework = framework;
  c.layout.zero = framework_profile(framework).default_zero;
  c.training.seq = 8192;
  c.training.global_batch = 512;
  return c;
}

}  // namespace

TEST_CASE("exports of fixed layouts match the golden files") {
  Config megatron = layout_config("llama3.1-70b", 64, 8, 4, 5, Framework::kMegatron);
  megatron.training.recompute = Recompute::kSelective;
  REQUIRE(validate(megatron).empty());
  check_golden("golden.llama3.1-70b.megatron.txt", export_launch_config(megatron, LaunchFormat::kMegatron).text);
  Config fsdp = layout_config("llama3.1-8b", 64, 2, 1, 1, Framework::kFsdp);
  fsdp.training.micro_batch = 2;
  fsdp.training.precision = Precision::kFp8;
  fsdp.training.fp8_all_gather = true;
  REQUIRE(validate(fsdp).empty());
  check_golden("golden.llama3.1-8b.torchtitan.toml", export_launch_config(fsdp, LaunchFormat::kTorchtitan).text);
  Config deepspeed = layout_config("llama2-13b", 32, 1, 1, 1, Framework::kDeepSpeed);
  deepspeed.layout.zero = 3;
  deepspeed.training.micro_batch = 4;
  REQUIRE(validate(deepspeed).empty());
  const LaunchExport ds = export_launch_config(deepspeed, LaunchFormat::kDeepSpeed);
  check_golden("golden.llama2-13b.deepspeed.json", ds.text);
  const json parsed = json::parse(ds.text);
  CHECK(parsed["gradient_accumulation_steps"] == 512 / (32 * 4));  // global / (dp x micro)
}

TEST_CASE("an export names every setting its file does not carry (read back as the framework would run it)") {
  Config c = layout_config("llama3.1-70b", 64, 8, 1, 1, Framework::kMegatron);
  REQUIRE(validate(c).empty());
  for (LaunchFormat format : {LaunchFormat::kMegatron}) {
    const LaunchExport plain = export_launch_config(c, format);
    INFO(issues_text(plain.issues));
    CHECK_FALSE(has_issue(plain.issues, IssueCode::kUnsupportedSetting, "export"));  // everything it needs is in the file
  }
  Config fsdp = layout_config("llama3.1-8b", 64, 2, 1, 1, Framework::kFsdp);
  CHECK_FALSE(has_issue(export_launch_config(fsdp, LaunchFormat::kTorchtitan).issues, IssueCode::kUnsupportedSetting, "export"));
  c.training.optimizer_in_backward = true;
  c.training.kernels = Kernels::kCompiled;
  c.training.loss = LossKind::kChunked;
  c.training.async_tp = true;
  const LaunchExport dropped = export_launch_config(c, LaunchFormat::kMegatron);
  const auto note = std::find_if(dropped.issues.begin(), dropped.issues.end(), [](const Issue& i) { return i.field == "export"; });
  REQUIRE(note != dropped.issues.end());
  for (const char* setting : {"optimizer_in_backward=true", "kernels=compiled", "loss=chunked", "async_tp=true"}) {
    CAPTURE(setting);
    CHECK(note->message.find(setting) != std::string::npos);
  }
  CHECK(note->message.find("dp_comm_overlap") == std::string::npos);  // auto = on for Megatron: the same run
  // A DeepSpeed JSON has no sequence length: said, with what the file would leave it at.
  Config ds = layout_config("llama2-13b", 32, 1, 1, 1, Framework::kDeepSpeed);
  ds.layout.zero = 2;
  const LaunchExport json_out = export_launch_config(ds, LaunchFormat::kDeepSpeed);
  CHECK(has_issue(json_out.issues, IssueCode::kUnsupportedSetting, "export"));
}

TEST_CASE("round trips are stable: config -> launch config -> config -> launch config") {
  struct Case {
    const char* name;
    Config config;
    LaunchFormat format;
  };
  std::vector<Case> cases;
  const auto add = [&](const char* name, Config c, LaunchFormat format) { cases.push_back({name, c, format}); };
  {
    Config c = layout_config("llama3.1-70b", 64, 8, 4, 5, Framework::kMegatron);
    c.training.recompute = Recompute::kFull;
    add("megatron 70B interleaved, full recompute", c, LaunchFormat::kMegatron);
    c.training.precision = Precision::kFp8;
    c.layout.cp = 2;
    c.cluster.gpus = 128;
    c.training.recompute = Recompute::kNone;
    c.layout.vpp = 1;
    add("megatron 70B fp8 cp2", c, LaunchFormat::kMegatron);
  }
  {
    Config c = layout_config("llama3.1-70b", 64, 8, 4, 1, Framework::kMegatron);
    c.training.recompute = Recompute::kFull;
    c.training.recompute_layers = 5;
    add("megatron 70B block recompute of 5 layers", c, LaunchFormat::kMegatron);
    c.training.offload = Offload::kOptimizer;
    add("megatron 70B optimizer CPU offload", c, LaunchFormat::kMegatron);
    Config tt = layout_config("llama3.1-8b", 64, 1, 1, 1, Framework::kFsdp);
    tt.training.recompute = Recompute::kFull;
    tt.training.recompute_layers = 8;
    add("torchtitan 8B layer SAC every 4th block", tt, LaunchFormat::kTorchtitan);
  }
  {
    Config c = layout_config("gpt3-175b", 1024, 8, 16, 1, Framework::kMegatron);
    c.layout.zero = 0;
    c.training.sp = false;
    c.training.seq = 2048;
    add("megatron GPT-3 DDP", c, LaunchFormat::kMegatron);
  }
  {
    Config c = layout_config("llama3.1-405b", 16384, 8, 16, 2, Framework::kMegatron);
    c.training.global_batch = 2048;
    REQUIRE(choose_pipeline_split(c.model.layers, framework_profile(Framework::kMegatron), c.layout));
    add("megatron 405B uneven split", c, LaunchFormat::kMegatron);
  }
  {
    Config c = layout_config("llama3.1-8b", 64, 2, 1, 1, Framework::kFsdp);
    add("torchtitan 8B fsdp tp2", c, LaunchFormat::kTorchtitan);
    Config pp = layout_config("llama3.1-70b", 64, 8, 2, 2, Framework::kFsdp);
    pp.layout.zero = 2;
    pp.training.micro_batch = 2;
    add("torchtitan 70B pp2 interleaved", pp, LaunchFormat::kTorchtitan);
    Config compiled = layout_config("llama3.1-70b", 256, 8, 1, 1, Framework::kFsdp);
    compiled.training.kernels = Kernels::kCompiled;
    compiled.training.async_tp = true;
    add("torchtitan 70B tp8 compiled, Async TP", compiled, LaunchFormat::kTorchtitan);
    compiled.training.loss = LossKind::kEager;
    add("torchtitan 70B compiled blocks, eager loss", compiled, LaunchFormat::kTorchtitan);
    Config ddp = layout_config("llama3.1-8b", 8, 1, 1, 1, Framework::kFsdp);
    ddp.layout.zero = 0;
    ddp.training.recompute = Recompute::kFull;
    add("torchtitan DDP", ddp, LaunchFormat::kTorchtitan);
  }
  {
    Config c = layout_config("llama2-13b", 32, 1, 1, 1, Framework::kDeepSpeed);
    c.layout.zero = 2;
    c.training.micro_batch = 4;
    c.training.fp32_grad_buffer = false;
    add("deepspeed zero2", c, LaunchFormat::kDeepSpeed);
    c.training.offload = Offload::kOptimizer;
    add("deepspeed zero2, optimizer offload", c, LaunchFormat::kDeepSpeed);
    c.layout.zero = 3;
    c.training.offload = Offload::kParams;
    add("deepspeed zero3, parameter offload", c, LaunchFormat::kDeepSpeed);
  }
  {
    Config c = layout_config("llama3.1-8b", 64, 1, 1, 1, Framework::kFsdp);
    c.training.offload = Offload::kParams;
    c.training.optimizer_in_backward = true;
    add("torchtitan 8B CPU offload, optimizer in backward", c, LaunchFormat::kTorchtitan);
  }
  for (const Case& test : cases) {
    CAPTURE(test.name);
    INFO(issues_text(validate(test.config)));
    REQUIRE_FALSE(has_errors(validate(test.config)));
    const LaunchExport first = export_launch_config(test.config, test.format);
    const LaunchImport back = import_launch_config(test.format, first.text);
    INFO(first.text);
    INFO(issues_text(back.issues));
    REQUIRE(back.ok());
    // What the format does not carry (the model for DeepSpeed, the GPU) comes from the original config.
    json overrides = {{"gpus", test.config.cluster.gpus}};
    if (test.format == LaunchFormat::kDeepSpeed) overrides["model"] = test.config.model.name;
    const Config again = imported_config(back, overrides);
    CHECK(same_model(again.model, test.config.model));
    CHECK(effective_dp(again) == effective_dp(test.config));
    CHECK(again.layout.tp == test.config.layout.tp);
    CHECK(again.layout.pp == test.config.layout.pp);
    CHECK(again.layout.cp == test.config.layout.cp);
    CHECK(again.layout.zero == test.config.layout.zero);
    CHECK(again.training.micro_batch == test.config.training.micro_batch);
    CHECK(again.training.global_batch == test.config.training.global_batch);
    CHECK(again.training.offload == test.config.training.offload);
    if (test.format != LaunchFormat::kDeepSpeed) {
      CHECK(again.training.optimizer_in_backward == test.config.training.optimizer_in_backward);
      CHECK(again.layout.vpp == test.config.layout.vpp);
      CHECK(again.layout.pp_first_stage_layers == test.config.layout.pp_first_stage_layers);
      CHECK(again.layout.pp_last_stage_layers == test.config.layout.pp_last_stage_layers);
      CHECK(again.training.seq == test.config.training.seq);
      CHECK(again.training.recompute == test.config.training.recompute);
      CHECK(again.training.recompute_layers == test.config.training.recompute_layers);
      CHECK(again.training.precision == test.config.training.precision);
      CHECK(runs_compiled(again.training, again.layout.tp) == runs_compiled(test.config.training, test.config.layout.tp));
      CHECK(again.training.async_tp == test.config.training.async_tp);
    }
    const LaunchExport second = export_launch_config(again, test.format);
    CHECK(second.text == first.text);
  }
}

TEST_CASE("a Megatron-LM command line goes through import, search and export with the search's layout") {
  const json imported = run_import("auto", read_data("gpt3-175b.megatron.sh"), {{"gpus", 1024}, {"gpu", "h100-sxm"}},
                                   /*drop_layout=*/true);
  INFO(imported.dump(2));
  REQUIRE(imported["ok"] == true);
  CHECK(imported["format"] == "megatron");
  CHECK_FALSE(imported["fields"].contains("tp"));
  const json found = run_search({{"state", imported["state"]}}, {{"top", 1}});
  REQUIRE(found["ok"] == true);
  REQUIRE(found["layouts"].size() == 1);
  json chosen = {{"state", imported["state"]}};
  for (const auto& [key, value] : found["layouts"][0].items())
    if (is_searched_field(key)) chosen[key] = value;
  const json exported = run_export(chosen, "megatron");
  INFO(exported.dump(2));
  REQUIRE(exported["ok"] == true);
  const LaunchImport back = import_megatron_args(exported["text"].get<std::string>());
  REQUIRE(back.ok());
  CHECK(back.fields["tp"] == found["layouts"][0]["tp"]);
  CHECK(back.fields["pp"] == found["layouts"][0]["pp"]);
  CHECK(back.fields["micro_batch"] == found["layouts"][0]["micro_batch"]);
  CHECK(back.fields["global_batch"] == 1536);
}

// An as-a-user review: a command line the import refuses still told the user to "give --gpus"
// after they had; a given field answers that warning on both paths.
TEST_CASE("an import that fails does not ask for the fields the caller gave") {
  const json out = run_import("megatron",
                              "pretrain_gpt.py --pipeline-model-parallel-size 16 --num-layers-per-virtual-pipeline-stage 4 "
                              "--decoder-first-pipeline-num-layers 8 --num-layers 126 --bf16",
                              {{"gpus", 1024}}, false);
  INFO(out.dump(2));
  CHECK(out["ok"] == false);
  bool asks_gpus = false;
  for (const json& issue : out["issues"]) asks_gpus |= issue["field"] == "gpus";
  CHECK_FALSE(asks_gpus);
}

// [SECTION] Hostile input

TEST_CASE("truncated, mistyped, huge, duplicated, deep and non-UTF-8 input gives issues and never crashes") {
  const std::pair<LaunchFormat, std::string> samples[] = {
      {LaunchFormat::kHfConfig, read_data("llama3.1-8b.config.json")},
      {LaunchFormat::kMegatron, read_data("gpt3-175b.megatron.sh")},
      {LaunchFormat::kTorchtitan, read_data("llama3-8b.torchtitan.toml")},
      {LaunchFormat::kDeepSpeed, read_data("hf-trainer-zero3.deepspeed.json")},
  };
  int errors = 0;
  for (const auto& sample : samples) {
    const LaunchFormat format = sample.first;
    const std::string& text = sample.second;
    CAPTURE(to_string(format));
    for (size_t cut = 0; cut < text.size(); cut += 7) {  // every 7th prefix
      const LaunchImport import = import_launch_config(format, text.substr(0, cut));
      errors += !import.ok();
      for (const Issue& issue : import.issues) CHECK_FALSE(issue.message.empty());
    }
  }
  CHECK(errors > 100);  // truncated JSON and TOML are errors, not silently partial configs
  // Wrong types and huge numbers.
  CHECK_FALSE(import_hf_launch(R"({"hidden_size": "4096", "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 1})").ok());
  // config.json goes through the strict JSON reader of every JSON input (io/json_text.h): its codes.
  CHECK(has_issue(import_hf_launch(R"({"hidden_size": 1e400})").issues, IssueCode::kMalformedJson));
  CHECK(has_issue(import_hf_launch(R"({"hidden_size": 18446744073709551615, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 2})").issues,
                  IssueCode::kOutOfRange));
  CHECK(has_issue(import_deepspeed_json(R"({"train_micro_batch_size_per_gpu": 1e30})").issues, IssueCode::kOutOfRange));
  CHECK(has_issue(import_deepspeed_json(R"({"zero_optimization": {"stage": 7}})").issues, IssueCode::kOutOfRange));
  CHECK(has_issue(import_torchtitan_toml("[training]\nseq_len = 99999999999999999999999\n").issues, IssueCode::kMalformedInput));
  CHECK(has_issue(import_torchtitan_toml("[parallelism]\ndata_parallel_shard_degree = 1099511627776\ntensor_parallel_degree = 1099511627776\n").issues,
                  IssueCode::kOutOfRange));
  // Duplicate keys.
  CHECK(has_issue(import_hf_launch(R"({"hidden_size": 64, "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 2})").issues,
                  IssueCode::kDuplicateKey, "hidden_size"));
  // Deep nesting, oversize text and invalid UTF-8: the same codes for every format (io/json_text.h
  // check_input_text and the one JSON reader).
  CHECK(has_issue(import_deepspeed_json(std::string(100000, '[')).issues, IssueCode::kInputTooLarge));
  CHECK(has_issue(import_deepspeed_json("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}").issues, IssueCode::kInputTooLarge));
  CHECK(has_issue(import_deepspeed_json("[1, 2]").issues, IssueCode::kMalformedJson));  // not an object
  CHECK(has_issue(import_megatron_args(std::string(kMaxImportBytes + 1, ' ')).issues, IssueCode::kInputTooLarge));
  CHECK(has_issue(import_torchtitan_toml(std::string(kMaxImportBytes + 1, ' ')).issues, IssueCode::kInputTooLarge));
  for (const LaunchFormat format : {LaunchFormat::kHfConfig, LaunchFormat::kMegatron, LaunchFormat::kTorchtitan, LaunchFormat::kDeepSpeed,
                                    LaunchFormat::kMeshfit}) {
    CAPTURE(to_string(format));
    CHECK(has_issue(import_launch_config(format, "--num-layers \xff\xfe").issues, IssueCode::kInvalidText));
    // Valid UTF-8 that the parsers stop inside of: the messages must stay valid UTF-8.
    CHECK_NOTHROW(issues_to_json(import_launch_config(format, "\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9").issues).dump());
  }
  // Random bytes and random word soups: issues only, and every message is dumpable JSON.
  std::mt19937_64 random(15);
  const std::vector<std::string> words = {"--num-layers", "--hidden-size", "8", "-1", "0", "'", "\"", "\\", "\n", "[",
                                          "]", "{", "}", "=", "\"stage\"", ":", ",", "1e999", "--tensor-model-parallel-size",
                                          "[parallelism]", "pipeline_parallel_degree", "--num-layers-per-virtual-pipeline-stage",
                                          "--pipeline-model-parallel-layout", "Et*4|", "(t|)*3", "t*99999", "L", "|", "\"tp\""};
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text;
    const int length = int(random() % 40);
    for (int i = 0; i < length; ++i)
      text += trial % 2 ? words[random() % words.size()] + " " : std::string(1, char(random() % 256));
    const LaunchFormat formats[] = {LaunchFormat::kHfConfig, LaunchFormat::kMegatron, LaunchFormat::kTorchtitan,
                                    LaunchFormat::kDeepSpeed, LaunchFormat::kMeshfit};
    const LaunchImport import = import_launch_config(formats[random() % 5], text);
    CHECK_NOTHROW(issues_to_json(import.issues).dump());
  }
}

// An as-a-user review: `fit` proposed pp 2 x vpp 3 with uneven end chunks and the export refused it;
// Megatron-LM sizes each chunk with --pipeline-model-parallel-layout (FRAMEWORK_NOTES §2.6).
TEST_CASE("Megatron-LM: an uneven split over vpp chunks exports as --pipeline-model-parallel-layout and reads back") {
  // 32 layers on pp 4 x vpp 3 = 12 chunks: meshfit's split is 1 + 10 x 3 + 1 (choose_pipeline_split).
  Config c = layout_config("llama3-8b", 8, 1, 4, 3, Framework::kMegatron);
  c.training.global_batch = 64;
  REQUIRE(choose_pipeline_split(c.model.layers, framework_profile(Framework::kMegatron), c.layout));
  REQUIRE(c.layout.pp_first_stage_layers == 1);
  REQUIRE(c.layout.pp_last_stage_layers == 1);
  INFO(issues_text(validate(c)));
  REQUIRE_FALSE(has_errors(validate(c)));
  const LaunchExport flags = export_launch_config(c, LaunchFormat::kMegatron);
  INFO(issues_text(flags.issues));
  CHECK_FALSE(has_errors(flags.issues));
  CHECK(flags.text.find("--pipeline-model-parallel-layout 'Et*1|t*3|t*3|t*3|t*3|t*3|t*3|t*3|t*3|t*3|t*3|t*1L'") != std::string::npos);
  CHECK(flags.text.find("--decoder-first-pipeline-num-layers") == std::string::npos);
  CHECK(flags.text.find("--num-layers-per-virtual-pipeline-stage") == std::string::npos);  // the layout sets vpp
  const LaunchImport back = import_megatron_args(flags.text);
  INFO(issues_text(back.issues));
  REQUIRE(back.ok());
  CHECK(back.fields["vpp"] == 3);
  CHECK(back.fields["pp_first_stage_layers"] == 1);
  CHECK(back.fields["pp_last_stage_layers"] == 1);
  CHECK_FALSE(has_issue(flags.issues, IssueCode::kUnsupportedSetting, "export"));  // nothing left uncarried
  // Megatron's own example grammar: repeats of a symbol and of a group, commas cosmetic.
  const std::string model = "pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --pipeline-model-parallel-size 2 ";
  const LaunchImport grouped = import_megatron_args(model + "--pipeline-model-parallel-layout 'Et*4|(t*6|)*4,t*4L'");
  REQUIRE(grouped.ok());
  CHECK(grouped.fields["vpp"] == 3);
  CHECK(grouped.fields["pp_first_stage_layers"] == 4);
  CHECK(grouped.fields["pp_last_stage_layers"] == 4);
  const LaunchImport even = import_megatron_args(model + "--pipeline-model-parallel-layout 'Et*8|t*8|t*8|t*8L'");
  REQUIRE(even.ok());
  CHECK(even.fields["vpp"] == 2);
  CHECK(even.fields["pp_first_stage_layers"] == 0);
  // What meshfit cannot model is refused naming the flag, never approximated.
  for (const char* layout : {"E|(t|)*3,m|m||L", "Et*7|t*9|t*8|t*8L", "Et*32L", "Et*16|t*15L", "t*16|Et*16L", "Et*16|L|t*16",
                             "((t))", "t*", "(t*1000000000|)*1000000000", "Et*16|t*16"}) {
    CAPTURE(layout);
    const LaunchImport refused = import_megatron_args(model + "--pipeline-model-parallel-layout '" + layout + "'");
    CHECK_FALSE(refused.ok());
    CHECK(has_issue(refused.issues, IssueCode::kUnsupportedSetting, "--pipeline-model-parallel-layout"));
  }
  CHECK(has_issue(import_megatron_args(model + "--pipeline-model-parallel-layout 'Et*16|t*16L' --num-virtual-stages-per-pipeline-rank 2").issues,
                  IssueCode::kConflictingSettings, "--pipeline-model-parallel-layout"));
  // Without --num-layers the model is the preset given: a layout of another layer count is refused there
  // (a review saw 32 layers placed on Qwen2.5-7B's 28 read as 4|5|5|5|5|4).
  const std::string no_model = "pretrain_gpt.py --bf16 --pipeline-model-parallel-size 2 --global-batch-size 512 "
                               "--pipeline-model-parallel-layout 'Et*4|t*6|t*6|t*6|t*6|t*4L'";
  const json other = run_import("megatron", no_model, {{"model", "qwen2.5-7b"}, {"gpus", 16}}, false);
  CHECK(other["ok"] == false);
  CHECK(other["issues"].dump().find("places 32 decoder layers") != std::string::npos);
  CHECK(run_import("megatron", no_model, {{"model", "llama3-8b"}, {"gpus", 16}}, false)["ok"] == true);
  std::vector<Issue> page_issues;
  const Config page = apply_import(meshfit_test::preset_config("qwen2.5-7b", 16), import_megatron_args(no_model), page_issues);
  CHECK(has_issue(page_issues, IssueCode::kConflictingSettings, "--pipeline-model-parallel-layout"));
  CHECK(page.layout.vpp == 1);  // the page keeps what it had
}

TEST_CASE("DeepSpeed overlap_comm: a boolean is imported as dp_comm_overlap and exported back, absent stays auto") {
  // Absent: DeepSpeed's own default (on only at stage 3), which is what auto means.
  CHECK_FALSE(import_deepspeed_json(R"({"zero_optimization": {"stage": 1}})").fields.contains("dp_comm_overlap"));
  const LaunchImport off = import_deepspeed_json(R"({"zero_optimization": {"stage": 3, "overlap_comm": false}})");
  CHECK(off.fields["dp_comm_overlap"] == "off");
  CHECK(import_deepspeed_json(R"({"zero_optimization": {"stage": 1, "overlap_comm": "auto"}})").fields.count("dp_comm_overlap") == 0);
  CHECK(has_issue(import_deepspeed_json(R"({"zero_optimization": {"stage": 1, "overlap_comm": 3}})").issues,
                  IssueCode::kUnknownValue, "zero_optimization.overlap_comm"));
  Config config = layout_config("llama2-13b", 32, 1, 1, 1, Framework::kDeepSpeed);
  REQUIRE(validate(config).empty());
  CHECK(export_launch_config(config, LaunchFormat::kDeepSpeed).text.find("overlap_comm") == std::string::npos);
  config.training.dp_comm_overlap = DpCommOverlap::kOn;
  const LaunchExport on = export_launch_config(config, LaunchFormat::kDeepSpeed);
  CHECK(on.text.find("\"overlap_comm\": true") != std::string::npos);
  CHECK(import_deepspeed_json(on.text).fields["dp_comm_overlap"] == "on");
}

TEST_CASE("Megatron-LM overlap flags: read on import, written on export when the resolved overlap is on") {
  // Plain Megatron-LM leaves --overlap-grad-reduce off (arguments.py store_true): a command line
  // without it imports as off, with it as on; --tp-comm-overlap sets tp_comm_overlap.
  CHECK(import_megatron_args("--num-layers 2 --hidden-size 64").fields["dp_comm_overlap"] == "off");
  const LaunchImport on = import_megatron_args("--num-layers 2 --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap");
  CHECK(on.fields["dp_comm_overlap"] == "on");
  CHECK(on.fields["tp_comm_overlap"] == true);
  CHECK(has_issue(import_megatron_args("--num-layers 2 --overlap-param-gather").issues, IssueCode::kUnsupportedSetting,
                  "--overlap-param-gather"));
  // Export: auto is on for Megatron, off writes neither flag.
  Config config = layout_config("llama3.1-70b", 64, 8, 4, 1, Framework::kMegatron);
  const std::string on_text = export_launch_config(config, LaunchFormat::kMegatron).text;
  CHECK(on_text.find("--overlap-grad-reduce") != std::string::npos);
  CHECK(on_text.find("--overlap-param-gather") != std::string::npos);
  config.training.dp_comm_overlap = DpCommOverlap::kOff;
  CHECK(export_launch_config(config, LaunchFormat::kMegatron).text.find("--overlap-grad-reduce") == std::string::npos);
}

TEST_CASE("Megatron-LM export of a split only nanotron or torchtitan run writes Megatron's own uneven split and says so") {
  // 28 layers on 8 stages: nanotron and torchtitan cut it themselves; Megatron-LM refuses pp=8 without
  // --decoder-first/last-pipeline-num-layers. choose_pipeline_split gives 2 + 6 x 4 + 2.
  for (Framework framework : {Framework::kNanotron, Framework::kFsdp}) {
    Config c = layout_config("qwen2.5-1.5b", 16, 1, 8, 1, framework);
    c.layout.zero = framework_profile(framework).default_zero;
    c.training.global_batch = 64;
    INFO(issues_text(validate(c)));
    REQUIRE_FALSE(has_errors(validate(c)));
    const LaunchExport flags = export_launch_config(c, LaunchFormat::kMegatron);
    INFO(issues_text(flags.issues));
    CHECK_FALSE(has_errors(flags.issues));
    CHECK(has_issue(flags.issues, IssueCode::kUnsupportedSetting, "pp"));
    CHECK(flags.text.find("--decoder-first-pipeline-num-layers 2") != std::string::npos);
    CHECK(flags.text.find("--decoder-last-pipeline-num-layers 2") != std::string::npos);
    // Read back as Megatron-LM, the layout is valid there.
    const LaunchImport back = import_launch_config(LaunchFormat::kMegatron, flags.text);
    INFO(issues_text(back.issues));
    CHECK(back.fields["pp_first_stage_layers"] == 2);
  }
}

// Megatron-LM --optimizer-cpu-offload (memory_model.cpp's profile): offload=optimizer, written back
// with the precision-aware optimizer it runs on; a partial fraction is not modelled and errs high
// (the whole optimizer counted on the GPU); --cpu-offloading (TE's) stays a warning.
TEST_CASE("Megatron-LM --optimizer-cpu-offload is offload=optimizer, a partial fraction errs high") {
  const LaunchImport whole = import_megatron_args("--num-layers 2 --use-distributed-optimizer --optimizer-cpu-offload");
  CHECK(whole.fields["offload"] == "optimizer");
  const LaunchImport one = import_megatron_args("--num-layers 2 --optimizer-cpu-offload --optimizer-offload-fraction 1.0");
  CHECK(one.fields["offload"] == "optimizer");
  const LaunchImport part = import_megatron_args("--num-layers 2 --optimizer-cpu-offload --optimizer-offload-fraction 0.5");
  CHECK_FALSE(part.fields.contains("offload"));
  CHECK(has_issue(part.issues, IssueCode::kUnsupportedSetting, "--optimizer-offload-fraction"));
  CHECK_FALSE(has_issue(part.issues, IssueCode::kUnknownField, "--optimizer-offload-fraction"));
  CHECK(has_issue(import_megatron_args("--num-layers 2 --cpu-offloading").issues, IssueCode::kUnsupportedSetting, "--cpu-offloading"));
  Config c = layout_config("llama3.1-8b", 8, 1, 1, 1, Framework::kMegatron);
  c.training.offload = Offload::kOptimizer;
  const std::string flags = export_launch_config(c, LaunchFormat::kMegatron).text;
  CHECK(flags.find("--optimizer-cpu-offload") != std::string::npos);
  CHECK(flags.find("--use-precision-aware-optimizer") != std::string::npos);
}


// An as-a-user review: `meshfit import` on its own printed fields (or an estimate's --json result)
// read them as a DeepSpeed config, one "not a DeepSpeed key" warning per field.
TEST_CASE("meshfit's own JSON imports as the config it is: printed fields, an export, or an estimate's result") {
  const json input = {{"model", "llama3.1-8b"}, {"gpus", 16}, {"tp", 2}, {"pp", 2}, {"seq", 8192}, {"global_batch", 64},
                      {"recompute", "selective"}, {"framework", "fsdp"}};
  const json estimate = run_estimate(input);
  REQUIRE(estimate["ok"] == true);
  const json wanted = estimate["config"];
  // The page's "Export JSON" too (ui/reports.cpp json_report: state, estimate, layouts), which a
  // review pasted back into the page and saw read as DeepSpeed.
  REQUIRE(estimate["state"].is_string());
  const json page_report = {{"state", estimate["state"]}, {"estimate", estimate}, {"layouts", json::array()}};
  const std::string texts[] = {input.dump(), estimate.dump(2), estimate["config"].dump(),
                               run_export(input, "meshfit")["text"].get<std::string>(), page_report.dump(2)};
  for (const std::string& text : texts) {
    CAPTURE(text.substr(0, 80));
    REQUIRE(detect_launch_format(text) == LaunchFormat::kMeshfit);
    const json imported = run_import("auto", text, json::object(), false);
    INFO(imported.dump(2));
    REQUIRE(imported["ok"] == true);
    CHECK(imported["format"] == "meshfit");
    CHECK(imported["config"] == wanted);  // the full config's state pins the derived dp too: the same run
    CHECK(imported["issues"].empty());
  }
  // A key meshfit does not read is said and dropped; a value it refuses is an error naming the field.
  const LaunchImport extra = import_meshfit_json(R"({"model": "llama3.1-8b", "tp": 2, "nodes": 4})");
  CHECK(has_issue(extra.issues, IssueCode::kUnknownField, "nodes"));
  CHECK_FALSE(extra.fields.contains("nodes"));
  const json bad = run_import("auto", R"({"model": "llama3.1-8b", "tp": "eight"})", json::object(), false);
  CHECK(bad["ok"] == false);
  CHECK(bad["format"] == "meshfit");
  CHECK(bad["issues"].dump().find("\"tp\"") != std::string::npos);
  // A review of this import: a whole config (an export, an estimate's "config") pinned its GPU figures
  // and dp, so --gpu a100-80gb kept the H100's peak and --tp 4 broke dp. It reads as the fields given.
  const json whole = estimate["config"];
  const json given = run_import("auto", whole.dump(), {{"gpu", "a100-80gb"}, {"tp", 4}}, false);
  INFO(given.dump(2));
  REQUIRE(given["ok"] == true);
  CHECK(given["config"]["gpu_bf16_tflops"] == 312);
  CHECK(given["config"]["dp"] == 2);
  const json plain = json::parse(run_export(input, "meshfit")["text"].get<std::string>());
  CHECK_FALSE(plain.contains("dp"));
  CHECK_FALSE(plain.contains("gpu_memory_gib"));
  CHECK(plain["tp"] == 2);
  // A result without a config (a search's, or ok false) says so, as meshfit's format.
  const json searched = run_search(input, {{"top", 1}});
  const json no_config = run_import("auto", searched.dump(), json::object(), false);
  CHECK(no_config["format"] == "meshfit");
  CHECK(no_config["ok"] == false);
  CHECK(no_config["issues"].dump().find("has no config") != std::string::npos);
  // A misspelt key, and a duplicate one, stay meshfit's: the message names the key, not DeepSpeed.
  const std::string typo = R"({"model": "llama3-8b", "gpus": 8, "tp": 2, "tpp": 4})";
  CHECK(detect_launch_format(typo) == LaunchFormat::kMeshfit);
  CHECK(has_issue(import_meshfit_json(typo).issues, IssueCode::kUnknownField, "tpp"));
  CHECK(detect_launch_format(R"({"model": "llama3-8b", "gpus": 8, "gpus": 4})") == LaunchFormat::kMeshfit);
  // DeepSpeed's top level shares "optimizer" with meshfit's fields, and nothing that names a run.
  CHECK(detect_launch_format(R"({"optimizer": {"type": "AdamW"}})") == LaunchFormat::kDeepSpeed);
  CHECK(detect_launch_format(R"({"optimizer": {"type": "AdamW"}, "train_batch_size": 8, "tp": 2})") == LaunchFormat::kDeepSpeed);
  CHECK(detect_launch_format(read_data("hf-trainer-zero3.deepspeed.json")) == LaunchFormat::kDeepSpeed);
}

// An as-a-user review pasted the page's own Megatron flags for Llama 3.1 70B over the 8B preset and
// saw the 70B architecture named "llama3.1-8b+custom". Flags that give every dimension a custom model
// needs name the model custom, as a config.json import does; a snippet without them keeps the preset.
TEST_CASE("Megatron flags with the whole architecture replace the page's preset by a custom model") {
  const Config seventy = layout_config("llama3.1-70b", 64, 8, 4, 1, Framework::kMegatron);
  const LaunchExport flags = export_launch_config(seventy, LaunchFormat::kMegatron);
  const LaunchImport imported = import_launch_config(LaunchFormat::kMegatron, flags.text);
  REQUIRE(imported.ok());
  CHECK(imported.fields["model"] == "custom");
  const Config eight = layout_config("llama3.1-8b", 8, 1, 1, 1, Framework::kMegatron);
  std::vector<Issue> issues;
  const Config applied = apply_import(eight, imported, issues);
  INFO(issues_text(issues));
  CHECK(applied.model.name == "custom");
  CHECK(applied.model.hidden == 8192);
  CHECK(applied.model.layers == 80);
  const LaunchImport snippet = import_launch_config(LaunchFormat::kMegatron, "--tensor-model-parallel-size 2 --micro-batch-size 1");
  REQUIRE(snippet.ok());
  CHECK_FALSE(snippet.fields.contains("model"));
  std::vector<Issue> kept_issues;
  CHECK(apply_import(eight, snippet, kept_issues).model.name == "llama3.1-8b");
}

// An as-a-user review imported a DeepSpeed JSON without --gpus and read "the imported global batch 16
// is not 1 x dp=8" (8: meshfit's default GPU count), and re-imported a file exported for A100 on the
// default H100 without a word. DeepSpeed's batch fixes dp: the GPU count is derived from it and said,
// and the GPU that no launch config names is said to be assumed.
TEST_CASE("DeepSpeed import: the GPU count from its batch, the GPU said to be assumed") {
  const std::string text =
      R"({"train_batch_size": 16, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 3}})";
  const json imported = run_import("deepspeed", text, {{"model", "llama3.1-8b"}}, false);
  INFO(imported.dump(2));
  REQUIRE(imported["ok"] == true);
  CHECK(imported["config"]["gpus"] == 16);
  const std::string issues = imported["issues"].dump();
  CHECK(issues.find("conflicting_settings") == std::string::npos);  // no mismatch against an assumed dp
  CHECK(issues.find("train_batch_size 16") != std::string::npos);
  CHECK(issues.find("names no GPU") != std::string::npos);
  const json given = run_import("deepspeed", text, {{"model", "llama3.1-8b"}, {"gpu", "a100-80gb"}, {"gpus", 16}}, false);
  REQUIRE(given["ok"] == true);
  CHECK(given["issues"].dump().find("names no GPU") == std::string::npos);
  CHECK(given["issues"].dump().find("train_batch_size 16 /") == std::string::npos);
}

// An as-a-user review imported meshfit's own torchtune export and got 55 "not a --flag" warnings and
// "no pretrain_gpt.py flags found": YAML was read as a Megatron command line. The formats meshfit
// writes but does not read are named instead, and what import does read is listed.
TEST_CASE("a torchtune YAML or an HF Trainer script is named as not importable, not read as Megatron flags") {
  Config config = meshfit_test::preset_config("llama3.2-1b", 1);
  config.training.finetune = FinetuneMethod::kLora;
  for (const LaunchFormat format : {LaunchFormat::kTorchtune, LaunchFormat::kHfTrainer}) {
    const std::string text = export_launch_config(config, format).text;
    CAPTURE(text);
    CHECK_FALSE(detect_launch_format(text));
    CHECK_FALSE(unimported_format(text).empty());
    const nlohmann::json out = run_import("auto", text, nlohmann::json::object(), false);
    REQUIRE(out["issues"].size() == 1);
    CHECK(out["issues"][0]["message"].get<std::string>().find("does not read") != std::string::npos);
  }
  CHECK(unimported_format(export_launch_config(config, LaunchFormat::kTorchtune).text) == "a torchtune recipe YAML");
  // What import reads is still detected.
  for (const LaunchFormat format : {LaunchFormat::kMegatron, LaunchFormat::kTorchtitan, LaunchFormat::kDeepSpeed}) {
    CHECK(detect_launch_format(export_launch_config(meshfit_test::preset_config("llama3.1-8b", 8), format).text) == format);
  }
}

// An as-a-user review exported a run with --name, --notes and --tokens-to-train as Megatron flags and
// torchtitan TOML and lost all three without a word: each launch format now says so; meshfit's own
// JSON keeps them.
TEST_CASE("a launch export says the run's name, notes and token budget are not in it") {
  Config config = meshfit_test::preset_config("llama3.1-8b", 8);
  config.name = "run405";
  config.notes = "keep me";
  config.training.tokens_to_train = 1e12;
  for (const LaunchFormat format : {LaunchFormat::kMegatron, LaunchFormat::kTorchtitan, LaunchFormat::kDeepSpeed}) {
    const LaunchExport out = export_launch_config(config, format);
    bool said = false;
    for (const Issue& issue : out.issues)
      said |= issue.field == "export" && issue.message.find("name, notes, tokens_to_train") != std::string::npos;
    CHECK(said);
  }
  const LaunchExport own = export_launch_config(config, LaunchFormat::kMeshfit);
  CHECK(own.text.find("keep me") != std::string::npos);
  CHECK(own.issues.empty());
  config.name = config.notes = "";
  config.training.tokens_to_train = 0;
  for (const Issue& issue : export_launch_config(config, LaunchFormat::kMegatron).issues)
    CHECK(issue.message.find("meshfit's, not in this") == std::string::npos);
}
