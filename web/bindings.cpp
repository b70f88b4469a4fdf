// bindings.cpp — embind: one function per API call, JSON text in and out. Translation only: the
// JSON pipelines live in core/api.* and are the same ones the native CLI runs.
#include <emscripten/bind.h>

#include <exception>
#include <string>

#include "api.h"
#include "spec/input_limits.h"

namespace {

using nlohmann::json;
using meshfit::Issue;

// The boundary guard: core never throws on user input, but if anything does (a bug, a library),
// the call answers an internal_error issue instead of unwinding into JS or aborting the module.
template <typename Run>
std::string guarded(Run run) {
#if defined(__cpp_exceptions)
  try {
    return run();
  } catch (const std::exception& error) {
    return meshfit::write_output_text(meshfit::internal_error(error.what()));
  } catch (...) {
    return meshfit::write_output_text(meshfit::internal_error("unknown exception"));
  }
#else
  return run();
#endif
}

// Reads the JSON text of the config argument; on any problem the call answers {ok: false, issues}.
template <typename Run>
std::string call(const std::string& text, Run run) {
  return guarded([&] {
    std::vector<Issue> issues;
    const std::optional<json> input = meshfit::read_input_text(text, "config", issues);
    return meshfit::write_output_text(input ? run(*input) : meshfit::failed_call(issues));
  });
}

std::string estimate(const std::string& config) {
  return call(config, [](const json& input) { return meshfit::run_estimate(input); });
}
std::string search(const std::string& config, const std::string& options) {
  return guarded([&] {
    std::vector<Issue> issues;
    const std::optional<json> input = meshfit::read_input_text(config, "config", issues);
    const std::optional<json> parsed_options = meshfit::read_input_text(options, "options", issues);
    if (!input || !parsed_options) return meshfit::write_output_text(meshfit::failed_call(issues));
    return meshfit::write_output_text(meshfit::run_search(*input, *parsed_options));
  });
}
std::string presets() {
  return guarded([] { return meshfit::write_output_text(meshfit::run_presets()); });
}
std::string parse_hf_config(const std::string& text) {
  return guarded([&] { return meshfit::write_output_text(meshfit::run_parse_hf_config(text)); });
}
std::string encode_state(const std::string& config) {
  return call(config, [](const json& input) { return meshfit::run_encode_state(input); });
}
std::string decode_state(const std::string& state) {
  return guarded([&] { return meshfit::write_output_text(meshfit::run_decode_state(state)); });
}
std::string methods(const std::string& config) {
  return call(config, [](const json& input) { return meshfit::run_methods(input); });
}
std::string fit_advice(const std::string& config) {
  return call(config, [](const json& input) { return meshfit::run_fit_advice(input); });
}
std::string validate() {
  return guarded([] { return meshfit::write_output_text(meshfit::run_validate()); });
}
std::string import_launch_config(const std::string& format, const std::string& text, const std::string& overrides,
                                 bool drop_layout) {
  return call(overrides, [&](const json& input) { return meshfit::run_import(format, text, input, drop_layout); });
}
std::string export_launch_config(const std::string& config, const std::string& format) {
  return call(config, [&](const json& input) { return meshfit::run_export(input, format); });
}
std::string version() { return meshfit::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(meshfit) {
  emscripten::function("estimate", &estimate);
  emscripten::function("search", &search);
  emscripten::function("methods", &methods);
  emscripten::function("fitAdvice", &fit_advice);
  emscripten::function("presets", &presets);
  emscripten::function("validate", &validate);
  emscripten::function("parseHfConfig", &parse_hf_config);
  emscripten::function("encodeState", &encode_state);
  emscripten::function("decodeState", &decode_state);
  emscripten::function("importLaunchConfig", &import_launch_config);
  emscripten::function("exportLaunchConfig", &export_launch_config);
  emscripten::function("version", &version);
  // The text limits (core/input_limits.h), so that the JS layer refuses a longer string before
  // copying it into the module (embind's string copy is the slow part of a huge input).
  emscripten::constant("maxJsonBytes", double(meshfit::kMaxJsonBytes));
  emscripten::constant("maxStateBytes", double(meshfit::kMaxStateBytes));
}
