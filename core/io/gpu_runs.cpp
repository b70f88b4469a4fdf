// gpu_runs.cpp — see gpu_runs.h. How the harness ran each row is in tests/gpu/train_row.py; the
// mapping of its columns to meshfit's inputs is stated once, in gpu_run_from_row.
#include "io/gpu_runs.h"

#include <algorithm>
#include <cmath>

#include "io/measured_runs.h"
#include "memory/overheads.h"
#include "perf/perf_model.h"
#include "spec/gpu_catalog.h"
#include "spec/model_spec.h"
#include "spec/validate.h"

namespace meshfit {

extern const char* const kGpuMemoryMeasuredCsv;  // generated from tests/data/gpu_memory_measured.csv

namespace {

double number_or_zero(const CsvRow& row, const char* column) {
  const std::string& text = csv_field(row, column);
  return text.empty() ? 0.0 : csv_number(text);
}

// One harness row as a meshfit configuration: the preset at the row's depth on its one GPU, the
// harness's wrapper as the FSDP profile's ZeRO stage (fully_shard = 3, DDP = 0; PEFT's plain model
// = 0, with the HF + PEFT stack's adapter defaults, which the harness also used), and each setting
// as its input. The harness's attention backends other than math all keep no score matrix (flash).
GpuRun gpu_run_from_row(const CsvRow& row) {
  GpuRun run;
  run.id = csv_field(row, "id");
  run.software = csv_field(row, "gpu") + ", driver " + csv_field(row, "driver") + ", CUDA " + csv_field(row, "cuda") +
                 ", PyTorch " + csv_field(row, "torch") + ", harness " + csv_field(row, "harness_commit") + " (" +
                 csv_field(row, "date") + ")";
  Config& c = run.config;
  const std::string& model = csv_field(row, "model");
  if (std::optional<ModelSpec> preset = find_model_preset(model)) c.model = *preset;
  c.model.name = model;
  const std::string& layers = csv_field(row, "layers");
  if (!layers.empty()) c.model.layers = csv_int(layers);
  // The GPU the harness reported (torch.cuda.get_device_properties().name).
  const std::string& gpu = csv_field(row, "gpu");
  c.gpu = *find_gpu_preset(gpu.find("H200") != std::string::npos ? "h200" : "h100-sxm");
  c.cluster.gpus = 1;
  c.cluster.gpus_per_node = 1;
  TrainingSpec& t = c.training;
  t.seq = csv_int(csv_field(row, "seq"));
  t.micro_batch = csv_int(csv_field(row, "micro_batch"));
  t.global_batch = t.micro_batch * csv_int(csv_field(row, "grad_accum"));
  t.framework = Framework::kFsdp;
  t.precision = enum_from_key<Precision>(csv_field(row, "precision")).value_or(Precision::kBf16);
  t.recompute = enum_from_key<Recompute>(csv_field(row, "recompute")).value_or(Recompute::kNone);
  t.loss = enum_from_key<LossKind>(csv_field(row, "loss")).value_or(LossKind::kEager);
  t.allocator = enum_from_key<AllocatorMode>(csv_field(row, "allocator")).value_or(AllocatorMode::kAuto);
  t.optimizer = Optimizer::kAdamW;
  t.optimizer_impl = enum_from_key<OptimizerImpl>(csv_field(row, "optimizer_impl")).value_or(OptimizerImpl::kAuto);
  t.flash = csv_field(row, "attention") != "math";
  t.kernels = csv_field(row, "compile") == "1" ? Kernels::kCompiled : Kernels::kEager;
  t.norm_kernel = NormKernel::kFused;  // the harness's nn.RMSNorm: one kernel each way in PyTorch 2.11
  const std::string& wrapper = csv_field(row, "wrapper");
  c.layout.dp = 1;
  c.layout.zero = wrapper == "fsdp2" ? 3 : 0;
  run.ddp_one_rank = wrapper == "ddp";
  const std::string& rank = csv_field(row, "lora_rank");
  if (!rank.empty()) {
    t.finetune = FinetuneMethod::kLora;
    t.stack = FinetuneStack::kHfPeft;
    t.lora_rank = csv_int(rank);
    t.lora_alpha = 2.0 * double(t.lora_rank);
    t.lora_targets = csv_field(row, "lora_targets");
    t.adapter_dtype = AdapterDtype::kFp32;  // PEFT autocast_adapter_dtype=True
    t.base_dtype = AdapterDtype::kBf16;
    t.lora_dropout = 0;
    if (t.recompute == Recompute::kSelective) {
      run.expressible = false;
      run.why_not = "torchtitan's op-level selective checkpointing applied to a PEFT model (every second matmul, "
                    "LoRA's included): no fine-tuning stack offers it";
    }
  }
  run.label = model + (layers.empty() ? "" : " " + layers + "L") + " s" + csv_field(row, "seq") + " mb" +
              csv_field(row, "micro_batch") + " " + wrapper + " " + csv_field(row, "precision") + " rc=" +
              csv_field(row, "recompute") + " " + csv_field(row, "attention") + " loss=" + csv_field(row, "loss") +
              (csv_field(row, "compile") == "1" ? " compiled" : "") + " " + csv_field(row, "allocator") + " " +
              csv_field(row, "optimizer_impl") + (csv_int(csv_field(row, "grad_accum")) > 1 ? " ga" + csv_field(row, "grad_accum") : "") +
              (rank.empty() ? "" : " lora r" + rank + " " + csv_field(row, "lora_targets"));
  run.oom = csv_field(row, "status") == "oom";
  if (!run.oom) {
    auto& m = run.measured;
    const double peak_allocated = number_or_zero(row, "sn_peak_alloc");
    const double peak_reserved = number_or_zero(row, "sn_peak_reserved");
    const double outside = number_or_zero(row, "sn_nonpytorch");
    const double states = number_or_zero(row, "sn_zero_alloc");
    m[size_t(GpuMetric::kPeakAllocated)] = peak_allocated;
    m[size_t(GpuMetric::kPeakReserved)] = peak_reserved;
    m[size_t(GpuMetric::kDevice)] = peak_reserved + outside;
    m[size_t(GpuMetric::kModelStates)] = states;
    m[size_t(GpuMetric::kStepTransient)] = peak_allocated - states;
    m[size_t(GpuMetric::kAllocatorReserve)] = peak_reserved - peak_allocated;
    m[size_t(GpuMetric::kOutsideAllocator)] = outside;
    m[size_t(GpuMetric::kTokensPerS)] = number_or_zero(row, "tokens_per_s");
    m[size_t(GpuMetric::kFirstStepPeak)] = number_or_zero(row, "s1_peak_alloc");
  }
  // train_row.py initialises a one-rank NCCL process group before anything else: its share of the
  // memory outside the allocator, measured right after init.
  run.nccl_bytes = number_or_zero(row, "after_pg_nonpytorch_bytes") - number_or_zero(row, "context_bytes");
  return run;
}

}  // namespace

bool gpu_error_over_peak(GpuMetric metric) {
  return metric == GpuMetric::kAllocatorReserve || metric == GpuMetric::kOutsideAllocator;
}

double gpu_signed_error(const GpuRow& row, GpuMetric metric) {
  const double measured = row.run.measured[size_t(metric)];
  const double predicted = row.predicted[size_t(metric)];
  if (gpu_error_over_peak(metric)) {
    const double peak = row.run.measured[size_t(GpuMetric::kPeakAllocated)];
    return peak > 0 ? (predicted - measured) / peak : 0.0;
  }
  return measured > 0 ? predicted / measured - 1.0 : 0.0;
}

std::vector<GpuRun> parse_gpu_runs(const std::string& csv_text) {
  std::vector<GpuRun> out;
  for (const CsvRow& row : parse_csv(csv_text))
    if (csv_field(row, "status") == "ok" || csv_field(row, "status") == "oom") out.push_back(gpu_run_from_row(row));
  return out;
}

const std::vector<GpuRun>& gpu_runs() {
  static const std::vector<GpuRun> runs = parse_gpu_runs(kGpuMemoryMeasuredCsv);
  return runs;
}

GpuValidation validate_gpu_runs(const std::vector<GpuRun>& runs) {
  GpuValidation v;
  std::array<std::vector<double>, kGpuMetricCount> errors;
  for (const GpuRun& run : runs) {
    GpuRow row{run, {}, Verdict::kFits, true};
    if (!run.expressible || has_errors(validate(run.config))) {
      v.rows.push_back(std::move(row));
      continue;
    }
    const MemoryReport report = estimate_memory(run.config);
    const RankMemory& rank = report.worst();
    auto& p = row.predicted;
    // The harness reads its model states after zero_grad, when cuBLAS's workspace (allocated at the
    // first GEMM, kept for the process) is also allocated: it counts there, as in the measurement.
    const double states = rank.bytes(Component::kWeights) + rank.bytes(Component::kOptimizerStates) +
                          (run.config.layout.zero == 0 ? rank.bytes(Component::kCommBuffers) : 0.0) +  // DDP's buckets
                          kCublasWorkspaceBytes;
    // The harness's one-rank NCCL communicator is outside what meshfit predicts for one GPU without a
    // process group (LoRA on a plain model): it is added to the prediction there, as measured.
    const double harness_nccl = rank.bytes(Component::kNccl) > 0 ? 0.0 : run.nccl_bytes;
    // torch DDP at world size 1 still allocates its gradient buckets (one copy of the parameters'
    // gradients, 4 B per fp32 parameter: the DDP rows' model states are params + buckets + moments),
    // which meshfit books only for dp > 1, where frameworks wrap in DDP at all. Added to the
    // prediction as the harness's own, like its NCCL communicator.
    const bool unbooked_buckets = run.ddp_one_rank && rank.bytes(Component::kCommBuffers) == 0;
    const double harness_buckets = unbooked_buckets ? rank.intermediates.parameters * rank.intermediates.weight_bytes_per_param : 0.0;
    p[size_t(GpuMetric::kPeakAllocated)] = rank.peak_allocated_bytes + harness_buckets;
    p[size_t(GpuMetric::kPeakReserved)] = rank.peak_reserved_bytes + harness_buckets;
    p[size_t(GpuMetric::kDevice)] = rank.device_bytes + harness_nccl + harness_buckets;
    p[size_t(GpuMetric::kModelStates)] = states + harness_buckets;
    p[size_t(GpuMetric::kStepTransient)] = rank.peak_allocated_bytes - states;
    p[size_t(GpuMetric::kAllocatorReserve)] = rank.peak_reserved_bytes - rank.peak_allocated_bytes;
    p[size_t(GpuMetric::kOutsideAllocator)] = rank.device_bytes - rank.peak_reserved_bytes + harness_nccl;
    p[size_t(GpuMetric::kFirstStepPeak)] =
        first_iteration_figure(run.config, report, rank.peak_allocated_bytes, false) + harness_buckets;
    p[size_t(GpuMetric::kTokensPerS)] = predicted_tokens_per_s(gpu_throughput_run(run));
    row.verdict = report.verdict;
    row.label_agrees = run.oom == (report.verdict == Verdict::kOutOfMemory);
    ++v.label_rows;
    if (!row.label_agrees) ++v.label_disagreements;
    if (!run.oom)
      for (int m = 0; m < kGpuMetricCount; ++m) errors[size_t(m)].push_back(gpu_signed_error(row, GpuMetric(m)));
    v.rows.push_back(std::move(row));
  }
  for (int m = 0; m < kGpuMetricCount; ++m) {
    GpuMetricSummary s;
    s.metric = GpuMetric(m);
    s.rows = int(errors[size_t(m)].size());
    std::vector<double> abs_errors;
    for (double e : errors[size_t(m)]) abs_errors.push_back(std::fabs(e));
    s.median_abs_error = median_of(abs_errors);
    s.max_abs_error = abs_errors.empty() ? 0.0 : *std::max_element(abs_errors.begin(), abs_errors.end());
    s.median_signed_error = median_of(errors[size_t(m)]);
    v.metrics.push_back(s);
  }
  return v;
}

const GpuValidation& gpu_validation() {
  static const GpuValidation validation = validate_gpu_runs(gpu_runs());
  return validation;
}

ThroughputRun gpu_throughput_run(const GpuRun& run) {
  ThroughputRun t;
  t.source = run.config.gpu.id == "h200" ? "meshfit tests/gpu (H200, 1 GPU)" : "meshfit tests/gpu (H100, 1 GPU)";
  t.citation = "tests/data/gpu_memory_measured.csv row " + run.id + ": " + run.software;
  t.label = run.label;
  t.config = run.config;
  t.measured_tokens_per_s_per_gpu = run.measured[size_t(GpuMetric::kTokensPerS)];
  // torch DDP at world size one still copies each micro-batch's gradients into its buckets and back
  // (the harness syncs every micro-batch); meshfit's config books DDP only for dp > 1.
  if (run.ddp_one_rank) {
    const double microbatches = double(run.config.training.global_batch) / double(run.config.training.micro_batch);
    t.harness_extra_step_s = microbatches * ddp_bucket_copy_s(run.config, total_parameters(run.config.model));
  }
  return t;
}

std::vector<ThroughputRun> gpu_throughput_runs() {
  std::vector<ThroughputRun> out;
  for (const GpuRun& run : gpu_runs())
    if (!run.oom && run.expressible) out.push_back(gpu_throughput_run(run));
  return out;
}

}  // namespace meshfit
