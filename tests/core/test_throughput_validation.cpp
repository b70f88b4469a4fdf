// test_throughput_validation.cpp — predicted vs measured tokens/s per GPU for every published run in
// tests/data/layouts_measured.csv (Hagemann et al. 2023, Narayanan et al. SC'21 Tables 1-2,
// Korthikanti et al. 2022 Table 5, Llama 3 Table 4), per row and per source; and the error bands
// that core reports next to every prediction (perf_model.h throughput_error_band) against them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "memory/memory_model.h"
#include "published_runs.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n == 0 ? NAN : n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Validation {
  std::map<std::string, std::vector<double>> errors_by_source;  // signed: predicted / measured - 1
  std::map<std::pair<Framework, std::string>, std::vector<double>> abs_errors_by_band;  // framework, GPU family
};

Validation validate_all(bool print_rows) {
  Validation v;
  for (const CsvRow& row : read_csv(data_path("layouts_measured.csv"))) {
    const std::optional<PublishedRun> run = published_run(row);
    if (!run) continue;
    const MemoryReport memory = estimate_memory(run->config);
    INFO(run->label);
    REQUIRE_MESSAGE(memory.valid(), (memory.issues.empty() ? "" : memory.issues.front().message));
    const StepReport step = predict_step(run->config, plan_memory(run->config));
    const double error = step.tokens_per_s_per_gpu / run->measured_tokens_per_s_per_gpu - 1.0;
    v.errors_by_source[run->source].push_back(error);
    v.abs_errors_by_band[{run->config.training.framework, run->config.gpu.family}].push_back(std::fabs(error));
    if (print_rows)
      std::printf("  %-42s %-58s measured %8.1f predicted %8.1f %+6.1f%%\n", run->source.c_str(), run->label.c_str(),
                  run->measured_tokens_per_s_per_gpu, step.tokens_per_s_per_gpu, 100.0 * error);
  }
  return v;
}

}  // namespace

TEST_CASE("throughput validation: predicted vs measured tokens/s/GPU per published run and per source") {
  std::printf("\nThroughput validation (layouts_measured.csv): tokens/s/GPU predicted vs measured, every run\n");
  const Validation v = validate_all(true);
  std::printf("\nPer source: median |error| of tokens/s/GPU (median signed error)\n");
  std::vector<double> all;
  for (const auto& [source, errors] : v.errors_by_source) {
    std::vector<double> abs_errors, signed_errors = errors;
    for (double e : errors) abs_errors.push_back(std::fabs(e));
    all.insert(all.end(), abs_errors.begin(), abs_errors.end());
    std::printf("  %-42s %4zu runs  median |error| %5.1f%%  (signed %+5.1f%%)\n", source.c_str(), errors.size(),
                100.0 * median_of(abs_errors), 100.0 * median_of(signed_errors));
  }
  std::printf("  %-42s %4zu runs  median |error| %5.1f%%\n", "all visible runs", all.size(), 100.0 * median_of(all));
  CHECK(all.size() == 434);
}

TEST_CASE("error bands: the band reported beside each prediction is the validation error of its framework and GPU family") {
  const Validation v = validate_all(false);
  std::printf("\nError bands (perf_model.cpp kBands) vs the validation data\n");
  for (const auto& entry : v.abs_errors_by_band) {
    const auto& key = entry.first;  // no structured binding: clang 14 (WASM) cannot capture one in CAPTURE
    const auto& abs_errors = entry.second;
    const ErrorBand band = throughput_error_band(key.first, key.second);
    const double median = median_of(abs_errors);
    std::printf("  %-10s %-10s data: %5.2f%% on %3zu runs   table: %s\n", to_string(key.first), key.second.c_str(), 100.0 * median,
                abs_errors.size(), error_band_text(band).c_str());
    CAPTURE(to_string(key.first));
    CAPTURE(key.second);
    CHECK(band.runs == int(abs_errors.size()));
    CHECK(std::fabs(band.median_abs_error - median) <= 0.01);  // within one point
  }
  CHECK(throughput_error_band(Framework::kFsdp, "blackwell").runs == 0);
  CHECK(error_band_text(throughput_error_band(Framework::kFsdp, "blackwell")).find("not validated") != std::string::npos);
}
