// gpu_runs.h — meshfit's own ground truth: training steps measured on one GPU by the harness in
// tests/gpu (tests/data/gpu_memory_measured.csv, compiled in). Each row is a configuration meshfit
// can state (a Llama preset at some depth, FSDP2 or DDP at world size 1, or PEFT LoRA on one GPU)
// with what PyTorch reported in its steady step: peak allocated, peak reserved, the device's used
// memory (what nvidia-smi shows), the bytes at each phase, and tokens/s. Unlike the public runs
// (measured_runs.h) these give every component apart, so the table compares components, not only
// totals. Serves `meshfit validate`, the page's validation view and the ground-truth test.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "io/csv_text.h"
#include "io/throughput_runs.h"
#include "memory/memory_model.h"
#include "spec/config.h"

namespace meshfit {

// What a row's measurement is compared on. Each is a figure both sides define the same way.
enum class GpuMetric {
  kPeakAllocated,   // torch.cuda.max_memory_allocated over the steady step
  kPeakReserved,    // torch.cuda.max_memory_reserved over the steady step
  kDevice,          // peak reserved + the memory outside PyTorch's allocator at the step end (nvidia-smi)
  kModelStates,     // allocated between steady steps (after zero_grad): weights, optimizer states, buckets
  kStepTransient,   // peak allocated minus the model states: activations, logits, gathered units, gradients
  kAllocatorReserve,// peak reserved minus peak allocated
  kOutsideAllocator,// device used minus reserved: CUDA context, loaded kernels, NCCL
  kTokensPerS,      // tokens per second (median of the steady steps)
  kFirstStepPeak,   // max_memory_allocated over the first step, before Adam's moments exist
};
template <> struct EnumNames<GpuMetric> {
  static constexpr EnumName<GpuMetric> table[] = {
      {GpuMetric::kPeakAllocated, "peak_allocated", "peak allocated"},
      {GpuMetric::kPeakReserved, "peak_reserved", "peak reserved"},
      {GpuMetric::kDevice, "device", "device (nvidia-smi)"},
      {GpuMetric::kModelStates, "model_states", "model states"},
      {GpuMetric::kStepTransient, "step_transient", "step transient"},
      {GpuMetric::kAllocatorReserve, "allocator_reserve", "allocator reserve"},
      {GpuMetric::kOutsideAllocator, "outside_allocator", "outside the allocator"},
      {GpuMetric::kTokensPerS, "tokens_per_s", "tokens/s"},
      {GpuMetric::kFirstStepPeak, "first_step_peak_allocated", "first step peak alloc."}};
};
constexpr int kGpuMetricCount = int(enum_count<GpuMetric>());

struct GpuRun {
  std::string id;                // the harness's row id, e.g. "8b-l4-s16384-full"
  std::string label;             // model, depth and settings, for tables
  std::string software;          // GPU, driver, CUDA, PyTorch, harness commit
  Config config;
  bool expressible = true;       // false: the harness ran something no meshfit input states
  std::string why_not;
  bool oom = false;
  std::array<double, kGpuMetricCount> measured{};  // by GpuMetric; 0 where not measured (OOM rows)
  double nccl_bytes = 0;         // the harness's one-rank NCCL communicator (init_process_group)
  bool ddp_one_rank = false;     // torch DDP at world size 1 (its buckets exist; see gpu_runs.cpp)
};

struct GpuRow {
  GpuRun run;
  std::array<double, kGpuMetricCount> predicted{};
  Verdict verdict = Verdict::kFits;
  bool label_agrees = true;
};

struct GpuMetricSummary {
  GpuMetric metric = GpuMetric::kPeakAllocated;
  int rows = 0;
  double median_abs_error = 0;   // |predicted / measured - 1|, or over the row's peak allocated for
  double max_abs_error = 0;      //   the small components (kGpuErrorOverPeak)
  double median_signed_error = 0;
};

struct GpuValidation {
  std::vector<GpuRow> rows;
  std::vector<GpuMetricSummary> metrics;  // one per GpuMetric, in enum order
  int label_rows = 0;
  int label_disagreements = 0;
};

// Small components (the allocator reserve, the memory outside it) are compared as a share of the
// row's measured peak allocated, the figure a user's plan rests on; others relative to themselves.
bool gpu_error_over_peak(GpuMetric metric);
// The row's signed error on a metric (see gpu_error_over_peak).
double gpu_signed_error(const GpuRow& row, GpuMetric metric);

std::vector<GpuRun> parse_gpu_runs(const std::string& csv_text);
const std::vector<GpuRun>& gpu_runs();                 // tests/data/gpu_memory_measured.csv
GpuValidation validate_gpu_runs(const std::vector<GpuRun>& runs);
const GpuValidation& gpu_validation();                 // validate_gpu_runs(gpu_runs()), once
// What these medians are (a review read the 0.0% medians as accuracy): several named constants
// were set from these very rows, so for those figures the table shows a fit, not a prediction.
constexpr const char* kGpuGroundTruthInSample =
    "In-sample: the named constants whose basis is a tests/gpu measurement (the CUDA context, the allocator's "
    "fragmentation fractions, the compiled and chunked loss bytes, the eager GEMM fraction and host op cost of "
    "the step time) were set from these rows, so their medians show how well the model fits them; the "
    "published runs above are the out-of-sample check.";
// The measured steps as throughput runs (source "meshfit tests/gpu"), for the step-time validation:
// one row (with the harness's own DDP bucket copies), and every row that ran.
ThroughputRun gpu_throughput_run(const GpuRun& run);
std::vector<ThroughputRun> gpu_throughput_runs();

}  // namespace meshfit
