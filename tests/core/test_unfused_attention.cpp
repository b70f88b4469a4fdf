// test_unfused_attention.cpp — attention without FlashAttention (perf_model.cpp unfused_attention_s)
// against the two measured sets that isolate it:
// - Hagemann et al. 2023 (arXiv:2311.05610; tests/data/layouts_measured.csv): the same layouts ran with
//   attn_kernel=torch (the eager softmax path), fused (Megatron's fused softmax kernel) and
//   flash_attention2, so the step-time ratio of a pair is the attention's cost alone;
// - meshfit's own H100 steps (tests/data/gpu_memory_measured.csv): SDPA's math backend beside the flash
//   rows of the same shapes (Llama-3.1-8B, 4 layers, micro-batch 1).
// Each table prints measured vs predicted per row and the medians; the asserts hold the medians.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "hagemann.h"
#include "io/gpu_runs.h"
#include "io/measured_runs.h"
#include "memory/memory_model.h"
#include "perf/perf_model.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {


double predicted_tokens_per_s(const Config& config) { return predict_step(config, plan_memory(config)).tokens_per_s_per_gpu; }

}  // namespace

TEST_CASE("unfused attention: Hagemann's torch and fused-softmax runs against FlashAttention-2 on the same layouts") {
  using Layout = std::tuple<std::string, long long, long long, long long, long long, long long, std::string, std::string>;
  struct Times {
    double measured = 0, predicted = 0;  // seconds per token per GPU: the step time up to a constant
  };
  std::map<Layout, std::map<std::string, Times>> layouts;
  for (const CsvRow& row : read_csv(data_path("layouts_measured.csv"))) {
    if (!is_hagemann(row)) continue;
    const std::optional<ThroughputRun> run = throughput_run_from_row(row);
    if (!run) continue;
    const Layout key{row.at("model"), to_int(row.at("seq_len")), to_int(row.at("num_gpus")), to_int(row.at("tp")),
                     to_int(row.at("pp")), to_int(row.at("micro_batch")), row.at("recompute"), row.at("sp")};
    layouts[key][hagemann_kernel(row)] = {1.0 / run->measured_tokens_per_s_per_gpu, 1.0 / predicted_tokens_per_s(run->config)};
  }
  struct Expect {
    const char* kernel;
    size_t pairs;
    double tolerance;  // on the predicted median step-time ratio, relative to the measured one
  };
  // torch: the eager fp32 softmax chain; fused: Megatron's kernel (these rows also take the fused
  // profile for the rest of the layer, throughput_runs.cpp hagemann_config). Every row here runs
  // the eager RMSNorm (kEagerRmsNormBytes): with it in both times the fused-softmax pairs come out
  // 5.2% below the measured ratio (within 3% before the norm was priced, when both times lacked
  // it); the fused-softmax path's score passes are the likely low term (known gap, docs.html).
  for (const Expect& expect : {Expect{"torch", 23, 0.10}, Expect{"fused", 24, 0.06}}) {
    std::printf("\nHagemann 2023: step time with attn_kernel=%s over flash_attention2, same layout\n", expect.kernel);
    std::printf("  %-20s %5s %5s %3s %3s %3s %-5s %-3s %9s %9s\n", "model", "seq", "GPUs", "tp", "pp", "mb", "rc", "sp",
                "measured", "predicted");
    std::vector<double> measured, predicted, pair_errors;
    for (const auto& [key, kernels] : layouts) {
      const auto unfused = kernels.find(expect.kernel), flash = kernels.find("flash_attention2");
      if (unfused == kernels.end() || flash == kernels.end()) continue;
      measured.push_back(unfused->second.measured / flash->second.measured);
      predicted.push_back(unfused->second.predicted / flash->second.predicted);
      pair_errors.push_back(predicted.back() / measured.back() - 1.0);
      std::printf("  %-20s %5lld %5lld %3lld %3lld %3lld %-5s %-3s %9.3f %9.3f\n", std::get<0>(key).c_str(), std::get<1>(key),
                  std::get<2>(key), std::get<3>(key), std::get<4>(key), std::get<5>(key), std::get<6>(key).c_str(),
                  std::get<7>(key).c_str(), measured.back(), predicted.back());
    }
    // Checked pair by pair: the torch pairs fall in two groups (1.0-1.6x at 2k, 1.7-2.3x at 8k), and
    // the median of each column lands on whichever group's edge holds the middle pair.
    const double pair_error = median_of(pair_errors);
    std::printf("  median over %zu pairs: measured %.3fx, predicted %.3fx; predicted/measured per pair %+.1f%%\n",
                measured.size(), median_of(measured), median_of(predicted), 100.0 * pair_error);
    INFO(expect.kernel);
    CHECK(measured.size() == expect.pairs);
    CHECK(std::fabs(pair_error) < expect.tolerance);
  }
}

TEST_CASE("unfused attention: SDPA math rows on one H100 slow down with s^2 as measured") {
  // The math rows and the flash row of the same shape (the first listed: the allocator variants of a
  // shape run at the same speed within 1%).
  const std::vector<ThroughputRun> runs = gpu_throughput_runs();
  std::printf("\ntests/gpu (H100): tokens/s with SDPA math over flash, same shape\n");
  std::printf("  %-70s %9s %9s\n", "math row", "measured", "predicted");
  std::map<long long, double> predicted_by_seq;
  std::vector<double> errors;
  for (const ThroughputRun& math : runs) {
    const size_t at = math.label.find(" math ");
    if (at == std::string::npos) continue;
    const std::string flash_label = math.label.substr(0, at) + " flash " + math.label.substr(at + 6);
    const auto flash = std::find_if(runs.begin(), runs.end(), [&](const ThroughputRun& r) { return r.label == flash_label; });
    REQUIRE(flash != runs.end());
    const double measured = math.measured_tokens_per_s_per_gpu / flash->measured_tokens_per_s_per_gpu;
    const double predicted = predicted_tokens_per_s(math.config) / predicted_tokens_per_s(flash->config);
    predicted_by_seq[math.config.training.seq] = predicted;
    std::printf("  %-70s %9.3f %9.3f\n", math.label.c_str(), measured, predicted);
    INFO(math.label);
    CHECK(math.config.training.flash == false);
    // Where the attention dominates (s >= 2048) the ratio follows the measured one within 15%; at 1024
    // the step is host-bound and both ratios are near 1.
    if (math.config.training.seq >= 2048) CHECK(std::fabs(predicted / measured - 1.0) < 0.15);
    errors.push_back(std::fabs(predicted / measured - 1.0));
  }
  REQUIRE(predicted_by_seq.size() == 3);
  std::printf("  median |error| of the ratio over %zu rows: %.1f%%\n", errors.size(), 100.0 * median_of(errors));
  // The unfused time per token grows with s (s^2 per sequence), so the slowdown deepens with length.
  CHECK(predicted_by_seq[4096] < predicted_by_seq[2048]);
  CHECK(predicted_by_seq[2048] < predicted_by_seq[1024]);
}
