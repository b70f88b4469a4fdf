// test_serialize.cpp — the flat JSON schema: presets then fields, round trip of the resolved
// config, report JSON carrying the fields the CLI promises.
#include <doctest/doctest.h>

#include <set>

#include "memory/memory_model.h"
#include "io/serialize.h"
#include "io/csv_text.h"
#include "spec/validate.h"
#include "fixtures.h"

using namespace meshfit;
using meshfit_test::preset_config;
using nlohmann::json;

TEST_CASE("fields override a preset whatever the key order, and rename it") {
  const ParsedConfig parsed = parse_config(json{{"vocab", 32000}, {"model", "llama3-8b"}});
  REQUIRE(parsed.issues.empty());
  CHECK(parsed.config.model.vocab == 32000);
  CHECK(parsed.config.model.hidden == 4096);
  CHECK(parsed.config.model.name == "llama3-8b+custom");
}

TEST_CASE("a custom model needs its fields, and kv_heads defaults to heads") {
  const ParsedConfig parsed =
      parse_config(json{{"hidden", 1024}, {"layers", 4}, {"heads", 16}, {"ffn", 4096}, {"vocab", 1000}});
  REQUIRE(parsed.issues.empty());
  CHECK(parsed.config.model.kv_heads == 16);
}

TEST_CASE("gpu_memory_gib overrides a preset's capacity") {
  const ParsedConfig parsed = parse_config(json{{"model", "llama3-8b"}, {"gpu", "a100-80gb"}, {"gpu_memory_gib", 64}});
  REQUIRE(parsed.issues.empty());
  CHECK(parsed.config.gpu.memory_bytes == 64.0 * 1024 * 1024 * 1024);
}

TEST_CASE("config_to_json round-trips through parse_config") {
  const ParsedConfig first = parse_config(json{{"model", "llama3.1-70b"}, {"gpus", 64}, {"tp", 8}, {"pp", 4},
                                              {"recompute", "selective"}, {"framework", "megatron"}, {"sp", false}});
  REQUIRE(first.issues.empty());
  json resolved = config_to_json(first.config);
  resolved.erase("model");  // written-out dimensions describe the model on their own
  const ParsedConfig second = parse_config(resolved);
  REQUIRE(second.issues.empty());
  json again = config_to_json(second.config);
  CHECK(again["model"] == "custom");
  again.erase("model");
  CHECK(again == resolved);  // every field of the config, not one figure derived from it
  const MemoryReport a = estimate_memory(first.config);
  const MemoryReport b = estimate_memory(second.config);
  REQUIRE(a.valid());
  REQUIRE(b.valid());
  CHECK(a.worst().device_bytes == doctest::Approx(b.worst().device_bytes).epsilon(1e-12));
}

TEST_CASE("the report JSON has the promised fields, each component keyed by name") {
  const ParsedConfig parsed = parse_config(json{{"model", "llama3.1-70b"}, {"gpus", 64}, {"tp", 8}, {"pp", 4}, {"seq", 8192}});
  const json out = memory_report_to_json(estimate_memory(parsed.config));
  for (const char* key : {"peak_allocated_bytes", "peak_reserved_bytes", "device_bytes", "capacity_bytes", "fits", "verdict",
                          "worst_rank", "ranks", "issues"})
    CHECK_MESSAGE(out.contains(key), key);
  REQUIRE(out["ranks"].size() == 4);
  const json& rank = out["ranks"][0];
  CHECK(rank["role"] == "first");
  CHECK(rank["components"].size() == size_t(kComponentCount));
  for (int i = 0; i < kComponentCount; ++i) CHECK(rank["components"].contains(to_string(Component(i))));
}

TEST_CASE("an invalid config's JSON says invalid and lists the issues") {
  const ParsedConfig parsed = parse_config(json{{"model", "llama3-8b"}, {"tp", 3}, {"gpus", 6}});
  const json out = memory_report_to_json(estimate_memory(parsed.config));
  CHECK(out["verdict"] == "invalid");
  CHECK(out["fits"] == false);
  CHECK(out["issues"].size() >= 1);
  CHECK(out["issues"][0]["code"] == "tp_not_divide_heads");
}

TEST_CASE("presets JSON lists every model and GPU the issue asks for") {
  const json presets = presets_to_json();
  std::set<std::string> models, gpus;
  for (const json& m : presets["models"]) models.insert(m["id"].get<std::string>());
  for (const json& g : presets["gpus"]) gpus.insert(g["id"].get<std::string>());
  for (const char* id : {"llama1-13b", "llama1-30b", "llama1-65b", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b",
                         "llama3-70b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "llama3.2-1b", "llama3.2-3b",
                         "mistral-7b", "gpt3-175b"})
    CHECK_MESSAGE(models.count(id) == 1, id);
  for (const char* id : {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "b200", "gb200", "mi300x", "l40s", "rtx4090"})
    CHECK_MESSAGE(gpus.count(id) == 1, id);
}

TEST_CASE("layouts_to_csv writes every candidate, and the CSV reader reads each value back") {
  SearchOptions options;
  options.keep_all_max = 100000;
  const SearchResult result = search_layouts(preset_config("llama3-8b", 16, 1, 1), options);
  REQUIRE(result.valid());
  REQUIRE(result.all.size() > 10);
  const std::string csv = layouts_to_csv(result.all);
  const std::vector<CsvRow> rows = parse_csv(csv);
  REQUIRE(rows.size() == result.all.size());
  bool saw_feasible = false, saw_infeasible = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const LayoutCandidate& c = result.all[i];
    CAPTURE(i);
    CHECK(csv_field(rows[i], "dp") == std::to_string(c.layout.dp));
    CHECK(csv_field(rows[i], "tp") == std::to_string(c.layout.tp));
    CHECK(csv_field(rows[i], "micro_batch") == std::to_string(c.micro_batch));
    CHECK(csv_field(rows[i], "recompute") == to_string(c.recompute));
    CHECK(std::stod(csv_field(rows[i], "device_bytes")) == c.device_bytes);  // round-trip precision
    if (c.feasible) {
      saw_feasible = true;
      CHECK(std::stod(csv_field(rows[i], "tokens_per_s_per_gpu")) == c.step.tokens_per_s_per_gpu);
      CHECK(std::stod(csv_field(rows[i], "breakdown.compute_s")) == c.step.breakdown.compute_s);
    } else {
      saw_infeasible = true;
      CHECK(csv_field(rows[i], "tokens_per_s_per_gpu").empty());
    }
  }
  CHECK(saw_feasible);
  CHECK(saw_infeasible);
  // The error band's text holds commas and is quoted; the reader returns it whole.
  CHECK(csv_cell("a,b \"c\"") == "\"a,b \"\"c\"\"\"");
  CHECK(csv_cell("plain") == "plain");
  CHECK(parse_csv(write_csv({"x", "y"}, {{"1,5", "line\nbreak"}}))[0].at("y") == "line\nbreak");
}

// An as-a-user review: 24 H100s (three nodes) read "global_batch=512 is not divisible by dp*micro_batch
// = 24", about a batch it never gave. The default is rounded up to the next multiple, said; a batch
// given stays the user's, error and all.
TEST_CASE("the default global batch is rounded up to a multiple of dp x micro_batch, said, and a given one is kept") {
  const ParsedConfig rounded = parse_config({{"model", "llama3.1-8b"}, {"gpus", 24}});
  REQUIRE_FALSE(has_errors(rounded.issues));
  CHECK(rounded.config.training.global_batch == 528);
  bool said = false;
  for (const Issue& issue : rounded.issues) said |= issue.field == "global_batch" && issue.severity == Severity::kWarning;
  CHECK(said);
  CHECK_FALSE(has_errors(validate(rounded.config)));
  const ParsedConfig given = parse_config({{"model", "llama3.1-8b"}, {"gpus", 24}, {"global_batch", 512}});
  CHECK(given.config.training.global_batch == 512);
  CHECK(has_errors(validate(given.config)));
  CHECK(parse_config({{"model", "llama3.1-8b"}, {"gpus", 8}}).config.training.global_batch == 512);  // divisible: as is
}
