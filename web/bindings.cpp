// bindings.cpp — embind: one function per API call, JSON text in and out. Translation only: the
// JSON pipelines live in core/api.* and are the same ones the native CLI runs.
#include <emscripten/bind.h>

#include <string>

#include "api.h"

namespace {

using nlohmann::json;
using meshfit::Issue;

// Reads the JSON text of the config argument; on any problem the call answers {ok: false, issues}.
template <typename Run>
std::string call(const std::string& text, Run run) {
  std::vector<Issue> issues;
  const std::optional<json> input = meshfit::read_input_text(text, "config", issues);
  return meshfit::write_output_text(input ? run(*input) : meshfit::failed_call(issues));
}

std::string estimate(const std::string& config) {
  return call(config, [](const json& input) { return meshfit::run_estimate(input); });
}
std::string search(const std::string& config, const std::string& options) {
  std::vector<Issue> issues;
  const std::optional<json> input = meshfit::read_input_text(config, "config", issues);
  const std::optional<json> parsed_options = meshfit::read_input_text(options, "options", issues);
  if (!input || !parsed_options) return meshfit::write_output_text(meshfit::failed_call(issues));
  return meshfit::write_output_text(meshfit::run_search(*input, *parsed_options));
}
std::string presets() { return meshfit::write_output_text(meshfit::run_presets()); }
std::string parse_hf_config(const std::string& text) {
  return meshfit::write_output_text(meshfit::run_parse_hf_config(text));
}
std::string encode_state(const std::string& config) {
  return call(config, [](const json& input) { return meshfit::run_encode_state(input); });
}
std::string decode_state(const std::string& state) { return meshfit::write_output_text(meshfit::run_decode_state(state)); }
std::string version() { return meshfit::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(meshfit) {
  emscripten::function("estimate", &estimate);
  emscripten::function("search", &search);
  emscripten::function("presets", &presets);
  emscripten::function("parseHfConfig", &parse_hf_config);
  emscripten::function("encodeState", &encode_state);
  emscripten::function("decodeState", &decode_state);
  emscripten::function("version", &version);
}
