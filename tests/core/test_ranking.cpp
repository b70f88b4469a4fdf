// test_ranking.cpp — the performance model and memory filter against Hagemann et al. 2023's sweep
// (arXiv:2311.05610; tests/data/layouts_measured.csv and layouts_failed_or_oom.csv). Prints the
// per-group ranking table and the memory-filter rates; asserts the figures reached.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

#include "hagemann.h"
#include "memory/memory_model.h"
#include "perf/perf_model.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> out(values.size());
  for (size_t i = 0; i < order.size(); ++i) out[order[i]] = double(i);
  return out;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const std::vector<double> a = ranks(x), b = ranks(y);
  const double n = double(x.size());
  double d2 = 0;
  for (size_t i = 0; i < x.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
  return 1.0 - 6.0 * d2 / (n * (n * n - 1.0));
}

}  // namespace

TEST_CASE("ranking: the measured-best layout is in the predicted top 3 of Hagemann's groups") {
  // A group: one workbook (model, GPUs, sequence, attention kernel); within it only the layout varies.
  std::map<std::tuple<std::string, long long, long long, std::string>, std::vector<CsvRow>> groups;
  for (const CsvRow& row : read_csv(data_path("layouts_measured.csv")))
    if (is_hagemann(row))
      groups[{row.at("model"), to_int(row.at("num_gpus")), to_int(row.at("seq_len")), hagemann_kernel(row)}].push_back(row);

  int scored = 0, in_top3 = 0;
  std::vector<double> regrets, correlations, mfu_errors;
  std::printf("\nHagemann et al. 2023 groups: predicted vs measured ranking (MFU)\n");
  std::printf("%-20s %5s %5s %-30s %4s %5s %7s %6s %9s %9s\n", "model", "GPUs", "seq", "kernel", "n", "top3", "regret",
              "rho", "best meas", "best pred");
  for (const auto& [key, rows] : groups) {
    if (rows.size() < 2) continue;
    std::vector<double> predicted, measured;
    for (const CsvRow& row : rows) {
      const Config config = hagemann_config(row);
      const MemoryReport memory = estimate_memory(config);
      REQUIRE_MESSAGE(memory.valid(), (memory.issues.empty() ? std::string() : memory.issues.front().message));
      const StepReport step = predict_step(config, plan_memory(config));
      predicted.push_back(step.mfu);
      measured.push_back(to_double(row.at("measured_mfu")));
      mfu_errors.push_back(step.mfu / measured.back() - 1.0);
    }
    std::vector<size_t> order(rows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return predicted[a] > predicted[b]; });
    const size_t best = size_t(std::max_element(measured.begin(), measured.end()) - measured.begin());
    const bool top3 = std::find(order.begin(), order.begin() + std::min<size_t>(3, order.size()), best) !=
                      order.begin() + std::min<size_t>(3, order.size());
    const double regret = measured[best] / measured[order[0]];
    const double rho = rows.size() >= 3 ? spearman(predicted, measured) : NAN;
    ++scored;
    in_top3 += top3;
    regrets.push_back(regret);
    if (!std::isnan(rho)) correlations.push_back(rho);
    std::printf("%-20s %5lld %5lld %-30s %4zu %5s %7.3f %+6.2f %9.3f %9.3f\n", std::get<0>(key).substr(0, 20).c_str(),
                std::get<1>(key), std::get<2>(key), std::get<3>(key).substr(0, 30).c_str(), rows.size(), top3 ? "yes" : "no",
                regret, rho, measured[best], predicted[order[0]]);
  }
  std::vector<double> abs_errors;
  for (double e : mfu_errors) abs_errors.push_back(std::fabs(e));
  std::printf("groups %d, measured-best in predicted top 3: %d (%.0f%%), median regret %.3f, median rank "
              "correlation %.2f, median |MFU error| %.1f%% over %zu runs\n",
              scored, in_top3, 100.0 * in_top3 / scored, median(regrets), median(correlations),
              100.0 * median(abs_errors), mfu_errors.size());
  // Issue targets: best in top 3 in >= 80% of groups, median regret within 5%.
  CHECK(scored == 24);
  CHECK(double(in_top3) >= 0.9 * scored);
  CHECK(median(regrets) <= 1.05);
  CHECK(median(correlations) >= 0.75);
  // Absolute MFU: within 10% once the sweep's eager RMSNorm and its one network rail per node are
  // modelled (test_hagemann_mechanisms.cpp; 16.5% before either).
  CHECK(median(abs_errors) <= 0.10);
}

TEST_CASE("memory filter: completed runs are predicted feasible, out-of-memory runs infeasible") {
  const auto rate = [](const char* file, bool want_oom, int& total) {
    int agree = 0;
    total = 0;
    for (const CsvRow& row : read_csv(data_path(file))) {
      if (!is_hagemann(row) || (want_oom && row.at("notes").rfind("OOM", 0) != 0)) continue;  // not "not run/fail"
      const MemoryReport report = estimate_memory(hagemann_config(row));
      REQUIRE_MESSAGE(report.valid(), (report.issues.empty() ? std::string() : report.issues.front().message));
      ++total;
      agree += (report.verdict == Verdict::kOutOfMemory) == want_oom;
    }
    return total ? double(agree) / total : 0.0;
  };
  int ran_total = 0, oom_total = 0;
  const double ran_feasible = rate("layouts_measured.csv", false, ran_total);
  const double oom_infeasible = rate("layouts_failed_or_oom.csv", true, oom_total);
  std::printf("\nmemory filter on Hagemann et al. 2023: %.1f%% of %d completed runs predicted feasible, %.1f%% of %d "
              "OOM runs predicted out of memory\n",
              100.0 * ran_feasible, ran_total, 100.0 * oom_infeasible, oom_total);
  CHECK(ran_total == 401);
  CHECK(oom_total == 563);
  CHECK(ran_feasible >= 0.98);
  // Most OOM runs the model misses used full recompute and sit at 30-40% of capacity in any
  // accounting of their activations (MEMORY_NOTES §13.5: 2sbh/layer kept): not tuned away.
  CHECK(oom_infeasible >= 0.65);
}
