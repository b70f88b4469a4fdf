// test_spatial_temporal.cpp — spatial-temporal (PrimePar-style) model parallelism: its rules, its
// memory and step-time terms, the search option, the export refusal, and the validation against
// the paper's own figures.
//
// Source: Wang et al., "PrimePar: Efficient Spatial-temporal Tensor Partitioning for Large
// Transformer Model Training", ASPLOS '24, DOI 10.1145/3620666.3651357 (CC BY 4.0). Reported:
// Fig. 7 (p.810) throughput normalised to Megatron-LM, Fig. 8 (p.811) peak memory as a fraction of
// Megatron-LM, on 8 nodes x 4 V100-SXM2 32 GB, NVLink inside a node, 100 Gb/s InfiniBand between.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fixtures.h"
#include "io/launch_config.h"
#include "io/serialize.h"
#include "memory/memory_model.h"
#include "memory/parameter_count.h"
#include "perf/perf_model.h"
#include "search/layout_search.h"
#include "spec/structure.h"
#include "spec/validate.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {

std::vector<IssueCode> error_codes(const Config& config) {
  std::vector<IssueCode> out;
  for (const Issue& issue : validate(config))
    if (issue.severity == Severity::kError) out.push_back(issue.code);
  return out;
}

bool has_code(const Config& config, IssueCode code) {
  for (IssueCode c : error_codes(config))
    if (c == code) return true;
  return false;
}

// A GPT-style model of the paper's families from the small presets' architecture flags (OPT: ReLU
// MLP, LayerNorm, biases; BLOOM: GeLU, LayerNorm, ALiBi), with the sizes of their HF config.json.
ModelSpec sized(const char* base, const char* name, int64_t hidden, int64_t layers, int64_t heads, int64_t ffn) {
  ModelSpec model = *find_model_preset(base);
  model.name = name;
  model.hidden = hidden;
  model.layers = layers;
  model.heads = model.kv_heads = heads;
  model.ffn = ffn;
  return model;
}

struct PaperModel {
  const char* name;
  ModelSpec model;
  double reported_speedup[4];  // Fig. 7 bar labels at 4, 8, 16, 32 GPUs
  double reported_memory[4];   // Fig. 8 bar labels (fraction of Megatron's peak)
};

std::vector<PaperModel> paper_models() {
  return {
      {"OPT 6.7B", sized("opt-1.3b", "opt-6.7b", 4096, 32, 32, 16384), {1.16, 1.18, 1.16, 1.20}, {0.89, 0.90, 0.93, 0.93}},
      {"OPT 175B", sized("opt-1.3b", "opt-175b", 12288, 96, 96, 49152), {1.11, 1.35, 1.38, 1.39}, {0.92, 0.80, 0.80, 0.79}},
      {"Llama2 7B", *find_model_preset("llama2-7b"), {1.16, 1.19, 1.20, 1.21}, {0.90, 0.91, 0.93, 0.92}},
      {"Llama2 70B", *find_model_preset("llama2-70b"), {1.15, 1.21, 1.24, 1.26}, {0.91, 0.88, 0.91, 0.89}},
      {"BLOOM 7B1", sized("bloom-1b1", "bloom-7b1", 4096, 30, 32, 16384), {1.15, 1.18, 1.18, 1.19}, {0.89, 0.90, 0.93, 0.92}},
      {"BLOOM 176B", sized("bloom-1b1", "bloom-176b", 14336, 70, 112, 57344), {1.11, 1.43, 1.68, 1.60}, {0.92, 0.78, 0.69, 0.68}},
  };
}

// The paper's testbed as meshfit inputs. Assumptions the paper leaves open (PRIMEPAR_NOTES §3
// "Missing from the paper"), each stated:
//  - InfiniBand "100 GB/s" read as one 100 Gb/s HCA per 4-GPU node: 25 Gb/s per GPU.
//  - sequence 2048 for every model; global batch = 1 sequence per GPU (Fig. 9: batch 8 on 8 GPUs);
//    one micro-batch per step (no gradient accumulation).
//  - fp16 mixed precision with Adam (the V100 entry's FP16 tensor rate), Megatron distributed optimizer.
//  - Megatron baseline: no sequence parallelism (the paper credits its memory saving to "reduced
//    tensor replication", p.811), no TP or DP communication overlap (Fig. 9's timeline shows the
//    gradient all-reduces after the GEMMs), no pipeline (§ evaluation setup).
//  - no activation recompute on either side (not mentioned; Fig. 8 credits the saving to replication).
//  - layers: the paper does not say how a 175B model ran on 4 x 32 GB; each run keeps the most
//    layers (up to the model's) with which some Megatron best-of-d layout fits (fit_layers below).
Config testbed(const ModelSpec& model, int64_t gpus) {
  Config config = default_config();
  config.model = model;
  config.gpu = *find_gpu_preset("v100");
  config.gpu.internode_bytes_per_s = 25e9 / 8.0;
  config.gpu.nvlink_domain = 4;  // NVLink inside the 4-GPU node only
  config.cluster.gpus = gpus;
  config.cluster.gpus_per_node = 4;
  config.training.seq = 2048;
  config.training.global_batch = gpus;
  config.training.sp = false;
  config.training.recompute = Recompute::kNone;
  config.training.tp_comm_overlap = false;
  config.training.dp_comm_overlap = DpCommOverlap::kOff;
  return config;
}

struct Best {
  bool found = false;
  double tokens_per_s = 0;
  double device_bytes = 0;
  Config config;
};

// Best-of-d as the paper ran its baselines (p.810): every data-parallel size d with model
// parallelism n/d (and SP on or off when `sp_choices`), the config's recompute; the fastest that fits.
enum class Kind { kMegatron, kSpatialTemporal, kEither };
Best best_layout(Config config, Kind kind, bool sp_choices) {
  Best best;
  const int64_t gpus = config.cluster.gpus;
  for (int64_t dp = 1; dp <= gpus; dp *= 2) {
    if (gpus % dp != 0) continue;
    config.layout = Layout{};
    config.layout.dp = dp;
    config.layout.tp = gpus / dp;
    config.training.micro_batch = config.training.global_batch / dp;
    std::vector<int64_t> squares;
    if (kind != Kind::kSpatialTemporal) squares.push_back(1);
    if (kind != Kind::kMegatron)
      for (int64_t q : spatial_temporal_choices(config, config.layout.tp)) squares.push_back(q);
    for (int64_t q : squares)
        for (bool sp : {false, true}) {
          if (sp && (!sp_choices || q > 1)) continue;
          config.layout.st_q = q;
          config.training.sp = sp;
          if (has_errors(validate(config))) continue;
          const MemoryPlan plan = plan_memory(config);
          const RankMemory worst = worst_stage_memory(config, plan);
          if (worst.device_bytes > config.gpu.memory_bytes) continue;
          const StepReport step = predict_step(config, plan);
          if (step.tokens_per_s_per_gpu > best.tokens_per_s) best = {true, step.tokens_per_s_per_gpu, worst.device_bytes, config};
        }
  }
  return best;
}

// The most layers (binary search; memory grows with layers) with which Megatron's best fits, and
// a spatial-temporal layout too (so that both sides have a plan to compare).
Config fit_layers(Config config, bool sp_choices) {
  const int64_t full = config.model.layers;
  int64_t lo = 0, hi = full;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    config.model.layers = mid;
    if (best_layout(config, Kind::kMegatron, sp_choices).found && best_layout(config, Kind::kSpatialTemporal, sp_choices).found)
      lo = mid;
    else hi = mid - 1;
  }
  config.model.layers = std::max<int64_t>(1, lo);
  return config;
}

std::string label(const Config& c) {
  char text[64];
  std::snprintf(text, sizeof text, "dp%lld tp%lld%s %s", (long long)c.layout.dp, (long long)c.layout.tp,
                c.layout.st_q > 1 ? ("(st q" + std::to_string(c.layout.st_q) + ")").c_str() : "",
                to_string(c.training.recompute));
  return text;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

TEST_CASE("spatial-temporal rules: one issue code per rule, through validate()") {
  Config config = preset_config("llama3-8b", 16, 8);  // 32 heads, 8 kv heads, ffn 14336, seq 4096
  config.cluster.gpus_per_node = 8;
  config.layout.st_q = 2;
  CHECK(error_codes(config).empty());
  config.layout.st_q = 3;
  CHECK(has_code(config, IssueCode::kStNotPowerOfTwo));
  config.layout.st_q = 4;  // 16 GPUs in the square: more than tp=8
  CHECK(has_code(config, IssueCode::kStSquareNotDivideTp));
  config = preset_config("llama3-8b", 16, 8);
  config.gpu.nvlink_domain = config.cluster.gpus_per_node = 2;  // a 2x2 square would leave NVLink
  config.layout.st_q = 2;
  CHECK(has_code(config, IssueCode::kStSquareOutsideNvlink));
  config = preset_config("llama3-8b", 16, 8);
  config.layout.st_q = 2;
  config.training.seq = 4098;  // even (cp rule) but not a multiple of 4
  CHECK(has_code(config, IssueCode::kStSquareNotDivideSeq));
  config.training.seq = 4096;
  config.model.ffn = 14338;  // tp=8 no longer divides it either: both rules name their field
  CHECK(has_code(config, IssueCode::kStSquareNotDivideHidden));
  // The head dimension is never split: tp (hence the square) must divide the heads, as for TP.
  config = preset_config("llama3-8b", 16, 8);
  config.layout.st_q = 2;
  config.model.heads = config.model.kv_heads = 36;
  config.model.hidden = 36 * 128;
  CHECK(has_code(config, IssueCode::kTpNotDivideHeads));
  // q = 1 is Megatron TP: none of the rules apply.
  config = preset_config("llama3-8b", 12, 3);
  CHECK_FALSE(has_code(config, IssueCode::kStNotPowerOfTwo));
  config.layout.st_q = 0;
  CHECK(has_code(config, IssueCode::kNotPositive));
}

TEST_CASE("spatial-temporal memory: activations divided by m, no SP gather, double buffers added") {
  Config megatron = preset_config("llama3-70b", 8, 8);
  megatron.training.global_batch = 8;
  megatron.training.sp = true;
  Config square = megatron;
  square.layout.st_q = 2;
  square.training.sp = false;  // ignored: a square shards every activation
  const MemoryReport a = estimate_memory(megatron);
  const MemoryReport b = estimate_memory(square);
  REQUIRE(a.valid());
  REQUIRE(b.valid());
  const RankMemory& ra = a.worst();
  const RankMemory& rb = b.worst();
  // Same model states (both split m = 8 ways), same activations as full SP.
  CHECK(rb.bytes(Component::kWeights) == doctest::Approx(ra.bytes(Component::kWeights)));
  CHECK(rb.bytes(Component::kOptimizerStates) == doctest::Approx(ra.bytes(Component::kOptimizerStates)));
  CHECK(rb.bytes(Component::kActivations) == doctest::Approx(ra.bytes(Component::kActivations)));
  // Buffers: the square's blocks (largest linear, MLP in: N = h, K = 2f) replace SP's gathered input.
  const double tokens = 4096.0, h = 8192.0, k = 2.0 * 28672.0, m = 8.0;
  const double expected = 2.0 * (2.0 * (tokens * k + h * k) / m + h * k / m);
  CHECK(rb.intermediates.st_buffer_bytes == doctest::Approx(expected));
  CHECK(spatial_temporal_buffer_bytes(megatron) == 0.0);
  // Against Megatron without SP, the replicated activations are gone.
  Config replicated = megatron;
  replicated.training.sp = false;
  CHECK(rb.bytes(Component::kActivations) < 0.5 * estimate_memory(replicated).worst().bytes(Component::kActivations));
}

TEST_CASE("spatial-temporal step time: same FLOPs, p2p hidden on NVLink, exposed when the link is slow") {
  Config config = preset_config("llama3-70b", 4, 4);  // one 2x2 square, no conventional split
  config.training.global_batch = 4;
  config.layout.st_q = 2;
  const StepReport step = predict_step(config, plan_memory(config));
  // On an (almost) unbounded link the square costs nothing beyond its sub-GEMMs...
  Config ideal = config;
  ideal.gpu.nvlink_bytes_per_s *= 1e6;
  const StepReport free = predict_step(ideal, plan_memory(ideal));
  CHECK(free.breakdown.tp_comm_s < 1e-3 * free.breakdown.compute_s);
  // ...and over a link 100x slower the block transfers no longer hide under them.
  Config slow = config;
  slow.gpu.nvlink_bytes_per_s /= 100.0;
  const StepReport exposed = predict_step(slow, plan_memory(slow));
  CHECK(exposed.breakdown.tp_comm_s > 10.0 * step.breakdown.tp_comm_s);
  CHECK(exposed.breakdown.compute_s == doctest::Approx(step.breakdown.compute_s));
  CHECK(free.breakdown.compute_s == doctest::Approx(step.breakdown.compute_s));
  const StepReport& fast = step;
  // Model FLOPs do not depend on the partition.
  Config megatron = config;
  megatron.layout.st_q = 1;
  CHECK(predict_step(megatron, plan_memory(megatron)).model_flops_per_token == doctest::Approx(fast.model_flops_per_token));
  // A conventional split across nodes (tp = 2 x 2x2) adds blocking collectives on 1/4 of Megatron's
  // message; with the square's NVLink made free, that is all its TP/ST term holds.
  Config across = preset_config("llama3-70b", 16, 8);
  across.cluster.gpus_per_node = across.gpu.nvlink_domain = 4;
  across.gpu.nvlink_bytes_per_s *= 1e6;
  across.training.global_batch = 16;
  across.layout.st_q = 2;
  const StepReport split = predict_step(across, plan_memory(across));
  CHECK(split.tp_crosses_nodes);
  CHECK(split.breakdown.tp_comm_s > 0);
  across.layout.st_q = 1;
  const StepReport tp8 = predict_step(across, plan_memory(across));
  CHECK(split.breakdown.tp_comm_s < tp8.breakdown.tp_comm_s);
}

TEST_CASE("search option: squares only when asked, marked, and never exported") {
  Config base = preset_config("llama3-70b", 32, 1);
  base.training.global_batch = 64;
  SearchOptions options;
  options.top_k = 200;
  options.pp = Range::pinned(1);
  const SearchResult plain = search_layouts(base, options);
  for (const LayoutCandidate& c : plain.top) CHECK_FALSE(c.spatial_temporal());
  options.spatial_temporal = true;
  const SearchResult both = search_layouts(base, options);
  REQUIRE(both.valid());
  CHECK(both.evaluated > plain.evaluated);
  int squares = 0;
  for (const LayoutCandidate& c : both.top) {
    if (!c.spatial_temporal()) continue;
    ++squares;
    const nlohmann::json out = layout_candidate_to_json(c);
    CHECK(out["model_parallel"] == "spatial_temporal");
    CHECK(out["modelled_only"] == "modelled, not implemented by any public framework");
    // Re-estimating the layout gives the search's numbers.
    Config config = base;
    config.layout = c.layout;
    config.training.micro_batch = c.micro_batch;
    config.training.recompute = c.recompute;
    config.training.sp = c.sp;
    const MemoryReport memory = estimate_memory(config);
    REQUIRE(memory.valid());
    CHECK(memory.worst().device_bytes == doctest::Approx(c.device_bytes));
    for (LaunchFormat format : {LaunchFormat::kMegatron, LaunchFormat::kTorchtitan, LaunchFormat::kDeepSpeed}) {
      const LaunchExport exported = export_launch_config(config, format);
      CHECK(exported.text.empty());
      REQUIRE(exported.issues.size() == 1);
      CHECK(exported.issues[0].code == IssueCode::kStNotExportable);
    }
  }
  CHECK(squares > 0);
  CHECK(both.evaluated == both.feasible + [&] {
    int64_t total = 0;
    for (int64_t n : both.rejected) total += n;
    return total;
  }());
}

// Reproduced vs reported (Figs. 7 and 8). What is asserted, and why these bands:
//  - direction: at 8+ GPUs every large model (> 60B) gains (the mechanism: Megatron's best plan puts
//    TP or DP all-reduces on the 25 Gb/s-per-GPU InfiniBand, the square's conventional split moves
//    1/q^2 of that, and its p2p hides on NVLink) and uses less memory than Megatron (no replicated
//    activations);
//  - rough size: the 32-GPU geometric mean within a factor 1.5 of the reported 1.30 in the gain
//    (gain - 1 between 0.1 and 0.6 where the paper has 0.30): the testbed's batch, sequence,
//    layer count and NIC are assumptions (above), and the paper's searched per-operator plans
//    are not modelled, so a closer match would be tuning, not validation;
//  - the 7B models gain less than the >60B ones, as in Fig. 7 (communication is a smaller share).
TEST_CASE("PrimePar validation: predicted vs reported ratios on the paper's V100 testbed") {
  const int64_t counts[] = {4, 8, 16, 32};
  std::printf("\nPrimePar (ASPLOS'24) Figs. 7-8 vs meshfit: 4-GPU V100 nodes, 25 Gb/s IB per GPU, seq 2048, 1 seq/GPU\n");
  std::printf("%-11s %4s %5s | %-26s | %-26s | %7s %7s %6s | %6s %6s\n", "model", "gpus", "layers", "Megatron best",
              "with squares best", "speedup", "paper", "ratio", "memory", "paper");
  std::vector<double> ratio_errors, large_gains_8plus, small_gains_8plus;
  double log_sum_32 = 0;
  int count_32 = 0;
  double bloom16_speedup = 0, bloom16_memory = 0;
  for (const PaperModel& row : paper_models()) {
    for (int i = 0; i < 4; ++i) {
      const Config config = fit_layers(testbed(row.model, counts[i]), false);
      const Best megatron = best_layout(config, Kind::kMegatron, false);
      const Best primepar = best_layout(config, Kind::kEither, false);
      CAPTURE(row.name);
      CAPTURE(counts[i]);
      if (!megatron.found || !primepar.found) {
        std::printf("%-11s %4lld %5lld | no layout fits\n", row.name, (long long)counts[i], (long long)config.model.layers);
        continue;
      }
      const double speedup = primepar.tokens_per_s / megatron.tokens_per_s;
      const double memory = primepar.device_bytes / megatron.device_bytes;
      ratio_errors.push_back(std::fabs(speedup / row.reported_speedup[i] - 1.0));
      std::printf("%-11s %4lld %5lld | %-26s | %-26s | %6.2fx %6.2fx %6.2f | %5.0f%% %5.0f%%\n", row.name,
                  (long long)counts[i], (long long)config.model.layers, label(megatron.config).c_str(),
                  label(primepar.config).c_str(), speedup, row.reported_speedup[i], speedup / row.reported_speedup[i],
                  100.0 * memory, 100.0 * row.reported_memory[i]);
      const bool large = row.model.hidden >= 8192;
      if (counts[i] >= 8) (large ? large_gains_8plus : small_gains_8plus).push_back(speedup);
      if (counts[i] >= 8 && large) {
        CHECK(speedup > 1.05);
        CHECK(memory < 1.0);
      }
      if (counts[i] == 32) {
        log_sum_32 += std::log(speedup);
        ++count_32;
      }
      if (counts[i] == 16 && std::string(row.name) == "BLOOM 176B") {
        bloom16_speedup = speedup;
        bloom16_memory = memory;
      }
    }
  }
  REQUIRE(count_32 == 6);
  const double geomean_32 = std::exp(log_sum_32 / count_32);
  std::printf("geo-mean at 32 GPUs: predicted %.2fx, reported 1.30x; BLOOM 176B at 16 GPUs: %.2fx / %.0f%% memory, "
              "reported 1.68x / 69%%\nmedian |predicted/reported - 1| of the speedups: %.1f%% over %zu rows\n",
              geomean_32, bloom16_speedup, 100.0 * bloom16_memory, 100.0 * median(ratio_errors), ratio_errors.size());
  CHECK(geomean_32 > 1.10);
  CHECK(geomean_32 < 1.60);
  CHECK(bloom16_speedup > 1.1);
  CHECK(bloom16_memory < 1.0);
  CHECK(median(small_gains_8plus) < median(large_gains_8plus));
}

// The notes' expectation (PRIMEPAR_NOTES §5): on 8-GPU NVSwitch nodes with 400 Gb/s per GPU and
// Megatron's TP overlap, Megatron keeps TP inside the node and the gain shrinks.
TEST_CASE("PrimePar on H100 NVSwitch nodes with TP overlap: a smaller gain than on the V100 testbed") {
  const ModelSpec bloom = paper_models().back().model;
  std::printf("\nBLOOM-176B-sized, H100 SXM 8-GPU NVSwitch nodes, 400 Gb/s per GPU, TP and DP overlap on, SP allowed, "
              "seq 2048, 1 seq/GPU\n");
  std::printf("%4s %6s | %-26s | %-26s | %9s %12s %7s | %12s\n", "gpus", "layers", "Megatron best", "squares-only best",
              "with sq.", "squares only", "memory", "V100 sq.only");
  for (int64_t gpus : {8, 32}) {
    Config config = testbed(bloom, gpus);
    config.gpu = *find_gpu_preset("h100-sxm");
    config.cluster.gpus_per_node = 8;
    config.training.tp_comm_overlap = true;
    config.training.dp_comm_overlap = DpCommOverlap::kOn;
    config = fit_layers(config, true);
    const Best megatron = best_layout(config, Kind::kMegatron, true);
    const Best squares = best_layout(config, Kind::kSpatialTemporal, true);
    const Best either = best_layout(config, Kind::kEither, true);
    REQUIRE(megatron.found);
    REQUIRE(squares.found);
    const double h100_squares = squares.tokens_per_s / megatron.tokens_per_s;
    // The same model and GPU count on the paper's testbed.
    const Config v100 = fit_layers(testbed(bloom, gpus), false);
    const Best v100_megatron = best_layout(v100, Kind::kMegatron, false);
    const Best v100_squares = best_layout(v100, Kind::kSpatialTemporal, false);
    REQUIRE(v100_megatron.found);
    REQUIRE(v100_squares.found);
    const double v100_ratio = v100_squares.tokens_per_s / v100_megatron.tokens_per_s;
    std::printf("%4lld %6lld | %-26s | %-26s | %8.2fx %11.2fx %6.0f%% | %11.2fx\n", (long long)gpus,
                (long long)config.model.layers, label(megatron.config).c_str(), label(squares.config).c_str(),
                either.tokens_per_s / megatron.tokens_per_s, h100_squares,
                100.0 * squares.device_bytes / megatron.device_bytes, v100_ratio);
    CHECK(h100_squares < v100_ratio);
  }
}
