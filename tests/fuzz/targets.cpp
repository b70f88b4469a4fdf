// targets.cpp — see targets.h.
#include "targets.h"

#include <cmath>
#include <string>

#include "api.h"
#include "io/json_text.h"
#include "io/launch_config.h"
#include "io/text.h"
#include "io/url_state.h"

namespace meshfit_fuzz {

using nlohmann::json;

namespace {

// A broken promise stops the fuzzer here (libFuzzer saves the input as a crash).
void require(bool condition) {
  if (!condition) __builtin_trap();
}

// Every number finite, every string valid UTF-8, and the text form writable without replacement.
void check_value(const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      for (const auto& [key, item] : value.items()) {
        require(meshfit::is_valid_utf8(key));
        check_value(item);
      }
      break;
    case json::value_t::array:
      for (const json& item : value) check_value(item);
      break;
    case json::value_t::string:
      require(meshfit::is_valid_utf8(value.get_ref<const std::string&>()));
      break;
    case json::value_t::number_float:
      require(std::isfinite(value.get<double>()));
      break;
    default:
      break;
  }
}

// An ok result: finite, non-negative bytes and times; every result: writable.
void check_result(const json& out) {
  check_value(out);
  require(out.contains("ok") && out["ok"].is_boolean());
  // check_value saw only valid UTF-8, so the text form needs no replacement (the input itself may
  // contain U+FFFD: a first version of this check failed on that, tests/fuzz/crashes/json_config).
  require(meshfit::is_valid_utf8(meshfit::write_output_text(out)));
  if (!out["ok"].get<bool>()) return;
  for (const char* key : {"peak_allocated_bytes", "peak_reserved_bytes", "device_bytes", "step_time_s"})
    if (out.contains(key)) require(out[key].is_number() && out[key].get<double>() >= 0);
}

std::string text_of(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

}  // namespace

void fuzz_state(const uint8_t* data, size_t size) {
  const std::string state = text_of(data, size);
  const meshfit::ParsedConfig parsed = meshfit::decode_state(state);
  for (const meshfit::Issue& issue : parsed.issues) {
    require(meshfit::is_valid_utf8(issue.field));
    require(meshfit::is_valid_utf8(issue.message));
  }
  check_result(meshfit::run_decode_state(state));
}

void fuzz_json_config(const uint8_t* data, size_t size) {
  std::vector<meshfit::Issue> issues;
  const std::optional<json> input = meshfit::read_input_text(text_of(data, size), "config", issues);
  if (!input) {
    check_result(meshfit::failed_call(issues));
    return;
  }
  check_result(meshfit::run_estimate(*input));
  check_result(meshfit::run_encode_state(*input));
}

void fuzz_hf_import(const uint8_t* data, size_t size) {
  check_result(meshfit::run_parse_hf_config(text_of(data, size)));
}

void fuzz_estimate_search(const uint8_t* data, size_t size) {
  const std::string state = text_of(data, size);
  const json estimate = meshfit::run_estimate(json{{"state", state}});
  check_result(estimate);
  if (!estimate["ok"].get<bool>()) return;
  // The round trip: the state an ok estimate gives decodes to the same config.
  const json again = meshfit::run_estimate(json{{"state", estimate["state"]}});
  require(again["ok"].get<bool>() && again["config"] == estimate["config"]);
  // Search with a small budget, so that one input costs milliseconds whatever it asks.
  check_result(meshfit::run_search(json{{"state", state}}, json{{"budget", 3000}, {"top", 3}}));
}

void fuzz_launch_import(const uint8_t* data, size_t size) {
  if (size == 0) return;
  // The first byte picks the reader (auto-detection, or one format forced on any text), the rest is
  // the pasted text; a usable import is exported back in every format.
  static const char* const formats[] = {"auto", "megatron", "torchtitan", "deepspeed", "hf", "meshfit"};
  const std::string text = text_of(data + 1, size - 1);
  const json imported = meshfit::run_import(formats[data[0] % 6], text, json{{"gpus", 64}, {"gpu", "h100-sxm"}}, false);
  check_result(imported);
  if (imported["ok"].get<bool>() && imported.contains("config"))
    for (const char* format : {"megatron", "torchtitan", "deepspeed", "hf", "meshfit"})
      check_result(meshfit::run_export(imported["config"], format));
  // The page's fetch: the text as a model id, and as the answer to a fetch of a fixed one.
  std::vector<meshfit::Issue> issues;
  if (const std::optional<std::string> url = meshfit::hf_config_url(text, issues)) {
    require(url->rfind("https://huggingface.co/", 0) == 0 && url->find_first_of("?#\\ ") == std::string::npos);
  } else {
    for (const meshfit::Issue& issue : issues) require(meshfit::is_valid_utf8(issue.message));
  }
  const meshfit::LaunchImport fetched = meshfit::import_fetched_hf_config("Qwen/Qwen2.5-7B", data[0] % 2 ? 200 : 404, text);
  for (const meshfit::Issue& issue : fetched.issues) require(meshfit::is_valid_utf8(issue.message));
}

}  // namespace meshfit_fuzz
