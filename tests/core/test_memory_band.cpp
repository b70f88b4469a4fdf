// test_memory_band.cpp — the error band beside every memory prediction (io/memory_band.h): which
// published configurations it rests on, how it widens, that a repeat or a run both CSVs hold counts
// once, tests/gpu's steps beside it as in-sample, and what the front ends get. Every expected count
// and median is recomputed here from the validation rows themselves.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "api.h"
#include "io/gpu_runs.h"
#include "io/measured_runs.h"
#include "io/memory_band.h"
#include "io/serialize.h"
#include "memory/finetune.h"

using namespace meshfit;
using nlohmann::json;

namespace {

Config config_of(const json& object) {
  const ParsedConfig parsed = parse_config(object);
  REQUIRE_FALSE(has_errors(parsed.issues));
  return parsed.config;
}

// The |errors| of the rows with a measured peak that `keep` selects, one per configuration: rows with
// the same predicted peak and GPU count are one configuration measured again, at their mean.
template <typename Keep>
std::vector<double> configuration_errors(const ValidationReport& report, Keep keep) {
  std::map<std::pair<double, int64_t>, std::vector<double>> by_configuration;
  for (const ValidationRow& row : report.rows)
    if (row.run.expressible && row.run.measured_bytes > 0 && keep(row.run))
      by_configuration[{row.predicted_bytes, row.run.config.cluster.gpus}].push_back(std::fabs(row.signed_error));
  std::vector<double> out;
  for (const auto& [key, errors] : by_configuration) {
    double sum = 0;
    for (double e : errors) sum += e;
    out.push_back(sum / double(errors.size()));
  }
  return out;
}

// A share as the band prints it ("±14.4%").
std::string percent_of(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "\xC2\xB1%.1f%%", std::round(1000.0 * share) / 10.0);
  return text;
}

json torchtune_lora() {
  return {{"model", "llama2-7b"}, {"gpus", 1}, {"seq", 512}, {"global_batch", 2}, {"micro_batch", 2}, {"finetune", "lora"}, {"stack", "torchtune"}};
}

}  // namespace

TEST_CASE("Memory band: a LoRA on torchtune rests on torchtune's published LoRA configurations, with their median") {
  const std::vector<double> expected = configuration_errors(validate_finetune_against_measurements(), [](const MeasuredRun& run) {
    return run.stack == "torchtune" && run.config.training.finetune == FinetuneMethod::kLora;
  });
  REQUIRE(expected.size() >= size_t(kMinMemoryBandRuns));  // finetune_measured.csv: torchtune's LoRA tutorials
  const MemoryBand band = memory_error_band(config_of(torchtune_lora()));
  CHECK(band.scope == "LoRA on torchtune");
  CHECK(band.own_scope == band.scope);
  CHECK_FALSE(band.widened);
  CHECK(band.runs == int(expected.size()));
  CHECK(band.median_abs_error == doctest::Approx(median_of(expected)));
  CHECK(band.own_steps.runs == 0);  // tests/gpu's LoRA steps ran HF PEFT
  CHECK(band.basis.find("pytorch/torchtune") != std::string::npos);
  CHECK(band.basis.find("huggingface/peft") == std::string::npos);
  CHECK(memory_band_text(band).rfind(memory_band_percent(band) + ", the median error on " + std::to_string(expected.size()) +
                                     " published configurations of LoRA on torchtune, each on 1 GPU", 0) == 0);
}

TEST_CASE("Memory band: one configuration measured again counts once, at its mean error") {
  // PEFT's MetaMathQA LoRA rank 32 on Llama-3.2-3B was measured at several commits: one configuration.
  const std::vector<double> expected = configuration_errors(validate_finetune_against_measurements(), [](const MeasuredRun& run) {
    return run.stack == "hf_peft" && run.config.training.finetune == FinetuneMethod::kLora;
  });
  int rows = 0;
  for (const MeasuredRun& run : finetune_measured_runs())
    rows += run.expressible && run.measured_bytes > 0 && run.stack == "hf_peft" && run.config.training.finetune == FinetuneMethod::kLora;
  REQUIRE(int(expected.size()) < rows);  // repeats exist
  const MemoryBand band = memory_error_band(config_of({{"model", "llama3.2-3b"}, {"gpus", 1}, {"seq", 768}, {"global_batch", 4},
                                                       {"micro_batch", 4}, {"finetune", "lora"}}));
  CHECK(band.scope == "LoRA on HF Trainer + PEFT");
  CHECK(band.runs == int(expected.size()));
  CHECK(band.median_abs_error == doctest::Approx(median_of(expected)));
  // Its tests/gpu steps (PEFT LoRA on one GPU) are beside it, said to be in-sample.
  CHECK(band.own_steps.runs > 0);
  CHECK(memory_band_text(band).find("tests/gpu steps (meshfit's own, in-sample)") != std::string::npos);
}

TEST_CASE("Memory band: Megatron pretraining, with too few configurations of its own, widens to pretraining on any framework and says so") {
  const ValidationReport pretraining = validate_against_measurements();
  const std::vector<double> own = configuration_errors(pretraining, [](const MeasuredRun& run) {
    return run.config.training.framework == Framework::kMegatron && !is_finetune(run.config.training);
  });
  REQUIRE(own.size() < size_t(kMinMemoryBandRuns));
  REQUIRE_FALSE(own.empty());
  const MemoryBand band = memory_error_band(config_of({{"model", "llama3-8b"}, {"gpus", 8}, {"seq", 8192}, {"global_batch", 128},
                                                       {"micro_batch", 1}, {"framework", "megatron"}}));
  CHECK(band.widened);
  CHECK(band.scope == "pretraining on any framework");
  CHECK(band.own_scope == "pretraining on Megatron-LM");
  CHECK(band.own_published.runs == int(own.size()));
  CHECK(band.own_published.median_abs_error == doctest::Approx(median_of(own)));
  CHECK_FALSE(band.own_worse);  // its one configuration missed by less than the wider median
  CHECK(band.median_abs_error == doctest::Approx(band.published.median_abs_error));
  CHECK(band.own_steps.runs == 0);  // tests/gpu ran no Megatron: no in-sample figure beside it
  const std::string text = memory_band_text(band);
  CHECK(text.find("published configurations of pretraining on any framework") != std::string::npos);
  CHECK(text.find("too few of pretraining on Megatron-LM for a band of its own (" + std::to_string(own.size()) + ": ") !=
        std::string::npos);
  CHECK(text.find("tests/gpu") == std::string::npos);
}

TEST_CASE("Memory band: where a setup's few configurations missed by more than the wider median, theirs stands") {
  // PEFT's DeepSpeed ZeRO-3 LoRA of Llama-2-70B on 8 GPUs: its one configuration, against LoRA's median.
  const std::vector<double> own = configuration_errors(validate_finetune_against_measurements(), [](const MeasuredRun& run) {
    return run.stack == "hf_peft_deepspeed" && run.config.training.finetune == FinetuneMethod::kLora;
  });
  REQUIRE(own.size() == 1);
  const MemoryBand band = memory_error_band(config_of({{"model", "llama2-70b"}, {"gpus", 8}, {"seq", 2048}, {"global_batch", 64},
                                                       {"micro_batch", 8}, {"finetune", "lora"}, {"stack", "hf_peft_deepspeed"}}));
  REQUIRE(band.widened);
  CHECK(band.scope == "LoRA on any framework");
  REQUIRE(own.front() > band.published.median_abs_error);
  CHECK(band.own_worse);
  CHECK(band.runs == 1);
  CHECK(band.median_abs_error == doctest::Approx(own.front()));
  CHECK(band.basis.find("deepspeed.md") != std::string::npos);
  const std::string text = memory_band_text(band);
  CHECK(text.find("the error on the 1 published configuration of LoRA on HF Trainer + PEFT + DeepSpeed, each on 8 GPUs: too few for a "
                  "band, and wider than LoRA on any framework's " + percent_of(band.published.median_abs_error)) != std::string::npos);
}

TEST_CASE("Memory band: FSDP2 pretraining has no published peak: the wider band leads, its one-GPU steps beside it as in-sample") {
  const MemoryBand band = memory_error_band(config_of({{"model", "llama3-8b"}, {"gpus", 256}, {"seq", 8192}, {"global_batch", 256},
                                                       {"micro_batch", 1}, {"framework", "fsdp"}, {"tp", 8}}));
  std::map<double, int> steps;  // tests/gpu's FSDP2 pretraining steps, one per configuration
  for (const GpuRow& row : gpu_validation().rows)
    if (row.run.expressible && !row.run.oom && !is_finetune(row.run.config.training) && row.run.config.layout.zero == 3 &&
        row.run.measured[size_t(GpuMetric::kPeakReserved)] > 0)
      ++steps[row.predicted[size_t(GpuMetric::kPeakReserved)]];
  CHECK(band.own_scope == "pretraining on PyTorch FSDP2");
  CHECK(band.own_published.runs == 0);
  CHECK(band.widened);
  CHECK(band.scope == "pretraining on any framework");
  CHECK(band.own_steps.runs == int(steps.size()));
  const std::string text = memory_band_text(band);
  CHECK(text.find("none published of pretraining on PyTorch FSDP2") != std::string::npos);
  CHECK(text.find("; its " + std::to_string(steps.size()) + " tests/gpu steps (meshfit's own, in-sample): ") != std::string::npos);
  CHECK(text.find("none measured at 256 GPUs") != std::string::npos);
  // Unsharded PyTorch (the FSDP profile at ZeRO 0: DDP, or one GPU) is its own setup.
  const MemoryBand ddp = memory_error_band(config_of({{"model", "llama3.2-1b"}, {"gpus", 1}, {"seq", 2048}, {"global_batch", 1},
                                                      {"framework", "fsdp"}, {"zero", 0}}));
  CHECK(ddp.own_scope == "pretraining on PyTorch unsharded (DDP or one GPU)");
  CHECK(ddp.own_steps.runs > 0);
}

TEST_CASE("Memory band: no measured run is in both CSVs, so none counts twice") {
  // PEFT's full fine-tunes of Llama 3.2 3B were rows of memory_measured.csv too (as unsharded runs):
  // they counted in the pretraining table's median as well (an as-a-user review read 11.3% over 9 rows
  // there beside the pretraining band's 14.4% over 7). A run lives in one CSV.
  const std::vector<MeasuredRun>& finetunes = finetune_measured_runs();
  for (const MeasuredRun& run : measured_runs()) {
    if (!(run.measured_bytes > 0)) continue;
    CAPTURE(run.source);
    for (const MeasuredRun& finetune : finetunes)
      CHECK_FALSE((finetune.source == run.source && std::fabs(finetune.measured_bytes - run.measured_bytes) < 1.0));
  }
  const MemoryBand full = memory_error_band(config_of({{"model", "llama3.2-3b"}, {"gpus", 1}, {"seq", 768}, {"global_batch", 4},
                                                       {"micro_batch", 4}, {"finetune", "full"}}));
  CHECK(full.own_scope == "full fine-tuning on HF Trainer + PEFT");
  CHECK(full.own_published.runs == 1);  // the two rows are one configuration at two commits
  for (const MemoryBand& band : memory_bands())  // and not an unsharded pretraining run
    if (band.scope == "pretraining on PyTorch unsharded (DDP or one GPU)") CHECK(band.published.runs == 0);
  // The pretraining table's median is the pretraining band's, over the same configurations.
  const ValidationReport pretraining = validate_against_measurements();
  const MemoryBand any = memory_error_band(config_of({{"model", "llama3-8b"}, {"gpus", 8}, {"framework", "fsdp"}}));
  CHECK(any.scope == "pretraining on any framework");
  CHECK(pretraining.measured_rows == any.runs);
  CHECK(pretraining.median_abs_error == doctest::Approx(any.median_abs_error));
}

TEST_CASE("Memory band: capacity_within compares the capacity with the band as printed") {
  const Config config = config_of({{"model", "llama3-8b"}, {"gpus", 8}, {"seq", 8192}, {"global_batch", 128}, {"micro_batch", 1},
                                   {"framework", "megatron"}});
  const Estimate at = estimate(config);
  REQUIRE(at.valid());
  const MemoryBand& band = at.memory_band;
  REQUIRE(band.runs > 0);
  const double printed = std::round(1000.0 * band.median_abs_error) / 1000.0;  // the share "±14.4%" stands for
  const double device = at.worst().device_bytes;
  // Capacities at which the device memory reads 100 + printed% and 100 + printed% + 0.1 of them (and below).
  CHECK(memory_error_band(config, device, device / (1.0 + printed)).capacity_within);
  CHECK(memory_error_band(config, device, device / (1.0 - printed)).capacity_within);
  CHECK_FALSE(memory_error_band(config, device, device / (1.0 + printed + 0.001)).capacity_within);
  CHECK_FALSE(memory_error_band(config, device, device / (1.0 - printed - 0.001)).capacity_within);
  CHECK(band.capacity_within == memory_error_band(config, device, config.gpu.memory_bytes).capacity_within);
}

TEST_CASE("Memory band: the estimate's JSON carries it, the text the CLI and page print") {
  const json out = run_estimate(torchtune_lora());
  REQUIRE(out["ok"].get<bool>());
  const json& band = out["memory_error_band"];
  CHECK(band["scope"] == "LoRA on torchtune");
  CHECK(band["runs"].get<int>() == band["published"]["runs"].get<int>());
  CHECK(band["text"].get<std::string>().rfind("\xC2\xB1", 0) == 0);
  const Estimate typed = estimate(config_of(torchtune_lora()));
  CHECK(band["text"] == memory_band_text(typed.memory_band));
  CHECK(band["capacity_within"].get<bool>() == typed.memory_band.capacity_within);
  // An invalid config has no band (nothing predicted).
  const json invalid = run_estimate({{"model", "llama2-7b"}, {"gpus", 0}});
  CHECK_FALSE(invalid.contains("memory_error_band"));
}

TEST_CASE("Memory band: the validation's table lists every method and setup once, each configuration in one row") {
  const std::vector<MemoryBand> bands = memory_bands();
  REQUIRE_FALSE(bands.empty());
  int published = 0;
  std::vector<std::string> scopes;
  for (const MemoryBand& band : bands) {
    CAPTURE(band.scope);
    CHECK(std::find(scopes.begin(), scopes.end(), band.scope) == scopes.end());
    scopes.push_back(band.scope);
    CHECK(band.published.runs + band.own_steps.runs > 0);
    CHECK_FALSE(band.widened);
    published += band.published.runs;
  }
  // The rows partition the configurations the widest band rests on (a stack with no profile, as
  // QLoRA everywhere: any setup).
  const MemoryBand every = memory_error_band(config_of({{"model", "llama3.2-3b"}, {"gpus", 1}, {"seq", 1024}, {"global_batch", 4},
                                                        {"micro_batch", 4}, {"finetune", "full"}}));
  REQUIRE(every.scope == "any setup");
  CHECK(published == every.published.runs);
  CHECK(bands.front().scope.rfind("pretraining", 0) == 0);
  const MemoryBand torchtune = memory_error_band(config_of(torchtune_lora()));
  const auto row = std::find_if(bands.begin(), bands.end(), [&](const MemoryBand& b) { return b.scope == torchtune.scope; });
  REQUIRE(row != bands.end());
  CHECK(row->median_abs_error == doctest::Approx(torchtune.median_abs_error));
  CHECK(row->runs == torchtune.runs);
}

TEST_CASE("Memory band: a search's layouts share one band, its text in the result") {
  const json object = {{"model", "llama3.1-70b"}, {"gpus", 64}, {"seq", 8192}, {"global_batch", 512}};
  const json out = run_search(object, json::object());
  REQUIRE(out["ok"].get<bool>());
  REQUIRE_FALSE(out["layouts"].empty());
  CHECK(out["memory_error_band"]["text"] == memory_band_text(memory_error_band(config_of(object))));
}

TEST_CASE("Memory band: each method the Methods ranking lists carries its own band") {
  const json base = {{"model", "llama3.1-8b"}, {"gpu", "h100-sxm"}, {"gpus", 1}, {"seq", 2048}, {"global_batch", 8}, {"micro_batch", 1}};
  json lora = base;
  lora["finetune"] = "lora";
  const json out = run_methods(lora);
  REQUIRE(out["ok"].get<bool>());
  std::map<std::string, std::vector<double>> by_method;
  for (const json& row : out["ranked"]) {
    const json& band = row["memory_error_band"];
    CHECK(band["runs"].get<int>() > 0);
    CHECK(band["text"].get<std::string>().rfind("\xC2\xB1", 0) == 0);
    by_method[row["finetune"].get<std::string>()].push_back(band["median_abs_error"].get<double>());
  }
  REQUIRE(by_method.count("lora"));
  REQUIRE(by_method.count("qlora"));
  // QLoRA's band is QLoRA's (no published QLoRA configuration of HF PEFT on one GPU: QLoRA on any
  // framework), wider than a one-GPU LoRA's.
  json qlora = base;
  qlora["finetune"] = "qlora";
  const double qlora_band = memory_error_band(config_of(qlora)).median_abs_error;
  CHECK(std::find_if(by_method["qlora"].begin(), by_method["qlora"].end(),
                     [&](double m) { return std::fabs(m - qlora_band) < 1e-12; }) != by_method["qlora"].end());
  CHECK(qlora_band > *std::min_element(by_method["lora"].begin(), by_method["lora"].end()));
}
