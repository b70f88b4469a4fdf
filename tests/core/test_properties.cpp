// test_properties.cpp — properties over thousands of seeded random valid configurations (issue 17):
// every number in the JSON report, the page's Markdown and CSV exports (ui/reports.cpp) finite and
// non-negative, the state round-trips, components sum
// to the totals, the worst rank is the maximum, memory is monotone where physics says so (micro-
// batch, sequence, layers up; tp up with SP, dp up under ZeRO-3 down, NCCL aside), and a rule broken
// always gives an issue. Seeded: a failure names its trial and config (CAPTURE), and reproduces.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <regex>
#include <sstream>
#include <string>

#include "api.h"
#include "app.h"
#include "reports.h"

#include "fixtures.h"
#include "memory/memory_model.h"
#include "perf/perf_model.h"
#include "io/serialize.h"
#include "spec/structure.h"
#include "io/url_state.h"
#include "spec/validate.h"

using namespace meshfit;
using nlohmann::json;

namespace {

template <typename T>
T pick(std::mt19937_64& random, std::initializer_list<T> values) {
  return *(values.begin() + random() % values.size());
}

// A random configuration; about a fifth pass validate (the callers keep those).
Config random_config(std::mt19937_64& random) {
  Config c = default_config();
  if (random() % 2) {
    c.model = model_presets()[random() % model_presets().size()].spec;
  } else {
    ModelSpec& m = c.model;
    m.name = "custom";
    m.heads = pick<int64_t>(random, {4, 8, 16, 32, 64});
    m.hidden = m.heads * pick<int64_t>(random, {32, 64, 128});
    m.kv_heads = pick<int64_t>(random, {1, 2, 4, 8, 16, 32, 64});
    if (m.heads % m.kv_heads != 0) m.kv_heads = m.heads;
    m.ffn = 256 * int64_t(1 + random() % 64);
    m.layers = int64_t(2 + random() % 95);
    m.vocab = int64_t(1000 + random() % 200000);
    m.tied_embeddings = random() % 2;
    m.norm = random() % 2 ? NormKind::kRmsNorm : NormKind::kLayerNorm;
    m.mlp = random() % 2 ? MlpKind::kSwiGlu : MlpKind::kGelu;
    m.linear_bias = random() % 2;
    m.dropout = random() % 2;
  }
  c.gpu = gpu_presets()[random() % gpu_presets().size()].spec;
  Layout& l = c.layout;
  l.tp = pick<int64_t>(random, {1, 1, 2, 4, 8});
  l.pp = pick<int64_t>(random, {1, 1, 2, 4});
  l.cp = pick<int64_t>(random, {1, 1, 1, 2});
  l.vpp = l.pp > 1 ? pick<int64_t>(random, {1, 1, 2}) : 1;
  l.dp = 0;
  const int64_t dp = pick<int64_t>(random, {1, 2, 4, 8, 16});
  c.cluster.gpus = dp * l.tp * l.pp * l.cp;
  c.cluster.gpus_per_node = 8;
  TrainingSpec& t = c.training;
  t.framework = pick<Framework>(random, {Framework::kMegatron, Framework::kFsdp, Framework::kDeepSpeed});
  const std::vector<int64_t> zeros = zero_choices(t.framework);
  l.zero = zeros[random() % zeros.size()];
  t.seq = 512 * int64_t(1 + random() % 16);
  t.micro_batch = pick<int64_t>(random, {1, 1, 2, 4});
  t.global_batch = dp * t.micro_batch * l.pp * int64_t(1 + random() % 8);
  t.precision = c.gpu.fp8_flops > 0 && random() % 3 == 0 ? Precision::kFp8 : Precision::kBf16;
  t.optimizer = pick<Optimizer>(random, {Optimizer::kAdamW, Optimizer::kSgd, Optimizer::kAdam8bit});
  t.recompute = pick<Recompute>(random, {Recompute::kNone, Recompute::kSelective, Recompute::kFull});
  t.flash = random() % 4 != 0;
  t.sp = random() % 2;
  t.fp32_grad_buffer = random() % 2;
  return c;
}

// Valid random configs, `count` of them, from one seed.
std::vector<Config> valid_configs(uint64_t seed, int count) {
  std::mt19937_64 random(seed);
  std::vector<Config> out;
  while (int(out.size()) < count) {
    Config c = random_config(random);
    if (!has_errors(validate(c))) out.push_back(c);
  }
  return out;
}

// Every number finite and >= 0, every key named; `path` says where a failure is.
void check_numbers(const json& value, const std::string& path) {
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) check_numbers(item, path + "." + key);
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) check_numbers(value[i], path + "[" + std::to_string(i) + "]");
  } else if (value.is_number()) {
    INFO(path);
    CHECK(std::isfinite(value.get<double>()));
    CHECK(value.get<double>() >= 0);
  } else {
    INFO(path);
    CHECK_FALSE(value.is_null());
  }
}

double worst_device_bytes(const Config& c) {
  const MemoryReport report = estimate_memory(c);
  REQUIRE(report.valid());
  return report.worst().device_bytes;
}

// The largest peak reserved (PyTorch's allocator: everything but NCCL and the CUDA context). NCCL
// memory grows with the communicators a layout creates (dp or tp going from 1 to 2 adds one), so
// the sharding properties are stated on what the model's tensors take.
double worst_reserved_bytes(const Config& c) {
  const MemoryReport report = estimate_memory(c);
  REQUIRE(report.valid());
  double worst = 0;
  for (const RankMemory& rank : report.ranks) worst = std::max(worst, rank.peak_reserved_bytes);
  return worst;
}

}  // namespace

TEST_CASE("random valid configs: every reported number finite and non-negative, and the state round-trips") {
  const std::vector<Config> configs = valid_configs(17, 2000);
  for (size_t trial = 0; trial < configs.size(); ++trial) {
    const Config& c = configs[trial];
    CAPTURE(trial);
    CAPTURE(encode_state(c));
    const MemoryReport report = estimate_memory(c);
    REQUIRE(report.valid());
    json out = memory_report_to_json(report);
    add_step_report(out, predict_step(c, plan_memory(c)));
    out["config"] = config_to_json(c);
    check_numbers(out, "estimate");
    const std::string state = encode_state(c);
    CHECK(state.find("nan") == std::string::npos);
    CHECK(state.find("inf") == std::string::npos);
    const ParsedConfig decoded = decode_state(state);
    CHECK_FALSE(has_errors(decoded.issues));
    CHECK(config_to_json(decoded.config) == config_to_json(c));
  }
}

namespace {

// The page's state for a config, as ui/app.cpp recompute() fills what the exports read.
meshfit::ui::AppState page_state(const Config& c, bool units_gb, bool local_file, bool with_search) {
  meshfit::ui::AppState s;
  s.config = c;
  s.estimate = estimate(c);
  s.issues = s.estimate.memory.issues;
  s.state = encode_state(c);
  s.units = units_gb ? meshfit::ViewUnits::kGigabytes : meshfit::ViewUnits::kGibibytes;
  s.local_file = local_file;
  if (with_search) {
    SearchOptions options;
    options.top_k = 10;
    options.budget = 20000;  // the rows the Markdown shows; a cut-short search still lists what it found
    s.search = search_layouts(c, options);
  }
  return s;
}

// Every figure of a text: a number is [0-9]+(.[0-9]+)?; one right after a '-' that follows a space,
// '|' or '(' would be negative ("llama3-8b" is a name, not -8). No nan/inf word anywhere.
void check_text_figures(const std::string& text, const char* what) {
  INFO(what << ":\n" << text);
  static const std::regex bad_word("(^|[^A-Za-z])(nan|inf|infinity)([^A-Za-z]|$)", std::regex::icase);
  CHECK_FALSE(std::regex_search(text, bad_word));
  static const std::regex negative("[|(\\s,]-[0-9]");
  CHECK_FALSE(std::regex_search(text, negative));
}

}  // namespace

TEST_CASE("random valid configs: the page's Markdown and CSV exports hold no NaN, inf or negative figure") {
  const std::vector<Config> configs = valid_configs(19, 2000);
  int searched = 0;
  for (size_t trial = 0; trial < configs.size(); ++trial) {
    const Config& c = configs[trial];
    CAPTURE(trial);
    CAPTURE(encode_state(c));
    const bool with_search = trial % 40 == 0;  // the search is the slow part; 50 configs list layouts
    const meshfit::ui::AppState s = page_state(c, trial % 2 == 1, trial % 3 == 0, with_search);
    REQUIRE(s.estimate.valid());
    searched += with_search && !s.search.top.empty();

    const std::string markdown = meshfit::ui::markdown_report(s);
    check_text_figures(markdown, "Markdown");
    // One table row per rank, each with its share of capacity.
    size_t rows = 0;
    for (const RankMemory& rank : s.estimate.memory.ranks)
      rows += markdown.find("| " + meshfit::ui::rank_name(rank, s.estimate.memory.ranks.size()) + " |") != std::string::npos;
    CHECK(rows == s.estimate.memory.ranks.size());

    // CSV: the header, then one row per rank whose every figure parses whole as a finite byte count >= 0.
    const std::string csv = meshfit::ui::csv_report(s);
    check_text_figures(csv, "CSV");
    std::istringstream lines(csv);
    std::string line;
    REQUIRE(std::getline(lines, line));
    const size_t columns = size_t(std::count(line.begin(), line.end(), ',')) + 1;
    size_t ranks = 0;
    while (std::getline(lines, line)) {
      CAPTURE(line);
      std::istringstream fields(line);
      std::string field;
      size_t column = 0;
      while (std::getline(fields, field, ',')) {
        if (column++ < 1) continue;  // the role
        char* end = nullptr;
        const double value = std::strtod(field.c_str(), &end);
        CHECK((!field.empty() && *end == '\0'));
        CHECK(std::isfinite(value));
        CHECK(value >= 0);
      }
      CHECK(column == columns);
      ++ranks;
    }
    CHECK(ranks == s.estimate.memory.ranks.size());
  }
  CHECK(searched > 20);  // the layouts table of the Markdown was exercised
}

TEST_CASE("random valid configs: components sum to the totals and the worst rank is the maximum") {
  for (const Config& c : valid_configs(23, 2000)) {
    CAPTURE(encode_state(c));
    const MemoryReport report = estimate_memory(c);
    REQUIRE(report.valid());
    double worst = 0;
    for (const RankMemory& rank : report.ranks) {
      double all = 0, allocated = 0;
      for (int i = 0; i < kComponentCount; ++i) {
        CHECK(rank.component_bytes[size_t(i)] >= 0);
        all += rank.component_bytes[size_t(i)];
        if (i <= int(Component::kWorkspace)) allocated += rank.component_bytes[size_t(i)];
      }
      CHECK(rank.peak_allocated_bytes == doctest::Approx(allocated).epsilon(1e-12));
      CHECK(rank.device_bytes == doctest::Approx(all).epsilon(1e-12));
      CHECK(rank.peak_allocated_bytes <= rank.peak_reserved_bytes);
      CHECK(rank.peak_reserved_bytes <= rank.device_bytes);
      worst = std::max(worst, rank.device_bytes);
    }
    CHECK(report.worst().device_bytes == worst);
  }
}

TEST_CASE("random valid configs: memory never falls as micro-batch, sequence or layers grow") {
  for (const Config& c : valid_configs(29, 1500)) {
    CAPTURE(encode_state(c));
    const double base = worst_device_bytes(c);
    Config bigger_batch = c;  // micro-batch and global batch doubled: the same micro-batches per step
    bigger_batch.training.micro_batch *= 2;
    bigger_batch.training.global_batch *= 2;
    CHECK(worst_device_bytes(bigger_batch) >= base);
    Config longer = c;
    longer.training.seq *= 2;
    CHECK(worst_device_bytes(longer) >= base);
    Config deeper = c;  // one more layer per pipeline chunk keeps every split valid
    deeper.model.layers += c.layout.pp * c.layout.vpp;
    deeper.model.name = "custom";
    if (!has_errors(validate(deeper))) CHECK(worst_device_bytes(deeper) >= base);
  }
}

TEST_CASE("random valid configs: more tp (with SP) never raises per-rank memory") {
  int compared = 0;
  for (Config c : valid_configs(31, 1500)) {
    c.training.sp = true;
    Config wider = c;  // tp doubled at the same dp: twice the GPUs
    wider.layout.tp *= 2;
    wider.cluster.gpus *= 2;
    if (has_errors(validate(c)) || has_errors(validate(wider))) continue;
    CAPTURE(encode_state(c));
    CHECK(worst_reserved_bytes(wider) <= worst_reserved_bytes(c) * (1 + 1e-12));
    ++compared;
  }
  CHECK(compared > 300);
}

TEST_CASE("random valid configs: more dp never raises per-rank memory under ZeRO-3") {
  int compared = 0;
  for (Config c : valid_configs(37, 3000)) {
    if (c.layout.zero != 3) continue;
    Config wider = c;  // dp doubled, global batch doubled: the same micro-batches per step
    wider.cluster.gpus *= 2;
    wider.training.global_batch *= 2;
    if (has_errors(validate(wider))) continue;
    CAPTURE(encode_state(c));
    CHECK(worst_reserved_bytes(wider) <= worst_reserved_bytes(c) * (1 + 1e-12));
    ++compared;
  }
  CHECK(compared > 100);
}

TEST_CASE("random valid configs with one rule broken always give an issue") {
  std::mt19937_64 random(41);
  const std::vector<Config> configs = valid_configs(43, 2000);
  for (size_t trial = 0; trial < configs.size(); ++trial) {
    Config c = configs[trial];
    const int rule = int(random() % 12);
    CAPTURE(trial);
    CAPTURE(rule);
    switch (rule) {
      case 0: c.model.hidden = -c.model.hidden; break;
      case 1: c.layout.tp = c.model.heads + 1; break;                        // tp cannot divide heads and fit gpus
      case 2: c.layout.pp = c.model.layers + 1; c.cluster.gpus *= c.layout.pp; break;
      case 3: c.layout.dp = effective_dp(c); c.cluster.gpus += 1; break;     // dp*tp*pp*cp != gpus
      case 4: c.training.micro_batch = c.training.global_batch + 1; break;      // no whole micro-batch count
      case 5: c.layout.zero = 4; break;
      case 6: c.training.headroom = random() % 2 ? 0.0 : 1.5; break;
      case 7: c.gpu.memory_bytes = 0; break;
      case 8: c.model.kv_heads = c.model.heads + 1; break;
      case 9: c.layout.cp = 3; c.training.seq = 7; c.cluster.gpus *= 3; break;
      case 10: c.layout.pp_first_stage_layers = INT64_MAX; c.layout.pp_last_stage_layers = INT64_MAX; break;
      case 11: c.layout.vpp = 0; break;
    }
    CHECK(has_errors(validate(c)));
    CHECK_FALSE(estimate_memory(c).valid());
  }
}

TEST_CASE("chart axes: nice_step is 1, 2 or 5 x 10^n and cuts the span into ticks/2.5 to ticks parts") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> exponent(-3.0, 7.0), count(2.0, 12.0);
  for (int i = 0; i < 2000; ++i) {
    const double span = std::pow(10.0, exponent(rng)), ticks = count(rng);
    const double step = meshfit::ui::nice_step(span, ticks);
    CAPTURE(span);
    CAPTURE(ticks);
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    CHECK((std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 || std::abs(mantissa - 5) < 1e-9));
    CHECK(span / step <= ticks * (1 + 1e-12));
    CHECK(span / step >= ticks / 2.5 * (1 - 1e-12));
  }
}

TEST_CASE("Compare: stages are matched only between equal pipelines, and an out-of-memory side's speed says so") {
  // An as-a-user review pinned tp 8 pp 4 and compared tp 2 pp 8: "stage 3 peak: last 3 -> middle 3
  // (+113.7%)", and "+5.1%" tokens/s for a layout that does not fit.
  Config pinned = meshfit_test::preset_config("llama3.1-70b", 256);
  pinned.gpu = *find_gpu_preset("h100-sxm");
  pinned.training.seq = 8192;
  pinned.layout.tp = 8;
  pinned.layout.pp = 4;
  Config current = pinned;
  current.layout.tp = 2;
  current.layout.pp = 8;
  current.layout.cp = 4;
  current.training.recompute = Recompute::kNone;
  meshfit::ui::AppState s = page_state(current, false, false, false);
  REQUIRE(s.estimate.valid());
  meshfit::ui::pin_config(s, pinned);
  REQUIRE(s.pin_estimate.valid());
  bool said = false;
  for (const meshfit::ui::CompareRow& row : meshfit::ui::compare_rows(s)) {
    CAPTURE(row.label);
    if (row.label.rfind("stage ", 0) == 0) {
      CHECK(row.change.find('%') == std::string::npos);  // no stage-by-index change across pipelines
      said |= row.change == "stages differ: not matched";
    }
    if (row.label == "tokens/s/GPU" && s.estimate.memory.verdict == Verdict::kOutOfMemory)
      CHECK(row.current.find("(out of memory)") != std::string::npos);
  }
  CHECK(said);
  // Equal pipelines are matched stage by stage.
  meshfit::ui::pin_config(s, current);
  bool matched = false;
  for (const meshfit::ui::CompareRow& row : meshfit::ui::compare_rows(s))
    matched |= row.label == "stage 0 peak" && row.change.find('%') != std::string::npos;
  CHECK(matched);
}
