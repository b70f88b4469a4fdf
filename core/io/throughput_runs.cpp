// throughput_runs.cpp — see throughput_runs.h. The conversion of each source's published metric to
// tokens/s per GPU is stated beside its branch; everything else each row states in its own columns.
#include "io/throughput_runs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "io/gpu_runs.h"
#include "io/measured_runs.h"
#include "io/serialize.h"
#include "memory/finetune.h"
#include "memory/memory_model.h"
#include "perf/perf_model.h"
#include "spec/gpu_catalog.h"
#include "spec/structure.h"
#include "spec/validate.h"

namespace meshfit {

extern const char* const kLayoutsMeasuredCsv;  // generated from tests/data/layouts_measured.csv

namespace {

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// `key=value` inside the notes column (Hagemann rows: step_time_s, attn_kernel).
std::string value_in_notes(const std::string& notes, const std::string& key) {
  const size_t at = notes.find(key + "=");
  if (at == std::string::npos) return "";
  const size_t start = at + key.size() + 1;
  const size_t end = notes.find_first_of(";\"", start);
  return notes.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

ModelSpec model_from_row(const CsvRow& row) {
  ModelSpec m;
  m.name = csv_field(row, "model");
  m.hidden = csv_int(csv_field(row, "hidden"));
  m.layers = csv_int(csv_field(row, "layers"));
  m.heads = csv_int(csv_field(row, "heads"));
  m.kv_heads = csv_int(csv_field(row, "kv_heads"));
  m.ffn = csv_int(csv_field(row, "ffn"));
  m.vocab = csv_int(csv_field(row, "vocab"));
  return m;
}

// Narayanan et al. and Korthikanti et al.'s GPT block: LayerNorm, GeLU MLP of width 4h, MHA, biases,
// tied embeddings, no dropout at these runs' settings.
ModelSpec megatron_gpt(const CsvRow& row) {
  ModelSpec m = model_from_row(row);
  m.name = "gpt-" + csv_field(row, "model");
  m.kv_heads = m.heads;
  m.ffn = 4 * m.hidden;
  m.norm = NormKind::kLayerNorm;
  m.mlp = MlpKind::kGelu;
  m.linear_bias = true;
  m.tied_embeddings = true;
  m.dropout = false;
  return m;
}

// Narayanan et al. SC'21 count hardware FLOPs with full recompute, per token:
// 96 * L * h^2 * (1 + s/(6h) + V/(16 L h)) (their eq. 3 divided by B*s).
double narayanan_flops_per_token(double layers, double hidden, double seq, double vocab) {
  return 96.0 * layers * hidden * hidden * (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden));
}

std::vector<ThroughputSummary> summarize(const std::map<std::string, std::vector<double>>& signed_errors) {
  std::vector<ThroughputSummary> out;
  for (const auto& entry : signed_errors) {
    std::vector<double> abs_errors;
    for (double e : entry.second) abs_errors.push_back(std::fabs(e));
    out.push_back({entry.first, int(entry.second.size()), median_of(abs_errors), median_of(entry.second)});
  }
  return out;
}

}  // namespace

bool is_hagemann_row(const CsvRow& row) { return starts_with(csv_field(row, "source"), "Hagemann"); }

std::string hagemann_kernel(const CsvRow& row) { return value_in_notes(csv_field(row, "notes"), "attn_kernel"); }

// The sweep's network: "200 Gb/s HDR InfiniBand between nodes" (THROUGHPUT_NOTES.md §1, setup),
// read as one HDR rail per node that the node's 8 GPUs share, not a DGX A100's eight (the a100-80gb
// preset's 200 Gb/s per GPU). The data's own contrast says which: Llama 30B at 256 GPUs, tp4, mb1, no
// recompute, FA2 + RMS kernel ran 516 tokens/s/GPU at pp1 (dp64: a quarter of the model's gradients
// per GPU to sync) and 623 at pp4 (dp16, a sixteenth). One rail predicts 580 and 607; eight predict
// 747 and 727, the wrong order. Over the 401 runs, 1/2/4/8 rails per node give median |error|
// 4.7/6.2/9.1/10.5%. What one rail leaves: the pure-DP 13B runs at 32-64 GPUs (70% MFU) come out
// 10-16% slow (7-9% with eight rails), test_hagemann_mechanisms.cpp.
constexpr double kHagemannNodeNetworkBytesPerS = 200e9 / 8.0;

// The sweep's codebase (Aleph Alpha's, Megatron-derived) is not one of meshfit's profiles; its memory
// matches ZeRO-1 with 16-bit gradients (the 13B pure-DP runs on 32 GPUs completed, which Megatron's
// 6 + 12/dp bytes per parameter cannot hold), so the DeepSpeed ZeRO-1 profile stands in for it.
// Global batch: 4.19M tokens, inferred in the csv notes (Llama-2 recipe).
Config hagemann_config(const CsvRow& row) {
  Config config = default_config();
  config.model = model_from_row(row);
  config.gpu = *find_gpu_preset("a100-80gb");
  config.cluster.gpus = csv_int(csv_field(row, "num_gpus"));
  config.layout.tp = csv_int(csv_field(row, "tp"));
  config.layout.pp = csv_int(csv_field(row, "pp"));
  config.layout.zero = 1;
  config.gpu.internode_bytes_per_s = kHagemannNodeNetworkBytesPerS / double(config.cluster.gpus_per_node);
  TrainingSpec& t = config.training;
  t.framework = Framework::kDeepSpeed;
  t.seq = csv_int(csv_field(row, "seq_len"));
  t.global_batch = t.seq > 0 ? 4194304 / t.seq : 0;
  t.micro_batch = csv_int(csv_field(row, "micro_batch"));
  t.recompute = csv_field(row, "recompute") == "full" ? Recompute::kFull : Recompute::kNone;
  t.sp = csv_field(row, "sp") == "1";
  const std::string kernel = hagemann_kernel(row);
  t.flash = kernel != "torch" && kernel != "fused";  // "fused" = Megatron fused softmax (eager)
  // DP sync not overlapped. The layers run as eager PyTorch ops, "fused" (Megatron's fused softmax)
  // taking the fused profile for its softmax. The norm is the fused RMS kernel only where the row says
  // so ("+ RMS kernel": paper §4, worth ~14 MFU points); every other setting ran it as eager ops
  // (perf_model.cpp kEagerRmsNormBytes).
  t.kernels = kernel == "fused" ? Kernels::kFused : Kernels::kEager;
  t.norm_kernel = kernel.find("RMS kernel") != std::string::npos ? NormKernel::kFused : NormKernel::kEager;
  t.dp_comm_overlap = DpCommOverlap::kOff;
  return config;
}

std::optional<ThroughputRun> throughput_run_from_row(const CsvRow& row) {
  const std::string& source = csv_field(row, "source");
  ThroughputRun run;
  run.citation = source;
  Config& config = run.config;
  if (is_hagemann_row(row)) {
    // tokens/s/GPU = 4,194,304 tokens per step (inferred in the csv notes) / step time / GPUs.
    run.source = "Hagemann 2023 (A100, Megatron-derived)";
    run.framework_band = false;  // its codebase is not DeepSpeed, whose profile stands in (hagemann_config)
    config = hagemann_config(row);
    const std::string step = value_in_notes(csv_field(row, "notes"), "step_time_s");
    if (step.empty() || config.cluster.gpus <= 0) return std::nullopt;
    run.measured_tokens_per_s_per_gpu = 4194304.0 / csv_number(step) / double(config.cluster.gpus);
  } else if (starts_with(source, "Narayanan") || starts_with(source, "Korthikanti")) {
    const bool korthikanti = starts_with(source, "Korthikanti");
    config = default_config();
    config.model = megatron_gpt(row);
    config.gpu = *find_gpu_preset("a100-80gb");
    config.gpu.memory_bytes *= 4;  // throughput only: these runs fit
    config.cluster.gpus = csv_int(csv_field(row, "num_gpus"));
    config.layout.tp = csv_int(csv_field(row, "tp"));
    config.layout.pp = csv_int(csv_field(row, "pp"));
    config.layout.vpp = std::max<int64_t>(1, csv_int(csv_field(row, "vpp")));
    TrainingSpec& t = config.training;
    t.seq = csv_int(csv_field(row, "seq_len"));
    t.global_batch = csv_int(csv_field(row, "global_batch"));
    t.micro_batch = std::max<int64_t>(1, csv_int(csv_field(row, "micro_batch")));
    t.recompute = csv_field(row, "recompute") == "selective" ? Recompute::kSelective : Recompute::kFull;
    t.sp = csv_field(row, "sp") == "1";
    t.dp_comm_overlap = DpCommOverlap::kOff;  // 2021/2022 Megatron-LM all-reduced after the backward
    // No FlashAttention (Dao et al., May 2022) in these runs: Megatron-LM's fused scale-mask-softmax
    // over the full s x s scores, which Korthikanti's selective recompute recomputes.
    t.flash = false;
    const bool zero3 = csv_field(row, "zero_stage") == "3";
    // Narayanan's runs are fp16 (csv notes): Megatron-LM kept fp16 gradient buffers and all-reduced
    // them in fp16 unless --accumulate-allreduce-grads-in-fp32 (off by default, forced on for bf16).
    // Korthikanti's rows say fp16/bf16 and keep the fp32 buffer; the ZeRO-3 rows keep theirs, which
    // zero3_bandwidth_fraction was calibrated with.
    if (!korthikanti && !zero3) t.fp32_grad_buffer = false;
    if (zero3) {
      t.framework = Framework::kDeepSpeed;  // Table 2's ZeRO-3 baseline
      config.layout.zero = 3;
    } else {
      config.layout.zero = korthikanti ? 1 : 0;  // 2021 Megatron-LM had no distributed optimizer
    }
    if (korthikanti) {
      run.source = "Korthikanti 2022 T5 (A100, Megatron-LM)";
      run.measured_tokens_per_s_per_gpu = csv_number(csv_field(row, "tokens_per_s_per_gpu"));
    } else {
      // Narayanan's TFLOP/s count recompute FLOPs: converted through their own per-token formula.
      run.source = zero3 ? "Narayanan 2021 T2 (A100, DeepSpeed ZeRO-3)" : "Narayanan 2021 T1/T2 (A100, Megatron-LM)";
      run.measured_tokens_per_s_per_gpu =
          csv_number(csv_field(row, "measured_tflops_per_gpu")) * 1e12 /
          narayanan_flops_per_token(double(config.model.layers), double(config.model.hidden), double(t.seq),
                                    double(config.model.vocab));
    }
  } else if (starts_with(source, "Llama 3")) {
    // Table 4 gives model TFLOP/s per GPU; converted with meshfit's own FLOPs per token (PaLM count,
    // full s x s attention; the paper does not state its count, which matters at 131k).
    // Megatron-style 4D layout; vpp not published (2 assumed), uneven first/last chunks as
    // choose_pipeline_split makes them (the paper's 405B split: 7 + 14 x 8 + 7). DP = FSDP keeping
    // weights after forward ~ ZeRO-1-like sharding of the optimizer.
    run.source = "Llama 3 2024 T4 (H100, Meta 4D)";
    config = default_config();
    config.model = model_from_row(row);
    config.gpu = *find_gpu_preset("h100-sxm");
    config.gpu.memory_bytes *= 4;
    config.cluster.gpus = csv_int(csv_field(row, "num_gpus"));
    config.layout.tp = csv_int(csv_field(row, "tp"));
    config.layout.pp = csv_int(csv_field(row, "pp"));
    config.layout.cp = csv_int(csv_field(row, "cp"));
    config.layout.vpp = 2;
    config.layout.zero = 1;
    TrainingSpec& t = config.training;
    t.seq = csv_int(csv_field(row, "seq_len"));
    t.global_batch = csv_int(csv_field(row, "global_batch"));
    t.micro_batch = 1;
    t.recompute = Recompute::kNone;
    t.sp = true;
    t.dp_comm_overlap = DpCommOverlap::kOn;  // Meta's FSDP overlaps its reduce-scatter (paper §3.3.2)
    choose_pipeline_split(config.model.layers, framework_profile(t.framework), config.layout);
    run.measured_tokens_per_s_per_gpu =
        csv_number(csv_field(row, "measured_tflops_per_gpu")) * 1e12 / model_flops_per_token(config.model, t.seq);
  } else {
    return std::nullopt;
  }
  char label[160];
  std::snprintf(label, sizeof label, "%s %lld GPUs tp%lld pp%lld cp%lld mb%lld z%lld %s", short_model_name(csv_field(row, "model"), 20).c_str(),
                (long long)config.cluster.gpus, (long long)config.layout.tp, (long long)config.layout.pp,
                (long long)config.layout.cp, (long long)config.training.micro_batch, (long long)config.layout.zero,
                to_string(config.training.recompute));
  run.label = label;
  return run;
}

const std::vector<ThroughputRun>& throughput_runs() {
  static const std::vector<ThroughputRun> runs = [] {
    std::vector<ThroughputRun> out;
    for (const CsvRow& row : parse_csv(kLayoutsMeasuredCsv))
      if (std::optional<ThroughputRun> run = throughput_run_from_row(row)) out.push_back(std::move(*run));
    // meshfit's own one-GPU steps (tests/gpu on an H100): the only FSDP2 and fine-tuning rows.
    for (ThroughputRun& run : gpu_throughput_runs()) out.push_back(std::move(run));
    return out;
  }();
  return runs;
}

namespace {
bool g_computing_bands = false;  // predictions made while the bands are computed carry no band

// An error band's key: the framework, and the GPU family when one is given ("megatron ampere").
std::string band_key(Framework framework, const std::string& family = "") {
  return std::string(to_string(framework)) + (family.empty() ? "" : " " + family);
}
std::string band_key(const ThroughputRun& run, bool family) {
  return band_key(run.config.training.framework, family ? run.config.gpu.family : "");
}
}  // namespace

ThroughputValidation validate_throughput(const std::vector<ThroughputRun>& runs) {
  ThroughputValidation v;
  std::map<std::string, std::vector<double>> by_source, by_band;
  std::vector<double> all;
  const bool outer = !g_computing_bands;
  g_computing_bands = true;
  for (const ThroughputRun& run : runs) {
    ThroughputRow row{run, 0, 0};
    if (has_errors(validate(run.config))) continue;  // every compiled-in run is valid (test_throughput_validation.cpp)
    row.predicted_tokens_per_s_per_gpu = predicted_tokens_per_s(run);
    row.signed_error = row.predicted_tokens_per_s_per_gpu / run.measured_tokens_per_s_per_gpu - 1.0;
    by_source[run.source].push_back(row.signed_error);
    if (run.framework_band) by_band[band_key(run, true)].push_back(row.signed_error);
    all.push_back(std::fabs(row.signed_error));
    v.rows.push_back(std::move(row));
  }
  if (outer) g_computing_bands = false;
  v.sources = summarize(by_source);
  v.bands = summarize(by_band);
  v.median_abs_error = median_of(all);
  return v;
}

double predicted_tokens_per_s(const ThroughputRun& run) {
  const StepReport step = predict_step(run.config, plan_memory(run.config));
  if (run.harness_extra_step_s <= 0 || step.tokens_per_s_per_gpu <= 0) return step.tokens_per_s_per_gpu;
  const double tokens = step.tokens_per_s_per_gpu * step.step_time_s;  // per GPU per step
  return tokens / (step.step_time_s + run.harness_extra_step_s);
}

const ThroughputValidation& throughput_validation() {
  static const ThroughputValidation validation = validate_throughput(throughput_runs());
  return validation;
}

namespace {

// The error bands of the validation rows grouped by `key`: median |error|, runs, the GPU counts and
// the sources behind each. Initialised once in a static (guaranteed elision), so the basis strings
// the bands point at stay where they are.
struct BandTable {
  std::map<std::string, std::string> bases;
  std::map<std::string, ErrorBand> bands;
};
BandTable band_table(std::string (*key)(const ThroughputRow&)) {
  BandTable table;
  std::map<std::string, std::vector<double>> errors;
  for (const ThroughputRow& row : throughput_validation().rows) {
    if (!row.run.framework_band) continue;
    const std::string k = key(row);
    errors[k].push_back(std::fabs(row.signed_error));
    std::string& basis = table.bases[k];
    if (basis.find(row.run.source) == std::string::npos) basis += (basis.empty() ? "" : "; ") + row.run.source;
    const int64_t gpus = row.run.config.cluster.gpus;
    const auto [entry, fresh] = table.bands.try_emplace(k);
    ErrorBand& band = entry->second;
    band.min_gpus = fresh ? gpus : std::min(band.min_gpus, gpus);
    band.max_gpus = std::max(band.max_gpus, gpus);
    band.finetune_runs += is_finetune(row.run.config.training) ? 1 : 0;
  }
  for (auto& [k, band] : table.bands) {
    band.runs = int(errors[k].size());
    band.median_abs_error = median_of(errors[k]);
    band.basis = table.bases[k].c_str();
  }
  return table;
}

ErrorBand find_band(const BandTable& table, const std::string& key) {
  const auto found = table.bands.find(key);
  return found == table.bands.end() ? ErrorBand{} : found->second;
}

}  // namespace

// Declared in perf/perf_model.h: the band is the validation error of the runs above for the
// prediction's framework and GPU family, computed once from the compiled-in data (predictions made
// while computing it carry none). Not thread-safe on first use; meshfit's front ends are single-threaded.
ErrorBand throughput_error_band(Framework framework, const std::string& gpu_family) {
  if (g_computing_bands) return {};
  static const BandTable table = band_table([](const ThroughputRow& row) { return band_key(row.run, true); });
  return find_band(table, band_key(framework, gpu_family));
}

ErrorBand prediction_error_band(Framework framework, const std::string& gpu_family, bool finetune) {
  const ErrorBand exact = throughput_error_band(framework, gpu_family);
  if (finetune && exact.runs > 0 && exact.finetune_runs == 0) {
    ErrorBand none;
    none.finetune_unvalidated = true;
    return none;
  }
  if (exact.runs == 0 || exact.runs >= kMinBandRuns) return exact;
  // The framework's runs on every GPU family, built once (the layout search asks for a band with
  // every candidate it predicts).
  static const BandTable table =
      band_table([](const ThroughputRow& row) { return band_key(row.run, false); });
  ErrorBand wide = find_band(table, band_key(framework));
  if (wide.runs <= exact.runs) return exact;
  wide.exact_runs = exact.runs;
  return wide;
}

}  // namespace meshfit
