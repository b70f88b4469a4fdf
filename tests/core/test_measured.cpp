// test_measured.cpp — the estimator against measured runs: tests/data/memory_measured.csv (public
// logs and docs, each row citing its source), through the same validate_against_measurements()
// that `meshfit validate` prints. Prints predicted vs measured per row, the metric compared, the
// signed error and the median. Tolerances are argued beside each assertion.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "api.h"
#include "csv.h"
#include "io/measured_runs.h"
#include "io/throughput_runs.h"
#include "memory/overheads.h"
#include "units.h"

using namespace meshfit;

TEST_CASE("estimates against memory_measured.csv: OOM runs are never 'fits', measured peaks within tolerance") {
  const ValidationReport report = validate_against_measurements();
  std::printf("\nmemory_measured.csv: predicted vs measured (GiB) on the metric each source reports\n");
  std::printf("%-58s %-13s %8s %9s %8s %5s  %s\n", "row", "metric", "measured", "predicted", "error", "label",
              "verdict");
  for (const ValidationRow& row : report.rows) {
    const MeasuredRun& run = row.run;
    CAPTURE(run.label);
    if (!run.expressible) {
      std::printf("%-58s skipped: %s\n", run.label.c_str(), run.why_not.c_str());
      continue;
    }
    const bool measured = run.measured_bytes > 0;
    std::printf("%-58s %-13s %8s %9.2f %8s %5s  %s%s\n", run.label.c_str(), to_string(run.metric),
                measured ? std::to_string(bytes_to_gib(run.measured_bytes)).substr(0, 5).c_str() : "-",
                bytes_to_gib(row.predicted_bytes),
                measured ? (std::string(row.signed_error >= 0 ? "+" : "") +
                            std::to_string(100.0 * row.signed_error).substr(0, row.signed_error < 0 ? 5 : 4) + "%")
                               .c_str()
                         : "",
                run.oom ? "OOM" : "ran", to_string(row.verdict), run.steady_state ? "" : "  (first iteration)");
    // The hard promise: a run that went out of memory is never called "fits" or "tight", and a
    // run that ran is never called out of memory.
    CHECK(row.label_agrees);
  }
  std::printf("median |error| %.1f%%, median signed error %+.1f%% over %lld measured rows; "
              "%lld of %lld fit/OOM labels disagree, %lld false fits\n",
              100.0 * report.median_abs_error, 100.0 * report.median_signed_error, (long long)report.measured_rows,
              (long long)report.label_disagreements, (long long)report.label_rows, (long long)report.false_fits);
  CHECK(report.false_fits == 0);
  REQUIRE(report.measured_rows > 0);
  // Steady-state max_reserved readings (Leonardo open-sci-ref 1.7B): within 10%, the spread between
  // max_allocated and max_reserved in those logs (MEMORY_NOTES §13.7). The other measured rows were
  // read in the first iteration (ALCF) or name no metric (DeepSpeed #5305, Ulysses); they are printed
  // and enter the median, which is guarded against regressions only (22.0% before the
  // optimizer-step moment and DeepSpeed's step segments, 11.4% after with PEFT's two full fine-tunes
  // among the rows; 14.4% over the 7 pretraining rows once those moved to finetune_measured.csv alone).
  for (const ValidationRow& row : report.rows) {
    if (!row.run.expressible || row.run.measured_bytes <= 0) continue;
    if (row.run.metric != MeasuredMetric::kMaxReserved || !row.run.steady_state) continue;
    CAPTURE(row.run.label);
    CHECK(std::fabs(row.signed_error) <= 0.10);
  }
  CHECK(report.median_abs_error <= 0.15);
}

namespace {

// A file of the source tree, whole (empty, and a failed check, when it cannot be read).
std::string source_file(const std::string& path) {
  std::ifstream file(std::string(MESHFIT_SOURCE_DIR) + "/" + path);
  CHECK(file.good());
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

// docs.html's table of the memory model's constants names each of kMemoryConstants once (an as-a-user
// review found §5 titled "named constants" naming one of 18).
TEST_CASE("docs.html lists every named memory constant in its constants table") {
  const std::string docs = source_file("site/docs.html");
  const size_t table = docs.find("<table id=\"memory-constants\">");
  REQUIRE(table != std::string::npos);
  const std::string rows = docs.substr(table, docs.find("</table>", table) - table);
  size_t listed = 0;
  for (size_t at = rows.find("<tr><td>"); at != std::string::npos; at = rows.find("<tr><td>", at + 1)) ++listed;
  CHECK(listed == std::size(kMemoryConstants));
  for (const NamedConstant& k : kMemoryConstants) {
    CAPTURE(k.name);
    CHECK(rows.find(std::string("<code>") + k.name + "</code>") != std::string::npos);
  }
}

// Every named constant of the memory and step-time models is in docs.html, with its value and source
// (issue: "every constant named, cited, and listed in docs.html"); this check found 29 of the models'
// constants, the FlashAttention tables, the NF4 block sizes and the offload rates among them, named nowhere there.
TEST_CASE("docs.html names every constexpr constant of the memory and step-time models") {
  const std::string docs = source_file("site/docs.html");
  // Not model figures: an enum's count, an input limit, a guard on a crafted pipeline's scan.
  const std::vector<std::string> not_figures = {"kComponentCount", "kMaxVpp", "kStageScanChunks"};
  const std::regex declared(R"(constexpr\s+(?:double|float|int|int64_t|size_t|TileShape|NamedConstant)\s+(k[A-Z]\w*))");
  size_t checked = 0;
  for (const char* path : {"core/memory/memory_model.h", "core/memory/memory_model.cpp", "core/memory/overheads.h", "core/memory/activation_memory.h",
                           "core/memory/activation_memory.cpp", "core/memory/parameter_count.h", "core/memory/parameter_count.cpp",
                           "core/memory/finetune.h", "core/memory/finetune.cpp", "core/perf/perf_model.h",
                           "core/perf/perf_model.cpp", "core/spec/gpu_catalog.h", "core/spec/gpu_catalog.cpp",
                           "core/spec/structure.h", "core/spec/structure.cpp", "core/io/throughput_runs.cpp"}) {
    const std::string text = source_file(path);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), declared); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1];
      if (std::find(not_figures.begin(), not_figures.end(), name) != not_figures.end()) continue;
      CAPTURE(path);
      CAPTURE(name);
      CHECK(std::regex_search(docs, std::regex("\\b" + name + "\\b")));
      ++checked;
    }
  }
  CHECK(checked >= 80);  // the scan found the constants (83 today)
}

// The validation figures docs.html quotes are today's (a review found 7.2% where validate printed
// 7.3%, and "28 of them again on one H200" beside 30 h200-* rows).
TEST_CASE("docs.html quotes the per-source step-time medians and GPU row counts that validate prints") {
  const std::string docs = source_file("site/docs.html");
  const nlohmann::json out = run_validate();
  const auto median_of = [&](const std::string& key) -> std::optional<std::pair<double, int>> {
    for (const nlohmann::json& source : out["throughput"]["sources"])
      if (source["key"] == key) return std::make_pair(source["median_abs_error"].get<double>(), source["runs"].get<int>());
    return std::nullopt;
  };
  char text[96];
  for (const auto& [key, gpu] : {std::pair<const char*, const char*>{"meshfit tests/gpu (H100, 1 GPU)", "H100"},
                                 std::pair<const char*, const char*>{"meshfit tests/gpu (H200, 1 GPU)", "H200"}}) {
    const auto median = median_of(key);
    REQUIRE(median);
    std::snprintf(text, sizeof text, "%.1f%% on %s (%d runs)", 100.0 * median->first, gpu, median->second);
    CAPTURE(text);
    CHECK(docs.find(text) != std::string::npos);
  }
  // And the published sources' medians in the validation paragraph.
  for (const auto& [key, words] : {std::pair<const char*, const char*>{"Narayanan 2021 T1/T2 (A100, Megatron-LM)", "Megatron-LM rows median "},
                                   std::pair<const char*, const char*>{"Korthikanti 2022 T5 (A100, Megatron-LM)", "Korthikanti et al. 2022 "},
                                   std::pair<const char*, const char*>{"Llama 3 2024 T4 (H100, Meta 4D)", "405B "},
                                   std::pair<const char*, const char*>{"Hagemann 2023 (A100, Megatron-derived)", "2023's sweep "}}) {
    const auto median = median_of(key);
    REQUIRE(median);
    std::snprintf(text, sizeof text, "%s%.1f%%", words, 100.0 * median->first);
    CAPTURE(text);
    CHECK(docs.find(text) != std::string::npos);
  }
  int h200 = 0;
  for (const meshfit_test::CsvRow& r : meshfit_test::read_csv(meshfit_test::data_path("gpu_memory_measured.csv")))
    h200 += r.at("id").rfind("h200-", 0) == 0;
  CHECK(docs.find(std::to_string(h200) + " of them\nagain on one H200") != std::string::npos);
}

TEST_CASE("the validation view lists every named constant of overheads.h with its value, meaning and source") {
  // Read the header's declarations, so a constant added without a row in kMemoryConstants fails here.
  const std::string header = source_file("core/memory/overheads.h");
  const nlohmann::json out = run_validate();
  REQUIRE(out["constants"].size() == std::size(kMemoryConstants));
  int declared = 0;
  for (size_t at = header.find("constexpr double k"); at != std::string::npos; at = header.find("constexpr double k", at + 1)) {
    const size_t start = at + std::string("constexpr double ").size();
    const std::string name = header.substr(start, header.find_first_of(" =", start) - start);
    ++declared;
    CAPTURE(name);
    bool listed = false;
    for (const nlohmann::json& k : out["constants"])
      if (k["name"] == name) {
        listed = true;
        CHECK(!k["meaning"].get<std::string>().empty());
        CHECK(!k["source"].get<std::string>().empty());
      }
    CHECK(listed);
  }
  CHECK(declared == int(std::size(kMemoryConstants)));
  std::printf("\nnamed memory constants (meshfit validate lists them):\n");
  for (const NamedConstant& k : kMemoryConstants)
    std::printf("  %-42s %12.6g %-24s %s\n", k.name, k.value, k.unit, to_string(k.basis));
}

TEST_CASE("validation labels: a model name, no empty parts, no cut parenthesis") {
  // An as-a-user review found "GPT-3-6.7B-style (Mega", "z1  mb" and " lora s b x1" in the tables.
  const auto check = [](const std::string& label) {
    CAPTURE(label);
    CHECK_FALSE(label.empty());
    CHECK(label.front() != ' ');
    CHECK(label.back() != ' ');
    CHECK(label.find("  ") == std::string::npos);
    CHECK(std::count(label.begin(), label.end(), '(') == std::count(label.begin(), label.end(), ')'));
    CHECK(label.find(" mb ") == std::string::npos);
    CHECK(label.find(" z ") == std::string::npos);
  };
  for (const meshfit::MeasuredRun& run : meshfit::measured_runs()) check(run.label);
  for (const meshfit::MeasuredRun& run : meshfit::finetune_measured_runs()) check(run.label);
  for (const meshfit::ThroughputRun& run : meshfit::throughput_runs()) check(run.label);
  CHECK(meshfit::short_model_name("meta-llama/Llama-3.2-3B") == "Llama-3.2-3B");
  CHECK(meshfit::short_model_name("GPT-3-6.7B-style (Megatron-DeepSpeed)") == "GPT-3-6.7B-style");
  CHECK(meshfit::short_model_name("") == "(model not stated)");
  CHECK(meshfit::short_model_name("an-unusually-long-model-name-from-a-paper", 12) == "an-unusua...");
}
