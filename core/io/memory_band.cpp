// memory_band.cpp — see memory_band.h. The errors are the validation's own (measured_runs.cpp
// validate_against on the published runs, gpu_runs.cpp validate_gpu_runs on tests/gpu's steps, peak
// reserved there), grouped by framework and training method, once.
#include "io/memory_band.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "io/gpu_runs.h"
#include "io/measured_runs.h"
#include "memory/finetune.h"

namespace meshfit {

namespace {

// What a band groups runs by besides the method: the framework of a pretraining run, the software
// stack of a fine-tune (an HF Trainer + PEFT LoRA on one GPU runs meshfit's FSDP profile at ZeRO 0,
// which "on PyTorch FSDP2" would misname). Keys; setup_label names them.
std::string setup_key(const TrainingSpec& training) {
  return is_finetune(training) ? to_string(training.stack) : to_string(training.framework);
}

std::string setup_label(FinetuneMethod method, const std::string& key) {
  if (method == FinetuneMethod::kNone) {
    if (const auto framework = enum_from_key<Framework>(key)) return enum_label(*framework);
  } else if (const auto stack = enum_from_key<FinetuneStack>(key)) {
    return enum_label(*stack);
  }
  return key;
}

// One measured peak and how far the prediction was from it.
struct BandRun {
  FinetuneMethod method;
  std::string setup;
  double abs_error;
  bool published;
  int64_t gpus;
  std::string source;
  double measured_bytes;
};

std::vector<BandRun> band_runs() {
  std::vector<BandRun> out;
  // The fine-tunes first: a run both CSVs hold (PEFT's full fine-tunes, also pretraining-style rows of
  // memory_measured.csv) counts once, as the fine-tune it is.
  for (const ValidationReport& report : {validate_finetune_against_measurements(), validate_against_measurements()})
    for (const ValidationRow& row : report.rows) {
      const MeasuredRun& run = row.run;
      if (!run.expressible || !(run.measured_bytes > 0) || !(row.predicted_bytes > 0)) continue;
      const bool repeat = std::any_of(out.begin(), out.end(), [&](const BandRun& seen) {
        return seen.source == run.source && seen.gpus == run.config.cluster.gpus &&
               std::fabs(seen.measured_bytes - run.measured_bytes) < 1.0;
      });
      if (repeat) continue;
      // A fine-tune's stack is the CSV's (its config states every setting and keeps the default stack).
      const std::string setup = is_finetune(run.config.training) ? run.stack : setup_key(run.config.training);
      out.push_back({run.config.training.finetune, setup, std::fabs(row.signed_error), true,
                     run.config.cluster.gpus, run.source, run.measured_bytes});
    }
  for (const GpuRow& row : gpu_validation().rows)
    if (row.run.expressible && !row.run.oom && row.run.measured[size_t(GpuMetric::kPeakReserved)] > 0)
      out.push_back({row.run.config.training.finetune, setup_key(row.run.config.training),
                     std::fabs(gpu_signed_error(row, GpuMetric::kPeakReserved)), false, row.run.config.cluster.gpus,
                     "meshfit tests/gpu (" + row.run.software.substr(0, row.run.software.find(',')) + ")",
                     row.run.measured[size_t(GpuMetric::kPeakReserved)]});
  return out;
}

const char* method_name(FinetuneMethod method) {
  switch (method) {
    case FinetuneMethod::kNone: return "pretraining";
    case FinetuneMethod::kFull: return "full fine-tuning";
    case FinetuneMethod::kLora: return "LoRA";
    case FinetuneMethod::kQlora: return "QLoRA";
  }
  return "";
}

void add_run(MemoryBandRuns& kind, std::vector<double>& errors, const BandRun& run) {
  errors.push_back(run.abs_error);
  kind.min_gpus = errors.size() == 1 ? run.gpus : std::min(kind.min_gpus, run.gpus);
  kind.max_gpus = std::max(kind.max_gpus, run.gpus);
}

// The band over the runs `keep` selects, named `scope`.
template <typename Keep>
MemoryBand band_over(const std::vector<BandRun>& runs, Keep keep, std::string scope) {
  MemoryBand band;
  band.scope = std::move(scope);
  std::vector<double> published, own, all;
  for (const BandRun& run : runs) {
    if (!keep(run)) continue;
    all.push_back(run.abs_error);
    add_run(run.published ? band.published : band.own, run.published ? published : own, run);
    if (band.basis.find(run.source) == std::string::npos) band.basis += (band.basis.empty() ? "" : "; ") + run.source;
  }
  band.published.runs = int(published.size());
  band.published.median_abs_error = median_of(published);
  band.own.runs = int(own.size());
  band.own.median_abs_error = median_of(own);
  band.own_scope_median_abs_error = median_of(all);  // read only when this scope is the config's own
  band.in_sample = band.published.runs < kMinMemoryBandRuns && band.own.runs > 0;
  const MemoryBandRuns& headline = band.in_sample ? band.own : band.published;
  band.runs = headline.runs;
  band.median_abs_error = headline.median_abs_error;
  return band;
}

}  // namespace

// Built once (the runs are compiled in); the front ends are single-threaded.
const std::vector<BandRun>& all_band_runs() {
  static const std::vector<BandRun> runs = band_runs();
  return runs;
}

std::vector<MemoryBand> memory_bands() {
  std::vector<MemoryBand> out;
  const std::vector<BandRun>& runs = all_band_runs();
  for (const FinetuneMethod method : {FinetuneMethod::kNone, FinetuneMethod::kFull, FinetuneMethod::kLora, FinetuneMethod::kQlora}) {
    std::vector<std::string> setups;
    for (const BandRun& run : runs)
      if (run.method == method && std::find(setups.begin(), setups.end(), run.setup) == setups.end()) setups.push_back(run.setup);
    for (const std::string& setup : setups) {
      MemoryBand band = band_over(runs, [&](const BandRun& run) { return run.method == method && run.setup == setup; },
                                  std::string(method_name(method)) + " on " + setup_label(method, setup));
      band.own_scope = band.scope;
      band.own_scope_runs = band.published.runs + band.own.runs;
      out.push_back(std::move(band));
    }
  }
  return out;
}

MemoryBand memory_error_band(const Config& config) {
  const std::vector<BandRun>& runs = all_band_runs();
  const FinetuneMethod method = config.training.finetune;
  const std::string setup = setup_key(config.training);
  const std::string own_scope = std::string(method_name(method)) + " on " + setup_label(method, setup);
  MemoryBand band = band_over(runs, [&](const BandRun& run) { return run.method == method && run.setup == setup; }, own_scope);
  const int own_setup_runs = band.published.runs + band.own.runs;
  const double own_setup_median = band.own_scope_median_abs_error;
  if (own_setup_runs < kMinMemoryBandRuns)
    band = band_over(runs, [&](const BandRun& run) { return run.method == method; }, std::string(method_name(method)) + " on any framework");
  if (band.published.runs + band.own.runs < kMinMemoryBandRuns)
    band = band_over(runs, [](const BandRun&) { return true; }, "any setup");
  band.widened = own_setup_runs < kMinMemoryBandRuns;
  band.own_scope_runs = own_setup_runs;
  band.own_scope_median_abs_error = own_setup_median;
  band.own_scope = own_scope;
  band.job_gpus = config.cluster.gpus;
  return band;
}

MemoryBand memory_error_band(const Config& config, double device_bytes, double capacity_bytes) {
  MemoryBand band = memory_error_band(config);
  band.capacity_within = band.runs > 0 && capacity_bytes > 0 &&
                         std::fabs(device_bytes / capacity_bytes - 1.0) <= band.median_abs_error;
  return band;
}

std::string memory_band_text(const MemoryBand& band) {
  if (band.runs == 0) return "not validated: no measured run has a peak to compare";
  const auto percent = [](double share) {
    char text[32];
    std::snprintf(text, sizeof text, share < 0.1 ? "\xC2\xB1%.1f%%" : "\xC2\xB1%.0f%%", 100.0 * share);
    return std::string(text);
  };
  const auto gpus = [](const MemoryBandRuns& kind) {
    if (kind.min_gpus == kind.max_gpus)
      return ", each on " + std::to_string(kind.max_gpus) + (kind.max_gpus == 1 ? " GPU" : " GPUs");
    return " of " + std::to_string(kind.min_gpus) + "-" + std::to_string(kind.max_gpus) + " GPUs";
  };
  const MemoryBandRuns& headline = band.in_sample ? band.own : band.published;
  const MemoryBandRuns& other = band.in_sample ? band.published : band.own;
  std::string text = percent(headline.median_abs_error) + ", the median error on " + std::to_string(headline.runs) +
                     (band.in_sample ? " of meshfit's own tests/gpu steps" : " published runs") + " of " + band.scope;
  if (band.widened)
    text += " (widened from " + std::to_string(band.own_scope_runs) + (band.own_scope_runs == 1 ? " run" : " runs") + " of " +
            band.own_scope + (band.own_scope_runs > 0 ? ": " + percent(band.own_scope_median_abs_error) : std::string()) + ")";
  text += gpus(headline);
  // The steps set the allocator constants (gpu_runs.h): their median is a fit, said as one.
  if (band.in_sample) text += ", in-sample: its allocator constants were set from them";
  if (other.runs > 0)
    text += band.in_sample ? "; " + std::to_string(other.runs) + " published: " + percent(other.median_abs_error)
                           : "; meshfit's own " + std::to_string(other.runs) + " tests/gpu steps: " +
                                 percent(other.median_abs_error) + " (in-sample)";
  const int64_t max_gpus = std::max(band.published.max_gpus, band.own.max_gpus);
  if (band.job_gpus > max_gpus) text += "; none measured at " + std::to_string(band.job_gpus) + " GPUs";
  return text;
}

}  // namespace meshfit
