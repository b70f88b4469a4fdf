// bench_search.cpp — figures for the layout search (printed, not asserted; run by tests/bench/run.sh):
// wall time and layouts evaluated per second for Llama 3.1 405B on 16,384 H100s (seq 8192, global
// batch 2048, all options open), and peak RSS across cluster sizes to show memory stays flat.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "search/layout_search.h"
#include "io/serialize.h"

using namespace meshfit;

namespace {

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

Config config_for(int64_t gpus) {
  Config config = default_config();
  config.model = *find_model_preset("llama3.1-405b");
  config.cluster.gpus = gpus;
  config.training.seq = 8192;
  config.training.global_batch = 2048;
  return config;
}

}  // namespace

int main() {
  const Config config = config_for(16384);
  const SearchOptions options;
  std::vector<double> times;
  SearchResult result;
  for (int run = 0; run < 21; ++run) {
    const auto start = std::chrono::steady_clock::now();
    result = search_layouts(config, options);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const int64_t memory_evaluations = result.memory_evaluations;
  std::printf("search: llama3.1-405b, 16384 x h100-sxm, seq 8192, global batch 2048, all options open\n");
  std::printf("  candidates enumerated %lld, memory model evaluated %lld, feasible %lld\n", (long long)result.evaluated,
              (long long)memory_evaluations, (long long)result.feasible);
  std::printf("  wall time median %.2f ms (min %.2f, max %.2f) over %zu runs\n", 1e3 * median, 1e3 * times.front(),
              1e3 * times.back(), times.size());
  std::printf("  %.1f M candidates/s enumerated, %.2f M memory evaluations/s\n",
              double(result.evaluated) / median / 1e6, double(memory_evaluations) / median / 1e6);
  std::printf("  best: dp=%lld tp=%lld pp=%lld cp=%lld vpp=%lld mb=%lld, %.0f tokens/s/GPU, MFU %.1f%%\n",
              (long long)result.top[0].layout.dp, (long long)result.top[0].layout.tp, (long long)result.top[0].layout.pp,
              (long long)result.top[0].layout.cp, (long long)result.top[0].layout.vpp, (long long)result.top[0].micro_batch,
              result.top[0].step.tokens_per_s_per_gpu, 100.0 * result.top[0].step.mfu);
  std::printf("memory across search sizes (peak RSS of this process, KiB):\n");
  for (int64_t gpus : {64, 1024, 16384, 131072}) {
    const SearchResult sized = search_layouts(config_for(gpus), options);
    std::printf("  %7lld GPUs: %8lld candidates, %5zu kept (top + front), peak RSS %ld KiB\n", (long long)gpus,
                (long long)sized.evaluated, sized.top.size() + sized.pareto.size(), peak_rss_kib());
  }
  return 0;
}
