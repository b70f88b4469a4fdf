// test_nanotron.cpp — the nanotron profile: its cost-balanced pipeline split, its model states and
// the layouts it does not run.
//
// Expected splits are worked by hand from nanotron's rule (src/nanotron/models/base.py build_model,
// models/llama.py get_block_compute_costs): a decoder layer costs 4h^2 + 3fh, the LM head vh, the
// embedding, final norm, fp32 cast and loss 0; blocks are built in order on the current rank, which
// moves on once a block's running cost passes total * (rank+1) / pp.
#include <doctest/doctest.h>

#include "io/serialize.h"
#include "memory/memory_model.h"
#include "memory/parameter_count.h"
#include "perf/perf_model.h"
#include "search/layout_search.h"
#include "spec/structure.h"
#include "spec/validate.h"

using namespace meshfit;
using nlohmann::json;

namespace {

Config config_from(const json& object) {
  ParsedConfig parsed = parse_config(object);
  REQUIRE_FALSE(has_errors(parsed.issues));
  return parsed.config;
}

json nanotron(const char* model, int64_t pp) {
  return {{"model", model}, {"framework", "nanotron"}, {"gpus", 2 * pp}, {"pp", pp}, {"seq", 4096}, {"global_batch", 64},
          {"gpu", "h100-sxm"}};
}

std::vector<int64_t> stage_layers(const MemoryReport& report) {
  std::vector<int64_t> out;
  for (const RankMemory& rank : report.ranks) out.push_back(rank.intermediates.layers);
  return out;
}

int64_t head_stage(const MemoryReport& report) {
  for (const RankMemory& rank : report.ranks)
    if (rank.intermediates.lm_head_parameters > 0) return rank.pp_stage;
  return -1;
}

}  // namespace

TEST_CASE("nanotron's cost-balanced split: 28 layers on 8 and 16 stages, the head before the last rank") {
  // Qwen2.5-1.5B: h 1536, f 8960, v 151936. Layer 4h^2 + 3fh = 50,724,864; head vh = 233,373,696 =
  // 4.6008 layers; total 32.6008. pp 8: shares 4.075 k. Running costs 5 > 4.075 (rank 0: layers 1-5),
  // 9 > 8.150 (6-9), 13 > 12.225, 17 > 16.300, 21 > 20.375, 25 > 24.450 (4 each), then 26-28 on rank 6
  // (28 < 28.526), the head on rank 6 (32.60 > 28.526), the cast and loss on rank 7.
  const MemoryReport eight = estimate_memory(config_from(nanotron("qwen2.5-1.5b", 8)));
  REQUIRE(eight.valid());
  CHECK(stage_layers(eight) == std::vector<int64_t>{5, 4, 4, 4, 4, 4, 3, 0});
  CHECK(head_stage(eight) == 6);
  CHECK(eight.ranks[7].intermediates.parameters == 0);
  // pp 16: shares 2.0376 k. Rank 0: 1, 2, 3 > 2.04; then every rank takes two layers whose second
  // passes the share (5 > 4.08, 7 > 6.11, ... 27 > 26.49), rank 13 layer 28 (< 28.53) and the head.
  const MemoryReport sixteen = estimate_memory(config_from(nanotron("qwen2.5-1.5b", 16)));
  REQUIRE(sixteen.valid());
  CHECK(stage_layers(sixteen) == std::vector<int64_t>{3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 0, 0});
  CHECK(head_stage(sixteen) == 13);
  // Megatron-LM needs the even split (or its first/last flags) for the same layout.
  json megatron = nanotron("qwen2.5-1.5b", 8);
  megatron["framework"] = "megatron";
  const std::vector<Issue> refused = validate(config_from(megatron));
  REQUIRE(has_errors(refused));
  CHECK(refused.front().code == IssueCode::kPpNotDivideLayers);
}

TEST_CASE("nanotron's split of Llama 3.2 1B on 8 stages: the head weighs 3.9 layers") {
  // h 2048, f 8192, v 128256: layer 67,108,864, head 262,668,288 = 3.914 layers; total 19.914,
  // shares 2.489 k. 3 > 2.49, 5 > 4.98, 8 > 7.47, 10 > 9.96, 13 > 12.45, 15 > 14.94; 16 < 17.42
  // stays on rank 6 with the head (19.91 > 17.42).
  const MemoryReport report = estimate_memory(config_from(nanotron("llama3.2-1b", 8)));
  REQUIRE(report.valid());
  CHECK(stage_layers(report) == std::vector<int64_t>{3, 2, 3, 2, 3, 2, 1, 0});
  CHECK(head_stage(report) == 6);
  CHECK(nanotron_head_cost_layers(config_from(nanotron("llama3.2-1b", 8)).model) == doctest::Approx(3.914).epsilon(1e-3));
}

TEST_CASE("nanotron's model states: 20 B/param without ZeRO, 8 + 12/dp with ZeRO-1") {
  // Ultra-Scale Playbook (MEMORY_NOTES §6): 2 bf16 weights + 2 bf16 grads + 4 fp32 master + 8 Adam,
  // "libraries that keep fp32 grads (nanotron does) add another 4N"; ZeRO-1 shards master + moments.
  json object = nanotron("llama3.2-1b", 1);
  object["gpus"] = 8;
  const MemoryReport plain = estimate_memory(config_from(object));
  REQUIRE(plain.valid());
  const RankIntermediates& in = plain.worst().intermediates;
  CHECK(in.weight_bytes_per_param == 2);
  CHECK(in.grad_bytes_per_param == 6);
  CHECK(in.optimizer_bytes_per_param == 12);
  object["zero"] = 1;
  const MemoryReport zero1 = estimate_memory(config_from(object));
  REQUIRE(zero1.valid());
  CHECK(zero1.worst().intermediates.grad_bytes_per_param == 6);
  CHECK(zero1.worst().intermediates.optimizer_bytes_per_param == doctest::Approx(12.0 / 8));
  CHECK(framework_profile(Framework::kNanotron).default_zero == 0);
}

TEST_CASE("nanotron has no interleaved schedule and no ZeRO-2/3: refused by name, never searched") {
  json object = nanotron("llama3.1-8b", 4);
  object["vpp"] = 2;
  const std::vector<Issue> vpp = validate(config_from(object));
  REQUIRE(has_errors(vpp));
  CHECK(vpp.front().code == IssueCode::kVppUnsupported);
  CHECK(vpp.front().field == "vpp");
  CHECK(vpp.front().message.find("nanotron") != std::string::npos);
  Config config = config_from(nanotron("llama3.1-8b", 1));
  config.cluster.gpus = 16;
  config.layout.dp = 0;
  config.layout.pp = 1;
  const SearchResult result = search_layouts(config, SearchOptions{});
  REQUIRE(!result.top.empty());
  for (const LayoutCandidate& candidate : result.top) {
    CHECK(candidate.layout.vpp == 1);
    CHECK(candidate.layout.zero <= 1);
  }
  CHECK(vpp_choices(config_from(nanotron("llama3.1-8b", 4))) == std::vector<int64_t>{1});
  // Every pp the cost rule can split is offered, uneven ones included (32 layers on 6 stages).
  const std::vector<int64_t> pps = pp_choices(config_from(nanotron("llama3.1-8b", 6)));
  CHECK(std::find(pps.begin(), pps.end(), 6) != pps.end());
}

TEST_CASE("nanotron: the worst of the candidate stages is the worst of all stages") {
  for (const char* model : {"qwen2.5-1.5b", "llama3.2-1b", "llama3.1-8b", "qwen3-0.6b"}) {
    for (int64_t pp : {3, 5, 8, 12, 16}) {
      for (const char* recompute : {"none", "full"}) {
        json object = nanotron(model, pp);
        object["recompute"] = recompute;
        ParsedConfig parsed = parse_config(object);
        if (has_errors(parsed.issues) || has_errors(validate(parsed.config))) continue;
        const MemoryReport report = estimate_memory(parsed.config);
        REQUIRE(report.valid());
        double worst = 0;
        for (const RankMemory& rank : report.ranks) worst = std::max(worst, rank.device_bytes);
        CAPTURE(model);
        CAPTURE(pp);
        const MemoryPlan plan = plan_memory(parsed.config);
        CHECK(worst_stage_memory(parsed.config, plan).device_bytes == worst);
      }
    }
  }
}

TEST_CASE("nanotron's step: ZeRO-1's parameter all-gather is exposed, AdamW is PyTorch's foreach unless fused") {
  json object = nanotron("llama3.2-1b", 1);
  object["gpus"] = 64;
  object["global_batch"] = 128;
  object["zero"] = 1;
  const Config nano = config_from(object);
  object["framework"] = "megatron";
  object["dp_comm_overlap"] = "on";
  const Config megatron = config_from(object);
  const StepReport nano_step = predict_step(nano, plan_memory(nano));
  const StepReport megatron_step = predict_step(megatron, plan_memory(megatron));
  // optim/zero.py gathers the updated shards after the step; Megatron's --overlap-param-gather hides
  // them behind the next forward.
  CHECK(nano_step.breakdown.dp_comm_s > 2.0 * megatron_step.breakdown.dp_comm_s);
  TrainingSpec training = nano.training;
  CHECK(foreach_optimizer_step(training));  // torch_adam_is_fused defaults to false
  training.optimizer_impl = OptimizerImpl::kFused;
  CHECK_FALSE(foreach_optimizer_step(training));
}
