// memory_band.h — how far to trust a memory prediction: the median error of the predicted peak over
// the published measured runs most like it (tests/data/memory_measured.csv and finetune_measured.csv),
// as the step time carries its tokens/s band (perf_model.h ErrorBand), with meshfit's own one-GPU
// steps (tests/gpu, gpu_memory_measured.csv) beside it as an in-sample figure. Computed once, on
// first use, from the compiled-in data; every front end shows it beside the verdict.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/config.h"

namespace meshfit {

// A band rests on at least this many published configurations; fewer, and it widens (the method on
// any framework, then every run), saying so. Small on purpose: four QLoRA configurations (median
// 27%) say more about a QLoRA plan than every run's 7%.
constexpr int kMinMemoryBandRuns = 3;

// Configurations of one kind behind a band. Repeated measurements of one configuration (a source's
// reruns at two commits, tests/gpu's step on an H100 and an H200) count once, at their mean error.
struct MemoryBandRuns {
  int runs = 0;                 // configurations
  double median_abs_error = 0;  // median |predicted / measured - 1| of the peak, on each run's metric
  int64_t min_gpus = 0;
  int64_t max_gpus = 0;
};

struct MemoryBand {
  double median_abs_error = 0;  // the headline
  int runs = 0;                 //   and the published configurations behind it
  std::string scope;            // what they are: "LoRA on torchtune", "pretraining on any framework", "any setup"
  MemoryBandRuns published;     // the headline scope's published configurations (out of sample)
  // The config's own method and setup (the framework of a pretraining run, the stack of a fine-tune).
  std::string own_scope;        // "pretraining on Megatron-LM"
  MemoryBandRuns own_published; // its published configurations (the headline's unless widened)
  MemoryBandRuns own_steps;     // its tests/gpu steps: in-sample, the allocator constants were set from them
  bool widened = false;         // own_published has fewer than kMinMemoryBandRuns: the headline is a wider scope's...
  bool own_worse = false;       //   ...or, where its few configurations missed by more, theirs
  int64_t job_gpus = 0;         // the prediction's GPU count (past every run's: not measured at that scale)
  bool capacity_within = false; // the predicted device memory is within the band of the capacity:
                                //   the fit / out-of-memory verdict could go either way
  std::string basis;            // the sources behind the headline, "; "-separated
};

// The band for a configuration's memory prediction (its training method and setup).
MemoryBand memory_error_band(const Config& config);
// The same with capacity_within set for a predicted device figure against the GPU's capacity. The
// comparison is with the band as printed (one decimal), so the line and the figures never disagree.
MemoryBand memory_error_band(const Config& config, double device_bytes, double capacity_bytes);
// Every method and setup's band (not widened), pretraining first: the table `meshfit validate` and the
// page's validation view show.
std::vector<MemoryBand> memory_bands();
// The headline as printed: "±14.4%".
std::string memory_band_percent(const MemoryBand& band);
// "±14.4%, the median error on 7 published configurations of pretraining on any framework, 8-252
// GPUs; too few of pretraining on Megatron-LM for a band of its own (1: ±3.2%)", or "not validated".
std::string memory_band_text(const MemoryBand& band);

}  // namespace meshfit
