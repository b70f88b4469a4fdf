// memory_band.h — how far to trust a memory prediction: the median error of the predicted peak over
// the measured runs most like it (the published runs of tests/data/memory_measured.csv and
// finetune_measured.csv, and tests/gpu's own one-GPU steps in gpu_memory_measured.csv), as the
// step time carries its tokens/s band (perf_model.h ErrorBand). Computed once, on first use, from
// the compiled-in data; every front end shows it beside the verdict.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/config.h"

namespace meshfit {

// A band rests on at least this many runs; fewer, and it widens (the method on any framework, then
// every run), saying so. The headline is the published runs' median when there are this many of them.
// Small on purpose: four QLoRA runs (median 27%) say more about a QLoRA plan than every run's 6.5%.
constexpr int kMinMemoryBandRuns = 3;

// One kind of run behind a band: its count, median error and GPU counts.
struct MemoryBandRuns {
  int runs = 0;
  double median_abs_error = 0;  // median |predicted / measured - 1| of the peak, on each run's metric
  int64_t min_gpus = 0;
  int64_t max_gpus = 0;
};

struct MemoryBand {
  double median_abs_error = 0;     // the headline: the published runs' median, or, with fewer than
  int runs = 0;                    //   kMinMemoryBandRuns of them, tests/gpu's steps' (in_sample)
  bool in_sample = false;          // the headline rests on tests/gpu's one-GPU steps, from which the
                                   //   allocator constants were set (gpu_runs.h kGpuGroundTruthInSample)
  MemoryBandRuns published;        // public runs of tests/data (out of sample)
  MemoryBandRuns own;              // tests/gpu's steps (peak reserved)
  std::string scope;               // "pretraining on PyTorch FSDP2", "LoRA on any framework", "any setup"
  bool widened = false;            // the prediction's own method and setup (the framework of a pretraining
  int own_scope_runs = 0;          //   run, the stack of a fine-tune) had too few runs: this many...
  std::string own_scope;           //   ...of this ("QLoRA on HF Trainer + PEFT + FSDP"),
  double own_scope_median_abs_error = 0;  // with this median (both kinds)
  int64_t job_gpus = 0;            // the prediction's GPU count (past the runs' GPU counts: not measured at that scale)
  bool capacity_within = false;    // the predicted device memory is within the band of the capacity:
                                   //   the fit / out-of-memory verdict could go either way
  std::string basis;               // the sources behind the band, "; "-separated
};

// The band for a configuration's memory prediction (its framework and training method).
MemoryBand memory_error_band(const Config& config);
// The same with capacity_within set for a predicted device figure against the GPU's capacity.
MemoryBand memory_error_band(const Config& config, double device_bytes, double capacity_bytes);
// Every group's band (method and setup as memory_error_band keys them, not widened), pretraining
// first: the table `meshfit validate` and the page's validation view show.
std::vector<MemoryBand> memory_bands();
// "±11%, the median error on 9 published runs of pretraining on any framework (1 of them Megatron-LM),
// 1-252 GPUs; meshfit's own 127 one-GPU steps: ±1.7% (in-sample)", or "not validated: ..." when no run
// has a measured peak.
std::string memory_band_text(const MemoryBand& band);

}  // namespace meshfit
