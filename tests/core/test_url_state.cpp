// test_url_state.cpp — the shareable state: readable, minimal, round-tripping, robust to bad input.
#include <doctest/doctest.h>

#include "api.h"
#include "fixtures.h"
#include "memory/memory_model.h"
#include "io/url_state.h"
#include "spec/config_schema.h"

using namespace meshfit;
using namespace meshfit_test;

TEST_CASE("the state carries only what differs from the defaults, in readable keys") {
  Config config = preset_config("llama3.1-70b", 64, 8, 4);
  config.training.seq = 8192;
  config.training.global_batch = 256;
  CHECK(encode_state(config) == "v=1&model=llama3.1-70b&gpus=64&seq=8192&gbs=256&tp=8&pp=4");
  CHECK(encode_state(default_config()) == "v=1");
}

TEST_CASE("a GPU preset stands for its figures: the state names it and only the figures set apart") {
  Config config = preset_config("llama3.1-8b", 1, 1, 1);
  config.gpu = *find_gpu_preset("rtx4090");
  CHECK(encode_state(config) == "v=1&model=llama3.1-8b&gpu=rtx4090&gpus=1&gbs=1024");  // it carried all eleven figures
  config.gpu.sms = 100;
  const std::string state = encode_state(config);
  CHECK(state == "v=1&model=llama3.1-8b&gpu=rtx4090&gpu_sms=100&gpus=1&gbs=1024");
  const ParsedConfig decoded = decode_state(state);
  REQUIRE(decoded.issues.empty());
  CHECK(decoded.config.gpu.sms == 100);
  CHECK(decoded.config.gpu.bf16_flops == find_gpu_preset("rtx4090")->bf16_flops);
}

TEST_CASE("encode then decode gives the same estimate for presets, custom models and every option") {
  std::vector<Config> configs;
  Config a = preset_config("llama3.1-405b", 1024, 8, 16);
  a.layout.pp_first_stage_layers = 7;
  a.layout.pp_last_stage_layers = 7;
  a.training.recompute = Recompute::kSelective;
  a.training.headroom = 0.85;
  configs.push_back(a);
  Config b = preset_config("llama3-8b", 64, 2, 1, 2);
  b.model.vocab = 32000;  // preset with an override
  b.model.name = "llama3-8b+custom";
  b.training.framework = Framework::kFsdp;
  b.layout.zero = 3;
  b.training.flash = false;
  b.training.sp = false;
  b.gpu = *find_gpu_preset("a100-80gb");
  b.gpu.memory_bytes = 64.0 * 1024 * 1024 * 1024;
  configs.push_back(b);
  Config c = default_config();
  c.model = ModelSpec{"custom", 1024, 8, 16, 4, 4096, 50000, true, NormKind::kLayerNorm, MlpKind::kGelu, true, true};
  c.training.optimizer = Optimizer::kAdam8bit;
  c.training.precision = Precision::kFp8;
  configs.push_back(c);
  for (const Config& config : configs) {
    const std::string state = encode_state(config);
    CAPTURE(state);
    const ParsedConfig decoded = decode_state(state);
    REQUIRE(decoded.issues.empty());
    const MemoryReport x = estimate_memory(config);
    const MemoryReport y = estimate_memory(decoded.config);
    REQUIRE(x.valid());
    REQUIRE(y.valid());
    CHECK(x.worst().device_bytes == y.worst().device_bytes);
    CHECK(encode_state(decoded.config) == state);
  }
}

TEST_CASE("bad states give issues, not crashes") {
  CHECK(decode_state("v=1&model=llama3-8b&tp=abc").issues.front().code == IssueCode::kNotInteger);
  CHECK(decode_state("v=1&model=llama3-8b&bogus=1").issues.front().code == IssueCode::kUnknownField);
  CHECK(decode_state("v=1&model=llama3-8b&%zz=1").issues.front().code == IssueCode::kUnknownField);
  // An as-a-user review read "not a key=value pair" for name=%ZZ: the message names the escape.
  CHECK(decode_state("v=1&model=llama3-8b&name=%ZZ").issues.front().message.find("%-escape") != std::string::npos);
  CHECK(decode_state("v=1&model=llama3-8b&seq").issues.front().code == IssueCode::kUnknownField);
  const ParsedConfig newer = decode_state("v=99&model=llama3-8b");
  CHECK(has_errors(newer.issues));
  CHECK(newer.issues.front().message.find("newer") != std::string::npos);
  const ParsedConfig unversioned = decode_state("#model=llama3-8b&tp=2");
  CHECK_FALSE(has_errors(unversioned.issues));  // v=1 assumed, with a warning about the version
  CHECK(unversioned.config.layout.tp == 2);
  REQUIRE_FALSE(unversioned.issues.empty());
  CHECK(unversioned.issues.front().code == IssueCode::kStateVersion);
  // A pair with no name says so (an as-a-user review read `: "" is not a meshfit config field`).
  const ParsedConfig nameless = decode_state("v=1&model=llama3-8b&=5");
  REQUIRE(has_errors(nameless.issues));
  CHECK(nameless.issues.front().field == "state");
  CHECK(nameless.issues.front().message == "\"=5\" has no field name before its \"=\".");
  for (const char* hostile : {"", "&&&", "=", "v=", "%", "%4", "v=1&model=%00", "v=1&tp=1e400", "v=1&gpus=-5"})
    CHECK_NOTHROW(decode_state(hostile));
  // An as-a-user review: integers a setter refuses were dropped without a word (the preset's kept),
  // and the NVLink domain and GEMM ceilings took any value.
  for (const char* refused : {"v=1&model=llama3-8b&gpu_sms=-7", "v=1&model=llama3-8b&gpu_nvlink_domain=0",
                              "v=1&model=llama3-8b&gpu_nvlink_domain=-5", "v=1&model=llama3-8b&gpu_bf16_gemm_ceiling=5",
                              "v=1&model=llama3-8b&gpu_fp8_gemm_ceiling=0"}) {
    CAPTURE(refused);
    const ParsedConfig parsed = decode_state(refused);
    REQUIRE(has_errors(parsed.issues));
    CHECK(parsed.issues.front().message.find("is refused") != std::string::npos);
  }
  CHECK_FALSE(has_errors(decode_state("v=1&model=llama3-8b&gpu_nvlink_domain=72&gpu_bf16_gemm_ceiling=1").issues));
  // An unknown preset names the nearest ones (a prefix, or at most two edits).
  CHECK(decode_state("v=1&model=llama3.1-8B").issues.front().message.find("did you mean llama3.1-8b") != std::string::npos);
  CHECK(decode_state("v=1&gpu=h100").issues.front().message.find("did you mean h100-sxm") != std::string::npos);
  CHECK(decode_state("v=1&model=gpt5").issues.front().message.find("did you mean") == std::string::npos);
  // A whole page address is read as its hash.
  const ParsedConfig address = decode_state("https://example.org/meshfit.html#v=1&model=llama3-8b&tp=2");
  CHECK_FALSE(has_errors(address.issues));
  CHECK(address.config.layout.tp == 2);
}

TEST_CASE("the API envelope: ok and issues on every result, state merged under explicit fields") {
  const nlohmann::json good = run_estimate({{"state", "v=1&model=llama3-8b&tp=2"}, {"gpus", 16}});
  CHECK(good["ok"] == true);
  CHECK(good["config"]["tp"] == 2);
  CHECK(good["config"]["gpus"] == 16);
  CHECK(good["state"] == "v=1&model=llama3-8b&gpus=16&tp=2");
  const nlohmann::json bad = run_estimate({{"model", "llama3-8b"}, {"tp", 3}});
  CHECK(bad["ok"] == false);
  CHECK(bad["issues"].size() >= 1);
  CHECK(run_estimate(nlohmann::json::array())["ok"] == false);
  CHECK(run_search({{"model", "llama3-8b"}, {"gpus", 16}}, {{"top", 3}})["layouts"].size() == 3);
  CHECK(run_decode_state("v=1&model=llama3-8b")["ok"] == true);
  CHECK(run_encode_state({{"model", "llama3-8b"}, {"seq", 8192}})["state"] == "v=1&model=llama3-8b&seq=8192");
}

TEST_CASE("the page's view rides after the config's keys and round-trips") {
  Config config = preset_config("llama3.1-405b", 1024, 8, 16);
  PageView view;
  CHECK(encode_view(view).empty());  // the default view adds nothing to a link
  view.tab = ViewTab::kLayouts;
  view.units = ViewUnits::kMebibytes;
  view.sort = LayoutColumn::kTokensPerSPerGpu;
  view.order = SortOrder::kDescending;
  view.filter = "tp=8 recompute=none";
  Config pinned = preset_config("llama3.1-405b", 1024, 8, 8);
  view.pin = encode_state(pinned);
  const std::string link = encode_state(config) + encode_view(view);
  CHECK(link.find("&tab=layouts&units=mib&sort=tokens_per_s_per_gpu&order=desc&filter=tp%3D8%20recompute%3Dnone&pin=v%3D1") !=
        std::string::npos);
  PageView read;
  const ParsedConfig parsed = decode_state(link, &read);
  CHECK_FALSE(has_errors(parsed.issues));
  CHECK(read == view);
  CHECK(encode_state(parsed.config) == encode_state(config));
  // The pinned state decodes to the pinned config.
  CHECK(encode_state(decode_state(read.pin).config) == encode_state(pinned));
  // A front end without a view (the CLI's --state) reads the same config and no issue.
  const ParsedConfig cli = decode_state(link);
  CHECK(cli.issues.empty());
  CHECK(encode_state(cli.config) == encode_state(config));
}

TEST_CASE("bad view values are reported like other keys, naming the key, as warnings that keep the config") {
  PageView view;
  const ParsedConfig parsed =
      decode_state("v=1&gpus=16&tab=charts&units=MB&sort=speed&order=up&filter=" + std::string(80, 'x') +
                       "&pin=v%3D1%26tp%3D2.5&tabs=memory",
                   &view);
  const auto message_for = [&](const char* field) {
    for (const Issue& issue : parsed.issues)
      if (issue.field == field) return issue.message;
    return std::string();
  };
  CHECK(message_for("tab") == "tab must be one of inputs, memory, layouts, methods, compare, validation, got \"charts\".");
  CHECK(message_for("units") == "units must be one of gib, gb, mib, got \"MB\".");
  CHECK(message_for("sort").find("sort must be one of rank, dp, tp") == 0);
  CHECK(message_for("order") == "order must be one of asc, desc, got \"up\".");
  CHECK(message_for("filter").find("80 bytes") != std::string::npos);
  CHECK(message_for("pin").find("the pinned configuration is not used: tp:") == 0);
  CHECK(message_for("tabs").find("is not a meshfit config field") != std::string::npos);  // unknown: as ever
  CHECK(view == PageView{});
  CHECK(parsed.config.cluster.gpus == 16);
  // Warnings: the view falls back to its default and the config is still evaluated.
  for (const Issue& issue : parsed.issues)
    if (is_view_key(issue.field)) CHECK(issue.severity == Severity::kWarning);
  CHECK_FALSE(has_errors(decode_state("v=1&model=llama3-8b&gpus=16&tab=charts").issues));
  // A view key given twice is a duplicate like any other.
  std::vector<Issue> issues;
  state_to_object("v=1&tab=layouts&tab=memory", issues);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].code == IssueCode::kDuplicateKey);
}

TEST_CASE("no config field's state key is a view key") {
  for (const ConfigField& field : config_fields()) {
    CAPTURE(field.key);
    CHECK_FALSE(is_view_key(field.state_key));
    CHECK_FALSE(is_view_key(field.key));
  }
}
