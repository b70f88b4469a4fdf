// throughput_runs.h — the public measured throughput runs meshfit's step-time model is checked against
// (tests/data/layouts_measured.csv, compiled in): each turned into a Config plus its measured
// tokens/s per GPU, the convention-free target (THROUGHPUT_NOTES.md §5), with the conversion of each
// source's metric stated once. Serves `meshfit validate`, the page's validation view, the throughput
// test, and the error bands reported beside every prediction (perf_model.h throughput_error_band).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/csv_text.h"
#include "spec/config.h"

namespace meshfit {

struct ThroughputRun {
  std::string source;        // short source key: "Hagemann 2023 (A100, Megatron-derived)", ...
  std::string citation;      // the CSV's source column (paper, table, repository and commit)
  std::string label;         // model and layout, for tables
  Config config;
  double measured_tokens_per_s_per_gpu = 0;
  // Work the measured run did that its config does not book: torch DDP's bucket copies at world size
  // one (tests/gpu's ddp rows; meshfit wraps in DDP only when there is a group to reduce over).
  double harness_extra_step_s = 0;
  // false: the config's framework stands in for a codebase meshfit has no profile of (Hagemann's,
  // Megatron-derived, on DeepSpeed's ZeRO-1 memory rules). Such a run enters the medians per source and
  // overall, never a framework's error band: a DeepSpeed user read "±5% on 407 runs of this
  // framework" where 401 were not DeepSpeed's.
  bool framework_band = true;
};
// The run's predicted tokens/s/GPU: the step-time model's, with the harness's extra work added.
double predicted_tokens_per_s(const ThroughputRun& run);

struct ThroughputRow {
  ThroughputRun run;
  double predicted_tokens_per_s_per_gpu = 0;
  double signed_error = 0;   // predicted / measured - 1
};

struct ThroughputSummary {   // one source, or one framework x GPU family (the error bands)
  std::string key;
  int runs = 0;
  double median_abs_error = 0;
  double median_signed_error = 0;
};

struct ThroughputValidation {
  std::vector<ThroughputRow> rows;
  std::vector<ThroughputSummary> sources;  // by source key
  std::vector<ThroughputSummary> bands;    // by "framework gpu_family", e.g. "megatron ampere"
  double median_abs_error = 0;             // over every row
};

// One row of layouts_measured.csv as a run, or none when the row has no throughput figure.
std::optional<ThroughputRun> throughput_run_from_row(const CsvRow& row);
// Hagemann et al. 2023's sweep rows (also their failed/OOM rows) as configs.
bool is_hagemann_row(const CsvRow& row);
std::string hagemann_kernel(const CsvRow& row);
Config hagemann_config(const CsvRow& row);

// The rows of tests/data/layouts_measured.csv, as compiled into the library, then meshfit's own
// one-GPU steps (gpu_runs.h gpu_throughput_runs).
const std::vector<ThroughputRun>& throughput_runs();
// Every run predicted (predict_step), with the medians per source and per framework x GPU family.
ThroughputValidation validate_throughput(const std::vector<ThroughputRun>& runs);
// validate_throughput(throughput_runs()), computed once.
const ThroughputValidation& throughput_validation();

// What the bands are, said once for the CLI's `validate` and the page's Validation tab: they are
// in-sample (an as-a-user review asked why the memory band names its in-sample runs and this one not).
constexpr const char* kThroughputBandNote =
    "The bands are in-sample: their runs also centred each kernel profile's one GEMM constant (Megatron-LM's fused "
    "0.87 on its 27 runs, the eager profiles' 0.84 on tests/gpu's and Hagemann's), and tests/gpu's host-bound steps "
    "set FSDP2's per-unit host cost. Hagemann's 401 runs (a Megatron-derived codebase no profile models; DeepSpeed's "
    "stands in) count per source and overall, in no framework's band.";

}  // namespace meshfit
