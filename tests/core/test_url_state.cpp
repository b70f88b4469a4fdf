// test_url_state.cpp — the shareable state: readable, minimal, round-tripping, robust to bad input.
#include <doctest/doctest.h>

#include "api.h"
#include "fixtures.h"
#include "memory/memory_model.h"
#include "io/url_state.h"

using namespace meshfit;
using namespace meshfit_test;

TEST_CASE("the state carries only what differs from the defaults, in readable keys") {
  Config config = preset_config("llama3.1-70b", 64, 8, 4);
  config.training.seq = 8192;
  config.training.global_batch = 256;
  CHECK(encode_state(config) == "v=1&model=llama3.1-70b&gpus=64&seq=8192&gbs=256&tp=8&pp=4");
  CHECK(encode_state(default_config()) == "v=1");
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
  CHECK(decode_state("v=1&model=llama3-8b&seq").issues.front().code == IssueCode::kUnknownField);
  const ParsedConfig newer = decode_state("v=99&model=llama3-8b");
  CHECK(has_errors(newer.issues));
  CHECK(newer.issues.front().message.find("newer") != std::string::npos);
  const ParsedConfig unversioned = decode_state("#model=llama3-8b&tp=2");
  CHECK_FALSE(has_errors(unversioned.issues));  // v=1 assumed, with a warning
  CHECK(unversioned.config.layout.tp == 2);
  for (const char* hostile : {"", "&&&", "=", "v=", "%", "%4", "v=1&model=%00", "v=1&tp=1e400", "v=1&gpus=-5"})
    CHECK_NOTHROW(decode_state(hostile));
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
