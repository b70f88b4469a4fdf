// measured_runs.cpp — see measured_runs.h. Each CSV row states its setup in columns (framework,
// metric, norm, mlp, linear_bias, tied_embeddings, loss, optimizer, steady_state, allocator,
// dp_comm_overlap beside the architecture and layout), so nothing is inferred from a model's name.
#include "io/measured_runs.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "io/csv_text.h"
#include "memory/finetune.h"
#include "memory/overheads.h"
#include "io/serialize.h"
#include "units.h"

namespace meshfit {

extern const char* const kMemoryMeasuredCsv;  // generated from tests/data/memory_measured.csv
extern const char* const kFinetuneMeasuredCsv;  // generated from tests/data/finetune_measured.csv

namespace {

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }
bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// A label's part: the column's value after its prefix ("dp" + "64"), or nothing when the source does
// not state it ("z mb" read as a mangled label).
std::string label_part(const CsvRow& row, const char* prefix, const char* column) {
  const std::string& value = csv_field(row, column);
  return value.empty() ? std::string() : prefix + value;
}

MeasuredRun run_from_row(const CsvRow& row) {
  MeasuredRun run;
  const auto field = [&row](const char* column) -> const std::string& { return csv_field(row, column); };
  run.source = field("source");
  run.notes = field("notes");
  run.label = join_words({short_model_name(field("model")), label_part(row, "dp", "dp"), label_part(row, "tp", "tp"),
                          label_part(row, "pp", "pp"), label_part(row, "cp", "cp"), label_part(row, "z", "zero_stage"),
                          field("recompute"), label_part(row, "mb", "micro_batch")});
  run.oom = field("oom") == "yes";
  run.measured_bytes = gib_to_bytes(csv_number(field("measured_peak_gb")));  // sources print GiB (see notes)
  run.metric = enum_from_key<MeasuredMetric>(field("metric")).value_or(MeasuredMetric::kDevice);
  if (run.measured_bytes <= 0) run.metric = MeasuredMetric::kFitLabel;
  run.steady_state = field("steady_state") != "no";

  Config& config = run.config;
  config = default_config();
  ModelSpec& m = config.model;
  m.name = field("model");
  m.hidden = csv_int(field("hidden"));
  m.layers = csv_int(field("layers"));
  m.heads = csv_int(field("heads"));
  m.kv_heads = csv_int(field("kv_heads"));
  m.head_dim = csv_int(field("head_dim"));  // optional column: empty or absent = hidden / heads
  m.ffn = csv_int(field("ffn"));
  m.vocab = csv_int(field("vocab"));
  m.norm = enum_from_key<NormKind>(field("norm")).value_or(NormKind::kRmsNorm);
  m.mlp = enum_from_key<MlpKind>(field("mlp")).value_or(MlpKind::kSwiGlu);
  m.linear_bias = field("linear_bias") == "yes";
  m.tied_embeddings = field("tied_embeddings") == "yes";
  m.qk_norm = field("qk_norm") == "yes";  // optional column
  Layout& layout = config.layout;
  layout.dp = csv_int(field("dp"));
  layout.tp = std::max<int64_t>(1, csv_int(field("tp")));
  layout.pp = std::max<int64_t>(1, csv_int(field("pp")));
  layout.cp = std::max<int64_t>(1, csv_int(field("cp")));
  layout.vpp = std::max<int64_t>(1, csv_int(field("vpp")));
  config.cluster.gpus = layout.dp * layout.tp * layout.pp * layout.cp;
  TrainingSpec& t = config.training;
  t.seq = csv_int(field("seq_len"));
  t.micro_batch = csv_int(field("micro_batch"));
  t.global_batch = csv_int(field("global_batch"));
  t.recompute = enum_from_key<Recompute>(field("recompute").empty() ? "none" : field("recompute")).value_or(Recompute::kNone);
  t.sp = starts_with(field("sp"), "yes");
  t.flash = starts_with(field("flash_attn"), "yes");
  t.framework = enum_from_key<Framework>(field("framework")).value_or(Framework::kMegatron);
  t.loss = enum_from_key<LossKind>(field("loss")).value_or(LossKind::kAuto);
  t.optimizer = enum_from_key<Optimizer>(field("optimizer")).value_or(Optimizer::kAdamW);
  t.allocator = enum_from_key<AllocatorMode>(field("allocator")).value_or(AllocatorMode::kAuto);
  // auto = the framework's default (tests/data/README.md: no row's source states overlap_comm or
  // --overlap-grad-reduce); it decides DeepSpeed ZeRO-1/2's second IPG bucket.
  t.dp_comm_overlap = enum_from_key<DpCommOverlap>(field("dp_comm_overlap")).value_or(DpCommOverlap::kAuto);
  const std::string& precision = field("precision");
  t.precision = contains(precision, "pure") ? Precision::kPureBf16
                : contains(precision, "fp8") ? Precision::kFp8
                                              : Precision::kBf16;  // bf16 / fp16 mixed precision
  const FrameworkProfile& profile = framework_profile(t.framework);
  layout.zero = field("zero_stage").empty() ? profile.default_zero : csv_int(field("zero_stage"));

  if (t.seq <= 0 || t.micro_batch <= 0) {
    run.expressible = false;
    run.why_not = "seq_len and micro_batch not given";
  } else if (field("zero_stage").empty() && t.framework != Framework::kMegatron) {
    run.expressible = false;
    run.why_not = "ZeRO stage and SP not stated";
  }
  const std::string& gpu = field("gpu");
  const std::optional<GpuSpec> preset = contains(gpu, "A100 80GB")   ? find_gpu_preset("a100-80gb")
                                        : contains(gpu, "A100 40GB") ? find_gpu_preset("a100-40gb")
                                        : contains(gpu, "L40S")      ? find_gpu_preset("l40s")
                                                                     : std::nullopt;
  if (preset) {
    config.gpu = *preset;
  } else {
    config.gpu = GpuSpec{};
    config.gpu.name = gpu;
    config.gpu.memory_bytes = gib_to_bytes(csv_number(field("gpu_mem_gb")));  // HBM "GB" sizes are GiB
  }
  return run;
}

// A finetune_measured.csv row: the architecture, the method and its settings as config fields, read
// by parse_config so that what a row leaves out gets the fine-tuning defaults (finetune.h). A row
// without a sequence length gets the source's dataset cap (FINETUNE_NOTES: alpaca <= 512 for the
// adapter runs, 64 for the full fine-tuning runs whose notes say so).
MeasuredRun finetune_run_from_row(const CsvRow& row) {
  MeasuredRun run;
  const auto field = [&row](const char* column) -> const std::string& { return csv_field(row, column); };
  const std::string& model = field("model");
  run.label = join_words({short_model_name(model), field("method"), field("dora") == "yes" ? "dora" : "",
                          label_part(row, "r", "lora_rank"), label_part(row, "s", "seq_len"),
                          label_part(row, "b", "micro_batch"), label_part(row, "x", "num_gpus"), field("zero_stage") == "3" ? field("framework") : "",
                          field("offload") != "none" ? "+off" : ""});
  run.source = field("source");
  run.notes = field("notes");
  run.stack = field("stack");
  run.oom = field("oom") == "yes";
  run.expressible = field("expressible") == "yes";
  run.why_not = field("why_not");
  const double number = csv_number(field("measured_peak_gb"));
  run.measured_bytes = field("unit") == "GB" ? gb_to_bytes(number) : gib_to_bytes(number);
  run.metric = enum_from_key<MeasuredMetric>(field("metric_key")).value_or(MeasuredMetric::kDevice);
  if (run.measured_bytes <= 0) run.metric = MeasuredMetric::kFitLabel;
  if (!run.expressible) return run;
  const int64_t gpus = std::max<int64_t>(1, csv_int(field("num_gpus")));
  const int64_t micro_batch = std::max<int64_t>(1, csv_int(field("micro_batch")));
  const int64_t seq = field("seq_len").empty() ? (field("method") == "full" ? 64 : 512) : csv_int(field("seq_len"));
  nlohmann::json o = {{"model", "custom"},
                      {"hidden", csv_int(field("hidden"))},
                      {"layers", csv_int(field("layers"))},
                      {"heads", csv_int(field("heads"))},
                      {"kv_heads", csv_int(field("kv_heads"))},
                      {"head_dim", csv_int(field("head_dim"))},  // optional column: 0 = hidden / heads
                      {"ffn", csv_int(field("ffn"))},
                      {"vocab", csv_int(field("vocab"))},
                      {"tied_embeddings", field("tied_embeddings") == "yes"},
                      {"norm", field("norm")},
                      {"mlp", field("mlp")},
                      {"linear_bias", field("linear_bias") == "yes"},
                      {"gpu", "custom"},
                      // HBM sizes printed as "80GB" are GiB-sized parts; a missing GPU is taken as 80.
                      {"gpu_memory_gib", field("gpu_mem_gb").empty() ? 80.0 : csv_number(field("gpu_mem_gb"))},
                      {"gpus", gpus},
                      {"gpus_per_node", 8},
                      {"seq", seq},
                      {"micro_batch", micro_batch},
                      {"global_batch", micro_batch * gpus * std::max<int64_t>(1, csv_int(field("grad_accum")))},
                      {"finetune", field("method")},
                      {"framework", field("framework")},
                      {"zero", csv_int(field("zero_stage"))},
                      {"recompute", field("recompute")},
                      {"loss", field("loss")},
                      {"precision", field("precision_key")},
                      {"optimizer", field("optimizer_key")},
                      {"offload", field("offload")}};
  if (field("method") != "full") {
    o["lora_rank"] = csv_int(field("lora_rank"));
    o["lora_targets"] = field("targets_key");
    o["adapter_dtype"] = field("adapter_dtype");
    o["kbit_upcast"] = field("kbit_upcast") == "yes";
    o["base_dtype"] = field("base_dtype");
    o["dora"] = field("dora") == "yes";
  }
  const ParsedConfig parsed = parse_config(o);
  run.config = parsed.config;
  if (has_errors(parsed.issues)) {
    run.expressible = false;
    run.why_not = parsed.issues.front().message;
  }
  return run;
}

double figure(const RankMemory& rank, MeasuredMetric metric) {
  switch (metric) {
    case MeasuredMetric::kMaxReserved: return rank.peak_reserved_bytes;
    case MeasuredMetric::kMaxAllocated: return rank.peak_allocated_bytes;
    case MeasuredMetric::kDevice:
    case MeasuredMetric::kFitLabel: return rank.device_bytes;
  }
  return rank.device_bytes;
}

}  // namespace

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::vector<MeasuredRun> parse_measured_runs(const std::string& csv_text) {
  std::vector<MeasuredRun> runs;
  for (const CsvRow& row : parse_csv(csv_text)) runs.push_back(run_from_row(row));
  return runs;
}

std::vector<MeasuredRun> parse_finetune_measured_runs(const std::string& csv_text) {
  std::vector<MeasuredRun> runs;
  for (const CsvRow& row : parse_csv(csv_text)) runs.push_back(finetune_run_from_row(row));
  return runs;
}

const std::vector<MeasuredRun>& finetune_measured_runs() {
  static const std::vector<MeasuredRun> runs = parse_finetune_measured_runs(kFinetuneMeasuredCsv);
  return runs;
}

const std::vector<MeasuredRun>& measured_runs() {
  static const std::vector<MeasuredRun> runs = parse_measured_runs(kMemoryMeasuredCsv);
  return runs;
}

double first_iteration_figure(const Config& config, const MemoryReport& memory, double steady_figure, bool device_figure) {
  // Read in the first iteration: forward and backward ran before the optimizer's moments existed
  // (torch.optim and Apex/TE FusedAdam create exp_avg/exp_avg_sq lazily in the first step()); the
  // step then allocates them after the activations are freed. The figure is the larger of the two
  // moments. (Moments created over DeepSpeed's flat partition land in new allocator segments beside
  // the activations' cached ones, as the step's temporaries do: the first iteration's reserved pool
  // is then the steady one, memory_model.cpp [SECTION] Optimizer step; callers skip those.)
  const RankMemory& worst = memory.worst();
  const TrainingSpec& t = config.training;
  const ModelStateRule rule = model_state_rule(t.framework, config.layout.zero, t.fp32_grad_buffer, t.precision);
  // With adapters only they have moments, in the adapters' dtype (fp32 under PEFT's default).
  const bool adapters = has_adapters(t);
  const double moment_bytes =
      adapters ? worst.intermediates.trainable_parameters *
                     optimizer_moment_bytes(t.optimizer, t.adapter_dtype == AdapterDtype::kFp32 ? Precision::kBf16 : Precision::kPureBf16)
               : worst.intermediates.parameters * optimizer_moment_bytes(t.optimizer, t.precision) /
                     (rule.moments_sharded ? double(memory.optimizer_shard_ranks) : 1.0);
  const double outside_allocator = device_figure ? worst.bytes(Component::kNccl) + worst.bytes(Component::kCudaContext) : 0.0;
  const double at_step = worst.intermediates.optimizer_step_allocated_bytes + outside_allocator;
  return std::max(steady_figure - moment_bytes, at_step);
}

ValidationReport validate_against(const std::vector<MeasuredRun>& runs) {
  ValidationReport report;
  std::vector<double> abs_errors, signed_errors;
  for (const MeasuredRun& run : runs) {
    ValidationRow row;
    row.run = run;
    if (run.expressible) {
      const MemoryReport memory = estimate_memory(run.config);
      if (memory.valid()) {
        const RankMemory& worst = memory.worst();
        row.verdict = memory.verdict;
        row.predicted_bytes = figure(worst, run.metric);
        const bool pool_metric = run.metric == MeasuredMetric::kMaxReserved || run.metric == MeasuredMetric::kDevice;
        if (!run.steady_state && !(pool_metric && worst.intermediates.optimizer_step_new_segments)) {
          row.predicted_bytes = first_iteration_figure(run.config, memory, row.predicted_bytes,
                                                       run.metric == MeasuredMetric::kDevice);
        }
        row.label_agrees = run.oom == (memory.verdict == Verdict::kOutOfMemory);
        ++report.label_rows;
        if (!row.label_agrees) ++report.label_disagreements;
        if (run.oom && memory.verdict != Verdict::kOutOfMemory) ++report.false_fits;
        if (run.measured_bytes > 0) {
          row.signed_error = (row.predicted_bytes - run.measured_bytes) / run.measured_bytes;
          abs_errors.push_back(std::fabs(row.signed_error));
          signed_errors.push_back(row.signed_error);
        }
      } else {
        row.run.expressible = false;
        row.run.why_not = memory.issues.empty() ? "invalid" : memory.issues.front().message;
      }
    }
    report.rows.push_back(std::move(row));
  }
  report.measured_rows = int64_t(abs_errors.size());
  report.median_abs_error = median_of(abs_errors);
  report.median_signed_error = median_of(signed_errors);
  return report;
}

}  // namespace meshfit
