// test_replicas.cpp — replicated shard groups (Layout::dp_replicate): torchtitan HSDP, Megatron-LM
// --num-distributed-optimizer-instances, DeepSpeed ZeRO-3 MiCS. The states are sharded over
// dp x cp / dp_replicate ranks (FRAMEWORK_NOTES §1.1 "Mesh", §2.1); validation names the field; imports,
// exports, the search and the layout repair keep the value or say where it changed.
#include <doctest/doctest.h>

#include <cmath>

#include "fixtures.h"
#include "io/launch_config.h"
#include "memory/memory_model.h"
#include "memory/overheads.h"
#include "perf/perf_model.h"
#include "search/fit_advice.h"
#include "search/layout_repair.h"
#include "search/layout_search.h"
#include "spec/structure.h"
#include "spec/validate.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {

Config sharded(Framework framework, int64_t zero, int64_t gpus, int64_t replicas) {
  Config config = preset_config("llama3.1-8b", gpus);
  config.training.framework = framework;
  config.layout.zero = zero;
  config.layout.dp_replicate = replicas;
  config.training.global_batch = gpus;
  config.training.micro_batch = 1;
  return config;
}

bool names(const std::vector<Issue>& issues, const char* field, const char* text) {
  for (const Issue& issue : issues)
    if (issue.code == IssueCode::kReplicasInvalid && issue.field == field && issue.message.find(text) != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST_CASE("HSDP shards the FSDP2 states over dp / dp_replicate ranks and holds the all-reduced fp32 shard") {
  const MemoryReport full = estimate_memory(sharded(Framework::kFsdp, 3, 16, 1));
  const MemoryReport hsdp = estimate_memory(sharded(Framework::kFsdp, 3, 16, 2));
  REQUIRE(full.valid());
  REQUIRE(hsdp.valid());
  CHECK(full.optimizer_shard_ranks == 16);
  CHECK(hsdp.optimizer_shard_ranks == 8);
  // Weights, gradients and optimizer states: one shard of eight instead of one of sixteen.
  for (Component component : {Component::kWeights, Component::kGradients, Component::kOptimizerStates})
    CHECK(hsdp.worst().bytes(component) == doctest::Approx(2.0 * full.worst().bytes(component)).epsilon(0.01));
  CHECK(hsdp.worst().bytes(Component::kActivations) == doctest::Approx(full.worst().bytes(Component::kActivations)));
  // The shard group and the replica group are communicators of their own.
  CHECK(hsdp.worst().bytes(Component::kNccl) - full.worst().bytes(Component::kNccl) ==
        doctest::Approx(2.0 * kNcclBytesPerCommunicator));
  CHECK(hsdp.worst().device_bytes > full.worst().device_bytes);
}

TEST_CASE("Megatron's distributed-optimizer instances replicate the optimizer, not the fp32 gradient buffer") {
  const MemoryReport one = estimate_memory(sharded(Framework::kMegatron, 1, 16, 1));
  const MemoryReport four = estimate_memory(sharded(Framework::kMegatron, 1, 16, 4));
  REQUIRE(four.valid());
  CHECK(four.optimizer_shard_ranks == 4);
  CHECK(four.worst().bytes(Component::kOptimizerStates) == doctest::Approx(4.0 * one.worst().bytes(Component::kOptimizerStates)).epsilon(0.01));
  CHECK(four.worst().bytes(Component::kGradients) == doctest::Approx(one.worst().bytes(Component::kGradients)));
  CHECK(four.worst().bytes(Component::kWeights) == doctest::Approx(one.worst().bytes(Component::kWeights)));
}

TEST_CASE("DeepSpeed MiCS at ZeRO-3 shards weights, gradients and optimizer inside the group") {
  const MemoryReport one = estimate_memory(sharded(Framework::kDeepSpeed, 3, 32, 1));
  const MemoryReport mics = estimate_memory(sharded(Framework::kDeepSpeed, 3, 32, 4));
  REQUIRE(mics.valid());
  for (Component component : {Component::kWeights, Component::kGradients, Component::kOptimizerStates})
    CHECK(mics.worst().bytes(component) == doctest::Approx(4.0 * one.worst().bytes(component)).epsilon(0.01));
}

TEST_CASE("dp_replicate is checked: whole groups of more than one rank, at a stage and framework that have them") {
  CHECK(names(validate(sharded(Framework::kFsdp, 3, 16, 3)), "dp_replicate", "does not divide dp=16"));
  CHECK(names(validate(sharded(Framework::kFsdp, 3, 16, 16)), "dp_replicate", "shard groups of one rank"));
  CHECK(names(validate(sharded(Framework::kFsdp, 0, 16, 2)), "dp_replicate", "needs zero >= 2"));
  CHECK(names(validate(sharded(Framework::kDeepSpeed, 2, 16, 2)), "dp_replicate", "MiCS"));
  CHECK(names(validate(sharded(Framework::kNanotron, 1, 16, 2)), "dp_replicate", "nanotron"));
  Config zero = sharded(Framework::kFsdp, 3, 16, 0);
  bool refused = false;
  for (const Issue& issue : validate(zero)) refused |= issue.field == "dp_replicate" && issue.severity == Severity::kError;
  CHECK(refused);
  // cp counts in the shard group: dp = 8 replicas of a (1 x cp 2) group still shards.
  Config with_cp = sharded(Framework::kFsdp, 3, 16, 8);
  with_cp.layout.cp = 2;
  CHECK_FALSE(has_errors(validate(with_cp)));
  CHECK(shard_group_ranks(with_cp) == 2);
}

// Megatron-LM's instances slice the data-parallel-with-cp group (parallel_state.py
// initialize_model_parallel: (dp x cp) % instances == 0, intra-partial groups of dp x cp / instances
// ranks), so 4 instances at dp 2 x cp 4 hold; torchtitan's replicate dimension is a dp dimension only.
TEST_CASE("Megatron's instances divide dp x cp, HSDP's replicas divide dp") {
  auto with_cp = [](Framework framework, int64_t zero) {
    Config config = sharded(framework, zero, 16, 4);
    config.layout.tp = 2;
    config.layout.cp = 4;  // dp = 16 / (2 x 4) = 2
    config.training.global_batch = 2;
    return config;
  };
  const Config megatron = with_cp(Framework::kMegatron, 1);
  CHECK_FALSE(has_errors(validate(megatron)));
  CHECK(shard_group_ranks(megatron) == 2);
  const MemoryReport sliced = estimate_memory(megatron);
  Config whole = megatron;
  whole.layout.dp_replicate = 1;
  const MemoryReport full = estimate_memory(whole);
  REQUIRE(sliced.valid());
  CHECK(sliced.optimizer_shard_ranks == 2);
  CHECK(full.optimizer_shard_ranks == 8);
  CHECK(sliced.worst().bytes(Component::kOptimizerStates) ==
        doctest::Approx(4.0 * full.worst().bytes(Component::kOptimizerStates)).epsilon(0.01));
  const FrameworkProfile& profile = framework_profile(Framework::kMegatron);
  CHECK(replicas_choices(megatron) == std::vector<int64_t>{1, 2, 4});  // 8 would leave one-rank groups
  CHECK(most_replicas_holding(profile, 8, 1, 2, 4) == 4);
  Config too_many = megatron;
  too_many.layout.dp_replicate = 3;
  CHECK(names(validate(too_many), "dp_replicate", "does not divide dp x cp = 8"));
  CHECK(names(validate(with_cp(Framework::kFsdp, 3)), "dp_replicate", "does not divide dp=2"));
  // The step: an instance is 2 ranks at stride tp inside a node; the 4 instances span both nodes.
  const StepReport step = predict_step(megatron, plan_memory(megatron));
  CHECK(step.dp_crosses_nodes);
  CHECK(std::isfinite(step.step_time_s));
  CHECK(step.step_time_s > 0);
  CHECK(step.breakdown.dp_comm_s != doctest::Approx(predict_step(whole, plan_memory(whole)).breakdown.dp_comm_s));
}

TEST_CASE("imports read HSDP, distributed-optimizer instances and MiCS, and exports write them back") {
  const LaunchImport titan = import_torchtitan_toml(
      "[parallelism]\ndata_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 8\ntensor_parallel_degree = 2\n");
  CHECK(titan.fields["dp_replicate"] == 4);
  CHECK(titan.fields["dp"] == 32);
  // replicate x shard 1 without cp is torchtitan's DDP: no replicas field, zero 0.
  const LaunchImport ddp = import_torchtitan_toml("[parallelism]\ndata_parallel_replicate_degree = 8\ndata_parallel_shard_degree = 1\n");
  CHECK_FALSE(ddp.fields.contains("dp_replicate"));
  CHECK(ddp.fields["zero"] == 0);

  const LaunchImport megatron =
      import_megatron_args("pretrain_gpt.py --use-distributed-optimizer --num-distributed-optimizer-instances 2");
  CHECK(megatron.fields["dp_replicate"] == 2);

  const LaunchImport mics = import_deepspeed_json(
      R"({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, "mics_shard_size": 8}})");
  REQUIRE(mics.ok());
  std::vector<Issue> issues;
  const nlohmann::json resolved = resolve_import(mics, nlohmann::json{{"model", "llama3.1-8b"}, {"gpus", 64}, {"seq", 4096}}, issues);
  CHECK(resolved["dp_replicate"] == 8);  // 64 / 8
  issues.clear();
  resolve_import(mics, nlohmann::json{{"model", "llama3.1-8b"}, {"gpus", 12}, {"seq", 4096}}, issues);
  bool refused = false;
  for (const Issue& issue : issues) refused |= issue.code == IssueCode::kReplicasInvalid && issue.field == "dp_replicate";
  CHECK(refused);

  // Each format's export reads back with the same replicas and no "not carried" warning.
  for (auto [format, framework, zero] : {std::tuple{LaunchFormat::kTorchtitan, Framework::kFsdp, int64_t(3)},
                                         {LaunchFormat::kMegatron, Framework::kMegatron, int64_t(1)},
                                         {LaunchFormat::kDeepSpeed, Framework::kDeepSpeed, int64_t(3)}}) {
    const Config config = sharded(framework, zero, 32, 4);
    REQUIRE_FALSE(has_errors(validate(config)));
    const LaunchExport out = export_launch_config(config, format);
    INFO(out.text);
    for (const Issue& issue : out.issues) CHECK(issue.field != "export");
    std::vector<Issue> read_issues;
    const Config back = apply_import(config, import_launch_config(format, out.text), read_issues);
    CHECK(back.layout.dp_replicate == 4);
  }
}

// FSDP's HYBRID_SHARD shards over the node's GPUs (torch/distributed/fsdp/_init_utils.py
// _init_intra_and_inter_node_groups with torch.cuda.device_count()): the HF Trainer file writes it
// for shard groups of one node and says what it leaves out otherwise.
TEST_CASE("the HF Trainer export writes hybrid_shard where a shard group is one node") {
  Config config = sharded(Framework::kFsdp, 3, 32, 4);  // 4 nodes of 8, groups of 8
  config.training.finetune = FinetuneMethod::kFull;
  auto warned = [](const LaunchExport& out) {
    for (const Issue& issue : out.issues)
      if (issue.field == "dp_replicate") return true;
    return false;
  };
  const LaunchExport node = export_launch_config(config, LaunchFormat::kHfTrainer);
  CHECK(node.text.find("\"hybrid_shard auto_wrap\"") != std::string::npos);
  CHECK_FALSE(warned(node));
  config.layout.zero = 2;
  CHECK(export_launch_config(config, LaunchFormat::kHfTrainer).text.find("\"hybrid_shard_zero2 auto_wrap\"") != std::string::npos);
  config.layout.dp_replicate = 2;  // groups of 16 ranks: two nodes, not what HYBRID_SHARD builds
  const LaunchExport two_nodes = export_launch_config(config, LaunchFormat::kHfTrainer);
  CHECK(two_nodes.text.find("hybrid_shard") == std::string::npos);
  CHECK(two_nodes.text.find("\"shard_grad_op auto_wrap\"") != std::string::npos);
  CHECK(warned(two_nodes));
}

TEST_CASE("the search keeps the user's replicas wherever they hold, and the repair drops them only when they cannot") {
  Config base = sharded(Framework::kFsdp, 3, 64, 2);
  base.training.global_batch = 128;
  SearchOptions options;
  options.top_k = 1000;
  const SearchResult result = search_layouts(base, options);
  REQUIRE_FALSE(result.top.empty());
  bool some_replicated = false;
  const FrameworkProfile& profile = framework_profile(Framework::kFsdp);
  for (const LayoutCandidate& c : result.top) {
    const bool holds = replicas_hold(profile, 2, c.layout.zero, c.layout.dp, c.layout.cp);
    CHECK(c.layout.dp_replicate == (holds ? 2 : 1));
    some_replicated |= c.layout.dp_replicate == 2;
  }
  CHECK(some_replicated);

  // tp 8 on 16 GPUs leaves dp 2: four replicas cannot divide it, so they go, and the line says so.
  Config edited = sharded(Framework::kFsdp, 3, 16, 4);
  edited.layout.tp = 8;
  LayoutPins pins;
  pins.tp = true;
  const LayoutRepair repair = nearest_valid_layout(edited, pins);
  REQUIRE(repair.moved());
  CHECK(repair.config.layout.tp == 8);
  CHECK(repair.config.layout.dp_replicate == 1);
  CHECK(repair.summary().find("dp_replicate 4 \xE2\x86\x92 1") != std::string::npos);
}

TEST_CASE("a shard group inside a node with replicas across nodes: the step's DP traffic crosses nodes") {
  // 512 GPUs, 64 replicas: shard groups of 8 = one node each. A short sequence leaves the DP traffic
  // partly exposed, so the two layouts' exposed DP time differs.
  Config config = sharded(Framework::kFsdp, 3, 512, 64);
  config.training.seq = 2048;
  const MemoryPlan plan = plan_memory(config);
  const StepReport step = predict_step(config, plan);
  CHECK(step.dp_crosses_nodes);
  CHECK(std::isfinite(step.step_time_s));
  CHECK(step.step_time_s > 0);
  // Full sharding over the 512 ranks and the HSDP step move different traffic over different links.
  config.layout.dp_replicate = 1;
  CHECK(predict_step(config, plan_memory(config)).breakdown.dp_comm_s != doctest::Approx(step.breakdown.dp_comm_s));
}

TEST_CASE("a layout change keeps the most replicas that still hold, and a tight run is offered fewer of them") {
  // 256 GPUs at tp 8: dp 32 with 16 replicas (groups of 2). Moving to pp 2 halves dp to 16, where 16
  // replicas would leave one-rank groups: 8 remain, not 1.
  Config config = preset_config("llama3.1-70b", 256, 8);
  config.training.framework = Framework::kFsdp;
  config.layout.zero = 3;
  config.layout.dp_replicate = 16;
  config.training.seq = 8192;
  config.training.micro_batch = 1;
  config.training.global_batch = 256;
  config.training.recompute = Recompute::kFull;
  REQUIRE_FALSE(has_errors(validate(config)));
  Config moved = config;
  moved.layout.pp = 2;
  LayoutPins pins;
  pins.pp = true;
  const LayoutRepair repair = nearest_valid_layout(moved, pins);
  REQUIRE(repair.moved());
  CHECK(repair.config.layout.pp == 2);
  INFO(repair.summary());
  CHECK(repair.config.layout.dp_replicate == 8);
  CHECK(most_replicas_holding(framework_profile(Framework::kFsdp), 16, 3, 16, 1) == 8);

  // At 16 replicas the 70B run is over the tight threshold on an 80 GB GPU: fewer replicas are among
  // the suggestions, with the most that fit.
  const FitAdvice advice = fit_advice(config, 50);
  bool offered = false;
  for (const FitSuggestion& s : advice.suggestions)
    if (s.change.rfind("dp_replicate 16 \xE2\x86\x92 ", 0) == 0 && s.changed_dimensions == 1) {
      offered = true;
      CHECK(s.config.layout.dp_replicate < 16);
      CHECK(s.device_bytes <= config.training.headroom * config.gpu.memory_bytes);
      // The next larger replica count that holds would not have fitted (the most that fit is offered).
      Config more = config;
      more.layout.dp_replicate = s.config.layout.dp_replicate * 2;
      if (more.layout.dp_replicate < 16)
        CHECK(estimate_memory(more).worst().device_bytes > config.training.headroom * config.gpu.memory_bytes);
    }
  CHECK(offered);
}
