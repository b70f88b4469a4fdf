// main.cpp — the native command-line front end: `meshfit estimate` and `meshfit presets`.
// Flags and --config files map onto the one flat JSON schema (core/serialize.h); flags override
// the file. Exit status: 0 success, 2 invalid input (issues printed), 1 unreadable file.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "memory_model.h"
#include "perf_model.h"
#include "serialize.h"
#include "units.h"

namespace {

using nlohmann::json;
constexpr int kExitInvalid = 2;

// A flag's text as a JSON value: integers and numbers as numbers (so the core reports fractions
// as not_integer), true/false as booleans, anything else as a string.
json flag_value(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  char* end = nullptr;
  const long long integer = std::strtoll(text.c_str(), &end, 10);
  if (!text.empty() && end && *end == '\0') return integer;
  const double number = std::strtod(text.c_str(), &end);
  if (!text.empty() && end && *end == '\0') return number;
  return text;
}

struct Inputs {
  bool search = false;  // `meshfit search`: layout flags become pins, search flags are accepted
  std::string config_file;
  std::map<std::string, std::string> values;  // JSON key -> flag text
  std::map<std::string, int> switches;        // JSON key -> 1/0, -1 when not given
  bool json_output = false;
};

void add_input_flags(CLI::App& command, Inputs& in) {
  command.add_option("--config", in.config_file, "JSON config file (flags override it)");
  command.add_flag("--json", in.json_output, "print one JSON object");
  const std::pair<const char*, const char*> options[] = {
      {"model", "model preset (see `meshfit presets`)"},
      {"hidden", "hidden size"},
      {"layers", "transformer layers"},
      {"heads", "attention heads"},
      {"kv-heads", "key/value heads (GQA)"},
      {"ffn", "MLP intermediate size"},
      {"vocab", "vocabulary size"},
      {"norm", "rmsnorm | layernorm"},
      {"mlp", "swiglu | gelu"},
      {"gpu", "GPU preset (see `meshfit presets`) or custom"},
      {"gpu-memory-gib", "GPU memory capacity in GiB (custom GPU, or override a preset)"},
      {"gpus", "total GPUs"},
      {"gpus-per-node", "GPUs per node"},
      {"seq", "sequence length (tokens)"},
      {"global-batch", "global batch (sequences per step)"},
      {"micro-batch", "micro-batch size (sequences)"},
      {"precision", "bf16 | fp8"},
      {"optimizer", "adamw | sgd | adam8bit"},
      {"recompute", "none | selective | full"},
      {"framework", "megatron | fsdp | deepspeed"},
      {"headroom", "fraction of capacity flagged as tight (default 0.8)"},
      {"dp", "data-parallel degree (default: gpus / (tp*pp*cp))"},
      {"tp", "tensor-parallel degree"},
      {"pp", "pipeline-parallel degree"},
      {"cp", "context-parallel degree"},
      {"vpp", "interleaved chunks per pipeline rank"},
      {"zero", "ZeRO stage 0-3 (Megatron: 1 = distributed optimizer)"},
      {"pp-first-stage-layers", "layers on the first pipeline stage (uneven split)"},
      {"pp-last-stage-layers", "layers on the last pipeline stage (uneven split)"},
  };
  const std::pair<const char*, const char*> search_options[] = {
      {"max-dp", "search: largest dp"},
      {"max-tp", "search: largest tp"},
      {"max-pp", "search: largest pp"},
      {"max-cp", "search: largest cp"},
      {"max-vpp", "search: largest vpp (default 8)"},
      {"max-micro-batch", "search: largest micro-batch (default 16)"},
      {"memory-limit", "search: feasible if the worst rank uses at most this fraction of capacity (default 1)"},
      {"top", "search: layouts to list (default 10)"},
  };
  for (const auto& [flag, help] : search_options) {
    if (!in.search) break;
    std::string key = flag;
    for (char& ch : key)
      if (ch == '-') ch = '_';
    command.add_option(std::string("--") + flag, in.values[key], help);
  }
  for (const auto& [flag, help] : options) {
    std::string key = flag;
    for (char& ch : key)
      if (ch == '-') ch = '_';
    command.add_option(std::string("--") + flag, in.values[key], help);
  }
  const std::pair<const char*, const char*> switches[] = {
      {"sp", "sequence parallelism"},
      {"flash", "FlashAttention / SDPA"},
      {"tied-embeddings", "LM head tied to the embedding"},
      {"fp32-grad-buffer", "fp32 gradient accumulation buffer"},
      {"linear-bias", "biases on projections"},
      {"dropout", "dropout layers"},
  };
  for (const auto& [flag, help] : switches) {
    std::string key = flag;
    for (char& ch : key)
      if (ch == '-') ch = '_';
    in.switches[key] = -1;
    int* target = &in.switches[key];  // std::map element addresses are stable
    command.add_flag_callback(std::string("--") + flag, [target] { *target = 1; }, help);
    command.add_flag_callback(std::string("--no-") + flag, [target] { *target = 0; }, std::string("no ") + help);
  }
}

// File first, then flags over it. Returns false (after printing why) if the file is unusable.
bool gather_config(const Inputs& in, json& object) {
  object = json::object();
  if (!in.config_file.empty()) {
    std::ifstream file(in.config_file);
    if (!file) {
      std::cerr << "meshfit: cannot read --config " << in.config_file << "\n";
      return false;
    }
    std::stringstream text;
    text << file.rdbuf();
    object = json::parse(text.str(), nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
    if (object.is_discarded() || !object.is_object()) {
      std::cerr << "meshfit: --config " << in.config_file << " is not a JSON object\n";
      return false;
    }
  }
  for (const auto& [key, text] : in.values)
    if (!text.empty()) object[key] = flag_value(text);
  for (const auto& [key, value] : in.switches)
    if (value >= 0) object[key] = value == 1;
  return true;
}

void print_issues(const std::vector<meshfit::Issue>& issues) {
  for (const meshfit::Issue& issue : issues)
    std::cerr << meshfit::to_string(issue.severity) << ": " << issue.field << ": " << issue.message << " ["
              << meshfit::to_string(issue.code) << "]\n";
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", meshfit::bytes_to_gib(bytes));
  return text;
}

void print_table(const meshfit::Config& config, const meshfit::MemoryReport& report) {
  using meshfit::Component;
  std::printf("%s on %lld x %s (%s GiB), %s, dp=%lld tp=%lld pp=%lld cp=%lld vpp=%lld zero=%lld\n",
              config.model.name.c_str(), (long long)config.cluster.gpus, config.gpu.name.c_str(),
              gib(report.capacity_bytes).c_str(), meshfit::to_string(config.training.framework),
              (long long)report.dp, (long long)config.layout.tp, (long long)config.layout.pp,
              (long long)config.layout.cp, (long long)config.layout.vpp, (long long)config.layout.zero);
  std::printf("seq=%lld global_batch=%lld micro_batch=%lld (%lld micro-batches/step), recompute=%s, %.3g B params\n\n",
              (long long)config.training.seq, (long long)config.training.global_batch,
              (long long)config.training.micro_batch, (long long)report.num_microbatches,
              meshfit::to_string(config.training.recompute), report.total_parameters / 1e9);
  std::printf("%-18s", "GiB");
  for (const meshfit::RankMemory& rank : report.ranks) {
    char name[32];
    std::snprintf(name, sizeof name, "%s%s%lld", rank.role, report.ranks.size() > 1 ? " " : "",
                  report.ranks.size() > 1 ? (long long)rank.pp_stage : 0LL);
    std::printf("%12s", report.ranks.size() > 1 ? name : rank.role);
  }
  std::printf("\n");
  for (int i = 0; i < meshfit::kComponentCount; ++i) {
    std::printf("%-18s", meshfit::component_label(Component(i)));
    for (const meshfit::RankMemory& rank : report.ranks) std::printf("%12s", gib(rank.component_bytes[size_t(i)]).c_str());
    std::printf("\n");
  }
  const std::pair<const char*, double meshfit::RankMemory::*> totals[] = {
      {"peak allocated", &meshfit::RankMemory::peak_allocated_bytes},
      {"peak reserved", &meshfit::RankMemory::peak_reserved_bytes},
      {"device (smi)", &meshfit::RankMemory::device_bytes}};
  for (const auto& [label, member] : totals) {
    std::printf("%-18s", label);
    for (const meshfit::RankMemory& rank : report.ranks) std::printf("%12s", gib(rank.*member).c_str());
    std::printf("\n");
  }
  const meshfit::RankMemory& worst = report.worst();
  std::printf("\nworst rank: %s (stage %lld), %s GiB of %s GiB = %.1f%% -> %s (tight at >= %.0f%%)\n",
              worst.role, (long long)worst.pp_stage, gib(worst.device_bytes).c_str(),
              gib(report.capacity_bytes).c_str(), 100.0 * worst.device_bytes / report.capacity_bytes,
              meshfit::to_string(report.verdict), 100.0 * report.headroom);
}

std::string layout_label(const json& c) {
  char text[160];
  std::snprintf(text, sizeof text, "dp=%-5lld tp=%-2lld pp=%-3lld cp=%-3lld vpp=%-2lld mb=%-2lld zero=%lld %-9s sp=%d",
                c["dp"].get<long long>(), c["tp"].get<long long>(), c["pp"].get<long long>(), c["cp"].get<long long>(),
                c["vpp"].get<long long>(), c["micro_batch"].get<long long>(), c["zero"].get<long long>(),
                c["recompute"].get<std::string>().c_str(), c["sp"].get<bool>() ? 1 : 0);
  return text;
}

int run_search(const Inputs& in) {
  json object;
  if (!gather_config(in, object)) return 1;
  std::vector<meshfit::Issue> issues;
  const meshfit::SearchOptions options = meshfit::search_options_from_json(object, issues);
  meshfit::ParsedConfig parsed = meshfit::parse_config(object);
  issues.insert(issues.end(), parsed.issues.begin(), parsed.issues.end());
  meshfit::SearchResult result;
  if (meshfit::has_errors(issues)) {
    result.issues = issues;
  } else {
    result = meshfit::search_layouts(parsed.config, options);
    result.issues.insert(result.issues.begin(), issues.begin(), issues.end());
  }
  const json out = meshfit::search_result_to_json(result);
  if (in.json_output) {
    std::cout << out.dump(2) << "\n";
  } else if (result.valid()) {
    std::printf("%s on %lld x %s: %lld layouts evaluated, %lld feasible\n", parsed.config.model.name.c_str(),
                (long long)parsed.config.cluster.gpus, parsed.config.gpu.name.c_str(), (long long)result.evaluated,
                (long long)result.feasible);
    for (const auto& [reason, count] : out["rejected"].items())
      std::printf("  rejected %-24s %lld\n", reason.c_str(), count.get<long long>());
    std::printf("\n%-4s %-70s %9s %10s %6s %7s %7s %7s\n", "rank", "layout", "mem GiB", "tok/s/GPU", "MFU", "bubble",
                "TP", "DP");
    int rank = 0;
    for (const json& c : out["layouts"]) {
      const double step = c["step_time_s"].get<double>();
      std::printf("%-4d %-70s %9.1f %10.0f %5.1f%% %6.1f%% %6.1f%% %6.1f%%\n", ++rank, layout_label(c).c_str(),
                  meshfit::bytes_to_gib(c["device_bytes"].get<double>()), c["tokens_per_s_per_gpu"].get<double>(),
                  100.0 * c["mfu"].get<double>(), 100.0 * c["breakdown"]["pp_bubble_s"].get<double>() / step,
                  100.0 * c["breakdown"]["tp_comm_s"].get<double>() / step,
                  100.0 * c["breakdown"]["dp_comm_s"].get<double>() / step);
    }
  }
  if (!in.json_output || !result.valid()) print_issues(result.issues);
  return result.valid() ? 0 : kExitInvalid;
}

int run_estimate(const Inputs& in) {
  json object;
  if (!gather_config(in, object)) return 1;
  meshfit::ParsedConfig parsed = meshfit::parse_config(object);
  meshfit::MemoryReport report;
  if (meshfit::has_errors(parsed.issues)) {
    report.issues = parsed.issues;
  } else {
    report = meshfit::estimate_memory(parsed.config);
    report.issues.insert(report.issues.begin(), parsed.issues.begin(), parsed.issues.end());
  }
  if (in.json_output) {
    json out = meshfit::memory_report_to_json(report);
    if (report.valid()) meshfit::add_step_report(out, meshfit::predict_step(parsed.config, meshfit::plan_memory(parsed.config)));
    out["config"] = meshfit::config_to_json(parsed.config);
    std::cout << out.dump(2) << "\n";
  } else if (report.valid()) {
    print_table(parsed.config, report);
    const meshfit::StepReport step = meshfit::predict_step(parsed.config, meshfit::plan_memory(parsed.config));
    std::printf("predicted step %.3f s, %.0f tokens/s/GPU, MFU %.1f%%\n", step.step_time_s, step.tokens_per_s_per_gpu,
                100.0 * step.mfu);
  }
  if (!in.json_output || !report.valid()) print_issues(report.issues);
  return report.valid() ? 0 : kExitInvalid;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"meshfit — will this LLM training run fit in GPU memory, rank by rank?"};
  app.require_subcommand(1);
  Inputs estimate_inputs;
  CLI::App* estimate = app.add_subcommand("estimate", "per-rank memory of one training configuration");
  add_input_flags(*estimate, estimate_inputs);
  Inputs search_inputs;
  search_inputs.search = true;
  CLI::App* search = app.add_subcommand("search", "rank every feasible layout for the GPU count");
  add_input_flags(*search, search_inputs);
  bool presets_json = false;
  CLI::App* presets = app.add_subcommand("presets", "list model and GPU presets");
  presets->add_flag("--json", presets_json, "print JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : kExitInvalid;
  }
  if (estimate->parsed()) return run_estimate(estimate_inputs);
  if (search->parsed()) return run_search(search_inputs);
  if (presets->parsed()) {
    const json all = meshfit::presets_to_json();
    if (presets_json) {
      std::cout << all.dump(2) << "\n";
    } else {
      std::printf("models:\n");
      for (const json& m : all["models"])
        std::printf("  %-14s h=%-6lld L=%-4lld a=%-4lld kv=%-4lld ffn=%-6lld vocab=%-7lld %.2f B params\n",
                    m["id"].get<std::string>().c_str(), m["hidden"].get<long long>(), m["layers"].get<long long>(),
                    m["heads"].get<long long>(), m["kv_heads"].get<long long>(), m["ffn"].get<long long>(),
                    m["vocab"].get<long long>(), m["total_parameters"].get<double>() / 1e9);
      std::printf("gpus:\n");
      for (const json& g : all["gpus"])
        std::printf("  %-10s %-16s %7.2f GiB  %6.0f TFLOP/s bf16\n", g["id"].get<std::string>().c_str(),
                    g["name"].get<std::string>().c_str(), g["memory_gib"].get<double>(),
                    g["bf16_flops"].get<double>() / 1e12);
    }
  }
  return 0;
}
