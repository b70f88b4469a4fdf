// test_gpu_ground_truth.cpp — meshfit against its own measurements on a real GPU
// (tests/data/gpu_memory_measured.csv, written by tests/gpu/run.sh on one H100: every row names the
// GPU, driver, CUDA, PyTorch and harness commit). Prints predicted vs measured for every row and
// every compared figure with the medians, and asserts a tolerance per figure, each justified beside it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "csv.h"
#include "io/gpu_runs.h"
#include "memory/finetune.h"
#include "units.h"

using namespace meshfit;

namespace {

const GpuMetricSummary& summary(const GpuValidation& v, GpuMetric metric) { return v.metrics[size_t(metric)]; }

// A known gap, named rather than averaged in: torch.compile on a GPT-style block (LayerNorm, GeLU,
// biases) under autocast saves more for the backward than the compiled-activation model (calibrated
// on torchtitan's Llama blocks) books: gpt-350m-mb8-compile peaks 13.5% above the prediction.
bool known_compile_gap(const GpuRow& row) {
  return row.run.config.training.kernels == Kernels::kCompiled && row.run.config.model.mlp == MlpKind::kGelu;
}

// The second named gap, on the first step only: torch DDP with gradient accumulation peaks in its
// first step 0.49 GiB (gpt-125m-ga8) and 2.17 GiB (gpt-1.3b-ga4) above the model's first-step figure
// (the steady tensors less Adam's moments). DDP rebuilds its buckets once, at the first forward after
// the first backward (torch/nn/parallel/distributed.py _rebuild_buckets), which with accumulation
// falls inside the first step; the bytes it adds are not modelled.
bool known_first_step_gap(const GpuRow& row) {
  return row.run.ddp_one_rank && row.run.config.training.global_batch > row.run.config.training.micro_batch;
}

// The largest |error| of a metric over the rows that ran, with or without the known gaps.
double max_abs_error(const GpuValidation& v, GpuMetric metric, bool known_gap) {
  double largest = 0;
  for (const GpuRow& row : v.rows)
    if (row.run.expressible && !row.run.oom &&
        (known_compile_gap(row) || (metric == GpuMetric::kFirstStepPeak && known_first_step_gap(row))) == known_gap)
      largest = std::max(largest, std::fabs(gpu_signed_error(row, metric)));
  return largest;
}

void print_table(const GpuValidation& v) {
  std::printf("\nGround truth on one GPU (tests/data/gpu_memory_measured.csv): measured / predicted, GiB (tokens/s)\n");
  std::printf("%-26s %-22s %-22s %-22s %-20s %-20s %-18s %-20s\n", "row", "peak allocated", "peak reserved", "device",
              "model states", "step transient", "allocator reserve", "tokens/s");
  for (const GpuRow& row : v.rows) {
    if (!row.run.expressible) {
      std::printf("%-26s not compared: %s\n", row.run.id.c_str(), row.run.why_not.c_str());
      continue;
    }
    if (row.run.oom) {
      std::printf("%-26s ran out of memory; predicted %s (device %.2f GiB)\n", row.run.id.c_str(), to_string(row.verdict),
                  bytes_to_gib(row.predicted[size_t(GpuMetric::kDevice)]));
      continue;
    }
    std::printf("%-26s", row.run.id.c_str());
    for (GpuMetric m : {GpuMetric::kPeakAllocated, GpuMetric::kPeakReserved, GpuMetric::kDevice, GpuMetric::kModelStates,
                        GpuMetric::kStepTransient, GpuMetric::kAllocatorReserve, GpuMetric::kTokensPerS}) {
      const double measured = row.run.measured[size_t(m)], predicted = row.predicted[size_t(m)];
      char cell[64];
      if (m == GpuMetric::kTokensPerS)
        std::snprintf(cell, sizeof cell, "%.0f/%.0f %+.0f%%", measured, predicted, 100.0 * gpu_signed_error(row, m));
      else
        std::snprintf(cell, sizeof cell, "%.2f/%.2f %+.1f%%", bytes_to_gib(measured), bytes_to_gib(predicted),
                      100.0 * gpu_signed_error(row, m));
      std::printf(" %-21s", cell);
    }
    std::printf("\n");
  }
  std::printf("medians (allocator reserve and outside-allocator errors as shares of the row's peak allocated):\n");
  for (const GpuMetricSummary& s : v.metrics)
    std::printf("  %-22s %3d rows  median |error| %5.1f%%  max %5.1f%%  signed %+5.1f%%\n", enum_label(s.metric), s.rows,
                100.0 * s.median_abs_error, 100.0 * s.max_abs_error, 100.0 * s.median_signed_error);
  std::printf("  fit/OOM labels: %d of %d disagree\n", v.label_disagreements, v.label_rows);
}

}  // namespace

TEST_CASE("the GPU ground truth: at least 60 measured rows, each with the GPU and software it ran on") {
  const std::vector<meshfit_test::CsvRow> rows = meshfit_test::read_csv(meshfit_test::data_path("gpu_memory_measured.csv"));
  int measured = 0;
  std::set<std::string> ids;
  for (const meshfit_test::CsvRow& row : rows) {
    CAPTURE(row.at("id"));
    CHECK(ids.insert(row.at("id")).second);  // row ids are unique
    for (const char* column : {"gpu", "driver", "cuda", "torch", "harness_commit", "date"}) CHECK(!row.at(column).empty());
    CHECK(row.at("harness_commit") != "unknown");
    if (row.at("status") == "ok" || row.at("status") == "oom") ++measured;
  }
  CHECK(measured >= 60);
  CHECK(int(gpu_runs().size()) == measured);  // the compiled-in copy is the file
}

TEST_CASE("the harness builds its models from meshfit's presets (tests/gpu/models.json)") {
  std::ifstream in(std::string(MESHFIT_SOURCE_DIR) + "/tests/gpu/models.json");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json models = nlohmann::json::parse(text.str());
  REQUIRE(models.size() >= 4);
  for (const auto& item : models.items()) {  // no structured binding: clang 14 (WASM) rejects one inside CAPTURE
    const std::string& id = item.key();
    const nlohmann::json& spec = item.value();
    CAPTURE(id);
    const std::optional<ModelSpec> preset = find_model_preset(id);
    REQUIRE(preset);
    CHECK(spec["hidden"].get<int64_t>() == preset->hidden);
    CHECK(spec["layers"].get<int64_t>() == preset->layers);
    CHECK(spec["heads"].get<int64_t>() == preset->heads);
    CHECK(spec["kv_heads"].get<int64_t>() == preset->kv_heads);
    CHECK(spec["head_dim"].get<int64_t>() == preset->head_dim);
    CHECK(spec["ffn"].get<int64_t>() == preset->ffn);
    CHECK(spec["vocab"].get<int64_t>() == preset->vocab);
    CHECK(spec["tied_embeddings"].get<bool>() == preset->tied_embeddings);
  }
}

TEST_CASE("predicted vs measured on the GPU ground truth, per figure, within stated tolerances") {
  const GpuValidation& v = gpu_validation();
  print_table(v);
  REQUIRE(v.metrics.size() == size_t(kGpuMetricCount));
  CHECK(summary(v, GpuMetric::kPeakAllocated).rows >= 60);

  // Model states are byte counts of known tensors (fp32 or bf16 parameters, Adam's two moments,
  // LoRA adapters): only allocator rounding and small buffers (RoPE's table, norms) remain.
  CHECK(summary(v, GpuMetric::kModelStates).max_abs_error < 0.03);
  // Peak allocated: the sum of modelled tensors at the peak moment. Every mechanism behind the rows
  // is modelled, so the median is held to 2%; the worst row (the math SDPA backend at 4k tokens,
  // whose backward temporaries are only roughly modelled) to 10%.
  CHECK(summary(v, GpuMetric::kPeakAllocated).median_abs_error < 0.02);
  CHECK(max_abs_error(v, GpuMetric::kPeakAllocated, false) < 0.10);
  CHECK(max_abs_error(v, GpuMetric::kPeakAllocated, true) < 0.15);  // the known gap, held where it is
  // LoRA without checkpointing: every adapter's saved input and the attention output a fused SDPA
  // keeps whatever the targets (finetune.cpp lora_activation_delta_bytes); those rows were 1.3-1.5%
  // low by that one term before a review found it, and are within 0.4% with it.
  for (const GpuRow& row : v.rows) {
    const TrainingSpec& t = row.run.config.training;
    if (!row.run.expressible || row.run.oom || !has_adapters(t) || t.recompute != Recompute::kNone) continue;
    CAPTURE(row.run.id);
    const double measured = row.run.measured[size_t(GpuMetric::kPeakAllocated)];
    CHECK(std::fabs(row.predicted[size_t(GpuMetric::kPeakAllocated)] / measured - 1.0) < 0.006);
  }
  // The step's transient (peak minus states) is the part the activation and loss models predict:
  // median 3%, worst 20% (the same math-attention row, on a smaller base).
  CHECK(summary(v, GpuMetric::kStepTransient).median_abs_error < 0.03);
  CHECK(summary(v, GpuMetric::kStepTransient).max_abs_error < 0.20);
  // Reserved and device add the allocator's slack, set from these rows' medians (overheads.h):
  // the spread between rows (1.0-1.37x the transient) is what is left, so the median is held to 3%
  // and every row to 12% of the nearest of its measurements: torch DDP's reserve is not repeatable
  // (tests/data/gpu_memory_repeats.csv: identical DDP runs differ by up to 6.2 GiB, while FSDP2
  // repeats to the byte), so a row is checked against the closest of its runs.
  CHECK(summary(v, GpuMetric::kPeakReserved).median_abs_error < 0.03);
  CHECK(summary(v, GpuMetric::kDevice).median_abs_error < 0.03);
  CHECK(summary(v, GpuMetric::kAllocatorReserve).median_abs_error < 0.03);
  std::map<std::string, std::vector<double>> reserved_runs;
  // by config: the row id less "-pools" (a repeat with per-stream pools) and less "h200-" (the same
  // configuration run on the H200 machine: the bytes do not depend on the card's capacity)
  const auto config_id = [](std::string id) {
    if (id.rfind("h200-", 0) == 0) id = id.substr(5);
    const size_t at = id.rfind("-pools");
    return at != std::string::npos && at + 6 == id.size() ? id.substr(0, at) : id;
  };
  for (const char* file : {"gpu_memory_measured.csv", "gpu_memory_repeats.csv"})
    for (const meshfit_test::CsvRow& r : meshfit_test::read_csv(meshfit_test::data_path(file)))
      if (r.at("status") == "ok") reserved_runs[config_id(r.at("id"))].push_back(meshfit_test::to_double(r.at("sn_peak_reserved")));
  for (const GpuRow& row : v.rows) {
    if (!row.run.expressible || row.run.oom) continue;
    CAPTURE(row.run.id);
    const double predicted = row.predicted[size_t(GpuMetric::kPeakReserved)];
    double nearest = 1e9;
    for (double measured : reserved_runs[config_id(row.run.id)]) nearest = std::min(nearest, std::fabs(predicted / measured - 1.0));
    // 12%, except gpt3-760m under torch DDP: its allocator keeps 0.61-0.66 of the transient in reserve
    // under either allocator (the rows' median is 0.18), 13% over the prediction.
    CHECK(nearest < (row.run.config.model.name == "gpt3-760m" ? 0.14 : 0.12));
  }
  // Outside the allocator: the CUDA context constant comes from these rows, so this only guards it.
  CHECK(summary(v, GpuMetric::kOutsideAllocator).max_abs_error < 0.01);
  // Step time on one GPU: the step-time model's own figure (issue 12's scope), reported here; the
  // median is held to 10% (7.3% since FSDP2's copy-out and copy-in/chunk_cat passes are modelled).
  // Small steps (0.5k tokens, gradient accumulation of small micro-batches) are host-bound on this
  // machine and miss by far more (printed above).
  CHECK(summary(v, GpuMetric::kTokensPerS).median_abs_error < 0.10);
  // The first step's peak, before Adam's moments exist (measured_runs.h first_iteration_figure):
  // the same tensors less the moments, or the optimizer step's allocation if larger; held to 3%.
  CHECK(max_abs_error(v, GpuMetric::kFirstStepPeak, false) < 0.03);
  CHECK(max_abs_error(v, GpuMetric::kFirstStepPeak, true) < 0.17);
  // Fit labels: at most one near-capacity row may be mislabelled, and never as fitting when the run
  // ran out of memory.
  CHECK(v.label_disagreements <= 1);
  for (const GpuRow& row : v.rows)
    if (row.run.expressible && row.run.oom) CHECK(row.verdict == Verdict::kOutOfMemory);
}
