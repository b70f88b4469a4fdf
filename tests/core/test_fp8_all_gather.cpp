// test_fp8_all_gather.cpp — torchao float8 under FSDP2 with enable_fsdp_float8_all_gather
// (FRAMEWORK_NOTES §1.9): the blocks' Linear weights are all-gathered and held unsharded at 1 B
// instead of 2; norms, the embedding and the output projection stay bf16. And Transformer Engine's
// fp8 (Megatron-LM): the GEMMs' saved inputs are fp8 (FRAMEWORK_NOTES §2.3 "Activations").
#include <doctest/doctest.h>

#include "fixtures.h"
#include "io/launch_config.h"
#include "memory/memory_model.h"
#include "memory/parameter_count.h"
#include "perf/perf_model.h"
#include "spec/validate.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {

Config float8(const char* model, int64_t gpus, int64_t tp, int64_t pp, bool gather) {
  Config config = preset_config(model, gpus, tp, pp);
  config.training.framework = Framework::kFsdp;
  config.layout.zero = pp > 1 ? 2 : 3;  // torchtitan's "default" reshard policy
  config.training.precision = Precision::kFp8;
  config.training.fp8_all_gather = gather;
  config.training.seq = 8192;
  config.training.micro_batch = 1;
  config.training.global_batch = gpus / (tp * pp) * 8;
  config.training.recompute = Recompute::kFull;
  return config;
}

bool names(const std::vector<Issue>& issues, Severity severity, const char* text) {
  for (const Issue& issue : issues)
    if (issue.severity == severity && issue.field == "fp8_all_gather" && issue.message.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("under PP the stage's unsharded Linear weights take 1 B each with fp8 all-gather") {
  const Config bf16_gather = float8("llama3.1-70b", 256, 8, 4, false);
  const Config fp8_gather = float8("llama3.1-70b", 256, 8, 4, true);
  REQUIRE_FALSE(has_errors(validate(fp8_gather)));
  const MemoryReport a = estimate_memory(bf16_gather), b = estimate_memory(fp8_gather);
  const double linear = linear_weights_on_tp_rank(fp8_gather.model, 8);
  for (size_t stage = 0; stage < a.ranks.size(); ++stage) {
    const RankMemory &ra = a.ranks[stage], &rb = b.ranks[stage];
    INFO("stage " << stage);
    CHECK(ra.intermediates.unsharded_parameter_bytes - rb.intermediates.unsharded_parameter_bytes ==
          doctest::Approx(double(ra.intermediates.layers) * linear));
    CHECK(rb.bytes(Component::kWeights) == doctest::Approx(ra.bytes(Component::kWeights)));  // fp32 shards unchanged
    CHECK(rb.device_bytes < ra.device_bytes);
  }
}

TEST_CASE("without PP only the gathered blocks shrink: two blocks' Linear weights at 1 B") {
  // GPT-3 175B: a block (1.8 B parameters) outweighs the head unit (0.6 B), so the block's backward
  // is the comm-buffer peak; its biases and LayerNorms stay bf16.
  const Config bf16_gather = float8("gpt3-175b", 64, 1, 1, false);
  const Config fp8_gather = float8("gpt3-175b", 64, 1, 1, true);
  const RankMemory a = estimate_memory(bf16_gather).worst(), b = estimate_memory(fp8_gather).worst();
  const double linear = linear_weights_on_tp_rank(fp8_gather.model, 1);
  CHECK(a.bytes(Component::kCommBuffers) - b.bytes(Component::kCommBuffers) == doctest::Approx(2.0 * linear));
  // And the step moves fewer bytes in its all-gathers.
  const StepReport sa = predict_step(bf16_gather, plan_memory(bf16_gather));
  const StepReport sb = predict_step(fp8_gather, plan_memory(fp8_gather));
  CHECK(sb.step_time_s <= sa.step_time_s);
}

TEST_CASE("fp8_all_gather is checked: FSDP2 or Megatron, precision fp8, sharded weights, and a one-rank shard group turns it off") {
  Config deepspeed = float8("llama3.1-8b", 64, 1, 1, true);
  deepspeed.training.framework = Framework::kDeepSpeed;
  deepspeed.layout.zero = 1;
  CHECK(names(validate(deepspeed), Severity::kError, "FSDP2"));
  // Megatron-LM --fp8-param-gather: the GEMM weights are TE fp8 tensors (1 B + the 1 B Hopper
  // transpose) in place of the bf16 copy and the fp8 cache (2 B more per GEMM weight): the weights
  // are the bf16 weights' bytes, the cache gone; it needs the distributed optimizer.
  Config megatron = float8("llama3.1-8b", 64, 1, 1, true);
  megatron.training.framework = Framework::kMegatron;
  megatron.layout.zero = 1;
  CHECK_FALSE(has_errors(validate(megatron)));
  Config cached = megatron;
  cached.training.fp8_all_gather = false;
  const RankMemory with = estimate_memory(megatron).worst(), without = estimate_memory(cached).worst();
  CHECK(without.bytes(Component::kWeights) - with.bytes(Component::kWeights) ==
        doctest::Approx(2.0 * double(with.intermediates.layers) * with.intermediates.layer_parameters));
  Config no_distributed = megatron;
  no_distributed.layout.zero = 0;
  CHECK(names(validate(no_distributed), Severity::kError, "distributed optimizer"));
  // Read from --fp8-param-gather and written back.
  const LaunchExport flags = export_launch_config(megatron, LaunchFormat::kMegatron);
  CHECK(flags.text.find("--fp8-param-gather") != std::string::npos);
  CHECK(import_launch_config(LaunchFormat::kMegatron, flags.text).fields["fp8_all_gather"] == true);
  Config bf16 = float8("llama3.1-8b", 64, 1, 1, true);
  bf16.training.precision = Precision::kBf16;
  CHECK(names(validate(bf16), Severity::kError, "precision=fp8"));
  Config ddp = float8("llama3.1-8b", 64, 1, 1, true);
  ddp.layout.zero = 0;
  CHECK(names(validate(ddp), Severity::kError, "sharded weights"));
  Config one = float8("llama3.1-8b", 8, 8, 1, true);  // dp 1: nothing to shard
  CHECK(names(validate(one), Severity::kWarning, "no effect"));
  Config off = one;
  off.training.fp8_all_gather = false;
  CHECK(estimate_memory(one).worst().device_bytes == doctest::Approx(estimate_memory(off).worst().device_bytes));
}

TEST_CASE("torchtitan's [float8] enable_fsdp_float8_all_gather reads into fp8_all_gather and is written back") {
  const LaunchImport on = import_torchtitan_toml(
      "[model]\nconverters = [\"float8\"]\n[float8]\nenable_fsdp_float8_all_gather = true\n");
  CHECK(on.fields["fp8_all_gather"] == true);
  const LaunchImport rowwise = import_torchtitan_toml(
      "[model]\nconverters = [\"float8\"]\n[float8]\nenable_fsdp_float8_all_gather = true\nrecipe_name = \"rowwise\"\n");
  CHECK_FALSE(rowwise.fields.contains("fp8_all_gather"));
  const LaunchImport off = import_torchtitan_toml("[model]\nconverters = [\"float8\"]\n");
  CHECK_FALSE(off.fields.contains("fp8_all_gather"));
  for (bool gather : {true, false}) {
    const Config config = float8("llama3.1-8b", 64, 1, 1, gather);
    const LaunchExport out = export_launch_config(config, LaunchFormat::kTorchtitan);
    for (const Issue& issue : out.issues) CHECK(issue.field != "export");
    std::vector<Issue> issues;
    CHECK(apply_import(config, import_launch_config(LaunchFormat::kTorchtitan, out.text), issues).training.fp8_all_gather == gather);
  }
}

TEST_CASE("Transformer Engine fp8 saves the GEMM inputs at 1 B, torchao float8 keeps them in bf16") {
  // Llama 3 8B, Megatron-LM tp2 + SP: QKV and fc1 inputs 2sbh/t less, the fc2 input sbf/t less, the
  // output projection's fp8 copy of the attention output sbh/t more (TE linear.py saved_inputmat).
  Config bf16 = preset_config("llama3-8b", 8, 2, 1);
  bf16.training.framework = Framework::kMegatron;
  bf16.training.sp = true;
  bf16.training.seq = 8192;
  bf16.training.micro_batch = 1;
  bf16.training.global_batch = 32;
  Config fp8 = bf16;
  fp8.training.precision = Precision::kFp8;
  REQUIRE_FALSE(has_errors(validate(fp8)));
  const double sbh = 8192.0 * 4096.0, f = 14336.0, h = 4096.0, t = 2.0;
  const double saved = plan_memory(bf16).layer_activations.stored - plan_memory(fp8).layer_activations.stored;
  CHECK(saved == doctest::Approx(2.0 * sbh / t + sbh * (f / h - 1.0) / t));
  // Selective recompute drops the attention core, not these; full recompute keeps the layer input only.
  bf16.training.recompute = fp8.training.recompute = Recompute::kFull;
  CHECK(plan_memory(fp8).layer_activations.stored == doctest::Approx(plan_memory(bf16).layer_activations.stored));
  // torchtitan's float8 (torchao Float8Linear) saves the bf16 inputs: no change.
  Config titan_fp8 = float8("llama3.1-8b", 8, 1, 1, false);
  titan_fp8.training.recompute = Recompute::kNone;
  Config titan_bf16 = titan_fp8;
  titan_bf16.training.precision = Precision::kBf16;
  CHECK(plan_memory(titan_fp8).layer_activations.stored == doctest::Approx(plan_memory(titan_bf16).layer_activations.stored));
}
