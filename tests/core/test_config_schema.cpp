// test_config_schema.cpp — the one schema table and what hangs off it: web/meshfit.d.ts declares
// exactly its fields with the right types, enum tables agree with their enums, framework defaults
// come from the profile, one stage shape serves both models, and the structural rules that
// validate, the search and the page's choosers share agree with each other.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "api.h"
#include "spec/config_schema.h"
#include "spec/input_limits.h"
#include "fixtures.h"
#include "io/gpu_runs.h"
#include "io/serialize.h"
#include "spec/structure.h"
#include "io/url_state.h"
#include "perf/perf_model.h"
#include "spec/validate.h"

using namespace meshfit;
using meshfit_test::preset_config;
using nlohmann::json;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// "a" | 'b' | 0 | 1 -> {"a", "b", "0", "1"}; a named alias (`Recompute`) is resolved through `aliases`.
std::set<std::string> union_members(std::string type, const std::map<std::string, std::string>& aliases) {
  if (aliases.count(type)) type = aliases.at(type);
  std::set<std::string> members;
  std::stringstream parts(type);
  for (std::string part; std::getline(parts, part, '|');) {
    part = std::regex_replace(part, std::regex(R"(^\s+|\s+$|')"), "");
    members.insert(part);
  }
  return members;
}

std::set<std::string> words(const std::string& allowed) {
  std::set<std::string> out;
  std::stringstream parts(allowed);
  for (std::string part; std::getline(parts, part, ',');) out.insert(std::regex_replace(part, std::regex(R"(^\s+|\s+$)"), ""));
  return out;
}

}  // namespace

TEST_CASE("web/meshfit.d.ts declares every schema field with its type, and nothing else") {
  const std::string dts = read_file(std::string(MESHFIT_SOURCE_DIR) + "/web/meshfit.d.ts");
  REQUIRE(!dts.empty());
  std::map<std::string, std::string> aliases;  // export type Name = ...;
  const std::regex alias_pattern(R"(export type (\w+) = ([^;]+);)");
  for (auto it = std::sregex_iterator(dts.begin(), dts.end(), alias_pattern); it != std::sregex_iterator(); ++it)
    aliases[(*it)[1]] = (*it)[2];
  const size_t start = dts.find("export interface Config {");
  REQUIRE(start != std::string::npos);
  const std::string body = dts.substr(start, dts.find("\n}", start) - start);
  std::map<std::string, std::string> declared;  // key -> type
  const std::regex field_pattern(R"((\w+)\?: ([^;]+);)");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), field_pattern); it != std::sregex_iterator(); ++it)
    declared[(*it)[1]] = (*it)[2];
  REQUIRE(declared.erase("state") == 1);  // the one non-field input: a URL state merged under the fields

  int checked = 0;
  for (const ConfigField& field : config_fields()) {
    CAPTURE(field.key);
    REQUIRE(declared.count(field.key) == 1);
    const std::string type = declared.at(field.key);
    declared.erase(field.key);
    switch (field.kind) {
      case FieldKind::kInteger:
        if (type != "number") {  // a literal union of the allowed integers (zero)
          for (const std::string& member : union_members(type, aliases)) CHECK(std::regex_match(member, std::regex(R"(\d+)")));
        }
        break;
      case FieldKind::kNumber: CHECK(type == "number"); break;
      case FieldKind::kBoolean: CHECK(type == "boolean"); break;
      case FieldKind::kPreset:
      case FieldKind::kText: CHECK(type == "string"); break;
      case FieldKind::kWord: {
        std::set<std::string> expected = words(field.allowed);
        if (field.reads_old_boolean) expected.insert("boolean");  // the old value, still read
        CHECK(union_members(type, aliases) == expected);
        break;
      }
    }
    ++checked;
  }
  for (const LegacyField& legacy : legacy_config_fields()) {  // older keys the API still reads: declared, deprecated
    CAPTURE(legacy.key);
    REQUIRE(declared.count(legacy.key) == 1);
    CHECK(declared.at(legacy.key) == "boolean");
    CHECK(dts.find("@deprecated Still read, with a renamed_field warning: write " + std::string(legacy.replaced_by)) !=
          std::string::npos);
    declared.erase(legacy.key);
  }
  CHECK(declared.empty());  // no field in the .d.ts that the schema lacks
  CHECK(checked == int(config_fields().size()));
}

TEST_CASE("web/meshfit.d.ts's GpuMetric names exactly the GPU ground truth's figures, as validate() keys them") {
  const std::string dts = read_file(std::string(MESHFIT_SOURCE_DIR) + "/web/meshfit.d.ts");
  std::smatch alias;
  REQUIRE(std::regex_search(dts, alias, std::regex(R"(export type GpuMetric = ([^;]+);)")));
  std::set<std::string> expected;
  for (const auto& entry : EnumNames<GpuMetric>::table) expected.insert(entry.key);
  CHECK(union_members(alias[1], {}) == expected);
}

TEST_CASE("a link may carry every schema field, every legacy key and the view keys: the state size limit leaves room") {
  // url_state.cpp refuses a state of more than kMaxStateKeys pairs; a link that sets every field of a
  // custom model, GPU and run (and the view's tab, units, sort, order, filter and pin) must pass.
  CHECK(config_fields().size() + legacy_config_fields().size() + 6 <= kMaxStateKeys);
}

TEST_CASE("every schema row has unique keys, a getter, and a setter unless a preset") {
  std::set<std::string> keys, state_keys, flags;
  for (const ConfigField& field : config_fields()) {
    CAPTURE(field.key);
    CHECK(keys.insert(field.key).second);
    CHECK(state_keys.insert(field.state_key).second);
    CHECK(flags.insert(field.flag()).second);
    CHECK((field.get != nullptr));
    CHECK((field.set != nullptr) == (field.kind != FieldKind::kPreset));
    CHECK(std::string(field.help).size() > 3);
  }
}

TEST_CASE("enum tables: keys round-trip, labels exist, aliases read but are never written") {
  for (size_t i = 0; i < enum_count<Optimizer>(); ++i) {
    const Optimizer value = Optimizer(i);
    CHECK(enum_from_key<Optimizer>(enum_key(value)) == value);
  }
  CHECK(enum_from_key<Optimizer>("adam") == Optimizer::kAdamW);
  CHECK(std::string(to_string(Optimizer::kAdamW)) == "adamw");
  CHECK(enum_keys_text<Optimizer>() == "adamw, adam, sgd, adam8bit, adamw_8bit, paged_adamw, paged_adamw_32bit, "
                                       "paged_adamw8bit, paged_adamw_8bit, adafactor");
  CHECK(enum_count<Component>() == size_t(kComponentCount));
  CHECK(std::string(to_string(Component::kOptimizerStates)) == "optimizer_states");
  CHECK(std::string(component_label(Component::kLogitsLoss)) == "Logits & loss");
  CHECK(std::string(to_string(IssueCode::kGpusPerNodeMismatch)) == "gpus_per_node_mismatch");
  CHECK(std::string(to_string(RejectReason::kOverMemoryLimit)) == "over_memory_limit");
  CHECK(!enum_from_key<Framework>("jax").has_value());
}

TEST_CASE("config_to_json round-trips every field through parse_config, and the URL state too") {
  Config config = preset_config("gpt3-175b", 64, 8, 8);
  config.training.framework = Framework::kDeepSpeed;
  config.layout.zero = 2;
  config.training.fp32_grad_buffer = false;
  config.training.recompute = Recompute::kSelective;
  config.training.optimizer = Optimizer::kAdam8bit;
  config.training.headroom = 0.9;
  config.layout.pp_first_stage_layers = 6;
  config.layout.pp_last_stage_layers = 6;
  const json resolved = config_to_json(config);
  const ParsedConfig parsed = parse_config(resolved);
  REQUIRE(parsed.issues.empty());
  // Dimensions written out with the preset's own values keep the preset's name: the round trip is exact.
  CHECK(config_to_json(parsed.config) == resolved);
  // One dimension changed: "<preset>+custom", which reads back as itself (it was refused as no preset).
  json changed = resolved;
  changed["vocab"] = 50304;
  const ParsedConfig custom = parse_config(changed);
  REQUIRE(custom.issues.empty());
  const json written = config_to_json(custom.config);
  CHECK(written["model"] == "gpt3-175b+custom");
  const ParsedConfig back = parse_config(written);
  REQUIRE(back.issues.empty());
  CHECK(config_to_json(back.config) == written);
  json unknown = written;
  unknown["model"] = "gpt9-custom+custom";
  CHECK_FALSE(parse_config(unknown).issues.empty());

  const ParsedConfig decoded = decode_state(encode_state(config));
  REQUIRE(decoded.issues.empty());
  CHECK(config_to_json(decoded.config) == resolved);
}

TEST_CASE("the run name (one schema row) goes through JSON, the URL state and the CLI's flag list") {
  Config config = preset_config("llama3-8b", 8);
  config.name = "Llama 3 \xE2\x80\x94 8 GPUs & 50% MFU?";  // UTF-8 and URL-reserved characters
  const json resolved = config_to_json(config);
  CHECK(resolved["name"] == config.name);
  CHECK(parse_config(resolved).config.name == config.name);
  const std::string state = encode_state(config);
  CHECK(state.find("name=") != std::string::npos);
  CHECK(decode_state(state).config.name == config.name);
  CHECK(config_to_json(default_config()).value("name", "?") == "");  // empty by default
  const ConfigField* row = find_config_field("name");
  REQUIRE(row != nullptr);
  CHECK(row->kind == FieldKind::kText);
  CHECK(row->group == FieldGroup::kRun);  // listed by the page's Run inputs, header and Markdown
  CHECK(row->flag() == "name");
}

TEST_CASE("torch.compile is one input: the old compile key reads as kernels=compiled, with a renamed_field warning") {
  // Before, compile (memory) and kernels=compiled (step time) could disagree on the same run.
  const json base = {{"model", "llama3-8b"}, {"gpus", 8}, {"framework", "fsdp"}};
  json old_spelling = base, new_spelling = base;
  old_spelling["compile"] = true;
  new_spelling["kernels"] = "compiled";
  const ParsedConfig old_parsed = parse_config(old_spelling), new_parsed = parse_config(new_spelling);
  REQUIRE(new_parsed.issues.empty());
  REQUIRE(old_parsed.issues.size() == 1);
  CHECK(old_parsed.issues[0].code == IssueCode::kRenamedField);
  CHECK(old_parsed.issues[0].severity == Severity::kWarning);
  CHECK(old_parsed.issues[0].message.find("kernels=compiled") != std::string::npos);
  CHECK(config_to_json(old_parsed.config) == config_to_json(new_parsed.config));
  CHECK(config_to_json(old_parsed.config)["kernels"] == "compiled");
  CHECK_FALSE(config_to_json(old_parsed.config).contains("compile"));  // never written again
  // A shared link with the old key: same config, same warning.
  const ParsedConfig linked = decode_state("v=1&model=llama3-8b&gpus=8&framework=fsdp&compile=true");
  CHECK(config_to_json(linked.config) == config_to_json(new_parsed.config));
  CHECK(std::count_if(linked.issues.begin(), linked.issues.end(),
                      [](const Issue& i) { return i.code == IssueCode::kRenamedField; }) == 1);
  // Both models read the one input: compiled activations and loss, and the compiled kernel profile.
  const MemoryReport eager_memory = estimate_memory(parse_config(base).config);
  const MemoryReport compiled_memory = estimate_memory(new_parsed.config);
  REQUIRE(eager_memory.valid());
  REQUIRE(compiled_memory.valid());
  CHECK(compiled_memory.ranks[0].bytes(Component::kActivations) < eager_memory.ranks[0].bytes(Component::kActivations));
  CHECK(framework_perf(Framework::kFsdp, new_parsed.config.training.kernels, true).host_ops_per_layer <
        framework_perf(Framework::kFsdp, Kernels::kAuto, true).host_ops_per_layer);
  // compile=false changes nothing; a kernels given beside the old key wins; a non-boolean is refused.
  json off = base;
  off["compile"] = false;
  CHECK(config_to_json(parse_config(off).config) == config_to_json(parse_config(base).config));
  json both = old_spelling;
  both["kernels"] = "eager";
  CHECK(parse_config(both).config.training.kernels == Kernels::kEager);
  json wrong = base;
  wrong["compile"] = "yes";
  CHECK(has_errors(parse_config(wrong).issues));
}

TEST_CASE("a config without zero gets its framework's default stage (FSDP: full sharding)") {
  const ParsedConfig fsdp = parse_config(json{{"model", "llama3.1-8b"}, {"gpus", 8}, {"framework", "fsdp"}});
  REQUIRE(fsdp.issues.empty());
  CHECK(fsdp.config.layout.zero == 3);
  CHECK(estimate_memory(fsdp.config).valid());
  CHECK(parse_config(json{{"model", "llama3.1-8b"}, {"framework", "megatron"}}).config.layout.zero == 1);
  CHECK(parse_config(json{{"model", "llama3.1-8b"}, {"framework", "fsdp"}, {"zero", 2}}).config.layout.zero == 2);
  // The state leaves the default out and reads it back.
  const std::string state = encode_state(fsdp.config);
  CHECK(state.find("zero") == std::string::npos);
  CHECK(decode_state(state).config.layout.zero == 3);
  for (const auto& entry : EnumNames<Framework>::table) {
    const FrameworkProfile& profile = framework_profile(entry.value);
    CHECK(profile.framework == entry.value);
    CHECK(profile.offers_zero(profile.default_zero));
  }
}

TEST_CASE("one stage shape: the memory and the performance model count the same parameters") {
  Config config = preset_config("llama3-8b", 8);
  const MemoryPlan plan = plan_memory(config);
  const StageShape shape = stage_shape(config, plan, 0);
  const MemoryReport report = estimate_memory(config);
  REQUIRE(report.valid());
  CHECK(shape.parameters == report.ranks[0].intermediates.parameters);
  CHECK(shape.lm_head_parameters > 0);           // pp = 1: the only stage holds the head
  CHECK(shape.parameters == doctest::Approx(8.03e9).epsilon(0.001));
  // The optimizer step reads every parameter of the stage, head included: its time scales with them.
  const StepReport step = predict_step(config, plan);
  // (gradients read twice: clipping and the update; one fused optimizer kernel's rate, perf_model.h)
  CHECK(step.breakdown.optimizer_s * optimizer_step_bytes_per_s(config.gpu, config.training) ==
        doctest::Approx(shape.parameters * (2 * plan.optimizer_bytes_per_param + 2 * plan.grad_bytes_per_param +
                                            plan.weight_bytes_per_param)));
}

TEST_CASE("structural rules: what the search applies, validate accepts, and the choosers offer") {
  const ParsedConfig parsed = parse_config(json{{"model", "llama3.1-405b"}, {"gpus", 16384}, {"seq", 8192}, {"global_batch", 2048}});
  REQUIRE(parsed.issues.empty());
  SearchOptions options;
  options.top_k = 20;
  const SearchResult result = search_layouts(parsed.config, options);
  REQUIRE(result.top.size() == 20);
  int checked = 0;
  for (const LayoutCandidate& candidate : result.top) {
    const Config applied = apply(parsed.config, candidate);
    CAPTURE(encode_state(applied));
    CHECK(validate(applied).empty());
    CHECK(same_layout(applied, candidate));
    const std::vector<int64_t> tps = tp_choices(applied), pps = pp_choices(applied), vpps = vpp_choices(applied);
    CHECK(std::count(tps.begin(), tps.end(), candidate.layout.tp) == 1);
    CHECK(std::count(pps.begin(), pps.end(), candidate.layout.pp) == 1);
    CHECK(std::count(vpps.begin(), vpps.end(), candidate.layout.vpp) == 1);
    ++checked;
  }
  CHECK(checked == 20);
  Config interleaved = apply(parsed.config, result.top.front());
  interleaved.layout.pp = 16;
  CHECK(vpp_choices(interleaved).back() <= kMaxVpp);  // the page offers what the search tries
  CHECK(zero_choices(Framework::kFsdp) == std::vector<int64_t>{0, 2, 3});
}

// dp_comm_overlap was a boolean (default true) and is auto/on/off now: what older configs, links and
// scripts wrote keeps its meaning, on the same key, without a warning.
TEST_CASE("dp_comm_overlap: old true/false and 1/0 in JSON and links read as on/off, and auto is written by default") {
  const json base = {{"model", "llama3-8b"}, {"gpus", 16}, {"framework", "deepspeed"}};
  const auto parsed_with = [&base](const json& value) {
    json object = base;
    object["dp_comm_overlap"] = value;
    return parse_config(object);
  };
  const std::pair<json, DpCommOverlap> cases[] = {{true, DpCommOverlap::kOn},   {false, DpCommOverlap::kOff},
                                                  {1, DpCommOverlap::kOn},      {0, DpCommOverlap::kOff},
                                                  {"on", DpCommOverlap::kOn},   {"off", DpCommOverlap::kOff},
                                                  {"auto", DpCommOverlap::kAuto}};
  for (const auto& entry : cases) {
    CAPTURE(entry.first.dump());
    const ParsedConfig parsed = parsed_with(entry.first);
    CHECK(parsed.issues.empty());
    CHECK(parsed.config.training.dp_comm_overlap == entry.second);
  }
  CHECK(parse_config(base).config.training.dp_comm_overlap == DpCommOverlap::kAuto);
  CHECK(config_to_json(parse_config(base).config)["dp_comm_overlap"] == "auto");
  CHECK(config_to_json(parsed_with(true).config)["dp_comm_overlap"] == "on");  // written as the word from now on
  // Anything else is refused, naming the field and what it accepts.
  for (const json& wrong : {json("yes"), json(2), json(0.5), json::array()}) {
    CAPTURE(wrong.dump());
    const ParsedConfig parsed = parsed_with(wrong);
    REQUIRE(parsed.issues.size() == 1);
    CHECK(parsed.issues[0].code == IssueCode::kUnknownValue);
    CHECK(parsed.issues[0].field == "dp_comm_overlap");
    CHECK(parsed.issues[0].message.find("auto, on, off") != std::string::npos);
  }
  // Links: an old link wrote dp_comm_overlap=false (true was the default, never written).
  const std::pair<const char*, DpCommOverlap> links[] = {{"false", DpCommOverlap::kOff}, {"true", DpCommOverlap::kOn},
                                                         {"0", DpCommOverlap::kOff},     {"1", DpCommOverlap::kOn},
                                                         {"off", DpCommOverlap::kOff},   {"on", DpCommOverlap::kOn}};
  for (const auto& link : links) {
    CAPTURE(link.first);
    const ParsedConfig decoded = decode_state(std::string("v=1&model=llama3-8b&gpus=16&framework=deepspeed&dp_comm_overlap=") + link.first);
    CHECK(decoded.issues.empty());
    CHECK(decoded.config.training.dp_comm_overlap == link.second);
  }
  // A new link writes the word, and only when it is not auto.
  Config config = parse_config(base).config;
  CHECK(encode_state(config).find("dp_comm_overlap") == std::string::npos);
  config.training.dp_comm_overlap = DpCommOverlap::kOff;
  CHECK(encode_state(config).find("dp_comm_overlap=off") != std::string::npos);
  CHECK(decode_state(encode_state(config)).config.training.dp_comm_overlap == DpCommOverlap::kOff);
  // The schema row says so: the CLI keeps --dp-comm-overlap (on) and --no-dp-comm-overlap (off).
  const ConfigField* row = find_config_field("dp_comm_overlap");
  REQUIRE(row != nullptr);
  CHECK(row->kind == FieldKind::kWord);
  CHECK(row->reads_old_boolean);
  CHECK(row->allowed == "auto, on, off");
}
