// measured_runs.h — the public measured training runs meshfit is checked against
// (tests/data/memory_measured.csv, compiled in), each turned into a Config, predicted, and compared
// on the metric the source reports. Serves `meshfit validate`, the page's validation view and the
// measured-vs-predicted test. Sources per row are in the CSV's `source` and `notes` columns.
#pragma once

#include <string>
#include <vector>

#include "spec/config.h"
#include "memory/memory_model.h"

namespace meshfit {

// What a source's number is. Predictions are compared on the matching figure of the worst rank.
enum class MeasuredMetric {
  kMaxReserved,   // torch.cuda.max_memory_reserved -> peak_reserved_bytes
  kMaxAllocated,  // torch.cuda.max_memory_allocated -> peak_allocated_bytes
  kDevice,        // nvidia-smi, or a "G" whose metric the source does not state -> device_bytes
  kFitLabel,      // only "ran" / "ran out of memory" -> the verdict
};
template <> struct EnumNames<MeasuredMetric> {
  static constexpr EnumName<MeasuredMetric> table[] = {{MeasuredMetric::kMaxReserved, "max_reserved", "max reserved"},
                                                       {MeasuredMetric::kMaxAllocated, "max_allocated", "max allocated"},
                                                       {MeasuredMetric::kDevice, "device", "nvidia-smi / unstated"},
                                                       {MeasuredMetric::kFitLabel, "fit_label", "fit / OOM label"},
                                                       {MeasuredMetric::kDevice, "unstated", nullptr},
                                                       {MeasuredMetric::kDevice, "nvidia-smi", nullptr}};
};

struct MeasuredRun {
  std::string label;              // model and layout, short
  std::string source;             // where the number comes from (repository/file/issue)
  std::string notes;
  std::string stack;              // fine-tunes: the software that ran (finetune_measured.csv `stack`: a
                                  //   FinetuneStack key, or llama_factory / unsloth); not read into config
  Config config;
  bool expressible = true;        // false: the source lacks an input meshfit needs
  std::string why_not;
  MeasuredMetric metric = MeasuredMetric::kFitLabel;
  double measured_bytes = 0;      // 0 for fit labels
  bool oom = false;               // the run ran out of memory
  // false: read during the first iteration, before the optimizer's moments exist (torch.optim and
  // Apex/TE FusedAdam create exp_avg/exp_avg_sq lazily in the first step()).
  bool steady_state = true;
};

struct ValidationRow {
  MeasuredRun run;
  double predicted_bytes = 0;     // on the run's metric (first-iteration rows: see measured_runs.cpp)
  double signed_error = 0;        // (predicted - measured) / measured; 0 without a measurement
  Verdict verdict = Verdict::kFits;
  bool label_agrees = true;       // OOM runs predicted oom, runs that ran not predicted oom
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  int64_t measured_rows = 0;      // rows with a number, expressible
  double median_abs_error = 0;    // over those rows
  double median_signed_error = 0;
  int64_t label_rows = 0;         // expressible rows
  int64_t label_disagreements = 0;
  int64_t false_fits = 0;         // runs that ran out of memory but are predicted to fit
};

// A figure of the steady step (peak allocated, or reserved / device when no new segments) as read
// during the first iteration, before the optimizer's moments exist (see measured_runs.cpp).
double first_iteration_figure(const Config& config, const MemoryReport& memory, double steady_figure, bool device_figure);

// The rows of tests/data/memory_measured.csv, as compiled into the library.
const std::vector<MeasuredRun>& measured_runs();
// The rows of tests/data/finetune_measured.csv (full, LoRA and QLoRA runs; its own columns: method,
// lora_rank, targets_key, adapter_dtype, kbit_upcast, base_dtype, offload, unit GB or GiB), compiled in.
const std::vector<MeasuredRun>& finetune_measured_runs();
std::vector<MeasuredRun> parse_finetune_measured_runs(const std::string& csv_text);
// A CSV text with memory_measured.csv's columns, parsed the same way (tests use other files).
std::vector<MeasuredRun> parse_measured_runs(const std::string& csv_text);
ValidationReport validate_against(const std::vector<MeasuredRun>& runs);
// The median of the values (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> values);
inline ValidationReport validate_against_measurements() { return validate_against(measured_runs()); }
inline ValidationReport validate_finetune_against_measurements() { return validate_against(finetune_measured_runs()); }

}  // namespace meshfit
