// test_finetune.cpp — fine-tuning memory (core/finetune.*): golden counts (PEFT's printed trainable
// parameters, bitsandbytes NF4 bytes), invariants (a frozen base never costs more than training it,
// offload moves bytes to the host), and every row of tests/data/finetune_measured.csv predicted
// against its measurement on the metric the source reports, with the median.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "csv.h"
#include "memory/finetune.h"
#include "memory/memory_model.h"
#include "search/method_select.h"
#include "io/serialize.h"
#include "units.h"
#include "io/url_state.h"

using namespace meshfit;
using meshfit_test::data_path;
using meshfit_test::read_csv;
using meshfit_test::to_double;
using meshfit_test::to_int;
using nlohmann::json;

namespace {

Config config_of(const json& object) {
  const ParsedConfig parsed = parse_config(object);
  INFO(object.dump());
  REQUIRE_FALSE(has_errors(parsed.issues));
  return parsed.config;
}

json llama32_3b_lora() {
  return {{"model", "llama3.2-3b"}, {"gpu", "l40s"}, {"gpus", 1}, {"seq", 768}, {"micro_batch", 4},
          {"finetune", "lora"}, {"lora_rank", 32}, {"lora_targets", "q,v"}, {"precision", "pure_bf16"}};
}

}  // namespace

TEST_CASE("NF4 with double quantisation costs 0.516 bytes per parameter (bitsandbytes quantize_4bit)") {
  // 0.5 (two codes a byte) + 1/64 (8-bit absmax per 64) + 4/(64*256) (fp32 absmax per 256 absmax).
  CHECK(kNf4BytesPerParam == doctest::Approx(0.515869).epsilon(1e-6));
  CHECK(kNf4NoDoubleQuantBytesPerParam == doctest::Approx(0.5625));
}

TEST_CASE("LoRA trainable parameters match PEFT's printed count (MetaMathQA Llama-3.2-3B q,v r32: 9,175,040)") {
  const Config config = config_of(llama32_3b_lora());
  const MemoryReport report = estimate_memory(config);
  REQUIRE(report.valid());
  CHECK(report.worst().intermediates.trainable_parameters == doctest::Approx(9175040.0));
}

TEST_CASE("target presets: all-linear is every projection, attention the four attention ones") {
  CHECK(parse_lora_targets("all-linear") == kLoraAllLinear);
  CHECK(parse_lora_targets("attention") == kLoraAttention);
  CHECK(parse_lora_targets("q_proj,v_proj") == (kLoraQ | kLoraV));
  CHECK(parse_lora_targets("q,k,v,o,gate,up,down") == kLoraAllLinear);
  CHECK(parse_lora_targets("q,x") == 0);
}

TEST_CASE("a frozen base never needs more memory than training it, and QLoRA's weights are smaller than LoRA's") {
  for (const char* model : {"llama3.2-1b", "llama3.1-8b", "qwen2.5-7b", "mistral-7b"}) {
    CAPTURE(model);
    json base = {{"model", model}, {"gpu", "a100-80gb"}, {"gpus", 1}, {"seq", 2048}, {"micro_batch", 1}};
    json full_ft = base;
    full_ft["finetune"] = "full";
    json lora = base;
    lora["finetune"] = "lora";
    json qlora = base;
    qlora["finetune"] = "qlora";
    qlora["recompute"] = "none";
    const MemoryReport full = estimate_memory(config_of(full_ft));
    const MemoryReport l = estimate_memory(config_of(lora));
    const MemoryReport q = estimate_memory(config_of(qlora));
    REQUIRE(full.valid());
    REQUIRE(l.valid());
    REQUIRE(q.valid());
    CHECK(l.worst().device_bytes < full.worst().device_bytes);
    CHECK(q.worst().bytes(Component::kWeights) < l.worst().bytes(Component::kWeights));
    // All-linear LoRA under autocast keeps every input full training keeps, plus lora_A's r-wide
    // outputs (7 x 4 B x r per token): under 1% more.
    CHECK(l.layer_activations.stored <= 1.01 * full.layer_activations.stored);
  }
}

TEST_CASE("offload moves optimizer states (and parameters) to the host") {
  json base = {{"model", "llama3.1-8b"}, {"gpu", "a100-80gb"}, {"gpus", 8}, {"seq", 4096}, {"finetune", "full"},
               {"framework", "deepspeed"}, {"zero", 3}, {"recompute", "full"}};
  const MemoryReport none = estimate_memory(config_of(base));
  json optimizer = base;
  optimizer["offload"] = "optimizer";
  const MemoryReport opt = estimate_memory(config_of(optimizer));
  json params = base;
  params["offload"] = "params";
  const MemoryReport par = estimate_memory(config_of(params));
  REQUIRE(none.valid());
  CHECK(none.worst().host_bytes == 0);
  CHECK(opt.worst().bytes(Component::kOptimizerStates) == 0);
  CHECK(opt.worst().host_bytes > 0);
  CHECK(opt.worst().device_bytes < none.worst().device_bytes);
  CHECK(par.worst().host_bytes > opt.worst().host_bytes);
  CHECK(par.worst().bytes(Component::kWeights) == 0);
}

TEST_CASE("paged optimizer states are outside PyTorch's counters: in device bytes only") {
  json base = llama32_3b_lora();
  base["optimizer"] = "paged_adamw";
  const MemoryReport paged = estimate_memory(config_of(base));
  base["optimizer"] = "adamw";
  const MemoryReport plain = estimate_memory(config_of(base));
  REQUIRE(paged.valid());
  CHECK(paged.worst().bytes(Component::kPagedOptimizer) > 0);
  CHECK(paged.worst().peak_reserved_bytes < plain.worst().peak_reserved_bytes);
  CHECK(paged.worst().device_bytes == doctest::Approx(plain.worst().device_bytes).epsilon(0.01));
}

TEST_CASE("optimizer in backward keeps one gradient at a time") {
  json base = {{"model", "llama3.2-1b"}, {"gpu", "a100-80gb"}, {"gpus", 1}, {"seq", 2048}, {"finetune", "full"},
               {"precision", "pure_bf16"}, {"global_batch", 4}, {"micro_batch", 1}};
  const MemoryReport plain = estimate_memory(config_of(base));
  base["optimizer_in_backward"] = true;
  const MemoryReport in_bwd = estimate_memory(config_of(base));
  REQUIRE(plain.valid());
  // The largest tensor is the (tied) embedding, 128256 x 2048, a fifth of the 1.24 B parameters.
  CHECK(in_bwd.worst().bytes(Component::kGradients) < 0.25 * plain.worst().bytes(Component::kGradients));
}

TEST_CASE("the output section and the body add up to peak allocated") {
  const MemoryReport report = estimate_memory(config_of(llama32_3b_lora()));
  const RankMemory& rank = report.worst();
  CHECK(rank.intermediates.output_section_bytes > 0);
  CHECK(rank.intermediates.body_section_bytes + rank.intermediates.output_section_bytes ==
        doctest::Approx(rank.peak_allocated_bytes));
}

TEST_CASE("a fine-tuning state round-trips with the fine-tuning defaults left out") {
  for (const json& object :
       {json{{"model", "llama3.1-8b"}, {"gpu", "a100-80gb"}, {"gpus", 1}, {"finetune", "qlora"}, {"lora_rank", 16}},
        json{{"model", "llama3.1-70b"}, {"gpus", 8}, {"finetune", "lora"}, {"framework", "deepspeed"}, {"zero", 3}},
        json{{"model", "llama3.1-70b"}, {"gpus", 8}, {"finetune", "full"}, {"framework", "fsdp"}}}) {
    CAPTURE(object.dump());
    const Config config = config_of(object);
    const std::string state = encode_state(config);
    CAPTURE(state);
    const ParsedConfig decoded = decode_state(state);
    REQUIRE_FALSE(has_errors(decoded.issues));
    CHECK(config_to_json(decoded.config) == config_to_json(config));
  }
}

// [SECTION] Measured runs

namespace {

struct FinetuneRow {
  int index = 0;
  std::string label, metric, why_not;
  bool expressible = true;
  bool oom = false;
  double measured_bytes = 0;
  json object;
};

FinetuneRow row_from_csv(const meshfit_test::CsvRow& row, int index) {
  FinetuneRow r;
  r.index = index;
  const auto f = [&row](const char* column) -> const std::string& { return row.at(column); };
  r.label = f("model").substr(f("model").find('/') + 1).substr(0, 22) + " " + f("method") +
            (f("lora_rank").empty() ? "" : " r" + f("lora_rank")) + " s" + f("seq_len") + " b" + f("micro_batch") + " x" +
            f("num_gpus") + (f("zero_stage") == "3" ? " " + f("framework") : "") + (f("offload") != "none" ? " +off" : "");
  r.expressible = f("expressible") == "yes";
  r.why_not = f("why_not");
  r.oom = f("oom") == "yes";
  r.metric = f("metric_key");
  const double number = to_double(f("measured_peak_gb"));
  r.measured_bytes = f("unit") == "GB" ? gb_to_bytes(number) : gib_to_bytes(number);
  if (!r.expressible) return r;
  const int64_t gpus = std::max<int64_t>(1, to_int(f("num_gpus")));
  const int64_t micro_batch = std::max<int64_t>(1, to_int(f("micro_batch")));
  const int64_t seq = f("seq_len").empty() ? (f("method") == "full" ? 64 : 512) : to_int(f("seq_len"));
  json& o = r.object;
  o = {{"model", "custom"},
       {"hidden", to_int(f("hidden"))},
       {"layers", to_int(f("layers"))},
       {"heads", to_int(f("heads"))},
       {"kv_heads", to_int(f("kv_heads"))},
       {"ffn", to_int(f("ffn"))},
       {"vocab", to_int(f("vocab"))},
       {"tied_embeddings", f("tied_embeddings") == "yes"},
       {"norm", f("norm")},
       {"mlp", f("mlp")},
       {"linear_bias", f("linear_bias") == "yes"},
       {"gpu", "custom"},
       // HBM sizes printed as "80GB" are GiB-sized parts; a missing GPU is taken as 80.
       {"gpu_memory_gib", f("gpu_mem_gb").empty() ? 80.0 : to_double(f("gpu_mem_gb"))},
       {"gpus", gpus},
       {"gpus_per_node", 8},
       {"seq", seq},
       {"micro_batch", micro_batch},
       {"global_batch", micro_batch * gpus * std::max<int64_t>(1, to_int(f("grad_accum")))},
       {"finetune", f("method")},
       {"framework", f("framework")},
       {"zero", to_int(f("zero_stage"))},
       {"recompute", f("recompute")},
       {"loss", f("loss")},
       {"precision", f("precision_key")},
       {"optimizer", f("optimizer_key")},
       {"offload", f("offload")}};
  if (f("method") != "full") {
    o["lora_rank"] = to_int(f("lora_rank"));
    o["lora_targets"] = f("targets_key");
    o["adapter_dtype"] = f("adapter_dtype");
    o["kbit_upcast"] = f("kbit_upcast") == "yes";
    o["base_dtype"] = f("base_dtype");
  }
  return r;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

TEST_CASE("finetune_measured: predicted vs measured for every row, the median, and no OOM run called fits") {
  const std::vector<meshfit_test::CsvRow> rows = read_csv(data_path("finetune_measured.csv"));
  REQUIRE(rows.size() == 49);
  std::printf("\nfinetune_measured.csv: predicted vs measured on the metric each source reports (GiB)\n");
  std::printf("%-3s %-52s %-12s %8s %9s %8s %5s %s\n", "row", "run", "metric", "measured", "predicted", "error", "label",
              "verdict");
  std::vector<double> abs_errors, signed_errors;
  int false_fits = 0, label_rows = 0, label_disagreements = 0;
  int index = 0;
  for (const meshfit_test::CsvRow& csv_row : rows) {
    const FinetuneRow r = row_from_csv(csv_row, ++index);
    CAPTURE(r.index);
    CAPTURE(r.label);
    if (!r.expressible) {
      std::printf("%-3d %-52s not expressible: %s\n", r.index, r.label.c_str(), r.why_not.c_str());
      continue;
    }
    const MemoryReport report = estimate_memory(config_of(r.object));
    REQUIRE(report.valid());
    const RankMemory& worst = report.worst();
    const double predicted = r.metric == "max_reserved" ? worst.peak_reserved_bytes : worst.device_bytes;
    const bool predicted_oom = report.verdict == Verdict::kOutOfMemory;
    ++label_rows;
    if (r.oom != predicted_oom) ++label_disagreements;
    if (r.oom && !predicted_oom) ++false_fits;
    // The hard promise: a run that ran out of memory is never "fits" (nor "tight").
    if (r.oom) CHECK(predicted_oom);
    char measured_text[16] = "-", error_text[16] = "";
    if (r.measured_bytes > 0 && r.metric != "fit_label") {
      const double error = (predicted - r.measured_bytes) / r.measured_bytes;
      abs_errors.push_back(std::fabs(error));
      signed_errors.push_back(error);
      std::snprintf(measured_text, sizeof measured_text, "%.2f", bytes_to_gib(r.measured_bytes));
      std::snprintf(error_text, sizeof error_text, "%+.1f%%", 100.0 * error);
    }
    std::printf("%-3d %-52s %-12s %8s %9.2f %8s %5s %s\n", r.index, r.label.c_str(), r.metric.c_str(), measured_text,
                bytes_to_gib(predicted), error_text, r.oom ? "OOM" : "ran", to_string(report.verdict));
  }
  std::printf("median |error| %.1f%% (signed %+.1f%%) over %zu measured rows; %d of %d fit/OOM labels disagree; "
              "%d OOM runs predicted to fit\n",
              100.0 * median(abs_errors), 100.0 * median(signed_errors), abs_errors.size(), label_disagreements,
              label_rows, false_fits);
  CHECK(false_fits == 0);
  REQUIRE(abs_errors.size() >= 15);
  MESSAGE("median |error| " << 100.0 * median(abs_errors) << "%");
}

TEST_CASE("fine-tuning methods: Llama 3.1 70B on 8 A100 80GB at seq 4096, fastest that fits first") {
  const Config base = config_of({{"model", "llama3.1-70b"}, {"gpu", "a100-80gb"}, {"gpus", 8}, {"seq", 4096}, {"finetune", "lora"}});
  const MethodRanking ranking = rank_finetune_methods(base, MethodOptions{});
  REQUIRE_FALSE(ranking.ranked.empty());
  std::printf("\nLlama 3.1 70B, 8 x A100 80GB, seq 4096, micro-batch 1: methods that fit, fastest first\n");
  int rank = 0;
  for (const MethodCandidate& c : ranking.ranked) {
    std::printf("%-3d %-6s %-40s %-5s %7.1f GiB GPU %7.1f GiB host %8.3f s\n", ++rank, to_string(c.config.training.finetune),
                c.strategy.c_str(), to_string(c.config.training.recompute), bytes_to_gib(c.device_bytes),
                bytes_to_gib(c.host_bytes), c.step_time_s);
    CHECK(c.fits);
    CHECK(c.device_bytes <= base.gpu.memory_bytes);
  }
  for (const MethodCandidate& c : ranking.rejected)
    std::printf("    %-6s %-40s rejected: %s\n", to_string(c.config.training.finetune), c.strategy.c_str(), c.rejected.c_str());
  for (size_t i = 1; i < ranking.ranked.size(); ++i) CHECK(ranking.ranked[i - 1].step_time_s <= ranking.ranked[i].step_time_s);
  // Full fine-tuning of 70 B parameters needs 16-18 B/param of states: without offload 8 GPUs are too few.
  for (const MethodCandidate& c : ranking.ranked)
    if (c.config.training.finetune == FinetuneMethod::kFull) CHECK(c.config.training.offload != Offload::kNone);
  for (const MethodCandidate& c : ranking.rejected) CHECK_FALSE(c.rejected.empty());
}
