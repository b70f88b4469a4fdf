// test_robustness.cpp — hostile input (issue 17): every reproduction of the issue is a test here.
// Invalid UTF-8, crafted numbers, unchecked pins, overflow, deep or huge JSON and budgets: each
// gives an issue with its own code (or a cut-short search), never a throw, an abort or a wrong value.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "api.h"
#include "spec/checked.h"
#include "spec/config_schema.h"
#include "fixtures.h"
#include "io/import_export.h"
#include "io/json_text.h"
#include "search/layout_search.h"
#include "spec/input_limits.h"
#include "io/serialize.h"
#include "io/text.h"
#include "io/url_state.h"
#include "spec/validate.h"

using namespace meshfit;
using namespace meshfit_test;
using nlohmann::json;

namespace {

// The codes of a JSON result's issues, e.g. "not_positive,duplicate_key".
std::string codes(const json& out) {
  std::string list;
  for (const json& issue : out["issues"]) list += (list.empty() ? "" : ",") + issue["code"].get<std::string>();
  return list;
}

bool has_code(const std::vector<Issue>& issues, IssueCode code) {
  for (const Issue& issue : issues)
    if (issue.code == code) return true;
  return false;
}

// Every string in `out` must be valid UTF-8, so the result can always be written as JSON.
void check_writable(const json& out) {
  const std::string text = write_output_text(out);
  CHECK(is_valid_utf8(text));
  CHECK(text.find("\xEF\xBF\xBD") == std::string::npos);  // nothing needed replacing either
}

}  // namespace

// [SECTION] Text

TEST_CASE("UTF-8 validation follows RFC 3629: overlongs, surrogates and bytes above U+10FFFF are refused") {
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  CHECK_FALSE(is_valid_utf8("\xFF"));
  CHECK_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));      // UTF-16 surrogate
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xE2\x82"));          // truncated
  CHECK(quote_text("a\xFF\"b") == "\"a\\xFF\\\"b\"");
  CHECK(is_valid_utf8(quote_text(std::string(1000, '\xFE'))));
  CHECK(quote_text(std::string(1000, 'x')).size() < 80);
}

TEST_CASE("invalid UTF-8 in a state gives an invalid_text issue quoting it, never an abort") {
  for (const char* state : {"v=1&model=llama3-8b&seq=%FF", "v=1&model=%FF", "v=1&%FF=3", "v=%C0%AF&gpus=8"}) {
    CAPTURE(state);
    const json out = run_decode_state(state);
    CHECK_FALSE(out["ok"].get<bool>());
    CHECK(codes(out).find("invalid_text") != std::string::npos);
    check_writable(out);
    const json estimate = run_estimate(json{{"state", state}});
    CHECK_FALSE(estimate["ok"].get<bool>());
    check_writable(estimate);
  }
}

TEST_CASE("invalid UTF-8 in JSON text and in a pasted HF config.json gives invalid_text") {
  std::vector<Issue> issues;
  CHECK_FALSE(parse_json_text("{\"model\": \"\xFF\"}", "config", issues));
  CHECK(has_code(issues, IssueCode::kInvalidText));
  const json hf = run_parse_hf_config("{\"hidden_size\": 4096, \"model_type\": \"\xFF\xFE\"}");
  CHECK_FALSE(hf["ok"].get<bool>());
  CHECK(codes(hf) == "invalid_text");
  check_writable(hf);
}

TEST_CASE("text values written into a config (flags, states) are quoted safely in every message") {
  json config = {{"model", "\xFF"}, {"gpu", "\xFE"}, {"recompute", "\xC3"}, {"\xFF", 1}};
  const json out = run_estimate(config);
  CHECK_FALSE(out["ok"].get<bool>());
  check_writable(out);
}

// [SECTION] Search pins and bounds

TEST_CASE("search pins and bounds are range-checked, one issue code per rule") {
  const json base = {{"model", "llama3-8b"}, {"gpus", 8}};
  struct Case {
    json options;
    const char* code;
  };
  const Case cases[] = {
      {{{"vpp", 0}}, "not_positive"},          {{{"vpp", -1}}, "not_positive"},
      {{{"dp", 0}}, "not_positive"},           {{{"pp", -2}}, "not_positive"},
      {{{"tp", 0}}, "not_positive"},           {{{"cp", -1}}, "not_positive"},
      {{{"micro_batch", 0}}, "not_positive"},  {{{"max_pp", 0}}, "not_positive"},
      {{{"max_micro_batch", -3}}, "not_positive"}, {{{"zero", 7}}, "out_of_range"},
      {{{"zero", -1}}, "out_of_range"},        {{{"vpp", 100000}}, "out_of_range"},
      {{{"max_vpp", 10000}}, "out_of_range"},  {{{"tp", int64_t(1) << 40}}, "out_of_range"},
      {{{"top", 0}}, "not_positive"},          {{{"top", 1000000}}, "out_of_range"},
      {{{"budget", 0}}, "not_positive"},       {{{"vpp", "0x10"}}, "not_integer"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.options.dump());
    const json out = run_search(base, c.options);
    CHECK_FALSE(out["ok"].get<bool>());
    CHECK(codes(out) == c.code);
  }
}

TEST_CASE("a pinned vpp of 0 or -1 never reaches the search (it divided by zero, or gave 598% MFU)") {
  for (int vpp : {0, -1}) {
    const json out = run_search({{"model", "llama3-8b"}, {"gpus", 8}, {"pp", 2}}, {{"vpp", vpp}});
    CHECK_FALSE(out["ok"].get<bool>());
    CHECK_FALSE(out.contains("layouts"));
  }
}

// [SECTION] Overflow

TEST_CASE("checked arithmetic reports overflow instead of wrapping") {
  CHECK(checked_add(INT64_MAX, 1) == std::nullopt);
  CHECK(checked_add(INT64_MAX - 1, 1) == INT64_MAX);
  CHECK(checked_mul(int64_t(1) << 32, int64_t(1) << 31) == std::nullopt);
  CHECK(checked_mul(-3, 4) == -12);
  CHECK(checked_product({1 << 20, 1 << 20, 1 << 20, 1 << 20}) == std::nullopt);
  CHECK(checked_product({2, 3, 7}) == 42);
}

TEST_CASE("first+last stage layers that overflow int64 are refused (a 32-layer model took a 9.2e18-layer stage)") {
  Config config = preset_config("llama3-8b", 24, 1, 3);
  config.layout.pp_first_stage_layers = INT64_MAX;
  config.layout.pp_last_stage_layers = INT64_MAX - 30;  // the sum wraps to -32
  const std::vector<Issue> issues = validate(config);
  CHECK(has_code(issues, IssueCode::kStageLayersInvalid));
  config.layout.pp_last_stage_layers = 1;
  CHECK(has_code(validate(config), IssueCode::kStageLayersInvalid));
}

TEST_CASE("the HF importer refuses sizes whose products overflow (4*hidden, head_dim*heads)") {
  const json gpt2 = run_parse_hf_config(
      R"({"model_type": "gpt2", "n_embd": 4611686018427387904, "n_layer": 2, "n_head": 2, "vocab_size": 10})");
  CHECK_FALSE(gpt2["ok"].get<bool>());
  CHECK(codes(gpt2).find("out_of_range") != std::string::npos);
  const json head_dim = run_parse_hf_config(
      R"({"hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32, "vocab_size": 10,
          "intermediate_size": 11008, "head_dim": 4611686018427387904})");
  CHECK_FALSE(head_dim["ok"].get<bool>());
  CHECK(codes(head_dim) == "out_of_range");
  check_writable(head_dim);
}

// [SECTION] JSON text limits

TEST_CASE("deeply nested JSON is refused before it can overflow the stack") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::vector<Issue> issues;
  CHECK_FALSE(parse_json_text(deep, "config", issues));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].code == IssueCode::kInputTooLarge);
  CHECK(issues[0].message.find(std::to_string(kMaxJsonDepth)) != std::string::npos);
  const json hf = run_parse_hf_config("{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  CHECK(codes(hf) == "input_too_large");
}

TEST_CASE("JSON text over the length or key-count limit is refused with the limit named") {
  std::vector<Issue> issues;
  CHECK_FALSE(parse_json_text("\"" + std::string(kMaxJsonBytes, 'x') + "\"", "config", issues));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].code == IssueCode::kInputTooLarge);
  CHECK(issues[0].message.find(std::to_string(kMaxJsonBytes)) != std::string::npos);
  std::string many = "{";
  for (size_t i = 0; i <= kMaxJsonKeys; ++i) many += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  many += "}";
  issues.clear();
  CHECK_FALSE(parse_json_text(many, "config", issues));
  CHECK(has_code(issues, IssueCode::kInputTooLarge));
}

TEST_CASE("malformed JSON gives malformed_json with the parser's message, and duplicate keys give duplicate_key") {
  std::vector<Issue> issues;
  CHECK_FALSE(parse_json_text("{\"a\":", "config", issues));
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].code == IssueCode::kMalformedJson);
  CHECK(issues[0].message.find("parse error") != std::string::npos);
  issues.clear();
  CHECK(parse_json_text(R"({"gpus": 8, "gpus": 16})", "config", issues));
  CHECK(has_code(issues, IssueCode::kDuplicateKey));
  issues.clear();
  CHECK(parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}})", "config", issues));  // same key, other objects
  CHECK(issues.empty());
  const json input = *parse_json_text(R"({"a": 1})", "config", issues);
  CHECK(input["a"] == 1);
}

// [SECTION] Strict numbers and versions

TEST_CASE("numbers in text are strict: no hex, no spaces, no inf, no wrap") {
  CHECK(value_from_text("16") == 16);
  CHECK(value_from_text("-2") == -2);
  CHECK(value_from_text("0.85") == 0.85);
  CHECK(value_from_text("1e3") == 1000.0);
  CHECK(value_from_text("0x10").is_string());
  CHECK(value_from_text(" 5").is_string());
  CHECK(value_from_text("5 ").is_string());
  CHECK(value_from_text("+5").is_string());
  CHECK(value_from_text("inf").is_string());
  CHECK(value_from_text("nan").is_string());
  CHECK(value_from_text("1e400").is_string());
  CHECK(value_from_text("99999999999999999999").is_number_float());  // refused by the readers below

  const ParsedConfig hex = decode_state("v=1&model=llama3-8b&gpus=0x10");
  CHECK(has_code(hex.issues, IssueCode::kNotInteger));
  CHECK(hex.config.cluster.gpus == 8);  // unchanged default, not 16
  const ParsedConfig huge = decode_state("v=1&model=llama3-8b&gpus=99999999999999999999");
  CHECK(has_code(huge.issues, IssueCode::kOutOfRange));
  const json unsigned_huge = run_estimate(json::parse(R"({"model": "llama3-8b", "gpus": 18446744073709551615})"));
  CHECK(codes(unsigned_huge) == "out_of_range");
  CHECK(write_output_text(unsigned_huge).find("-9223372036854775808") == std::string::npos);
}

TEST_CASE("state versions are read exactly: v=4294967298 is not version 2, v=01 and v=1x are not 1") {
  for (const char* state : {"v=4294967298&model=llama3-8b", "v=01&model=llama3-8b", "v=1x&model=llama3-8b",
                            "v=-1&model=llama3-8b", "v=0&model=llama3-8b", "v=%201&model=llama3-8b"}) {
    CAPTURE(state);
    CHECK(has_code(decode_state(state).issues, IssueCode::kStateVersion));
  }
  CHECK_FALSE(has_errors(decode_state("v=1&model=llama3-8b").issues));
}

TEST_CASE("duplicate keys in a state give duplicate_key instead of keeping the last") {
  CHECK(has_code(decode_state("v=1&model=llama3-8b&tp=2&tp=4").issues, IssueCode::kDuplicateKey));
  CHECK(has_code(decode_state("v=1&model=llama3-8b&kv=8&kv_heads=8").issues, IssueCode::kDuplicateKey));
  CHECK(has_code(decode_state("v=1&v=1&model=llama3-8b").issues, IssueCode::kDuplicateKey));
}

TEST_CASE("a state over the size or pair limit is refused with the limit named") {
  const ParsedConfig big = decode_state("v=1&model=" + std::string(kMaxStateBytes, 'x'));
  REQUIRE(big.issues.size() >= 1);
  CHECK(big.issues[0].code == IssueCode::kInputTooLarge);
  CHECK(big.issues[0].message.find(std::to_string(kMaxStateBytes)) != std::string::npos);
  std::string many = "v=1";
  for (size_t i = 0; i <= kMaxStateKeys; ++i) many += "&k" + std::to_string(i) + "=1";
  CHECK(has_code(decode_state(many).issues, IssueCode::kInputTooLarge));
}

TEST_CASE("free-text fields are UTF-8 and at most kMaxTextFieldBytes, from text and from a Config edited in place") {
  const std::string longest(kMaxTextFieldBytes, 'x');
  CHECK_FALSE(has_errors(parse_config(json{{"model", "llama3-8b"}, {"notes", longest}}).issues));
  const ParsedConfig too_long = parse_config(json{{"model", "llama3-8b"}, {"notes", longest + "x"}});
  CHECK(has_code(too_long.issues, IssueCode::kInputTooLarge));
  CHECK(too_long.config.notes.empty());  // refused, not cut
  // The page sets Config fields directly: validate() applies the same check.
  Config config = parse_config(json{{"model", "llama3-8b"}, {"gpus", 8}}).config;
  REQUIRE(validate(config).empty());
  config.notes = longest + "x";
  CHECK(has_code(validate(config), IssueCode::kInputTooLarge));
  config.notes = "caf\xC3";  // a cut UTF-8 sequence
  CHECK(has_code(validate(config), IssueCode::kInvalidText));
  config.notes = "caf\xC3\xA9, 8 nodes";
  CHECK_FALSE(has_errors(validate(config)));
  // Every text row of the schema states the limit it is held to.
  for (const ConfigField& field : config_fields())
    if (field.kind == FieldKind::kText) CHECK(field.allowed.find(std::to_string(kMaxTextFieldBytes)) != std::string::npos);
}

TEST_CASE("gpu_memory_gib of 1e308, -80, 0 or NaN text is refused, never a null or negative capacity") {
  for (const char* value : {"1e308", "-80", "0", "NaN", "Infinity"}) {
    CAPTURE(value);
    const json out = run_estimate(json{{"model", "llama3-8b"}, {"gpu", "custom"}, {"gpu_memory_gib", value_from_text(value)}});
    CHECK_FALSE(out["ok"].get<bool>());
    CHECK(out["capacity_bytes"].is_number());
    CHECK(out["capacity_bytes"].get<double>() >= 0);
  }
}

TEST_CASE("non-finite numbers written as text (the JS API's NaN/Infinity) become issues, not defaults") {
  for (const char* key : {"gpus", "seq", "tp", "headroom", "hidden"}) {
    CAPTURE(key);
    const json out = run_estimate(json{{"model", "llama3-8b"}, {key, "NaN"}});
    CHECK_FALSE(out["ok"].get<bool>());
  }
}

// [SECTION] Bounded search

TEST_CASE("a search budget cuts the search short and says so") {
  Config config = preset_config("llama3.1-405b", 16384);
  config.training.seq = 8192;
  config.training.global_batch = 2048;
  SearchOptions options;
  options.budget = 1000;
  const SearchResult cut = search_layouts(config, options);
  CHECK(cut.valid());
  CHECK_FALSE(cut.complete);
  CHECK(has_code(cut.issues, IssueCode::kSearchCutShort));
  CHECK(cut.work >= 1000);
  CHECK(cut.work < 1000 + 16 * 6 + 10);  // overshoots by at most one node
  options.budget = kDefaultSearchBudget;
  const SearchResult full = search_layouts(config, options);
  CHECK(full.complete);
  CHECK_FALSE(has_code(full.issues, IssueCode::kSearchCutShort));
  const json out = run_search(json{{"model", "llama3-8b"}, {"gpus", 64}}, json{{"budget", 50}});
  CHECK(out["ok"].get<bool>());
  CHECK(out["complete"] == false);
  CHECK(codes(out) == "search_cut_short");
}

TEST_CASE("the search runs in slices with the same result as in one call") {
  Config config = preset_config("llama3-70b", 512);
  SearchOptions options;
  const SearchResult whole = search_layouts(config, options);
  LayoutSearch search(config, options);
  int slices = 0;
  double last_progress = 0;
  while (!search.advance(97)) {
    ++slices;
    CHECK(search.progress() >= last_progress);
    last_progress = search.progress();
  }
  CHECK(slices > 10);
  const SearchResult& sliced = search.result();
  CHECK(sliced.complete);
  CHECK(sliced.evaluated == whole.evaluated);
  CHECK(sliced.feasible == whole.feasible);
  CHECK(sliced.rejected == whole.rejected);
  REQUIRE(sliced.top.size() == whole.top.size());
  for (size_t i = 0; i < whole.top.size(); ++i)
    CHECK(sliced.top[i].step.tokens_per_s_per_gpu == whole.top[i].step.tokens_per_s_per_gpu);
}

TEST_CASE("the crafted link of issue 17 finishes within the default budget") {
  const std::string link =
      "v=1&hidden=221760&layers=10000&heads=55440&kv=55440&ffn=3991680&vocab=1000&gpus=2162160&gbs=14414400"
      "&seq=4324320&gpu=custom&gpu_memory_gib=900000&framework=deepspeed";
  const json out = run_search(json{{"state", link}}, json::object());
  INFO(codes(out));
  if (out["ok"].get<bool>()) {
    CHECK(out["work"].get<int64_t>() <= kDefaultSearchBudget + 16 * 6 * 4);
  }
  check_writable(out);
}

TEST_CASE("a custom GPU with only its memory gives no NaN: no step time, a warning, and a search that names the missing figures") {
  // It had zero flop/s: NaN times and MFU (found by the fuzzer). The memory answer needs no compute
  // figure, so it stays; nothing derived from the missing figures is printed.
  const json out = run_estimate(json{{"model", "llama3-8b"}, {"gpu", "custom"}, {"gpu_memory_gib", 79.5}});
  REQUIRE(out["ok"].get<bool>());
  CHECK(out["step_time_s"].get<double>() == 0);
  CHECK(out["mfu"].get<double>() == 0);
  CHECK(out.dump().find("NaN") == std::string::npos);
  bool warned = false;
  for (const json& issue : out["issues"]) warned |= issue["severity"] == "warning" && issue["field"] == "gpu";
  CHECK(warned);
  const json search = run_search(json{{"model", "llama3-8b"}, {"gpu", "custom"}, {"gpu_memory_gib", 79.5}}, {{"top", 1}});
  CHECK_FALSE(search["ok"].get<bool>());
  CHECK(search.dump().find("gpu_bf16_tflops") != std::string::npos);
  const json given = run_search(json{{"model", "llama3-8b"}, {"gpu", "custom"}, {"gpu_memory_gib", 79.5},
                                     {"gpu_bf16_tflops", 989}, {"gpu_hbm_tbps", 3.35}}, {{"top", 1}});
  REQUIRE(given["ok"].get<bool>());
  CHECK(std::isfinite(given["layouts"][0]["step_time_s"].get<double>()));
}

TEST_CASE("a stray throw is an exception the suite and the JS API catch, not an abort (WASM built with exceptions)") {
#if defined(__cpp_exceptions)
  CHECK_THROWS(json::parse("{").dump());  // nlohmann-json throws on malformed text when asked to
#else
  MESSAGE("built without exceptions (-DMESHFIT_WASM_EXCEPTIONS=OFF): a stray throw would abort");
#endif
}
