// test_validate.cpp — one test per IssueCode: the field named and the numbers in the sentence;
// every problem reported at once; no crash, NaN or silent clamp on hostile input.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <set>

#include "memory/memory_model.h"
#include "io/serialize.h"
#include "api.h"
#include "search/layout_search.h"
#include "spec/validate.h"

using namespace meshfit;
using nlohmann::json;

namespace {

json base() { return {{"model", "llama3-8b"}, {"gpus", 8}, {"seq", 4096}, {"global_batch", 64}}; }

std::vector<Issue> issues_for(const json& object) {
  ParsedConfig parsed = parse_config(object);
  if (has_errors(parsed.issues)) return parsed.issues;
  std::vector<Issue> issues = validate(parsed.config);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  return issues;
}

json with(json object, const json& changes) {
  object.update(changes);
  return object;
}

// The issue with `code`, checking its field and that its message contains each of `parts`.
void expect_issue(const json& object, IssueCode code, const std::string& field, std::initializer_list<const char*> parts) {
  const std::vector<Issue> issues = issues_for(object);
  CAPTURE(object.dump());
  const Issue* found = nullptr;
  for (const Issue& issue : issues)
    if (issue.code == code) found = &issue;
  REQUIRE_MESSAGE(found != nullptr, "expected " << to_string(code));
  CHECK(found->field == field);
  for (const char* part : parts) CHECK_MESSAGE(found->message.find(part) != std::string::npos, found->message);
}

}  // namespace

TEST_CASE("the base config is valid") { CHECK(issues_for(base()).empty()); }

TEST_CASE("not_positive") { expect_issue(with(base(), {{"seq", 0}}), IssueCode::kNotPositive, "seq", {"seq", "0"}); }
TEST_CASE("not_integer") { expect_issue(with(base(), {{"tp", 2.5}}), IssueCode::kNotInteger, "tp", {"2.5"}); }
TEST_CASE("not_integer for text") { expect_issue(with(base(), {{"gpus", "eight"}}), IssueCode::kNotInteger, "gpus", {"eight"}); }
TEST_CASE("out_of_range") {
  expect_issue(with(base(), {{"seq", 1LL << 40}}), IssueCode::kOutOfRange, "seq", {"1099511627776", "33554432"});
  expect_issue(with(base(), {{"zero", 4}}), IssueCode::kOutOfRange, "zero", {"4"});
}
TEST_CASE("unknown_model_preset") {
  expect_issue(with(base(), {{"model", "llama9-1t"}}), IssueCode::kUnknownModelPreset, "model", {"llama9-1t", "llama3.1-405b"});
}
TEST_CASE("unknown_gpu_preset") { expect_issue(with(base(), {{"gpu", "tpu-v5p"}}), IssueCode::kUnknownGpuPreset, "gpu", {"tpu-v5p", "h100-sxm"}); }
TEST_CASE("unknown_value") {
  expect_issue(with(base(), {{"recompute", "most"}}), IssueCode::kUnknownValue, "recompute", {"most", "selective"});
}
TEST_CASE("unknown_field") { expect_issue(with(base(), {{"tensor_parallel", 2}}), IssueCode::kUnknownField, "tensor_parallel", {"tensor_parallel"}); }
TEST_CASE("missing_model") {
  expect_issue({{"hidden", 4096}, {"layers", 32}}, IssueCode::kMissingModel, "model", {"heads", "ffn", "vocab"});
}
TEST_CASE("heads_not_divide_hidden") {
  expect_issue(with(base(), {{"heads", 30}, {"kv_heads", 10}}), IssueCode::kHeadsNotDivideHidden, "heads", {"30", "4096"});
}
TEST_CASE("kv_heads_not_divide_heads") {
  expect_issue(with(base(), {{"kv_heads", 5}}), IssueCode::kKvHeadsNotDivideHeads, "kv_heads", {"5", "32"});
}
TEST_CASE("layout_product_mismatch") {
  expect_issue(with(base(), {{"dp", 3}, {"tp", 2}}), IssueCode::kLayoutProductMismatch, "dp", {"3*2*1*1 = 6", "gpus=8"});
  expect_issue(with(base(), {{"gpus", 12}, {"tp", 8}}), IssueCode::kLayoutProductMismatch, "gpus", {"12", "8"});
}
TEST_CASE("tp_not_divide_heads") {
  expect_issue(with(base(), {{"model", "llama3.2-3b"}, {"gpus", 16}, {"tp", 16}, {"global_batch", 16}}),
               IssueCode::kTpNotDivideHeads, "tp", {"tp=16", "24 attention heads"});
}
TEST_CASE("tp_not_divide_kv_heads") {
  expect_issue(with(base(), {{"gpus", 16}, {"tp", 16}}), IssueCode::kTpNotDivideKvHeads, "tp", {"tp=16", "8 key/value heads"});
}
TEST_CASE("tp_not_divide_ffn") {
  expect_issue(with(base(), {{"ffn", 14337}, {"gpus", 2}, {"tp", 2}}), IssueCode::kTpNotDivideFfn, "tp", {"14337"});
}
TEST_CASE("pp_exceeds_layers") {
  expect_issue(with(base(), {{"model", "llama3.2-1b"}, {"gpus", 32}, {"pp", 32}, {"global_batch", 32}}),
               IssueCode::kPpExceedsLayers, "pp", {"32", "16 layers"});
}
TEST_CASE("pp_not_divide_layers (Megatron-LM only)") {
  const json object = with(base(), {{"pp", 3}, {"gpus", 6}, {"global_batch", 60}});
  expect_issue(object, IssueCode::kPpNotDivideLayers, "pp", {"pp=3", "32 layers"});
  CHECK(issues_for(with(object, {{"framework", "fsdp"}, {"zero", 3}})).empty());  // torchtitan splits unevenly
}
TEST_CASE("vpp_not_divide_layers") {
  expect_issue(with(base(), {{"pp", 4}, {"vpp", 3}}), IssueCode::kVppNotDivideLayers, "vpp", {"12", "32 layers"});
}
TEST_CASE("vpp_unsupported (nanotron has no interleaved schedule)") {
  expect_issue(with(base(), {{"framework", "nanotron"}, {"zero", 0}, {"pp", 4}, {"vpp", 2}}), IssueCode::kVppUnsupported, "vpp",
               {"vpp=2", "nanotron", "interleaved"});
}
TEST_CASE("vpp_without_pp") { expect_issue(with(base(), {{"vpp", 2}}), IssueCode::kVppWithoutPp, "vpp", {"vpp=2"}); }
TEST_CASE("vpp_microbatches") {
  expect_issue(with(base(), {{"pp", 4}, {"vpp", 2}, {"global_batch", 6}}), IssueCode::kVppMicrobatches, "global_batch",
               {"(3)", "pp=4"});
}
TEST_CASE("stage_layers_invalid") {
  expect_issue(with(base(), {{"pp", 4}, {"pp_first_stage_layers", 20}, {"pp_last_stage_layers", 20}}),
               IssueCode::kStageLayersInvalid, "pp_first_stage_layers", {"20+20"});
}
TEST_CASE("batch_not_divisible") {
  expect_issue(with(base(), {{"global_batch", 100}, {"micro_batch", 2}}), IssueCode::kBatchNotDivisible, "global_batch",
               {"100", "8*2 = 16"});
}
TEST_CASE("cp_not_divide_seq") {
  expect_issue(with(base(), {{"seq", 4098}, {"cp", 4}, {"gpus", 8}}), IssueCode::kCpNotDivideSeq, "cp", {"4098", "2*cp = 8"});
}
TEST_CASE("zero_unsupported") {
  expect_issue(with(base(), {{"zero", 3}}), IssueCode::kZeroUnsupported, "zero", {"Megatron-LM"});
  expect_issue(with(base(), {{"zero", 1}, {"framework", "fsdp"}}), IssueCode::kZeroUnsupported, "zero", {"FSDP2"});
}
TEST_CASE("precision_unsupported") {
  expect_issue(with(base(), {{"gpu", "a100-80gb"}, {"precision", "fp8"}}), IssueCode::kPrecisionUnsupported, "precision",
               {"A100"});
}
TEST_CASE("threshold_out_of_range") {
  expect_issue(with(base(), {{"headroom", 1.5}}), IssueCode::kThresholdOutOfRange, "headroom", {"1.5"});
}
TEST_CASE("gpus_per_node_mismatch is a warning, not an error") {
  const json object = with(base(), {{"gpus", 12}, {"global_batch", 12}});
  expect_issue(object, IssueCode::kGpusPerNodeMismatch, "gpus", {"12", "8"});
  CHECK_FALSE(has_errors(issues_for(object)));
}
TEST_CASE("a custom GPU needs its memory") {
  expect_issue(with(base(), {{"gpu", "custom"}, {"gpu_bf16_tflops", 400}, {"gpu_hbm_tbps", 2}}), IssueCode::kNotPositive,
               "gpu_memory_gib", {"custom GPU"});
}

// An as-a-user review gave 1e-300 GiB and read a 300-digit share of capacity.
TEST_CASE("gpu_memory_gib below 64 MiB is refused with its range, 64 MiB is taken") {
  for (double gib : {1e-300, 0.01, 0.0624}) {
    CAPTURE(gib);
    const ParsedConfig parsed = parse_config(with(base(), {{"gpu", "custom"}, {"gpu_memory_gib", gib}}));
    REQUIRE(has_errors(parsed.issues));
    CHECK(parsed.issues.front().field == "gpu_memory_gib");
    CHECK(parsed.issues.front().message.find("from 0.0625 (64 MiB)") != std::string::npos);
  }
  Config written = parse_config(base()).config;  // a front end that writes the struct: validate() says the same
  written.gpu.memory_bytes = 1e-3;
  bool refused = false;
  for (const Issue& issue : validate(written)) refused |= issue.field == "gpu_memory_gib" && issue.code == IssueCode::kOutOfRange;
  CHECK(refused);
  const ParsedConfig smallest = parse_config(with(base(), {{"gpu", "custom"}, {"gpu_memory_gib", 0.0625}}));
  CHECK_FALSE(has_errors(smallest.issues));
  CHECK(smallest.config.gpu.memory_bytes == 64.0 * 1024 * 1024);
}

TEST_CASE("first and last stage layers past the model's layers give their sum, not a negative remainder") {
  expect_issue(with(base(), {{"pp", 2}, {"gpus", 16}, {"pp_first_stage_layers", 16}, {"pp_last_stage_layers", 17}}),
               IssueCode::kStageLayersInvalid, "pp_first_stage_layers", {"16+17 = 33 exceed the model's 32 layers"});
}

TEST_CASE("a LoRA rank past the hidden size is estimated as given, with a warning naming both") {
  const json lora = with(base(), {{"finetune", "lora"}, {"gpus", 1}, {"global_batch", 1}, {"lora_rank", 100000}});
  expect_issue(lora, IssueCode::kOutOfRange, "lora_rank", {"lora_rank=100000", "hidden size 4096"});
  CHECK_FALSE(has_errors(issues_for(lora)));
  bool warned = false;
  for (const Issue& issue : issues_for(with(lora, {{"lora_rank", 4096}}))) warned |= issue.field == "lora_rank";
  CHECK_FALSE(warned);  // a rank equal to the hidden size is full rank, not past it
}

TEST_CASE("methods on a custom GPU with only its memory: no step time, a warning, and the ranking by memory") {
  const json out = run_methods(with(base(), {{"gpu", "custom"}, {"gpu_memory_gib", 24}, {"gpus", 2}, {"seq", 2048},
                                             {"global_batch", 2}}));
  REQUIRE(out["ok"].get<bool>());
  bool warned = false;
  for (const json& issue : out["issues"]) warned |= issue["severity"] == "warning" && issue["field"] == "gpu";
  CHECK(warned);
  REQUIRE(out["ranked"].size() > 1);
  double previous = 0;
  std::string previous_verdict = "fits";
  for (const json& m : out["ranked"]) {
    CAPTURE(m["strategy"].get<std::string>());
    CHECK(m["step_time_s"].is_null());
    CHECK(m["tokens_per_s_per_gpu"].is_null());
    const double bytes = m["device_bytes"].get<double>();
    if (m["verdict"] == previous_verdict) CHECK(bytes >= previous);  // within fits, then within tight: smaller first
    previous = m["verdict"] == previous_verdict ? bytes : 0;
    previous_verdict = m["verdict"].get<std::string>();
  }
}

TEST_CASE("a custom GPU with only its memory gets memory but no step time, the search asks for its compute figures, and every figure can be set") {
  const ParsedConfig memory_only = parse_config(with(base(), {{"gpu", "custom"}, {"gpu_memory_gib", 64}}));
  REQUIRE_FALSE(has_errors(memory_only.issues));
  const Estimate result = estimate(memory_only.config);
  REQUIRE(result.valid());
  CHECK(result.step.step_time_s == 0);
  CHECK(result.step.tokens_per_s_per_gpu == 0);
  bool warned = false;
  for (const Issue& issue : result.memory.issues) warned |= issue.severity == Severity::kWarning && issue.field == "gpu";
  CHECK(warned);
  const SearchResult search = search_layouts(memory_only.config, SearchOptions{});
  bool asks_bf16 = false, asks_hbm = false;
  for (const Issue& issue : search.issues) {
    asks_bf16 |= issue.severity == Severity::kError && issue.field == "gpu_bf16_tflops";
    asks_hbm |= issue.severity == Severity::kError && issue.field == "gpu_hbm_tbps";
  }
  CHECK(asks_bf16);
  CHECK(asks_hbm);
  const ParsedConfig parsed = parse_config(with(base(), {{"gpu", "custom"}, {"gpu_memory_gib", 64}, {"gpu_bf16_tflops", 400},
                                                        {"gpu_fp8_tflops", 800}, {"gpu_hbm_tbps", 2.5}, {"gpu_nvlink_gbps", 500},
                                                        {"gpu_nic_gbps", 200}, {"gpu_nvlink_domain", 4},
                                                        {"gpu_bf16_gemm_ceiling", 0.7}, {"gpu_power_limit_w", 300},
                                                        {"gpu_tdp_w", 400}}));
  REQUIRE(parsed.issues.empty());
  const GpuSpec& gpu = parsed.config.gpu;
  CHECK(gpu.bf16_flops == doctest::Approx(400e12));
  CHECK(gpu.fp8_flops == doctest::Approx(800e12));
  CHECK(gpu.hbm_bytes_per_s == doctest::Approx(2.5e12));
  CHECK(gpu.nvlink_bytes_per_s == doctest::Approx(500e9));
  CHECK(gpu.internode_bytes_per_s == doctest::Approx(25e9));
  CHECK(gpu.nvlink_domain == 4);
  CHECK(gpu.bf16_gemm_ceiling == doctest::Approx(0.7));
  CHECK(power_cap_clock_fraction(gpu) == doctest::Approx(std::cbrt(0.75)));
}

TEST_CASE("every problem is reported at once") {
  const std::vector<Issue> issues =
      issues_for(with(base(), {{"tp", 3}, {"seq", 4097}, {"cp", 2}, {"global_batch", 7}, {"gpus", 12}, {"headroom", 0}}));
  std::set<IssueCode> codes;
  for (const Issue& issue : issues) codes.insert(issue.code);
  CHECK(codes.count(IssueCode::kTpNotDivideHeads) == 1);
  CHECK(codes.count(IssueCode::kTpNotDivideKvHeads) == 1);
  CHECK(codes.count(IssueCode::kCpNotDivideSeq) == 1);
  CHECK(codes.count(IssueCode::kThresholdOutOfRange) == 1);
  CHECK(codes.count(IssueCode::kBatchNotDivisible) == 1);
}

TEST_CASE("hostile input never crashes and never yields NaN: 20000 random configs") {
  std::mt19937_64 random(12345);
  const std::vector<json> values = {0, -1, 1, 2, 3, 7, 8, 64, 1000, 1LL << 31, 1LL << 62, 0.5, -3.7, 1e300, "x", true, nullptr};
  const std::vector<const char*> fields = {"hidden", "layers", "heads", "kv_heads", "ffn", "vocab", "gpus", "seq",
                                           "global_batch", "micro_batch", "dp", "tp", "pp", "cp", "vpp", "zero",
                                           "gpu_memory_gib", "headroom", "pp_first_stage_layers", "pp_last_stage_layers"};
  int valid = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    json object = base();
    const int changes = 1 + int(random() % 3);
    for (int i = 0; i < changes; ++i) object[fields[random() % fields.size()]] = values[random() % values.size()];
    ParsedConfig parsed = parse_config(object);
    if (has_errors(parsed.issues)) continue;
    const MemoryReport report = estimate_memory(parsed.config);
    if (!report.valid()) {
      CHECK(report.ranks.empty());
      continue;
    }
    ++valid;
    for (const RankMemory& rank : report.ranks) {
      CAPTURE(object.dump());
      REQUIRE(std::isfinite(rank.device_bytes));
      REQUIRE(rank.device_bytes > 0);
    }
  }
  CHECK(valid > 100);  // the sweep also exercised valid estimates
}

TEST_CASE("finetune_unsupported") {
  expect_issue(with(base(), {{"finetune", "qlora"}, {"tp", 2}}), IssueCode::kFinetuneUnsupported, "tp", {"qlora", "tp=2"});
  expect_issue(with(base(), {{"finetune", "lora"}, {"framework", "deepspeed"}, {"zero", 2}, {"offload", "params"}}),
               IssueCode::kFinetuneUnsupported, "offload", {"offload=params", "zero=2"});
}
TEST_CASE("unknown_value for lora_targets") {
  expect_issue(with(base(), {{"finetune", "lora"}, {"lora_targets", "q,z"}}), IssueCode::kUnknownValue, "lora_targets", {"q,z"});
}
TEST_CASE("dp_comm_overlap=off with FSDP2 is a warning naming the field, not a silent no-op") {
  expect_issue(with(base(), {{"framework", "fsdp"}, {"zero", 3}, {"dp_comm_overlap", "off"}}), IssueCode::kUnsupportedSetting,
               "dp_comm_overlap", {"off", "FSDP2", "predicted as on"});
  // The same setting elsewhere, and FSDP2 with auto/on, say nothing.
  for (const json& object : {with(base(), {{"framework", "deepspeed"}, {"zero", 1}, {"dp_comm_overlap", "off"}}),
                             with(base(), {{"framework", "fsdp"}, {"zero", 3}, {"dp_comm_overlap", "on"}})})
    for (const Issue& issue : issues_for(object)) CHECK(issue.field != "dp_comm_overlap");
}

TEST_CASE("a framework given by its software's name is read as the profile that models it, and written back canonically") {
  const std::pair<const char*, Framework> names[] = {{"torchtitan", Framework::kFsdp},        {"fsdp2", Framework::kFsdp},
                                                     {"megatron-lm", Framework::kMegatron},   {"megatron-bridge", Framework::kMegatron},
                                                     {"nemo", Framework::kMegatron},          {"megatron-deepspeed", Framework::kDeepSpeed}};
  for (const auto& name : names) {
    CAPTURE(name.first);
    const ParsedConfig parsed = parse_config(with(base(), {{"framework", name.first}}));
    REQUIRE_FALSE(has_errors(parsed.issues));
    CHECK(parsed.config.training.framework == name.second);
    CHECK(parsed.config.layout.zero == framework_profile(name.second).default_zero);
    CHECK(config_to_json(parsed.config)["framework"] == enum_key(name.second));
  }
  // The zero_unsupported message lists profiles, not their aliases.
  expect_issue(with(base(), {{"framework", "nanotron"}, {"zero", 3}}), IssueCode::kZeroUnsupported, "zero", {"fsdp or deepspeed"});
}

TEST_CASE("norm_kernel on a LayerNorm model or under torch.compile is a warning naming the field, not a silent no-op") {
  expect_issue(with(base(), {{"model", "gpt3-1.3b"}, {"norm_kernel", "eager"}}), IssueCode::kUnsupportedSetting, "norm_kernel",
               {"LayerNorm", "predicted as fused"});
  expect_issue(with(base(), {{"kernels", "compiled"}, {"norm_kernel", "eager"}}), IssueCode::kUnsupportedSetting,
               "norm_kernel", {"torch.compile", "predicted as fused"});
  // Where it takes effect, or says what compile does anyway, nothing is reported.
  for (const json& object : {with(base(), {{"norm_kernel", "eager"}}), with(base(), {{"norm_kernel", "fused"}}),
                             with(base(), {{"kernels", "compiled"}, {"norm_kernel", "fused"}})})
    for (const Issue& issue : issues_for(object)) CHECK(issue.field != "norm_kernel");
}

TEST_CASE("bf16 on a V100 is a warning naming the precision: its runs are fp16 mixed, which the estimate stands for") {
  expect_issue(with(base(), {{"gpu", "v100"}}), IssueCode::kPrecisionUnsupported, "precision", {"no BF16", "fp16"});
  for (const Issue& issue : issues_for(with(base(), {{"gpu", "a100-80gb"}}))) CHECK(issue.field != "precision");
}

TEST_CASE("every problem at once: a config without a model still has its other fields checked") {
  // An as-a-user review: {gpus: 0} reported only missing_model, though the README promises every
  // problem listed at once. The missing model's dimensions are not reported one by one.
  // The same in every call that evaluates a config (methods was missed when this was added).
  for (const nlohmann::json& out : {run_estimate({{"gpus", 0}, {"seq", -5}}), run_search({{"gpus", 0}, {"seq", -5}}, nlohmann::json::object()),
                                    run_methods({{"gpus", 0}, {"seq", -5}}), run_fit_advice({{"gpus", 0}, {"seq", -5}})}) {
    CHECK_FALSE(out["ok"].get<bool>());
    std::set<std::string> fields;
    for (const nlohmann::json& issue : out["issues"]) fields.insert(issue["field"].get<std::string>());
    CHECK(fields == std::set<std::string>{"model", "gpus", "seq"});
  }
  // A field already refused by parsing keeps that one message.
  const nlohmann::json bad = run_estimate({{"model", "llama3-8b"}, {"gpus", "many"}, {"tp", 3}});
  int gpus = 0, tp = 0;
  for (const nlohmann::json& issue : bad["issues"]) {
    gpus += issue["field"] == "gpus";
    tp += issue["field"] == "tp";
  }
  CHECK(gpus == 1);
  CHECK(tp >= 1);
}

// An as-a-user review: each of these was accepted without a word.
TEST_CASE("fine-tuning settings that have no effect, or no stack to run them, are said") {
  expect_issue(with(base(), {{"lora_rank", 64}}), IssueCode::kUnsupportedSetting, "lora_rank", {"finetune=none", "ignores"});
  expect_issue(with(base(), {{"stack", "torchtune"}}), IssueCode::kUnsupportedSetting, "stack", {"finetune=none"});
  // The defaults, as a whole config writes them for every run, are not said.
  CHECK(issues_for(with(base(), {{"lora_rank", 16}, {"stack", "hf_peft"}})).empty());
  const json qlora = with(base(), {{"finetune", "qlora"}, {"tp", 1}, {"gpus", 1}, {"dp", 1}, {"pp", 1}, {"global_batch", 1}});
  expect_issue(with(qlora, {{"precision", "fp8"}}), IssueCode::kFinetuneUnsupported, "precision", {"bnb_4bit_compute_dtype"});
  expect_issue(with(qlora, {{"framework", "nanotron"}}), IssueCode::kFinetuneUnsupported, "framework", {"nanotron has no LoRA"});
  // Megatron-LM's TP fine-tunes are rows of the Methods ranking: not warned.
  for (const Issue& issue : issues_for(with(qlora, {{"finetune", "lora"}, {"framework", "megatron"}})))
    CHECK(issue.field != "framework");
}
