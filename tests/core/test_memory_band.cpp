// test_memory_band.cpp — the error band beside every memory prediction (io/memory_band.h): which
// runs it rests on, how it widens, that a run two CSVs hold counts once, and what the front ends get.
// Every expected count and median is recomputed here from the validation rows themselves.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "api.h"
#include "io/gpu_runs.h"
#include "io/measured_runs.h"
#include "io/memory_band.h"
#include "memory/finetune.h"
#include "io/serialize.h"

using namespace meshfit;
using nlohmann::json;

namespace {

Config config_of(const json& object) {
  const ParsedConfig parsed = parse_config(object);
  REQUIRE_FALSE(has_errors(parsed.issues));
  return parsed.config;
}

// The |errors| of the published rows with a measured peak that `keep` selects.
template <typename Keep>
std::vector<double> published_errors(const ValidationReport& report, Keep keep) {
  std::vector<double> out;
  for (const ValidationRow& row : report.rows)
    if (row.run.expressible && row.run.measured_bytes > 0 && keep(row.run)) out.push_back(std::fabs(row.signed_error));
  return out;
}

}  // namespace

TEST_CASE("Memory band: a LoRA on torchtune rests on torchtune's published LoRA runs, with their median") {
  const Config config = config_of({{"model", "llama2-7b"}, {"gpus", 1}, {"seq", 512}, {"global_batch", 2}, {"micro_batch", 2},
                                   {"finetune", "lora"}, {"stack", "torchtune"}});
  const std::vector<double> expected = published_errors(validate_finetune_against_measurements(), [](const MeasuredRun& run) {
    return run.stack == "torchtune" && run.config.training.finetune == FinetuneMethod::kLora;
  });
  REQUIRE(expected.size() >= size_t(kMinMemoryBandRuns));  // finetune_measured.csv: torchtune's LoRA tutorials
  const MemoryBand band = memory_error_band(config);
  CHECK(band.scope == "LoRA on torchtune");
  CHECK_FALSE(band.widened);
  CHECK_FALSE(band.in_sample);
  CHECK(band.runs == int(expected.size()));
  CHECK(band.published.runs == int(expected.size()));
  CHECK(band.own.runs == 0);  // tests/gpu's LoRA steps ran HF PEFT
  CHECK(band.median_abs_error == doctest::Approx(median_of(expected)));
  CHECK(band.basis.find("pytorch/torchtune") != std::string::npos);
  CHECK(band.basis.find("huggingface/peft") == std::string::npos);
}

TEST_CASE("Memory band: Megatron pretraining, with too few runs of its own, widens to pretraining on any framework and says so") {
  const Config config = config_of({{"model", "llama3-8b"}, {"gpus", 8}, {"seq", 8192}, {"global_batch", 128}, {"micro_batch", 1},
                                   {"framework", "megatron"}});
  const ValidationReport pretraining = validate_against_measurements();
  const std::vector<double> own = published_errors(pretraining, [](const MeasuredRun& run) {
    return run.config.training.framework == Framework::kMegatron && !is_finetune(run.config.training);
  });
  REQUIRE(own.size() < size_t(kMinMemoryBandRuns));
  const MemoryBand band = memory_error_band(config);
  CHECK(band.widened);
  CHECK(band.scope == "pretraining on any framework");
  CHECK(band.own_scope == "pretraining on Megatron-LM");
  CHECK(band.own_scope_runs == int(own.size()));
  if (!own.empty()) CHECK(band.own_scope_median_abs_error == doctest::Approx(median_of(own)));
  // Its headline is the published runs' (out of sample), tests/gpu's one-GPU steps said apart.
  CHECK_FALSE(band.in_sample);
  CHECK(band.own.runs > 0);
  const std::string text = memory_band_text(band);
  CHECK(text.find("widened from " + std::to_string(own.size())) != std::string::npos);
  CHECK(text.find("published runs of pretraining on any framework") != std::string::npos);
  CHECK(text.find("(in-sample)") != std::string::npos);
}

TEST_CASE("Memory band: FSDP2 pretraining rests on tests/gpu's steps, said to be in-sample and unmeasured at scale") {
  const Config config = config_of({{"model", "llama3-8b"}, {"gpus", 256}, {"seq", 8192}, {"global_batch", 256}, {"micro_batch", 1},
                                   {"framework", "fsdp"}, {"tp", 8}});
  const MemoryBand band = memory_error_band(config);
  int steps = 0;
  for (const GpuRow& row : gpu_validation().rows)
    steps += row.run.expressible && !row.run.oom && !is_finetune(row.run.config.training) &&
             row.run.measured[size_t(GpuMetric::kPeakReserved)] > 0;
  CHECK(band.scope == "pretraining on PyTorch FSDP2");
  CHECK(band.own.runs == steps);
  CHECK(band.in_sample == (band.published.runs < kMinMemoryBandRuns));
  REQUIRE(band.in_sample);
  CHECK(band.runs == steps);
  const std::string text = memory_band_text(band);
  CHECK(text.find("in-sample") != std::string::npos);
  CHECK(text.find("each on 1 GPU") != std::string::npos);
  CHECK(text.find("none measured at 256 GPUs") != std::string::npos);
}

TEST_CASE("Memory band: a run that both CSVs hold counts once, as the fine-tune it is") {
  // PEFT's full fine-tunes of Llama 3.2 3B are rows of memory_measured.csv (as FSDP ZeRO-0 runs) and of
  // finetune_measured.csv: the widest band counts every distinct measured peak once.
  const std::vector<MeasuredRun>& finetunes = finetune_measured_runs();
  int duplicates = 0;
  for (const MeasuredRun& run : measured_runs()) {
    if (!run.expressible || !(run.measured_bytes > 0)) continue;
    for (const MeasuredRun& finetune : finetunes)
      duplicates += finetune.expressible && finetune.source == run.source && std::fabs(finetune.measured_bytes - run.measured_bytes) < 1.0;
  }
  CHECK(duplicates == 2);
  const size_t published = published_errors(validate_against_measurements(), [](const MeasuredRun&) { return true; }).size() +
                           published_errors(validate_finetune_against_measurements(), [](const MeasuredRun&) { return true; }).size();
  // A full fine-tune's band is every run's: full fine-tunes number two on any stack, fewer than
  // kMinMemoryBandRuns.
  const MemoryBand band = memory_error_band(config_of({{"model", "llama3.2-3b"}, {"gpus", 1}, {"seq", 1024}, {"global_batch", 4},
                                                       {"micro_batch", 4}, {"finetune", "full"}}));
  REQUIRE(band.scope == "any setup");
  CHECK(band.published.runs == int(published) - duplicates);
  CHECK(band.own_scope == "full fine-tuning on HF Trainer + PEFT");
  CHECK(band.own_scope_runs == 2);
}

TEST_CASE("Memory band: capacity_within says whether the capacity lies within the band of the predicted device memory") {
  json object = {{"model", "llama3-8b"}, {"gpus", 8}, {"seq", 8192}, {"global_batch", 128}, {"micro_batch", 1}, {"framework", "megatron"}};
  const Config config = config_of(object);
  const Estimate at = estimate(config);
  REQUIRE(at.valid());
  const MemoryBand& band = at.memory_band;
  REQUIRE(band.runs > 0);
  const double device = at.worst().device_bytes;
  CHECK(band.capacity_within == (std::fabs(device / config.gpu.memory_bytes - 1.0) <= band.median_abs_error));
  // The same prediction against a capacity just inside and well outside the band.
  CHECK(memory_error_band(config, device, device * (1.0 + 0.5 * band.median_abs_error)).capacity_within);
  CHECK_FALSE(memory_error_band(config, device, device * (1.0 + 2.0 * band.median_abs_error)).capacity_within);
  CHECK_FALSE(memory_error_band(config, device, device * (1.0 - 2.0 * band.median_abs_error)).capacity_within);
}

TEST_CASE("Memory band: the estimate's JSON carries it, the text the CLI and page print") {
  const json out = run_estimate({{"model", "llama2-7b"}, {"gpus", 1}, {"seq", 512}, {"global_batch", 2}, {"micro_batch", 2},
                                 {"finetune", "lora"}, {"stack", "torchtune"}});
  REQUIRE(out["ok"].get<bool>());
  const json& band = out["memory_error_band"];
  CHECK(band["scope"] == "LoRA on torchtune");
  CHECK(band["runs"].get<int>() == band["published"]["runs"].get<int>());
  CHECK(band["text"].get<std::string>().rfind("\xC2\xB1", 0) == 0);
  const Estimate typed = estimate(config_of({{"model", "llama2-7b"}, {"gpus", 1}, {"seq", 512}, {"global_batch", 2},
                                              {"micro_batch", 2}, {"finetune", "lora"}, {"stack", "torchtune"}}));
  CHECK(band["text"] == memory_band_text(typed.memory_band));
  CHECK(band["capacity_within"].get<bool>() == typed.memory_band.capacity_within);
  // An invalid config has no band (nothing predicted).
  const json invalid = run_estimate({{"model", "llama2-7b"}, {"gpus", 0}});
  CHECK_FALSE(invalid.contains("memory_error_band"));
}

TEST_CASE("Memory band: the validation's table lists every method and setup once, each run in one group") {
  const std::vector<MemoryBand> bands = memory_bands();
  REQUIRE_FALSE(bands.empty());
  int published = 0, own = 0;
  std::vector<std::string> scopes;
  for (const MemoryBand& band : bands) {
    CAPTURE(band.scope);
    CHECK(std::find(scopes.begin(), scopes.end(), band.scope) == scopes.end());
    scopes.push_back(band.scope);
    CHECK(band.published.runs + band.own.runs > 0);
    CHECK_FALSE(band.widened);
    published += band.published.runs;
    own += band.own.runs;
  }
  // The groups partition the runs the widest band rests on.
  const MemoryBand every = memory_error_band(config_of({{"model", "llama3.2-3b"}, {"gpus", 1}, {"seq", 1024}, {"global_batch", 4},
                                                        {"micro_batch", 4}, {"finetune", "full"}}));
  REQUIRE(every.scope == "any setup");
  CHECK(published == every.published.runs);
  CHECK(own == every.own.runs);
  // Pretraining first, and an estimate's own group is one of them with the same figures.
  CHECK(bands.front().scope.rfind("pretraining", 0) == 0);
  const MemoryBand torchtune = memory_error_band(config_of({{"model", "llama2-7b"}, {"gpus", 1}, {"seq", 512}, {"global_batch", 2},
                                                            {"micro_batch", 2}, {"finetune", "lora"}, {"stack", "torchtune"}}));
  const auto row = std::find_if(bands.begin(), bands.end(), [&](const MemoryBand& b) { return b.scope == torchtune.scope; });
  REQUIRE(row != bands.end());
  CHECK(row->median_abs_error == doctest::Approx(torchtune.median_abs_error));
  CHECK(row->published.runs == torchtune.published.runs);
}

TEST_CASE("Memory band: a search's layouts share one band, its text in the result") {
  const json object = {{"model", "llama3.1-70b"}, {"gpus", 64}, {"seq", 8192}, {"global_batch", 512}};
  const json out = run_search(object, json::object());
  REQUIRE(out["ok"].get<bool>());
  REQUIRE_FALSE(out["layouts"].empty());
  CHECK(out["memory_error_band"]["text"] == memory_band_text(memory_error_band(config_of(object))));
}
