// test_memory_model.cpp — invariants of the per-rank memory model: sums, monotonicity where the
// physics says so, pipeline accounting (MEMORY_NOTES.md §13.4), framework byte counts (§13.3).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "fixtures.h"
#include "memory/memory_model.h"
#include "memory/overheads.h"
#include "spec/validate.h"
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
          // DeepSpeed's pipeline engine takes ZeRO-1 at most (FrameworkProfile::pp_max_zero).
          config.layout.zero = framework == Framework::kMegatron || (framework == Framework::kDeepSpeed && pp > 1) ? 1 : 3;
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
      CHECK(rank.device_bytes == doctest::Approx(component_sum(rank, Component::kPagedOptimizer)));
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

// Bytes per parameter of the model states at `shard` data-parallel ranks, from the profile's rule.
static double state_bytes_per_param(Framework framework, int64_t zero, bool fp32_grad_buffer, double shard) {
  const ModelStateRule r = model_state_rule(framework, zero, fp32_grad_buffer);
  const auto part = [shard](double bytes, bool sharded) { return sharded ? bytes / shard : bytes; };
  return part(r.weight_bytes, r.weights_sharded) + part(r.grad_bytes, r.grads_sharded) +
         part(r.grad_fp32_bytes, r.grads_fp32_sharded) + part(r.master_bytes, r.master_sharded) +
         part(optimizer_moment_bytes(Optimizer::kAdamW), r.moments_sharded);
}

TEST_CASE("the framework profiles' model-state data gives each framework's published bytes per parameter") {
  const double n = 16;
  // Megatron-LM theoretical_memory_usage.py: 18, or 6 + 12/d with the distributed optimizer;
  // without the fp32 main-grad buffer the gradient is bf16 (2 instead of 4).
  CHECK(state_bytes_per_param(Framework::kMegatron, 0, true, n) == doctest::Approx(18));
  CHECK(state_bytes_per_param(Framework::kMegatron, 1, true, n) == doctest::Approx(6 + 12 / n));
  CHECK(state_bytes_per_param(Framework::kMegatron, 1, false, n) == doctest::Approx(4 + 12 / n));
  // DeepSpeed (Rajbhandari 2020; estimate_zero2/zero3_model_states_mem_needs): stage 0 2 + 2 + 12,
  // stage 1 4 + 16/N, stage 2 2 + 18/N (the bf16 gradient partition kept), stage 3 18/N.
  CHECK(state_bytes_per_param(Framework::kDeepSpeed, 0, true, n) == doctest::Approx(16));
  CHECK(state_bytes_per_param(Framework::kDeepSpeed, 1, true, n) == doctest::Approx(4 + 16 / n));
  CHECK(state_bytes_per_param(Framework::kDeepSpeed, 2, true, n) == doctest::Approx(2 + 18 / n));
  CHECK(state_bytes_per_param(Framework::kDeepSpeed, 3, true, n) == doctest::Approx(18 / n));
  // FSDP2 (torchtitan docs): fp32 params are the master, fp32 grads: 16 under DDP, 16/N sharded,
  // whatever fp32_grad_buffer says.
  CHECK(state_bytes_per_param(Framework::kFsdp, 0, true, n) == doctest::Approx(16));
  CHECK(state_bytes_per_param(Framework::kFsdp, 3, true, n) == doctest::Approx(16 / n));
  CHECK(state_bytes_per_param(Framework::kFsdp, 3, false, n) == doctest::Approx(16 / n));
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

// [SECTION] What the frameworks keep live (../shared/reference/FRAMEWORK_NOTES.md)

namespace {
Config torchtitan_config(const char* model, long long gpus, long long tp, long long pp) {
  Config config = preset_config(model, gpus, tp, pp);
  config.training.framework = Framework::kFsdp;
  config.layout.zero = 3;
  return config;
}
}  // namespace

TEST_CASE("torchtitan splits stages counting the embedding and the head as one layer each (§1.5)") {
  SUBCASE("Llama-3-8B, pp 4: 34 effective layers as 9, 9, 8, 8, so 8, 9, 8, 7 layers") {
    const MemoryReport report = estimate_memory(torchtitan_config("llama3-8b", 64, 1, 4));
    REQUIRE(report.valid());
    std::vector<int64_t> layers;
    for (const RankMemory& rank : report.ranks) layers.push_back(rank.intermediates.layers);
    CHECK(layers == std::vector<int64_t>{8, 9, 8, 7});
  }
  SUBCASE("126 layers on 16 virtual stages (pp 8, 2 per rank): 7 + 14 x 8 + 7, no explicit split needed") {
    Config config = torchtitan_config("llama3.1-405b", 1024, 8, 8);
    config.layout.vpp = 2;
    const MemoryReport report = estimate_memory(config);
    REQUIRE(report.valid());
    REQUIRE(report.ranks.front().chunks.size() == 2);
    CHECK(report.ranks.front().chunks.front().layers == 7);
    CHECK(report.ranks.back().chunks.back().layers == 7);
    CHECK(report.ranks[3].intermediates.layers == 16);
  }
}

TEST_CASE("FSDP2 under PP keeps the stage unsharded: 2 B bf16 params + 4 B fp32 accumulated grads per stage param") {
  Config config = torchtitan_config("llama3.1-70b", 256, 8, 8);
  const MemoryReport with_pp = estimate_memory(config);
  REQUIRE(with_pp.valid());
  for (const RankMemory& rank : with_pp.ranks) {
    const RankIntermediates& in = rank.intermediates;
    CAPTURE(rank.pp_stage);
    CHECK(in.unsharded_parameter_bytes == doctest::Approx(2.0 * in.parameters));
    CHECK(in.unsharded_gradient_bytes == doctest::Approx(4.0 * in.parameters));
    CHECK(rank.bytes(Component::kGradients) >= in.unsharded_gradient_bytes);
    CHECK(rank.bytes(Component::kCommBuffers) >= in.unsharded_parameter_bytes);
  }
  config.layout.pp = 1;
  config.layout.dp = 0;
  const MemoryReport without_pp = estimate_memory(config);
  REQUIRE(without_pp.valid());
  CHECK(without_pp.ranks[0].intermediates.unsharded_gradient_bytes == 0);
}

TEST_CASE("precision modes: pure bf16 AdamW is 8 B/param on one GPU, mixed precision 16") {
  Config config = preset_config("llama3.2-3b", 1);
  config.training.framework = Framework::kFsdp;
  config.layout.zero = 0;
  config.training.global_batch = 4;
  for (auto [precision, bytes] : {std::pair{Precision::kPureBf16, 8.0}, {Precision::kBf16, 16.0}}) {
    config.training.precision = precision;
    const MemoryReport report = estimate_memory(config);
    REQUIRE(report.valid());
    const RankIntermediates& in = report.ranks[0].intermediates;
    CHECK(in.weight_bytes_per_param + in.grad_bytes_per_param + in.optimizer_bytes_per_param == doctest::Approx(bytes));
    // No DDP at one rank: no gradient bucket copy (a bug found by measurement).
    CHECK(report.ranks[0].bytes(Component::kCommBuffers) == 0);
  }
}

// Chunked keeps every chunk's fp32 log-probs for backward (4 B per logit, measured on H100 by
// tests/gpu row 8b-l4-s16384-loss-chunked) plus one chunk's gradients: above the compiled loss.
TEST_CASE("cross-entropy kinds order the last stage's logit bytes: compiled < chunked < vocab-parallel < eager") {
  Config config = torchtitan_config("llama3-8b", 8, 1, 1);
  std::vector<double> bytes;
  for (LossKind loss : {LossKind::kCompiled, LossKind::kChunked, LossKind::kVocabParallel, LossKind::kEager,
                        LossKind::kEagerKeepLogits}) {
    config.training.loss = loss;
    bytes.push_back(estimate_memory(config).ranks[0].intermediates.bytes_per_logit);
  }
  CHECK(std::is_sorted(bytes.begin(), bytes.end()));
  config.training.loss = LossKind::kAuto;
  CHECK(estimate_memory(config).ranks[0].intermediates.bytes_per_logit == 12);  // torchtitan eager
  config.training.kernels = Kernels::kCompiled;  // compile.components includes the loss
  CHECK(estimate_memory(config).ranks[0].intermediates.bytes_per_logit == 4);
}

TEST_CASE("torch.compile lowers activations without recompute, and CP ring buffers grow with the CP degree") {
  Config config = torchtitan_config("llama3-8b", 8, 1, 1);
  const double eager = estimate_memory(config).ranks[0].bytes(Component::kActivations);
  config.training.kernels = Kernels::kCompiled;
  CHECK(estimate_memory(config).ranks[0].bytes(Component::kActivations) < eager);
  config.training.kernels = Kernels::kAuto;
  config.training.seq = 32768;
  std::vector<double> ring_full_sequence;
  for (long long cp : {2, 4, 8}) {
    config.layout.cp = cp;
    config.layout.dp = 8 / cp;
    const MemoryReport report = estimate_memory(config);
    REQUIRE(report.valid());
    ring_full_sequence.push_back(report.ranks[0].intermediates.cp_ring_bytes * double(cp));
  }
  CHECK(std::is_sorted(ring_full_sequence.begin(), ring_full_sequence.end()));
}

TEST_CASE("torch pipelining: a receive buffer per micro-batch on non-first stages, and the last stage keeps its logits") {
  Config config = torchtitan_config("llama3.1-70b", 256, 8, 8);
  config.training.global_batch = 128;  // dp 4: 32 micro-batches of 1
  const MemoryReport report = estimate_memory(config);
  REQUIRE(report.valid());
  REQUIRE(report.num_microbatches == 32);
  CHECK(report.ranks.front().intermediates.pp_receive_buffer_bytes == 0);
  // 32 x bf16 x s x h / tp (sequence-sharded stage boundary)
  CHECK(report.ranks[1].intermediates.pp_receive_buffer_bytes == doctest::Approx(32.0 * 2 * 4096 * 8192 / 8));
  CHECK(report.ranks.back().intermediates.bytes_per_logit == 14);  // eager loss with the output in fwd_cache
}

TEST_CASE("expandable segments (torchtitan's launcher) leave less allocator slack than the default caching allocator") {
  Config config = torchtitan_config("llama3-8b", 8, 1, 1);
  const double torchtitan = estimate_memory(config).ranks[0].bytes(Component::kFragmentation);
  config.training.allocator = AllocatorMode::kCaching;
  const double caching = estimate_memory(config).ranks[0].bytes(Component::kFragmentation);
  CHECK(torchtitan < caching);
  CHECK(estimate_memory(config).ranks[0].intermediates.fragmentation_fraction == kFsdpFragmentationFraction);
  config.training.framework = Framework::kMegatron;  // no per-block gathers: the general caching figure
  config.layout.zero = 1;
  CHECK(estimate_memory(config).ranks[0].intermediates.fragmentation_fraction == kFragmentationFraction);
}

// [SECTION] The issue's reference estimates, printed with their components (README test command)

namespace {
void print_worst(const char* title, const MemoryReport& report) {
  const RankMemory& worst = report.worst();
  const RankIntermediates& in = worst.intermediates;
  std::printf("\n%s\n  worst rank: %s stage %lld, %lld layers, %.3f B params on the rank, %lld in-flight micro-batches, "
              "%.1f B/logit\n",
              title, worst.role, (long long)worst.pp_stage, (long long)in.layers, in.parameters / 1e9,
              (long long)in.in_flight_microbatches, in.bytes_per_logit);
  for (int i = 0; i < kComponentCount; ++i)
    std::printf("  %-18s %8.2f GiB\n", component_label(Component(i)), bytes_to_gib(worst.component_bytes[size_t(i)]));
  std::printf("  %-18s %8.2f GiB\n  %-18s %8.2f GiB\n  %-18s %8.2f GiB of %.2f GiB -> %s\n", "peak allocated",
              bytes_to_gib(worst.peak_allocated_bytes), "peak reserved", bytes_to_gib(worst.peak_reserved_bytes),
              "device (smi)", bytes_to_gib(worst.device_bytes), bytes_to_gib(report.capacity_bytes),
              to_string(report.verdict));
}
}  // namespace

TEST_CASE("framework mechanisms: the issue's reference estimates (70B FSDP2 + PP, 3B fine-tune on 24 GB)") {
  SUBCASE("Llama 3.1 70B on 256 H100, FSDP2 dp4 tp8 pp8, 1F1B, 32 micro-batches of 1, full recompute, seq 8192") {
    Config config = preset_config("llama3.1-70b", 256, 8, 8);
    config.gpu = *find_gpu_preset("h100-sxm");
    config.training.framework = Framework::kFsdp;
    config.layout.zero = 3;
    config.layout.dp = 4;
    config.training.seq = 8192;
    config.training.micro_batch = 1;
    config.training.global_batch = 128;
    config.training.recompute = Recompute::kFull;
    const MemoryReport report = estimate_memory(config);
    REQUIRE(report.valid());
    REQUIRE(report.num_microbatches == 32);
    print_worst("Llama 3.1 70B, 256 H100, FSDP2 dp4 tp8 pp8 1F1B, 32 x 1 micro-batches, full AC, seq 8192", report);
    // torchtitan's split of 80 layers + embedding + head over 8 stages: 10, 11, 10 x 5, 9.
    CHECK(report.ranks[1].intermediates.layers == 11);
    CHECK(report.ranks.back().intermediates.layers == 9);
    CHECK(report.worst().intermediates.unsharded_gradient_bytes > 0);
    CHECK(report.verdict == Verdict::kFits);
  }
  SUBCASE("Llama 3.2 3B full fine-tune on one 24 GB GPU, seq 1024, micro-batch 4: pure bf16, then mixed") {
    Config config = preset_config("llama3.2-3b", 1);
    config.gpu = *find_gpu_preset("rtx4090");
    config.training.framework = Framework::kFsdp;
    config.layout.zero = 0;
    config.training.seq = 1024;
    config.training.micro_batch = 4;
    config.training.global_batch = 4;
    config.training.precision = Precision::kPureBf16;
    const MemoryReport pure = estimate_memory(config);
    REQUIRE(pure.valid());
    print_worst("Llama 3.2 3B pure bf16 (8 B/param AdamW), 1 x 24 GB, seq 1024, micro-batch 4, no AC", pure);
    config.training.precision = Precision::kBf16;
    const MemoryReport mixed = estimate_memory(config);
    REQUIRE(mixed.valid());
    print_worst("Llama 3.2 3B mixed precision (fp32 params + AdamW, 16 B/param), same run", mixed);
    CHECK(pure.worst().device_bytes < mixed.worst().device_bytes);
    CHECK(pure.verdict == Verdict::kOutOfMemory);  // 3.2 B x 8 B alone is 24 GiB at the end of backward
    CHECK(mixed.verdict == Verdict::kOutOfMemory);
  }
}

TEST_CASE("optimizer step: DeepSpeed's flat fp32 step tensors add 6 B/param/d to the reserved pool, fused optimizers add none") {
  // FRAMEWORK_NOTES §3.2: ZeRO-1/2 step casts the partition's flat gradient to fp32 (4 B/param/d)
  // after flattening it (2 B/param/d); Megatron's TE/Apex FusedAdam and torchtitan's fused AdamW update in place.
  Config config = preset_config("llama3.1-8b", 64, 2, 1, 1);
  config.training.recompute = Recompute::kFull;
  config.training.framework = Framework::kDeepSpeed;
  config.layout.zero = 2;
  const MemoryReport deepspeed = estimate_memory(config);
  REQUIRE(deepspeed.valid());
  const RankIntermediates& in = deepspeed.worst().intermediates;
  const double shard = double(deepspeed.optimizer_shard_ranks);
  CHECK(in.optimizer_step_transient_bytes == doctest::Approx(6.0 * in.trainable_parameters / shard));
  CHECK(in.optimizer_step_new_segments);
  CHECK(deepspeed.worst().peak_reserved_bytes >=
        deepspeed.worst().peak_allocated_bytes + in.optimizer_step_transient_bytes);
  // ZeRO-3 casts one sub-group (sub_group_size 1e9) at a time.
  config.layout.zero = 3;
  const MemoryReport zero3 = estimate_memory(config);
  CHECK(zero3.worst().intermediates.optimizer_step_transient_bytes ==
        doctest::Approx(4.0 * std::min(1e9, zero3.worst().intermediates.trainable_parameters / shard)));
  for (Framework framework : {Framework::kMegatron, Framework::kFsdp}) {
    config.training.framework = framework;
    config.layout.zero = framework == Framework::kMegatron ? 1 : 3;
    CAPTURE(to_string(framework));
    CHECK(estimate_memory(config).worst().intermediates.optimizer_step_transient_bytes == 0);
  }
}

TEST_CASE("optimizer step: foreach AdamW's sqrt(v) copy can make the step the peak of a small-activation run") {
  // torch/optim/adamw.py _multi_tensor_adamw: exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs), a copy
  // of v (bf16 under pure bf16): 2 B per trained parameter on one GPU.
  Config config = preset_config("llama3.2-1b", 1);
  config.training.framework = Framework::kFsdp;
  config.layout.zero = 0;
  config.training.precision = Precision::kPureBf16;
  config.training.seq = 128;
  config.training.micro_batch = 1;
  config.training.global_batch = 1;
  config.training.recompute = Recompute::kFull;
  const MemoryReport fused = estimate_memory(config);
  config.training.optimizer_impl = OptimizerImpl::kForeach;
  const MemoryReport foreach = estimate_memory(config);
  REQUIRE(fused.valid());
  REQUIRE(foreach.valid());
  const RankMemory& rank = foreach.worst();
  CHECK(rank.intermediates.optimizer_step_transient_bytes == doctest::Approx(2.0 * rank.intermediates.trainable_parameters));
  CHECK(rank.intermediates.peak_at_optimizer_step);
  CHECK(rank.bytes(Component::kActivations) == 0);
  CHECK(rank.peak_allocated_bytes == doctest::Approx(rank.intermediates.optimizer_step_allocated_bytes));
  CHECK(rank.peak_allocated_bytes > fused.worst().peak_allocated_bytes);
}

TEST_CASE("without FlashAttention the attention backward holds two score-sized gradients") {
  Config config = preset_config("llama3.1-8b", 8, 8, 1, 1);
  config.training.recompute = Recompute::kFull;
  config.training.seq = 4096;
  config.training.flash = true;
  const double flash = estimate_memory(config).worst().intermediates.backward_working_bytes;
  config.training.flash = false;
  const MemoryReport eager = estimate_memory(config);
  const double scores = 2.0 * 32.0 / 8.0 * 4096.0 * 4096.0 * double(config.training.micro_batch);  // 2as^2b/t, llama3.1-8b: 32 heads
  // The saved probabilities (recompute working, instead of FlashAttention's fp32 log-sum-exp) plus
  // two gradients of their size, which replace the MLP's f-wide gradients as the larger temporary.
  const double lse = 4.0 * 32.0 / 8.0 * 4096.0 * double(config.training.micro_batch);
  const double mlp_grads = 3.0 * 2.0 * 4096.0 * double(config.training.micro_batch) * 14336.0 / 8.0;
  CHECK(eager.worst().intermediates.backward_working_bytes - flash == doctest::Approx(3.0 * scores - lse - mlp_grads));
}

// The one rule behind dp_comm_overlap=auto (memory_model.h dp_comm_overlapped), per framework and
// ZeRO stage: Megatron on (Megatron-Bridge/NeMo recipes), FSDP2 always, DeepSpeed only at ZeRO-3
// (zero/config.py overlap_comm_valid; FRAMEWORK_NOTES §3.1). on/off are taken as given.
TEST_CASE("dp_comm_overlap=auto resolves to each framework's own default at each ZeRO stage") {
  struct Expected {
    Framework framework;
    int64_t zero;
    bool overlapped;
  };
  const Expected table[] = {{Framework::kMegatron, 0, true}, {Framework::kMegatron, 1, true},
                            {Framework::kFsdp, 0, true},     {Framework::kFsdp, 2, true},
                            {Framework::kFsdp, 3, true},     {Framework::kDeepSpeed, 0, false},
                            {Framework::kDeepSpeed, 1, false}, {Framework::kDeepSpeed, 2, false},
                            {Framework::kDeepSpeed, 3, true}};
  for (const Expected& row : table) {
    CAPTURE(to_string(row.framework));
    CAPTURE(row.zero);
    REQUIRE(framework_profile(row.framework).offers_zero(row.zero));
    TrainingSpec training;
    training.framework = row.framework;
    REQUIRE(training.dp_comm_overlap == DpCommOverlap::kAuto);  // the default
    CHECK(dp_comm_overlapped(training, row.zero) == row.overlapped);
    training.dp_comm_overlap = DpCommOverlap::kOn;
    CHECK(dp_comm_overlapped(training, row.zero));
    training.dp_comm_overlap = DpCommOverlap::kOff;
    CHECK_FALSE(dp_comm_overlapped(training, row.zero));
  }
}

// DeepSpeed ZeRO-1/2 allocate a second IPG bucket when overlap_comm is on ("double buffers",
// stage_1_and_2.py setup_buckets; FRAMEWORK_NOTES §3.2): reduce_bucket_size 5e8 elements x 2 B =
// 1e9 bytes more. ZeRO-3 keeps one bucket whatever the setting (stage3.py, §3.3).
TEST_CASE("DeepSpeed ZeRO-1/2 with overlap on hold a second 1e9-byte IPG bucket, auto (off) and ZeRO-3 one") {
  for (int64_t zero : {1, 2, 3}) {
    CAPTURE(zero);
    Config config = preset_config("llama2-13b", 32);  // 13B parameters on a rank: the bucket is full size
    config.training.framework = Framework::kDeepSpeed;
    config.layout.zero = zero;
    Config on = config, off = config;
    on.training.dp_comm_overlap = DpCommOverlap::kOn;
    off.training.dp_comm_overlap = DpCommOverlap::kOff;
    const MemoryReport report_auto = estimate_memory(config), report_on = estimate_memory(on), report_off = estimate_memory(off);
    REQUIRE(report_auto.valid());
    REQUIRE(report_on.valid());
    const RankMemory& rank_auto = report_auto.ranks[0];
    const RankMemory& rank_on = report_on.ranks[0];
    const RankMemory& rank_off = report_off.ranks[0];
    CHECK(rank_auto.bytes(Component::kCommBuffers) == rank_off.bytes(Component::kCommBuffers));
    CHECK(rank_auto.peak_allocated_bytes == rank_off.peak_allocated_bytes);
    const double second_bucket = zero == 3 ? 0.0 : 5e8 * 2.0;
    CHECK(rank_on.bytes(Component::kCommBuffers) - rank_off.bytes(Component::kCommBuffers) == doctest::Approx(second_bucket));
    CHECK(rank_on.peak_allocated_bytes - rank_off.peak_allocated_bytes == doctest::Approx(second_bucket));
  }
}

TEST_CASE("recompute_layers (Megatron's block method): N layers of a chunk recomputed, the rest saved whole") {
  // Llama 3.1 70B, tp8 pp4 (20 layers a stage), seq 8192: stage 0 holds 4 in-flight micro-batches.
  Config config = preset_config("llama3.1-70b", 64, 8, 4);
  config.training.seq = 8192;
  config.training.recompute = Recompute::kFull;
  const MemoryReport all = estimate_memory(config);
  config.training.recompute = Recompute::kNone;
  const MemoryReport none = estimate_memory(config);
  config.training.recompute = Recompute::kFull;
  REQUIRE(all.valid());
  const StageActivations& full_act = all.ranks[0].intermediates.activations;
  const StageActivations& none_act = none.ranks[0].intermediates.activations;
  REQUIRE(full_act.layers_per_in_flight == doctest::Approx(20.0));
  double previous = full_act.layers_bytes;
  for (int64_t n : {19, 10, 5, 1}) {
    CAPTURE(n);
    config.training.recompute_layers = n;
    const MemoryReport some = estimate_memory(config);
    REQUIRE(some.valid());
    const StageActivations& act = some.ranks[0].intermediates.activations;
    // in_flight x (N layers keeping their input + 20 - N layers keeping everything).
    const double per_layer_full = full_act.layer_bytes, per_layer_none = none_act.layer_bytes;
    CHECK(act.layers_bytes == doctest::Approx(double(act.in_flight) * (double(n) * per_layer_full + double(20 - n) * per_layer_none)));
    CHECK(act.layers_bytes > previous);  // fewer layers recomputed, more memory
    CHECK(act.layers_bytes < none_act.layers_bytes);
    CHECK(act.recompute_working_bytes == full_act.recompute_working_bytes);  // one layer rebuilt at a time
    previous = act.layers_bytes;
  }
  // N at or beyond the chunk's layers is every layer: the same bytes as recompute_layers 0.
  config.training.recompute_layers = 20;
  CHECK(estimate_memory(config).ranks[0].peak_reserved_bytes == all.ranks[0].peak_reserved_bytes);
  config.training.recompute_layers = 400;
  CHECK(estimate_memory(config).ranks[0].peak_reserved_bytes == all.ranks[0].peak_reserved_bytes);
}

TEST_CASE("recompute_layers is checked: a negative count is an error, a count without full recompute a warning") {
  const auto has_issue = [](const std::vector<Issue>& issues, IssueCode code, const std::string& field) {
    return std::any_of(issues.begin(), issues.end(), [&](const Issue& i) { return i.code == code && i.field == field; });
  };
  Config config = preset_config("llama3.1-8b", 8, 1, 1);
  config.training.recompute = Recompute::kFull;
  config.training.recompute_layers = -1;
  CHECK(has_issue(validate(config), IssueCode::kOutOfRange, "recompute_layers"));
  CHECK_FALSE(estimate_memory(config).valid());
  config.training.recompute_layers = 4;
  config.training.recompute = Recompute::kSelective;
  const std::vector<Issue> issues = validate(config);
  CHECK(has_issue(issues, IssueCode::kConflictingSettings, "recompute_layers"));
  CHECK_FALSE(has_errors(issues));
  // At or beyond a chunk's layers (32 here): every layer, as 0, and said; below it, nothing to say.
  config.training.recompute = Recompute::kFull;
  config.training.recompute_layers = 32;
  CHECK(has_issue(validate(config), IssueCode::kConflictingSettings, "recompute_layers"));
  config.training.recompute_layers = 31;
  CHECK_FALSE(has_issue(validate(config), IssueCode::kConflictingSettings, "recompute_layers"));
}
