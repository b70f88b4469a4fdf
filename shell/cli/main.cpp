// main.cpp — the native command-line front end: `meshfit estimate`, `search`, `methods`, `validate`,
// `import`, `export` and `presets`. Flags and --config files map onto the one flat JSON schema
// (core/spec/config_schema.h: a flag per row); flags override the file. Exit status: 0 success,
// 2 invalid input (issues printed), 1 unreadable file.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "api.h"
#include "spec/config_schema.h"
#include "io/gpu_runs.h"
#include "io/json_text.h"
#include "io/launch_config.h"
#include "io/number_text.h"
#include "memory/memory_model.h"
#include "search/layout_search.h"
#include "io/serialize.h"
#include "io/text.h"
#include "spec/input_limits.h"
#include "units.h"

namespace {

using nlohmann::json;
constexpr int kExitInvalid = 2;

struct Inputs {
  bool search = false;  // `meshfit search`: layout flags become pins, search flags are accepted
  std::string config_file;
  std::string state;                          // --state: a URL state under the file and flags
  bool print_state = false;
  std::map<std::string, std::string> values;  // JSON key -> flag text
  std::map<std::string, int> switches;        // JSON key -> 1/0, -1 when not given
  std::map<std::string, const CLI::Option*> bare_on;  // words that were booleans: given without a value = on
  bool json_output = false;
  // import: the launch config to read (one of them) and whether to leave the searched fields out.
  std::string hf_file, megatron_args, torchtitan_file, deepspeed_file, auto_file;
  bool drop_layout = false;
  // export: the launch format, and whether to export the fastest layout the search finds.
  std::string format;
  bool fastest = false;
};

void add_input_flags(CLI::App& command, Inputs& in) {
  command.add_option("--config", in.config_file, "JSON config file, or an estimate's --json result (flags override it)");
  command.add_flag("--json", in.json_output, "print one JSON object");
  command.add_option("--state", in.state, "shareable state (v=1&model=...&tp=8), under --config and flags");
  command.add_flag("--print-state", in.print_state, "print the shareable state of the resolved config");
  const std::pair<const char*, const char*> search_options[] = {
      {"max-dp", "search: largest dp"},
      {"max-tp", "search: largest tp"},
      {"max-pp", "search: largest pp"},
      {"max-cp", "search: largest cp"},
      {"max-vpp", "search: largest vpp (default 8)"},
      {"max-micro-batch", "search: largest micro-batch (default 16)"},
      {"memory-limit", "search: feasible if the worst rank uses at most this fraction of capacity (default 1)"},
      {"top", "search: layouts to list (default 10)"},
      {"budget", "search: work units (meshes visited + memory evaluations) before it stops, cut short (default 2000000)"},
  };
  for (const auto& [flag, help] : search_options) {
    if (!in.search) break;
    std::string key = flag;
    for (char& ch : key)
      if (ch == '-') ch = '_';
    command.add_option(std::string("--") + flag, in.values[key], help);
  }
  if (in.search) {
    in.switches["spatial_temporal"] = -1;
    int* target = &in.switches["spatial_temporal"];
    command.add_flag_callback("--spatial-temporal", [target] { *target = 1; },
                              "search: also weigh spatial-temporal (PrimePar-style) model parallelism (modelled, not "
                              "implemented by any public framework; never exported)");
  }
  // Every config field of the schema: booleans as --flag / --no-flag, the rest as --flag VALUE
  // (a word that was a boolean takes both).
  for (const meshfit::ConfigField& field : meshfit::config_fields()) {
    const std::string flag = "--" + field.flag();
    std::string help = field.help;
    if (field.kind == meshfit::FieldKind::kWord) help += " (" + field.allowed + ")";
    if (field.reads_old_boolean) {
      // Once a boolean: --flag alone still means on and --no-flag off, as scripts wrote them.
      in.bare_on[field.key] = command.add_option(flag, in.values[field.key], help + "; " + flag + " alone = on")->expected(0, 1);
      in.switches[field.key] = -1;
      int* target = &in.switches[field.key];
      command.add_flag_callback("--no-" + field.flag(), [target] { *target = 0; }, "= " + flag + " off");
      continue;
    }
    if (field.kind != meshfit::FieldKind::kBoolean) {
      command.add_option(flag, in.values[field.key], help);
      continue;
    }
    in.switches[field.key] = -1;
    int* target = &in.switches[field.key];  // std::map element addresses are stable
    command.add_flag_callback(flag, [target] { *target = 1; }, help);
    command.add_flag_callback("--no-" + field.flag(), [target] { *target = 0; }, "no " + help);
  }
  // Older boolean keys still read (config_schema.h LegacyField): --compile in scripts keeps working,
  // with parse_config's renamed_field warning.
  for (const meshfit::LegacyField& legacy : meshfit::legacy_config_fields()) {
    std::string flag = legacy.key;
    for (char& ch : flag)
      if (ch == '_') ch = '-';
    in.switches[legacy.key] = -1;
    int* target = &in.switches[legacy.key];
    const std::string help = std::string("(old spelling) ") + legacy.how;
    command.add_flag_callback("--" + flag, [target] { *target = 1; }, help);
    command.add_flag_callback("--no-" + flag, [target] { *target = 0; }, help);
  }
}

void print_issues(const json& issues);
void print_fit_advice(const json& out);

// The search flags that are counts (memory-limit is a fraction).
bool is_count_option(const std::string& key) {
  for (const char* name : {"max_dp", "max_tp", "max_pp", "max_cp", "max_vpp", "max_micro_batch", "top", "budget"})
    if (key == name) return true;
  return false;
}

// File first, then flags over it. Returns 0, or the exit status after printing why: 1 for an
// unreadable file, 2 for text that is not a valid config (malformed, too large, not UTF-8).
int gather_config(const Inputs& in, json& object) {
  object = json::object();
  std::vector<meshfit::Issue> issues;
  if (!in.config_file.empty()) {
    std::ifstream file(in.config_file, std::ios::binary);
    if (!file) {
      std::cerr << "meshfit: cannot read --config " << in.config_file << "\n";
      return 1;
    }
    // Read at most one byte past the limit: a larger file is refused without reading it all.
    std::string text(meshfit::kMaxJsonBytes + 1, '\0');
    file.read(text.data(), std::streamsize(text.size()));
    text.resize(size_t(file.gcount()));
    if (std::optional<json> parsed = meshfit::parse_json_object(text, "--config " + in.config_file, issues)) {
      // An estimate's --json result reads as the config it was computed from, a whole config as the fields it gives.
      object = meshfit::meshfit_config_fields(*parsed, issues);
    }
  }
  if (!in.state.empty() && !object.contains("state") &&
      meshfit::check_input_text(in.state, "state", meshfit::kMaxStateBytes, issues))
    object["state"] = in.state;
  for (const auto& [key, text] : in.values) {
    if (text.empty() || !meshfit::check_input_text(text, key, meshfit::kMaxFlagBytes, issues)) continue;
    const meshfit::ConfigField* field = meshfit::find_config_field(key);
    if ((field && field->kind == meshfit::FieldKind::kInteger) || is_count_option(key)) {
      // A count reads as the page's fields read it ("8k", "4,096", "1e4"), with the page's messages.
      const meshfit::CountText count = meshfit::parse_count_text(text, meshfit::count_text_limit(key));
      if (count.ok) object[key] = count.value;
      else issues.push_back({count.too_large ? meshfit::IssueCode::kOutOfRange : meshfit::IssueCode::kNotInteger,
                             meshfit::Severity::kError, key, count.message});
      continue;
    }
    object[key] = field && field->kind == meshfit::FieldKind::kText ? json(text) : meshfit::value_from_text(text);
  }
  for (const auto& [key, option] : in.bare_on)
    if (option->count() > 0 && in.values.at(key).empty()) object[key] = "on";
  for (const auto& [key, value] : in.switches)
    if (value >= 0) object[key] = value == 1;
  if (!meshfit::has_errors(issues)) return 0;
  const json out = meshfit::failed_call(issues);
  if (in.json_output) std::cout << meshfit::write_output_text(out, 2) << "\n";
  print_issues(out["issues"]);
  return kExitInvalid;
}

void print_issues(const json& issues) {
  for (const json& issue : issues)
    std::cerr << issue["severity"].get<std::string>() << ": " << issue["field"].get<std::string>() << ": "
              << issue["message"].get<std::string>() << " [" << issue["code"].get<std::string>() << "]\n";
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", meshfit::bytes_to_gib(bytes));
  return text;
}

// The readable table, rendered from run_estimate's JSON (the CLI computes nothing itself).
void print_table(const json& out) {
  const json& c = out["config"];
  const long long replicas = c.value("dp_replicate", 1LL);
  // Who runs it (an as-a-user review read "fsdp ... zero=0" for a one-GPU PEFT run as sharded FSDP):
  // the fine-tuning stack, and FSDP's zero 0 as the plain DDP (or single-GPU loop) it is.
  std::string runner = c["framework"].get<std::string>();
  if (runner == "fsdp" && c["zero"].get<long long>() == 0)
    runner += c["gpus"].get<long long>() == 1 ? " at zero=0 (one GPU: no sharding)" : " at zero=0 (plain DDP, no sharding)";
  else if (c["zero"].get<long long>() > 0 && c["dp"].get<long long>() * c["cp"].get<long long>() == 1)
    runner += " at zero=" + std::to_string(c["zero"].get<long long>()) + " (one data-parallel rank: nothing to shard" +
              (c["offload"] != "none" ? ", offload still applies)" : ")");
  if (c["finetune"].get<std::string>() != "none") runner = "stack " + c["stack"].get<std::string>() + ", " + runner;
  std::printf("%s on %lld x %s (%s GiB), %s, dp=%lld tp=%lld pp=%lld cp=%lld vpp=%lld zero=%lld%s\n",
              c["model"].get<std::string>().c_str(), c["gpus"].get<long long>(), c["gpu"].get<std::string>().c_str(),
              gib(out["capacity_bytes"].get<double>()).c_str(), runner.c_str(),
              c["dp"].get<long long>(), c["tp"].get<long long>(), c["pp"].get<long long>(), c["cp"].get<long long>(),
              c["vpp"].get<long long>(), c["zero"].get<long long>(),
              replicas > 1 ? (" dp_replicate=" + std::to_string(replicas) + " (states over " +
                              std::to_string(out["optimizer_shard_ranks"].get<long long>()) + " ranks)").c_str()
                           : "");
  // The precision beside recompute: bf16 (fp32 master) or pure_bf16 moves the states 2x (a review
  // compared two runs whose headers read the same).
  std::printf("seq=%lld global_batch=%lld micro_batch=%lld (%lld micro-batches/step), precision=%s, recompute=%s, %.3g B params\n\n",
              c["seq"].get<long long>(), c["global_batch"].get<long long>(), c["micro_batch"].get<long long>(),
              out["num_microbatches"].get<long long>(), c["precision"].get<std::string>().c_str(),
              c["recompute"].get<std::string>().c_str(), out["total_parameters"].get<double>() / 1e9);
  const json& ranks = out["ranks"];
  std::printf("%-18s", "GiB");
  for (const json& rank : ranks) {
    std::string name = rank["role"].get<std::string>();
    if (ranks.size() > 1) name += " " + std::to_string(rank["pp_stage"].get<long long>());
    std::printf("%12s", name.c_str());
  }
  std::printf("\n");
  for (int i = 0; i < meshfit::kComponentCount; ++i) {
    const meshfit::Component component = meshfit::Component(i);
    std::printf("%-18s", meshfit::component_label(component));
    for (const json& rank : ranks)
      std::printf("%12s", gib(rank["components"][meshfit::to_string(component)].get<double>()).c_str());
    std::printf("\n");
  }
  const std::pair<const char*, const char*> totals[] = {
      {"peak allocated", "peak_allocated_bytes"}, {"peak reserved", "peak_reserved_bytes"}, {"device (smi)", "device_bytes"}};
  for (const auto& [label, key] : totals) {
    std::printf("%-18s", label);
    for (const json& rank : ranks) std::printf("%12s", gib(rank[key].get<double>()).c_str());
    std::printf("\n");
  }
  const std::pair<const char*, const char*> sections[] = {{"  body section", "body_bytes"}, {"  output section", "output_bytes"}};
  for (const auto& [label, key] : sections) {
    std::printf("%-18s", label);
    for (const json& rank : ranks) std::printf("%12s", gib(rank["sections"][key].get<double>()).c_str());
    std::printf("\n");
  }
  // When each rank peaks: a forward-end peak books no gradients (freed after the last step), which a
  // review read as a missing term ("Gradients 0.00" beside AdamW).
  std::printf("%-18s", "peak at");
  bool forward_end = false;  // a rank peaking there with no gradients
  for (const json& rank : ranks) {
    const std::string phase = rank["intermediates"]["peak_phase"].get<std::string>();
    forward_end |= phase == "forward_end" && rank["components"]["gradients"].get<double>() == 0;
    std::printf("%12s", phase == "forward_end" ? "forward end" : phase == "optimizer_step" ? "opt. step" : phase.c_str());
  }
  std::printf("\n");
  if (forward_end) std::printf("(gradients 0 at a forward-end peak: they are freed after each optimizer step)\n");
  // LLMem's split of peak allocated: the output section (LM head, its input, logits and loss) and
  // the transformer body; and CPU memory when states are offloaded.
  bool offloaded = false;
  for (const json& rank : ranks) offloaded |= rank["host_bytes"].get<double>() > 0;
  if (offloaded) {
    std::printf("%-18s", "host (CPU)/GPU");
    for (const json& rank : ranks) std::printf("%12s", gib(rank["host_bytes"].get<double>()).c_str());
    std::printf("\n");
  }
  const std::string finetune = c["finetune"].get<std::string>();
  if (finetune != "none") {
    const json& in = ranks[0]["intermediates"];
    // The page's counts ("8.030 B"): %.3g M printed a full fine-tune's 8B as "8.03e+03 M" (a review).
    std::printf("fine-tuning: %s, %s trainable / %s frozen parameters on stage 0 (%s in NF4)\n", finetune.c_str(),
                meshfit::format_count(in["trainable_parameters"].get<double>()).c_str(),
                meshfit::format_count(in["frozen_parameters"].get<double>()).c_str(),
                meshfit::format_count(in["quantized_parameters"].get<double>()).c_str());
  }
  const json& worst = ranks[out["worst_rank"].get<size_t>()];
  // Over 100% and still tight: the reason goes on the same line (an as-a-user review read
  // "139.1% -> tight" as a contradiction before reaching the paging note below it).
  const double spill = worst["paged_spill_bytes"].get<double>();
  const std::string why = spill > 0 ? ", paged: " + gib(spill) + " GiB of the optimizer states wait in host memory" : "";
  std::printf("\nworst rank: %s (stage %lld), %s GiB of %s GiB = %.1f%% -> %s%s (tight at >= %.0f%%)\n",
              worst["role"].get<std::string>().c_str(), worst["pp_stage"].get<long long>(),
              gib(worst["device_bytes"].get<double>()).c_str(), gib(out["capacity_bytes"].get<double>()).c_str(),
              100.0 * worst["device_bytes"].get<double>() / out["capacity_bytes"].get<double>(),
              out["verdict"].get<std::string>().c_str(), why.c_str(), 100.0 * out["headroom"].get<double>());
  // How far to trust that figure (memory_band.h), and whether the verdict rests inside it.
  const json& memory_band = out["memory_error_band"];
  std::printf("peak memory: %s\n", memory_band["text"].get<std::string>().c_str());
  if (memory_band["capacity_within"].get<bool>())
    std::printf("the capacity is within that error of the prediction: the fit / out-of-memory verdict could go either way\n");
  if (spill > 0)
    std::printf("(bitsandbytes' paged states are managed memory: the driver evicts what does not fit, and each step pages "
                "it over PCIe, priced in the step time)\n");
  // The band covers each figure: MFU scales with tokens/s and the time to train inversely.
  const std::string band = out["error_band"]["text"].get<std::string>();
  const char* both = out["error_band"]["runs"].get<int>() > 0 ? "both " : "";
  // No step time (a custom GPU given only its memory, no NIC figure across nodes): said, not printed
  // as 0 s and 0 tokens/s, and the warning that says which figure is missing is pointed at (reviews
  // read "predicted step 0.000 s", then a TFLOP/s hint for a NIC of 0).
  if (!(out["step_time_s"].get<double>() > 0)) {
    std::string why;
    for (const json& issue : out["issues"])
      if ((issue["field"] == "gpu" || issue["field"] == "gpu_nic_gbps") && issue["severity"] == "warning")
        why = " (" + issue["field"].get<std::string>() + ": see its warning below)";
    std::printf("step time, tokens/s and MFU: not predicted%s\n", why.c_str());
  } else {
    // MFU counts against the dense BF16 peak whatever the GEMMs run in: an fp8 run says so (a review
    // read "MFU 88%" of fp8 as near the fp8 peak).
    const bool fp8 = c["precision"] == "fp8";
    std::printf("predicted step %.3f s, %.0f tokens/s/GPU and MFU %.1f%%%s (%s%s)\n", out["step_time_s"].get<double>(),
                out["tokens_per_s_per_gpu"].get<double>(), 100.0 * out["mfu"].get<double>(), fp8 ? " of the BF16 peak" : "",
                both, band.c_str());
  }
  const std::string host = out["host_bound_note"].get<std::string>();
  if (!host.empty()) std::printf("%s\n", host.c_str());
  if (out["time_to_train_s"].get<double>() > 0)
    std::printf("time to train %.4g tokens: %s (%s)\n", c["tokens_to_train"].get<double>(),
                out["time_to_train_text"].get<std::string>().c_str(), band.c_str());
}

std::string layout_label(const json& c) {
  char text[160];
  std::snprintf(text, sizeof text, "dp=%-5lld tp=%-2lld pp=%-3lld cp=%-3lld vpp=%-2lld mb=%-2lld zero=%lld %-9s sp=%d",
                c["dp"].get<long long>(), c["tp"].get<long long>(), c["pp"].get<long long>(), c["cp"].get<long long>(),
                c["vpp"].get<long long>(), c["micro_batch"].get<long long>(), c["zero"].get<long long>(),
                c["recompute"].get<std::string>().c_str(), c["sp"].get<bool>() ? 1 : 0);
  std::string label = text;
  if (c.value("dp_replicate", 1) > 1) label += " dpr=" + std::to_string(c["dp_replicate"].get<long long>());
  // Uneven end stages (chunks under vpp) are part of the layout: an as-a-user review took a pp 2 x vpp 3
  // row on 32 layers for an even split and saw the estimate refuse it.
  const long long first = c.value("pp_first_stage_layers", 0LL), last = c.value("pp_last_stage_layers", 0LL);
  if (first > 0 || last > 0) label += " ends=" + std::to_string(first) + "/" + std::to_string(last);
  // A spatial-temporal square is marked in the layout itself (the footnote says what * means).
  if (c.value("spatial_temporal_q", 1) > 1) return label + " st_q=" + std::to_string(c["spatial_temporal_q"].get<long long>()) + "*";
  return label;
}

int run_search(const Inputs& in) {
  json object;
  if (const int status = gather_config(in, object)) return status;
  if (in.print_state) {
    json base = object;
    for (const char* key :
         {"max_dp", "max_tp", "max_pp", "max_cp", "max_vpp", "max_micro_batch", "memory_limit", "top", "budget",
          "spatial_temporal"})
      base.erase(key);
    const json encoded = meshfit::run_encode_state(base);
    if (encoded["ok"].get<bool>()) std::cout << encoded["state"].get<std::string>() << "\n";
  }
  const json out = meshfit::run_search(object, json::object());
  const bool ok = out["ok"].get<bool>();
  if (in.json_output) {
    std::cout << meshfit::write_output_text(out, 2) << "\n";
  } else if (ok) {
    std::printf("%lld layouts evaluated, %lld feasible%s\n", out["evaluated"].get<long long>(),
                out["feasible"].get<long long>(), out["complete"].get<bool>() ? "" : " (cut short at the budget)");
    if (!out["layouts"].empty() && out["layouts"][0].contains("error_band"))
      std::printf("tokens/s/GPU and MFU below: %s\n", out["layouts"][0]["error_band"]["text"].get<std::string>().c_str());
    if (!out["layouts"].empty())
      std::printf("memory below: %s\n", out["memory_error_band"]["text"].get<std::string>().c_str());
    // Each reason in words beside its key (a review read "rejected oom_only_stage 6" and nothing more).
    for (const auto& [reason, count] : out["rejected"].items()) {
      const auto known = meshfit::enum_from_key<meshfit::RejectReason>(reason);
      std::printf("  rejected %-24s %6lld  %s\n", reason.c_str(), count.get<long long>(), known ? meshfit::enum_label(*known) : "");
    }
    // Nothing fits: what does (a review got an empty table where fit offers parameter offload).
    if (out["feasible"].get<long long>() == 0)
      std::printf("no layout fits these inputs: `meshfit fit` with them lists changes that do (offload, recompute, "
                  "a smaller micro-batch, another fine-tuning method)\n");
    // With --spatial-temporal: the fastest squares too when none made the list, then every row's breakdown.
    json rows = out["layouts"];
    bool any_spatial_temporal = false;
    for (const json& c : rows) any_spatial_temporal |= c.value("spatial_temporal_q", 1) > 1;
    const bool asked = in.switches.count("spatial_temporal") && in.switches.at("spatial_temporal") == 1;
    std::printf("\n%-4s %-80s %9s %10s %6s %7s %7s %7s\n", "rank", "layout", "mem GiB", "tok/s/GPU", "MFU", "bubble",
                "TP", "DP");
    int rank = 0;
    int tight = 0;
    for (const json& c : out["layouts"]) {
      const double step = c["step_time_s"].get<double>();
      // '!' past the tight line (headroom): a review took a layout at 99% of capacity, ranked first,
      // for a safe plan.
      const bool is_tight = c["verdict"].get<std::string>() == "tight";
      tight += is_tight;
      std::printf("%-4d %-80s %8.1f%s %10.0f %5.1f%% %6.1f%% %6.1f%% %6.1f%%\n", ++rank, layout_label(c).c_str(),
                  meshfit::bytes_to_gib(c["device_bytes"].get<double>()), is_tight ? "!" : " ", c["tokens_per_s_per_gpu"].get<double>(),
                  100.0 * c["mfu"].get<double>(), 100.0 * c["breakdown"]["pp_bubble_s"].get<double>() / step,
                  100.0 * c["breakdown"]["tp_comm_s"].get<double>() / step,
                  100.0 * c["breakdown"]["dp_comm_s"].get<double>() / step);
    }
    const meshfit::Config config = meshfit::parse_config(object).config;  // read once for the notes below
    if (tight > 0)
      std::printf("\n! above the tight line (%.0f%% of capacity: --headroom): little room for what the model leaves out; "
                  "--memory-limit %.2f lists only layouts under it\n",
                  100.0 * config.training.headroom, config.training.headroom);
    // The user's replicas where they hold (dpr=N); the rows without them say why once.
    const long long replicas = config.layout.dp_replicate;
    bool some_without = false;
    for (const json& c : out["layouts"]) some_without |= replicas > 1 && c.value("dp_replicate", 1LL) != replicas;
    if (some_without)
      std::printf("\nrows without dpr=%lld keep the most replicas below it that hold (none: every dp rank shards): %lld does "
                  "not divide their dp, would leave shard groups of one rank, or their ZeRO stage shards nothing.\n",
                  replicas, replicas);
    if (asked && !any_spatial_temporal && out.contains("spatial_temporal_layouts")) {
      std::printf("\nfastest spatial-temporal layouts (none made the list above):\n");
      for (const json& c : out["spatial_temporal_layouts"]) {
        const double step = c["step_time_s"].get<double>();
        std::printf("%-4s %-70s %9.1f %10.0f %5.1f%% %6.1f%% %6.1f%% %6.1f%%\n", "-", layout_label(c).c_str(),
                    meshfit::bytes_to_gib(c["device_bytes"].get<double>()), c["tokens_per_s_per_gpu"].get<double>(),
                    100.0 * c["mfu"].get<double>(), 100.0 * c["breakdown"]["pp_bubble_s"].get<double>() / step,
                    100.0 * c["breakdown"]["tp_comm_s"].get<double>() / step,
                    100.0 * c["breakdown"]["dp_comm_s"].get<double>() / step);
        rows.push_back(c);
      }
      any_spatial_temporal = true;
    } else if (asked && !any_spatial_temporal) {
      std::printf("\nno spatial-temporal layout fits (or its rules allow none: q^2 inside the NVLink domain, powers of two)\n");
    }
    if (any_spatial_temporal) {
      // The breakdowns behind each row, and the marking: these layouts cannot be launched.
      std::printf("\n* spatial-temporal (PrimePar-style) model parallelism, tp = (tp/q^2 conventional) x (q x q square): "
                  "%s; no launch config is exported for it.\n",
                  meshfit::kSpatialTemporalNote);
      std::printf("\n%-4s %-10s %8s %8s %8s %8s %8s %8s | %8s %8s %8s %8s %8s\n", "rank", "kind", "weights", "grads",
                  "optim", "activ", "buffers", "other", "compute", "TP/ST", "DP", "PP", "optim");
      rank = 0;
      for (const json& c : rows) {
        const json& m = c["components"];
        const json& b = c["breakdown"];
        const auto g = [&](const char* key) { return meshfit::bytes_to_gib(m[key].get<double>()); };
        const double buffers = g("comm_buffers") + g("workspace");
        const double other = meshfit::bytes_to_gib(c["device_bytes"].get<double>()) - g("weights") - g("gradients") -
                             g("optimizer_states") - g("activations") - buffers;
        const long long q = c.value("spatial_temporal_q", 1);
        const std::string kind = q > 1 ? "ST q=" + std::to_string(q) + " *" : "Megatron";
        ++rank;
        const std::string position = rank <= int(out["layouts"].size()) ? std::to_string(rank) : "-";
        std::printf("%-4s %-10s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f | %8.3f %8.3f %8.3f %8.3f %8.3f\n", position.c_str(),
                    kind.c_str(), g("weights"), g("gradients"), g("optimizer_states"), g("activations"), buffers, other,
                    b["compute_s"].get<double>(), b["tp_comm_s"].get<double>(), b["dp_comm_s"].get<double>(),
                    b["pp_bubble_s"].get<double>() + b["pp_p2p_s"].get<double>(), b["optimizer_s"].get<double>());
      }
      std::printf("(memory GiB on the worst rank; time s per step; TP/ST = exposed TP collectives, or the square's "
                  "exposed point-to-point + re-layout + conventional collectives)\n");
    }
  }
  if (!in.json_output || !ok) print_issues(out["issues"]);
  return ok ? 0 : kExitInvalid;
}

int run_estimate(const Inputs& in) {
  json object;
  if (const int status = gather_config(in, object)) return status;
  const json out = meshfit::run_estimate(object);
  const bool ok = out["ok"].get<bool>();
  if (in.print_state && ok) std::cout << out["state"].get<std::string>() << "\n";
  if (in.json_output) std::cout << meshfit::write_output_text(out, 2) << "\n";
  else if (ok && !in.print_state) print_table(out);
  // Out of memory: what would fit, as the page says it (a review asked why the CLI stops at "oom").
  if (ok && !in.json_output && !in.print_state && out["verdict"] == "oom") {
    const json advice = meshfit::run_fit_advice(object);
    if (advice["ok"].get<bool>()) {
      std::printf("\n");
      print_fit_advice(advice);
    }
  }
  if (!in.json_output || !ok) print_issues(out["issues"]);
  return ok ? 0 : kExitInvalid;
}

// The page's "How to make it fit", from run_fit_advice's JSON.
void print_fit_advice(const json& out) {
  std::printf("how to make it fit (%s GiB of %s GiB now, %s):\n", gib(out["device_bytes"].get<double>()).c_str(),
              gib(out["capacity_bytes"].get<double>()).c_str(), out["verdict"].get<std::string>().c_str());
  // Already under the tight line: nothing to make fit (a review read "no change helps" on a config at 44%).
  const bool fits = out["verdict"] == "fits";
  // Changes are ranked by their speed cost, which needs the GPU's compute figures (the page says the same).
  const bool unranked = !fits && !(out["tokens_per_s_per_gpu"].get<double>() > 0);
  if (unranked)
    std::printf("  ranking changes needs the GPU's dense BF16 TFLOP/s and memory bandwidth: give --gpu-bf16-tflops and "
                "--gpu-hbm-tbps\n");
  else if (out["suggestions"].empty())
    std::printf(fits ? "  it already fits under the tight line: nothing to change\n"
                     : "  no single change or pair of changes searched here brings it under the tight line\n");
  // The figures first, the change after them: its arrows are multi-byte, which printf's widths miscount.
  for (const json& f : out["suggestions"])
    std::printf("  %8s GiB %-5s %8.0f tok/s/GPU (%+6.1f%%)  %s\n      --state '%s'\n", gib(f["device_bytes"].get<double>()).c_str(),
                f["verdict"] == "tight" ? "tight" : "", f["tokens_per_s_per_gpu"].get<double>(),
                100.0 * f["throughput_change"].get<double>(), f["change"].get<std::string>().c_str(),
                f["state"].get<std::string>().c_str());
  // Limits short of out of memory, where the changes above aim under the tight line (a review read
  // "make it fit" and "the longest sequence that fits is 2048" for one run at 98.6%).
  if (out["costly"].get<bool>())
    std::printf("  each changes one or two dimensions; `meshfit search` ranks every layout, any number of changes\n");
  std::printf("on this layout, short of out of memory: %s\n", out["limits_text"].get<std::string>().c_str());
}

// `meshfit fit`: how to make a config fit (fit_advice.h); `estimate` prints the same under its table
// when the config does not fit.
int run_fit(const Inputs& in) {
  json object;
  if (const int status = gather_config(in, object)) return status;
  const json out = meshfit::run_fit_advice(object);
  const bool ok = out["ok"].get<bool>();
  if (in.json_output) std::cout << meshfit::write_output_text(out, 2) << "\n";
  else if (ok) print_fit_advice(out);
  if (!in.json_output || !ok) print_issues(out["issues"]);
  return ok ? 0 : kExitInvalid;
}

// `meshfit methods`: every distributed fine-tuning method (LLMem's decision, method_select.h).
int run_methods(const Inputs& in, const std::string& methods) {
  json object;
  if (const int status = gather_config(in, object)) return status;
  if (!methods.empty()) object["methods"] = methods;
  const json out = meshfit::run_methods(object);
  const bool ok = out["ok"].get<bool>();
  if (in.json_output) {
    std::cout << meshfit::write_output_text(out, 2) << "\n";
  } else if (ok) {
    const json& c = out["config"];
    std::printf("%s on %lld x %s (%s GiB), seq=%lld micro_batch=%lld global_batch=%lld\n\n", c["model"].get<std::string>().c_str(),
                c["gpus"].get<long long>(), c["gpu"].get<std::string>().c_str(), gib(out["capacity_bytes"].get<double>()).c_str(),
                c["seq"].get<long long>(), c["micro_batch"].get<long long>(), c["global_batch"].get<long long>());
    std::printf("%-4s %-6s %-44s %-9s %9s %8s %-6s %9s %9s %10s\n", "rank", "method", "strategy", "recompute", "GPU GiB", "",
                "", "host/GPU", "step s", "tok/s/GPU");
    int rank = 0;
    // Each GPU figure with its method's memory band (the median error of its published configurations).
    const auto band = [](const json& m) { return m["memory_error_band"]["percent"].get<std::string>(); };
    // No step time on a GPU without compute figures: "-" (the issues below say why).
    const auto figure = [](const json& value, const char* format) {
      char text[32] = "-";
      if (value.is_number()) std::snprintf(text, sizeof text, format, value.get<double>());
      return std::string(text);
    };
    for (const json& m : out["ranked"])
      std::printf("%-4d %-6s %-44s %-9s %9s %8s %-6s %9s %9s %10s\n", ++rank, m["finetune"].get<std::string>().c_str(),
                  m["strategy"].get<std::string>().c_str(), m["recompute"].get<std::string>().c_str(),
                  gib(m["device_bytes"].get<double>()).c_str(), band(m).c_str(), m["verdict"] == "tight" ? "tight" : "",
                  gib(m["host_bytes"].get<double>()).c_str(), figure(m["step_time_s"], "%.3f").c_str(),
                  figure(m["tokens_per_s_per_gpu"], "%.0f").c_str());
    std::printf("GPU GiB \xC2\xB1: the median error of the peak for that method (meshfit estimate prints what it rests on).\n");
    // Host memory is per GPU (an as-a-user review read 131 GiB as the run's whole need): a node's share.
    double most_host = 0;
    for (const json& m : out["ranked"]) most_host = std::max(most_host, m["host_bytes"].get<double>());
    const long long per_node = std::min(c["gpus_per_node"].get<long long>(), c["gpus"].get<long long>());
    if (most_host > 0 && per_node > 1)
      std::printf("host/GPU: CPU memory per GPU; the %lld GPUs of a node need %lld times it (up to %s GiB here).\n", per_node,
                  per_node, gib(most_host * double(per_node)).c_str());
    std::printf("\nrejected:\n");
    for (const json& m : out["rejected"])
      std::printf("  %-6s %-44s %s\n", m["finetune"].get<std::string>().c_str(), m["strategy"].get<std::string>().c_str(),
                  m["rejected"].get<std::string>().c_str());
  }
  if (!in.json_output || !ok) print_issues(out["issues"]);
  return ok ? 0 : kExitInvalid;
}

bool read_file(const std::string& path, const char* flag, std::string& text) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::cerr << "meshfit: cannot read " << flag << " " << path << ": " << std::strerror(errno) << "\n";
    return false;
  }
  std::stringstream content;
  content << file.rdbuf();
  text = content.str();
  return true;
}

// `meshfit import`: a launch config (file or command line) -> the config fields it sets (JSON, ready
// for --config), or its state with --print-state; flags and --state go over it.
int run_import(const Inputs& in) {
  const std::pair<const char*, const std::string*> sources[] = {{"hf", &in.hf_file}, {"megatron", &in.megatron_args},
                                                                {"torchtitan", &in.torchtitan_file},
                                                                {"deepspeed", &in.deepspeed_file}, {"auto", &in.auto_file}};
  std::string format, text;
  int given = 0;
  for (const auto& [name, value] : sources) {
    if (value->empty()) continue;
    ++given;
    format = name;
    if (format == "megatron") text = *value;
    else if (!read_file(*value, format == "auto" ? "--file" : ("--" + format).c_str(), text)) return 1;
  }
  if (given != 1) {
    std::cerr << "meshfit import: give exactly one of --hf FILE, --megatron-args \"...\", --torchtitan FILE, "
                 "--deepspeed FILE, --file FILE\n";
    return kExitInvalid;
  }
  json overrides;
  if (const int status = gather_config(in, overrides)) return status;
  const json out = meshfit::run_import(format, text, overrides, in.drop_layout);
  const bool ok = out["ok"].get<bool>();
  if (in.json_output) std::cout << meshfit::write_output_text(out, 2) << "\n";
  else if (ok && in.print_state) std::cout << out["state"].get<std::string>() << "\n";
  else if (ok) std::cout << out["fields"].dump(2) << "\n";
  if (!in.json_output || !ok) print_issues(out["issues"]);
  return ok ? 0 : kExitInvalid;
}

// `meshfit export --format F`: the config (flags, --config, --state) as what the framework runs;
// with --fastest, the search's best layout for those inputs.
int run_export(const Inputs& in) {
  json object;
  if (const int status = gather_config(in, object)) return status;
  if (in.fastest) {
    const json found = meshfit::run_search(object, json::object());
    if (!found["ok"].get<bool>() || found["layouts"].empty()) {
      print_issues(found["issues"]);
      if (found["ok"].get<bool>()) std::cerr << "meshfit export: the search found no feasible layout\n";
      return kExitInvalid;
    }
    for (const auto& [key, value] : found["layouts"][0].items())
      if (meshfit::is_searched_field(key)) object[key] = value;
    for (const char* key :
         {"max_dp", "max_tp", "max_pp", "max_cp", "max_vpp", "max_micro_batch", "memory_limit", "top", "spatial_temporal"})
      object.erase(key);
  }
  const json out = meshfit::run_export(object, in.format);
  const bool ok = out["ok"].get<bool>();
  if (in.json_output) std::cout << meshfit::write_output_text(out, 2) << "\n";
  else if (ok) std::cout << out["text"].get<std::string>();
  if (!in.json_output || !ok) print_issues(out["issues"]);
  return ok ? 0 : kExitInvalid;
}

}  // namespace

namespace {

void print_validation(const json& out) {
  std::printf("%-58s %-13s %9s %9s %8s %5s %-6s %s\n", "run", "metric", "measured", "predicted", "error", "label",
              "verdict", "source");
  for (const json& r : out["rows"]) {
    const std::string label = r["label"].get<std::string>();
    const std::string source = r["source"].get<std::string>().substr(0, 60);
    if (!r["expressible"].get<bool>()) {
      std::printf("%-58s not expressible: %s  [%s]\n", label.c_str(), r["why_not"].get<std::string>().c_str(),
                  source.c_str());
      continue;
    }
    const bool measured = r.contains("measured_bytes");
    char measured_text[32] = "-", error_text[32] = "";
    if (measured) {
      std::snprintf(measured_text, sizeof measured_text, "%.2f", meshfit::bytes_to_gib(r["measured_bytes"].get<double>()));
      std::snprintf(error_text, sizeof error_text, "%+.1f%%", 100.0 * r["signed_error"].get<double>());
    }
    std::printf("%-58s %-13s %9s %9.2f %8s %5s %-6s %s%s\n", label.c_str(), r["metric"].get<std::string>().c_str(),
                measured_text, meshfit::bytes_to_gib(r["predicted_bytes"].get<double>()), error_text,
                r["oom"].get<bool>() ? "OOM" : "ran", r["verdict"].get<std::string>().c_str(), source.c_str(),
                r["first_iteration"].get<bool>() ? " (first iteration)" : "");
  }
  std::printf("GiB. median |error| %.1f%% (signed %+.1f%%) over %lld measured runs; %lld of %lld fit/OOM labels "
              "disagree; %lld runs that ran out of memory predicted to fit\n",
              100.0 * out["median_abs_error"].get<double>(), 100.0 * out["median_signed_error"].get<double>(),
              out["measured_rows"].get<long long>(), out["label_disagreements"].get<long long>(),
              out["label_rows"].get<long long>(), out["false_fits"].get<long long>());
}

// The step-time model against the published throughput runs: every run, then the medians per source
// and per framework x GPU family (the error bands printed beside every tokens/s).
void print_throughput_validation(const json& out) {
  std::printf("\nThroughput (tests/data/layouts_measured.csv), tokens/s/GPU:\n%-42s %-58s %9s %9s %8s\n", "source", "run",
              "measured", "predicted", "error");
  for (const json& r : out["rows"])
    std::printf("%-42s %-58s %9.1f %9.1f %+7.1f%%\n", r["source"].get<std::string>().c_str(), r["label"].get<std::string>().c_str(),
                r["measured_tokens_per_s_per_gpu"].get<double>(), r["predicted_tokens_per_s_per_gpu"].get<double>(),
                100.0 * r["signed_error"].get<double>());
  for (const char* group : {"sources", "bands"}) {
    std::printf("%s:\n", std::string(group) == "sources" ? "per source" : "error bands (framework, GPU family)");
    for (const json& s : out[group])
      std::printf("  %-42s %4d runs  median |error| %5.1f%%  (signed %+5.1f%%)\n", s["key"].get<std::string>().c_str(),
                  s["runs"].get<int>(), 100.0 * s["median_abs_error"].get<double>(), 100.0 * s["median_signed_error"].get<double>());
  }
  std::printf("tokens/s/GPU: median |error| %.1f%% over %lld measured runs (published and tests/gpu)\n", 100.0 * out["median_abs_error"].get<double>(),
              out["runs"].get<long long>());
  std::printf("%s\n", out["bands_note"].get<std::string>().c_str());
}

// meshfit's own ground truth, measured on one GPU by tests/gpu: per row, each metric measured and
// predicted with the error, then the medians per metric.
void print_gpu_validation(const json& out) {
  std::printf("\nGround truth measured on one GPU (tests/data/gpu_memory_measured.csv, tests/gpu), GiB; tokens/s:\n");
  std::printf("%-26s %-15s %-15s %-15s %-15s %-15s %-13s %-13s %-17s %s\n", "row", "peak alloc", "peak reserved",
              "device", "model states", "step transient", "alloc reserve", "outside alloc", "tokens/s", "label");
  for (const json& r : out["rows"]) {
    const std::string id = r["id"].get<std::string>();
    if (!r["expressible"].get<bool>()) {
      std::printf("%-26s not expressible: %s\n", id.c_str(), r["why_not"].get<std::string>().c_str());
      continue;
    }
    std::printf("%-26s", id.c_str());
    for (const char* key : {"peak_allocated", "peak_reserved", "device", "model_states", "step_transient",
                            "allocator_reserve", "outside_allocator", "tokens_per_s"}) {
      const double predicted = r["predicted"][key].get<double>();
      const bool tokens = std::string(key) == "tokens_per_s";
      const bool small = std::string(key) == "allocator_reserve" || std::string(key) == "outside_allocator";
      if (!r.contains("measured")) {
        std::printf(small ? " %-13s" : tokens ? " %-17s" : " %-15s", tokens ? "-" : "OOM run");
        continue;
      }
      const double measured = r["measured"][key].get<double>();
      char cell[48];
      if (tokens) std::snprintf(cell, sizeof cell, "%.0f/%.0f", measured, predicted);
      else std::snprintf(cell, sizeof cell, small ? "%.2f/%.2f" : "%.2f/%.2f", meshfit::bytes_to_gib(measured),
                         meshfit::bytes_to_gib(predicted));
      std::printf(small ? " %-13s" : tokens ? " %-17s" : " %-15s", cell);
    }
    std::printf(" %s %s\n", r["oom"].get<bool>() ? "OOM" : "ran", r["verdict"].get<std::string>().c_str());
  }
  std::printf("measured/predicted. Medians (allocator reserve and outside-allocator errors are shares of the row's peak allocated):\n");
  std::printf("%s\n", meshfit::kGpuGroundTruthInSample);
  for (const json& m : out["metrics"])
    std::printf("  %-22s %3d rows  median |error| %5.1f%%  max %5.1f%%  (signed %+5.1f%%)\n",
                m["label"].get<std::string>().c_str(), m["rows"].get<int>(), 100.0 * m["median_abs_error"].get<double>(),
                100.0 * m["max_abs_error"].get<double>(), 100.0 * m["median_signed_error"].get<double>());
  std::printf("  fit/OOM labels: %d of %d disagree\n", out["label_disagreements"].get<int>(), out["label_rows"].get<int>());
}

// The named constants behind every prediction (core/memory/overheads.h), so a reader sees which
// figures are assumptions.
void print_constants(const json& constants) {
  std::printf("\nnamed constants in these predictions (basis: from source, from measurements, or assumed):\n");
  for (const json& k : constants) {
    const bool bytes = k["unit"] == "bytes";  // binary label for byte values
    std::printf("  %-42s %10.6g %-26s %-11s %s. Source: %s\n", k["name"].get<std::string>().c_str(),
                bytes ? meshfit::bytes_to_mib(k["value"].get<double>()) : k["value"].get<double>(),
                bytes ? "MiB" : k["unit"].get<std::string>().c_str(), k["basis"].get<std::string>().c_str(),
                k["meaning"].get<std::string>().c_str(), k["source"].get<std::string>().c_str());
  }
}

}  // namespace

// The memory error band of every method and setup: what each estimate's "peak memory: ±..." rests on.
void print_memory_bands(const json& bands) {
  std::printf("\nmemory error bands (median |error| of the peak over published configurations, each repeat of one counted once; "
              "with fewer than %d, an estimate's band widens to its method on any framework, then every run; tests/gpu's own "
              "steps are in-sample, shown beside):\n", meshfit::kMinMemoryBandRuns);
  std::printf("  %-50s %9s %8s %9s %8s\n", "method on framework / stack", "published", "median", "tests/gpu", "median");
  for (const json& b : bands) {
    const auto cell = [](const json& runs, const json& median) {
      char text[24] = "-";
      if (runs.get<int>() > 0) std::snprintf(text, sizeof text, "%.1f%%", 100.0 * median.get<double>());
      return std::string(text);
    };
    std::printf("  %-50s %9d %8s %9d %8s\n", b["scope"].get<std::string>().c_str(), b["published_runs"].get<int>(),
                cell(b["published_runs"], b["published_median_abs_error"]).c_str(), b["step_runs"].get<int>(),
                cell(b["step_runs"], b["step_median_abs_error"]).c_str());
  }
}

// `meshfit validate`: one line per measured run (prediction on the metric its source reports, signed
// error, fit/OOM label against the verdict, source), then the median; pretraining runs first, then
// the fine-tuning runs (tests/data/finetune_measured.csv), then the named constants.
int run_validate(bool as_json) {
  const json out = meshfit::run_validate();
  if (as_json) {
    std::cout << meshfit::write_output_text(out, 2) << "\n";
    return 0;
  }
  print_validation(out);
  std::printf("\nFine-tuning (full, LoRA, QLoRA):\n");
  print_validation(out["finetune"]);
  print_memory_bands(out["memory_bands"]);
  print_constants(out["constants"]);
  print_throughput_validation(out["throughput"]);
  print_gpu_validation(out["gpu"]);
  return 0;
}

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
  Inputs fit_inputs;
  CLI::App* fit = app.add_subcommand("fit", "how to make a configuration fit: the changes that bring it under the tight line, cheapest in speed first (a change that stops training a fully trained module last)");
  add_input_flags(*fit, fit_inputs);
  Inputs methods_inputs;
  std::string methods_list;
  CLI::App* methods = app.add_subcommand(
      "methods", "fine-tuning: every distributed method (DDP, ZeRO-1/2/3, FSDP, TP, offload) x full/LoRA/QLoRA: under the tight threshold first, fastest first");
  add_input_flags(*methods, methods_inputs);
  methods->add_option("--methods", methods_list, "fine-tuning methods to consider (default full,lora,qlora)");
  bool validate_json = false;
  CLI::App* validate = app.add_subcommand(
      "validate", "every public measured run in tests/data with the prediction beside it, and the median error");
  validate->add_flag("--json", validate_json, "print JSON");
  Inputs import_inputs;
  CLI::App* import = app.add_subcommand("import", "read a launch config: HF config.json, Megatron-LM flags, torchtitan TOML, DeepSpeed JSON, or meshfit's own JSON (a config, or an estimate's --json result)");
  import->add_option("--hf", import_inputs.hf_file, "Hugging Face config.json file");
  import->add_option("--megatron-args", import_inputs.megatron_args, "a Megatron-LM pretrain_gpt.py command line (torchrun prefix optional)");
  import->add_option("--torchtitan", import_inputs.torchtitan_file, "torchtitan TOML job config file");
  import->add_option("--deepspeed", import_inputs.deepspeed_file, "DeepSpeed JSON config file");
  // Also as the bare argument, `meshfit import config.json` (a review tried it and was refused).
  import->add_option("--file,file", import_inputs.auto_file, "a file in any of these formats (detected); also the bare argument");
  import->add_flag("--drop-layout", import_inputs.drop_layout, "leave out the fields `meshfit search` chooses (layout, micro-batch, recompute, sp)");
  add_input_flags(*import, import_inputs);
  Inputs export_inputs;
  export_inputs.search = true;
  CLI::App* export_command = app.add_subcommand("export", "print a config as a launch config (Megatron-LM flags, torchtitan TOML, DeepSpeed JSON, torchtune YAML, HF Trainer + PEFT) or as meshfit's config JSON");
  export_command->add_option("--format", export_inputs.format, "megatron, torchtitan, deepspeed, hf, torchtune, hf-trainer or meshfit")->required();
  export_command->add_flag("--fastest", export_inputs.fastest, "export the fastest layout `meshfit search` finds for these inputs");
  add_input_flags(*export_command, export_inputs);
  bool presets_json = false;
  CLI::App* presets = app.add_subcommand("presets", "list model and GPU presets");
  presets->add_flag("--json", presets_json, "print JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // A flag given twice (--tp 2 ... --tp 4, as a pasted command line plus an edit makes): said in the
    // CLI's words, not CLI11's "At Most 1 required but received 2" (an as-a-user review).
    const std::string what = error.what();
    const size_t at = what.find(": At Most 1 required but received ");
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) && at != std::string::npos) {
      const std::string flag = what.substr(0, at);
      std::fprintf(stderr, "error: %s: %s is given %s times; give it once. [duplicate_key]\n",
                   flag.substr(flag.find_first_not_of('-')).c_str(), flag.c_str(),
                   what.substr(at + std::strlen(": At Most 1 required but received ")).c_str());
      return kExitInvalid;
    }
    const int code = app.exit(error);
    return code == 0 ? 0 : kExitInvalid;
  }
  if (estimate->parsed()) return run_estimate(estimate_inputs);
  if (search->parsed()) return run_search(search_inputs);
  if (validate->parsed()) return run_validate(validate_json);
  if (fit->parsed()) return run_fit(fit_inputs);
  if (methods->parsed()) return run_methods(methods_inputs, methods_list);
  if (import->parsed()) return run_import(import_inputs);
  if (export_command->parsed()) return run_export(export_inputs);
  if (presets->parsed()) {
    const json all = meshfit::run_presets();
    if (presets_json) {
      std::cout << meshfit::write_output_text(all, 2) << "\n";
    } else {
      std::printf("models:\n");
      for (const json& m : all["models"]) {
        std::printf("  %-14s h=%-6lld L=%-4lld a=%-4lld kv=%-4lld ffn=%-6lld vocab=%-7lld %.2f B params",
                    m["id"].get<std::string>().c_str(), m["hidden"].get<long long>(), m["layers"].get<long long>(),
                    m["heads"].get<long long>(), m["kv_heads"].get<long long>(), m["ffn"].get<long long>(),
                    m["vocab"].get<long long>(), m["total_parameters"].get<double>() / 1e9);
        // Only where the head dimension is set apart from h/a, so the other lines read as before.
        if (m["head_dim"].get<long long>() > 0) std::printf(" (head_dim %lld)", m["head_dim"].get<long long>());
        std::printf("\n");
      }
      std::printf("gpus:\n");
      for (const json& g : all["gpus"])
        std::printf("  %-10s %-16s %7.2f GiB  %6.0f TFLOP/s %s\n", g["id"].get<std::string>().c_str(),
                    g["name"].get<std::string>().c_str(), g["memory_gib"].get<double>(), g["bf16_flops"].get<double>() / 1e12,
                    meshfit::half_precision_is_fp16(g["family"].get<std::string>()) ? "fp16 (no bf16)" : "bf16");
    }
  }
  return 0;
}
