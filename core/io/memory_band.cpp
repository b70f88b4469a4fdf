// memory_band.cpp — see memory_band.h. The errors are the validation's own (measured_runs.cpp
// validate_against on the published runs, gpu_runs.cpp validate_gpu_runs on tests/gpu's steps, peak
// reserved there), grouped by training method and setup, once.
#include "io/memory_band.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "io/gpu_runs.h"
#include "io/measured_runs.h"
#include "memory/finetune.h"

namespace meshfit {

namespace {

// What a band groups runs by besides the method: the framework of a pretraining run (FSDP's profile
// at ZeRO 0 apart: torch DDP, or one GPU, unsharded), the software stack of a fine-tune (an HF
// Trainer + PEFT LoRA on one GPU runs meshfit's FSDP profile at ZeRO 0, which "on PyTorch FSDP2"
// would misname). Keys; setup_label names them.
std::string setup_key(const Config& config) {
  const TrainingSpec& t = config.training;
  if (is_finetune(t)) return to_string(t.stack);
  if (t.framework == Framework::kFsdp && config.layout.zero == 0) return "ddp";
  return to_string(t.framework);
}

std::string setup_label(FinetuneMethod method, const std::string& key) {
  if (key == "ddp") return "PyTorch unsharded (DDP or one GPU)";
  if (method == FinetuneMethod::kNone) {
    if (const auto framework = enum_from_key<Framework>(key)) return enum_label(*framework);
  } else if (const auto stack = enum_from_key<FinetuneStack>(key)) {
    return enum_label(*stack);
  }
  return key;  // a stack meshfit has no profile for (finetune_measured.csv: llama_factory, unsloth)
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

// "LoRA on torchtune": a method on a setup, as bands name their scope.
std::string scope_name(FinetuneMethod method, const std::string& setup) {
  return std::string(method_name(method)) + " on " + setup_label(method, setup);
}

// One measured configuration and how far the prediction was from its peak.
struct BandRun {
  FinetuneMethod method;
  std::string setup;
  double abs_error;      // the mean over its repeats
  bool published;        // false: a tests/gpu step
  int64_t gpus;
  std::string sources;   // "; "-separated
  double predicted_bytes;
  int repeats;
};

std::vector<BandRun> band_runs() {
  std::vector<BandRun> out;
  // A repeat (the same kind, method, setup, GPU count and predicted peak: one configuration measured
  // again) joins its first measurement at their mean error.
  const auto add = [&out](BandRun run) {
    for (BandRun& seen : out)
      if (seen.published == run.published && seen.method == run.method && seen.setup == run.setup && seen.gpus == run.gpus &&
          std::fabs(seen.predicted_bytes - run.predicted_bytes) < 1.0) {
        seen.abs_error = (seen.abs_error * seen.repeats + run.abs_error) / (seen.repeats + 1);
        ++seen.repeats;
        if (seen.sources.find(run.sources) == std::string::npos) seen.sources += "; " + run.sources;
        return;
      }
    out.push_back(std::move(run));
  };
  for (const ValidationReport& report : {validate_finetune_against_measurements(), validate_against_measurements()})
    for (const ValidationRow& row : report.rows) {
      const MeasuredRun& run = row.run;
      if (!run.expressible || !(run.measured_bytes > 0) || !(row.predicted_bytes > 0)) continue;
      // A fine-tune's stack is the CSV's (its config states every setting and keeps the default stack).
      const std::string setup = is_finetune(run.config.training) ? run.stack : setup_key(run.config);
      add({run.config.training.finetune, setup, std::fabs(row.signed_error), true, run.config.cluster.gpus, run.source,
           row.predicted_bytes, 1});
    }
  for (const GpuRow& row : gpu_validation().rows) {
    const GpuRun& run = row.run;
    if (!run.expressible || run.oom || !(run.measured[size_t(GpuMetric::kPeakReserved)] > 0)) continue;
    add({run.config.training.finetune, setup_key(run.config), std::fabs(gpu_signed_error(row, GpuMetric::kPeakReserved)), false,
         run.config.cluster.gpus, "meshfit tests/gpu (" + run.software.substr(0, run.software.find(',')) + ")",
         row.predicted[size_t(GpuMetric::kPeakReserved)], 1});
  }
  return out;
}

// Built once (the runs are compiled in); the front ends are single-threaded.
const std::vector<BandRun>& all_band_runs() {
  static const std::vector<BandRun> runs = band_runs();
  return runs;
}

// The published configurations and tests/gpu steps `keep` selects.
struct Group {
  MemoryBandRuns published, steps;
  std::string basis;  // the published ones' sources
};

void add_to(MemoryBandRuns& kind, std::vector<double>& errors, const BandRun& run) {
  errors.push_back(run.abs_error);
  kind.min_gpus = errors.size() == 1 ? run.gpus : std::min(kind.min_gpus, run.gpus);
  kind.max_gpus = std::max(kind.max_gpus, run.gpus);
}

template <typename Keep>
Group group_of(Keep keep) {
  Group group;
  std::vector<double> published, steps;
  for (const BandRun& run : all_band_runs()) {
    if (!keep(run)) continue;
    add_to(run.published ? group.published : group.steps, run.published ? published : steps, run);
    if (run.published && group.basis.find(run.sources) == std::string::npos)
      group.basis += (group.basis.empty() ? "" : "; ") + run.sources;
  }
  group.published.runs = int(published.size());
  group.published.median_abs_error = median_of(published);
  group.steps.runs = int(steps.size());
  group.steps.median_abs_error = median_of(steps);
  return group;
}

// A share as the band prints it, one decimal of a percent.
double printed_percent(double share) { return std::round(1000.0 * share) / 10.0; }

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "\xC2\xB1%.1f%%", printed_percent(share));
  return text;
}

std::string gpus_text(const MemoryBandRuns& kind) {
  if (kind.min_gpus == kind.max_gpus) return ", each on " + std::to_string(kind.max_gpus) + (kind.max_gpus == 1 ? " GPU" : " GPUs");
  return ", " + std::to_string(kind.min_gpus) + "-" + std::to_string(kind.max_gpus) + " GPUs";
}

std::string configurations(int runs) {
  return std::to_string(runs) + (runs == 1 ? " published configuration" : " published configurations");
}

}  // namespace

std::vector<MemoryBand> memory_bands() {
  std::vector<MemoryBand> out;
  for (const FinetuneMethod method : {FinetuneMethod::kNone, FinetuneMethod::kFull, FinetuneMethod::kLora, FinetuneMethod::kQlora}) {
    std::vector<std::string> setups;
    for (const BandRun& run : all_band_runs())
      if (run.method == method && std::find(setups.begin(), setups.end(), run.setup) == setups.end()) setups.push_back(run.setup);
    for (const std::string& setup : setups) {
      const Group group = group_of([&](const BandRun& run) { return run.method == method && run.setup == setup; });
      MemoryBand band;
      band.scope = band.own_scope = scope_name(method, setup);
      band.published = band.own_published = group.published;
      band.own_steps = group.steps;
      band.runs = group.published.runs;
      band.median_abs_error = group.published.median_abs_error;
      band.basis = group.basis;
      out.push_back(std::move(band));
    }
  }
  return out;
}

MemoryBand memory_error_band(const Config& config) {
  const FinetuneMethod method = config.training.finetune;
  const std::string setup = setup_key(config);
  MemoryBand band;
  band.own_scope = scope_name(method, setup);
  const Group own = group_of([&](const BandRun& run) { return run.method == method && run.setup == setup; });
  band.own_published = own.published;
  band.own_steps = own.steps;
  band.job_gpus = config.cluster.gpus;
  if (own.published.runs >= kMinMemoryBandRuns) {
    band.scope = band.own_scope;
    band.published = own.published;
    band.basis = own.basis;
  } else {
    // Too few of its own: the method on any framework, then every run. Where its own few missed by
    // more than the wider scope's median, theirs stands (a DeepSpeed LoRA's one configuration, 17% low,
    // was shown LoRA's ±3.4%).
    band.widened = true;
    Group wide = group_of([&](const BandRun& run) { return run.method == method; });
    band.scope = std::string(method_name(method)) + " on any framework";
    if (wide.published.runs < kMinMemoryBandRuns) {
      wide = group_of([](const BandRun&) { return true; });
      band.scope = "any setup";
    }
    band.own_worse = own.published.runs > 0 && own.published.median_abs_error > wide.published.median_abs_error;
    band.published = wide.published;
    band.basis = band.own_worse ? own.basis : wide.basis;
  }
  const MemoryBandRuns& headline = band.own_worse ? band.own_published : band.published;
  band.runs = headline.runs;
  band.median_abs_error = headline.median_abs_error;
  return band;
}

MemoryBand memory_error_band(const Config& config, double device_bytes, double capacity_bytes) {
  MemoryBand band = memory_error_band(config);
  // In whole tenths of a percent, as both figures print (no floating-point edge between them).
  const auto tenths = [](double share) { return std::llround(1000.0 * share); };
  band.capacity_within = band.runs > 0 && capacity_bytes > 0 && std::isfinite(device_bytes / capacity_bytes) &&
                         std::llabs(tenths(device_bytes / capacity_bytes) - 1000) <= tenths(band.median_abs_error);
  return band;
}

std::string memory_band_percent(const MemoryBand& band) { return percent(band.median_abs_error); }

std::string memory_band_text(const MemoryBand& band) {
  if (band.runs == 0) return "not validated: no published run has a measured peak";
  std::string text;
  if (!band.widened) {
    text = percent(band.median_abs_error) + ", the median error on " + configurations(band.runs) + " of " + band.scope +
           gpus_text(band.published);
  } else if (band.own_worse) {
    const MemoryBandRuns& own = band.own_published;
    text = percent(own.median_abs_error) + (own.runs == 1 ? ", the error on the " : ", the median error on the ") +
           configurations(own.runs) + " of " + band.own_scope + gpus_text(own) + ": too few for a band, and wider than " +
           band.scope + "'s " + percent(band.published.median_abs_error) + " (" + configurations(band.published.runs) + ")";
  } else {
    const MemoryBandRuns& own = band.own_published;
    text = percent(band.median_abs_error) + ", the median error on " + configurations(band.runs) + " of " + band.scope +
           gpus_text(band.published) + "; " +
           (own.runs == 0 ? "none published of " + band.own_scope
                          : "too few of " + band.own_scope + " for a band of its own (" + std::to_string(own.runs) + ": " +
                                percent(own.median_abs_error) + ")");
  }
  // Its own steps, measured here: the allocator constants were set from them (gpu_runs.h), so their
  // median is a fit, said as one.
  if (band.own_steps.runs > 0)
    text += "; its " + std::to_string(band.own_steps.runs) + " tests/gpu " + (band.own_steps.runs == 1 ? "step" : "steps") +
            " (meshfit's own, in-sample): " + percent(band.own_steps.median_abs_error);
  const int64_t measured = std::max({band.published.max_gpus, band.own_published.max_gpus, band.own_steps.max_gpus});
  if (band.job_gpus > measured) text += "; none measured at " + std::to_string(band.job_gpus) + " GPUs";
  return text;
}

}  // namespace meshfit
