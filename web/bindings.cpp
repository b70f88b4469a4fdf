// bindings.cpp — embind: one function per API call, JSON text in and out. Translation only: the
// JSON pipelines live in core/api.* and are the same ones the native CLI runs.
#include <emscripten/bind.h>

#include <string>

#include "api.h"

namespace {

using nlohmann::json;

json parse(const std::string& text) { return json::parse(text, nullptr, /*allow_exceptions=*/false); }

std::string estimate(const std::string& config) { return meshfit::run_estimate(parse(config)).dump(); }
std::string search(const std::string& config, const std::string& options) {
  return meshfit::run_search(parse(config), parse(options)).dump();
}
std::string methods(const std::string& config) { return meshfit::run_methods(parse(config)).dump(); }
std::string presets() { return meshfit::run_presets().dump(); }
std::string validate() { return meshfit::run_validate().dump(); }
std::string parse_hf_config(const std::string& text) { return meshfit::run_parse_hf_config(text).dump(); }
std::string encode_state(const std::string& config) { return meshfit::run_encode_state(parse(config)).dump(); }
std::string decode_state(const std::string& state) { return meshfit::run_decode_state(state).dump(); }
std::string import_launch_config(const std::string& format, const std::string& text, const std::string& overrides,
                                 bool drop_layout) {
  return meshfit::run_import(format, text, parse(overrides), drop_layout).dump();
}
std::string export_launch_config(const std::string& config, const std::string& format) {
  return meshfit::run_export(parse(config), format).dump();
}
std::string version() { return meshfit::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(meshfit) {
  emscripten::function("estimate", &estimate);
  emscripten::function("search", &search);
  emscripten::function("methods", &methods);
  emscripten::function("presets", &presets);
  emscripten::function("validate", &validate);
  emscripten::function("parseHfConfig", &parse_hf_config);
  emscripten::function("encodeState", &encode_state);
  emscripten::function("decodeState", &decode_state);
  emscripten::function("importLaunchConfig", &import_launch_config);
  emscripten::function("exportLaunchConfig", &export_launch_config);
  emscripten::function("version", &version);
}
