// test_memory_model.cpp — invariants of the per-rank memory model: sums, monotonicity where the
// physics says so, pipeline accounting (MEMORY_NOTES.md §13.4), framework byte counts (§13.3).
#include <doctest/doctest.h>

#include <numeric>

#include "fixtures.h"
#include "memory/memory_model.h"
#include "units.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {

double component_sum(const RankMemory& rank, Component last) {
  double sum = 0;
  for (int i = 0; i <= int(last); ++i) sum += rank.component_bytes[size_t(i)];
  return sum;
}

std::vector<Config> layout_matrix() {
  std::vector<Config> configs;
  for (const char* model : {"llama3.1-8b", "llama2-70b", "llama3.2-1b", "gpt3-175b"})
    for (Framework framework : {Framework::kMegatron, Framework::kFsdp, Framework::kDeepSpeed})
      for (Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
        for (auto [tp, pp, cp] : {std::tuple{1, 1, 1}, {2, 2, 1}, {4, 4, 2}, {8, 2, 2}}) {
          Config config = preset_config(model, 256, tp, pp, cp);
          config.training.framework = framework;
          config.training.recompute = recompute;
          config.layout.zero = framework == Framework::kMegatron ? 1 : 3;
          configs.push_back(config);
        }
  return configs;
}

}  // namespace

TEST_CASE("every rank's components sum to its three figures, and the figures are ordered") {
  for (const Config& config : layout_matrix()) {
    const MemoryReport report = estimate_memory(config);
    CAPTURE(config.model.name);
    CAPTURE(to_string(config.training.framework));
    CAPTURE(config.layout.tp);
    CAPTURE(config.layout.pp);
    REQUIRE(report.valid());
    REQUIRE(report.ranks.size() == size_t(config.layout.pp));
    for (const RankMemory& rank : report.ranks) {
      CHECK(rank.peak_allocated_bytes == doctest::Approx(component_sum(rank, Component::kWorkspace)));
      CHECK(rank.peak_reserved_bytes == doctest::Approx(component_sum(rank, Component::kFragmentation)));
      CHECK(rank.device_bytes == doctest::Approx(component_sum(rank, Component::kCudaContext)));
      CHECK(rank.peak_allocated_bytes <= rank.peak_reserved_bytes);
      CHECK(rank.peak_reserved_bytes < rank.device_bytes);
      for (double bytes : rank.component_bytes) CHECK(bytes >= 0);
    }
    for (const RankMemory& rank : report.ranks) CHECK(rank.device_bytes <= report.worst().device_bytes);
  }
}

TEST_CASE("layers over all stages add up to the model, with embedding first and head last") {
  for (const Config& config : layout_matrix()) {
    const MemoryReport report = estimate_memory(config);
    REQUIRE(report.valid());
    int64_t layers = 0;
    for (const RankMemory& rank : report.ranks) layers += rank.intermediates.layers;
    CHECK(layers == config.model.layers);
    CHECK(report.ranks.front().intermediates.embedding_parameters > 0);
    CHECK(report.ranks.back().intermediates.lm_head_parameters > 0);
    CHECK(report.ranks.back().intermediates.logits_bytes > 0);
  }
}

TEST_CASE("tp = 1, pp = 1 puts the whole model on one rank") {
  Config config = preset_config("llama3-8b", 8);
  const MemoryReport report = estimate_memory(config);
  REQUIRE(report.valid());
  REQUIRE(report.ranks.size() == 1);
  CHECK(std::string(report.ranks[0].role) == "only");  // role is a const char*: compare text, not pointers
  CHECK(report.ranks[0].intermediates.parameters == doctest::Approx(report.total_parameters));
}

TEST_CASE("more dp never raises per-rank model states under ZeRO-3 / FSDP / distributed optimizer") {
  for (Framework framework : {Framework::kMegatron, Framework::kFsdp, Framework::kDeepSpeed}) {
    double previous_states = 1e300;
    double previous_weights = 1e300;
    for (int64_t gpus : {8, 16, 64, 512}) {
      Config config = preset_config("llama2-70b", gpus, 8);
      config.training.framework = framework;
      config.layout.zero = framework == Framework::kMegatron ? 1 : 3;
      config.training.global_batch = 4096;
      const MemoryReport report = estimate_memory(config);
      REQUIRE(report.valid());
      const RankMemory& rank = report.ranks[0];
      const double states = rank.bytes(Component::kWeights) + rank.bytes(Component::kGradients) +
                            rank.bytes(Component::kOptimizerStates);
      CHECK(states < previous_states);
      CHECK(rank.bytes(Component::kWeights) <= previous_weights);
      previous_states = states;
      previous_weights = rank.bytes(Component::kWeights);
    }
  }
}

TEST_CASE("more tp never raises activations with sequence parallelism") {
  for (Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    double previous = 1e300;
    for (int64_t tp : {1, 2, 4, 8}) {
      Config config = preset_config("llama3-70b", 64, tp);
      config.training.recompute = recompute;
      const MemoryReport report = estimate_memory(config);
      REQUIRE(report.valid());
      const double activations = report.ranks[0].intermediates.activations.total;
      CHECK(activations <= previous);
      previous = activations;
    }
  }
}

TEST_CASE("recompute orders activations: full < selective <= none, and flash removes the s^2 term") {
  Config config = preset_config("llama3-8b", 8);
  config.training.flash = false;
  double stored[3];
  for (Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    config.training.recompute = recompute;
    stored[int(recompute)] = estimate_memory(config).layer_activations.stored;
  }
  CHECK(stored[int(Recompute::kFull)] < stored[int(Recompute::kSelective)]);
  CHECK(stored[int(Recompute::kSelective)] < stored[int(Recompute::kNone)]);
  config.training.recompute = Recompute::kNone;
  const double eager = estimate_memory(config).layer_activations.attention_scores;
  config.training.flash = true;
  const double flash = estimate_memory(config).layer_activations.attention_scores;
  CHECK(flash * 1000 < eager);
}

TEST_CASE("1F1B: stage i holds min(n_mb, pp - i) micro-batches, and interleaving adds Megatron's penalty") {
  CHECK(in_flight_microbatches(0, 4, 1, 64) == 4);
  CHECK(in_flight_microbatches(3, 4, 1, 64) == 1);
  CHECK(in_flight_microbatches(0, 4, 1, 2) == 2);  // fewer micro-batches than stages
  // Interleaved, stage 0: (pp-1)*2 + (vpp-1)*pp + 1 chunk-micro-batches of L/(pp*vpp) layers each =
  // L/pp * (1 + (pp-1)/(pp*vpp)) layer-micro-batches per stage-layer (Korthikanti §4.2.3).
  const int64_t pp = 4, vpp = 5;
  const double penalty = double(in_flight_microbatches(0, pp, vpp, 64)) / double(vpp) / double(pp);
  CHECK(penalty == doctest::Approx(1.0 + double(pp - 1) / double(pp * vpp)));

  Config config = preset_config("llama3-70b", 64, 8, 4);
  const MemoryReport plain = estimate_memory(config);
  config.layout.vpp = 5;
  const MemoryReport interleaved = estimate_memory(config);
  REQUIRE(plain.valid());
  REQUIRE(interleaved.valid());
  CHECK(interleaved.ranks[0].intermediates.activations.layers_bytes >
        plain.ranks[0].intermediates.activations.layers_bytes);
  for (size_t i = 1; i < plain.ranks.size(); ++i)  // earlier stages hold more micro-batches
    CHECK(plain.ranks[i].intermediates.activations.layers_bytes < plain.ranks[i - 1].intermediates.activations.layers_bytes);
}

TEST_CASE("uneven pipeline split places the explicit first/last stage layers") {
  Config config = preset_config("llama3.1-405b", 1024, 8, 16);
  config.layout.pp_first_stage_layers = 7;
  config.layout.pp_last_stage_layers = 7;
  const MemoryReport report = estimate_memory(config);
  REQUIRE(report.valid());
  CHECK(report.ranks.front().intermediates.layers == 7);
  CHECK(report.ranks.back().intermediates.layers == 7);
  CHECK(report.ranks[1].intermediates.layers == 8);  // 112 layers over 14 middle stages
}

TEST_CASE("framework byte counts per parameter (MEMORY_NOTES §13.3)") {
  const double shard = 16;
  SUBCASE("Megatron distributed optimizer: 2 + 4 + 12/d") {
    const ModelStateRule rule = model_state_rule(Framework::kMegatron, 1, true);
    CHECK(rule.weight_bytes + rule.grad_fp32_bytes + (rule.master_bytes + optimizer_moment_bytes(Optimizer::kAdamW)) / shard ==
          doctest::Approx(6 + 12 / shard));
  }
  SUBCASE("Megatron without distributed optimizer: 18") {
    const ModelStateRule rule = model_state_rule(Framework::kMegatron, 0, true);
    CHECK(rule.weight_bytes + rule.grad_fp32_bytes + rule.master_bytes + optimizer_moment_bytes(Optimizer::kAdamW) == 18);
  }
  SUBCASE("FSDP2: 16/(dp*cp)") {
    Config config = preset_config("llama3-8b", 64);
    config.training.framework = Framework::kFsdp;
    config.layout.zero = 3;
    const MemoryReport report = estimate_memory(config);
    const RankIntermediates& in = report.ranks[0].intermediates;
    CHECK(in.weight_bytes_per_param + in.grad_bytes_per_param + in.optimizer_bytes_per_param == doctest::Approx(16.0 / 64));
  }
  SUBCASE("CP shards the optimizer over dp*cp") {
    Config config = preset_config("llama3-8b", 64, 1, 1, 4);
    const MemoryReport report = estimate_memory(config);
    CHECK(report.optimizer_shard_ranks == 64);
    CHECK(report.ranks[0].intermediates.optimizer_bytes_per_param == doctest::Approx(12.0 / 64));
  }
  SUBCASE("8-bit Adam and SGD keep fewer optimizer bytes than AdamW") {
    CHECK(optimizer_moment_bytes(Optimizer::kAdam8bit) < optimizer_moment_bytes(Optimizer::kSgd));
    CHECK(optimizer_moment_bytes(Optimizer::kSgd) < optimizer_moment_bytes(Optimizer::kAdamW));
  }
}

TEST_CASE("the last stage of a 128k-vocabulary model carries the logits, and the verdict follows capacity") {
  Config config = preset_config("llama3-8b", 8);
  config.training.seq = 8192;
  const MemoryReport report = estimate_memory(config);
  REQUIRE(report.valid());
  // 8192 * 128256 logits * 6 bytes (bf16 + fp32 softmax) ~ 5.9 GiB
  CHECK(bytes_to_gib(report.ranks[0].intermediates.logits_bytes) == doctest::Approx(5.87).epsilon(0.01));
  config.gpu.memory_bytes = report.worst().device_bytes * 0.99;
  CHECK(estimate_memory(config).verdict == Verdict::kOutOfMemory);
  CHECK_FALSE(estimate_memory(config).fits());
  config.gpu.memory_bytes = report.worst().device_bytes / 0.85;
  CHECK(estimate_memory(config).verdict == Verdict::kTight);
  config.gpu.memory_bytes = report.worst().device_bytes / 0.5;
  CHECK(estimate_memory(config).verdict == Verdict::kFits);
  config.training.headroom = 0.4;
  CHECK(estimate_memory(config).verdict == Verdict::kTight);
}

TEST_CASE("the search's fast path finds the same worst stage as the full report") {
  int checked = 0;  // the valid configs compared, so that a matrix of invalid ones cannot pass
  for (const Config& base : layout_matrix()) {
    for (int64_t vpp : {1, 2}) {
      Config config = base;
      config.layout.vpp = config.layout.pp > 1 ? vpp : 1;
      const MemoryReport report = estimate_memory(config);
      if (!report.valid()) continue;
      const RankMemory fast = worst_stage_memory(config, plan_memory(config));
      CAPTURE(config.model.name);
      CAPTURE(config.layout.pp);
      CHECK(fast.pp_stage == report.worst().pp_stage);
      CHECK(fast.device_bytes == report.worst().device_bytes);
      checked += config.layout.pp > 2 ? 1 : 0;  // with a middle stage, where the fast path takes a shortcut
    }
  }
  CHECK(checked >= 10);
  Config uneven = preset_config("llama3.1-405b", 1024, 8, 16);
  uneven.layout.pp_first_stage_layers = 4;
  uneven.layout.pp_last_stage_layers = 2;  // 120 layers over 14 middle stages: 9,9,9,9,9,9,8,...
  uneven.training.framework = Framework::kFsdp;  // Megatron-LM would refuse the uneven middle
  uneven.layout.zero = 3;
  const MemoryReport report = estimate_memory(uneven);
  REQUIRE(report.valid());
  CHECK(worst_stage_memory(uneven, plan_memory(uneven)).device_bytes == report.worst().device_bytes);
}
