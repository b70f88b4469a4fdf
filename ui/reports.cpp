// reports.cpp — the page's exports: Markdown for issues, CSV of the ranks, and JSON through the
// CLI's own serialisers (estimate_to_json, layout_candidate_to_json), so an export reads like
// `--json`; with the byte formats they share with the panels. No ImGui here: the native property
// tests (tests/core/test_properties.cpp) check these texts too.
#include "reports.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "app.h"
#include "io/serialize.h"
#include "spec/config_schema.h"
#include "units.h"

namespace meshfit::ui {

double unit_bytes(const AppState& s) {
  switch (s.units) {
    case ViewUnits::kGigabytes: return kGB;
    case ViewUnits::kMebibytes: return kMiB;
    case ViewUnits::kGibibytes: break;
  }
  return kGiB;
}

std::string format_bytes(const AppState& s, double bytes, int decimals) {
  char text[48];
  // MiB figures are large: a whole number of MiB is what nvidia-smi and the allocator print.
  if (s.units == ViewUnits::kMebibytes) decimals = 0;
  std::snprintf(text, sizeof text, "%.*f %s", decimals, bytes / unit_bytes(s), unit_label(s));
  return text;
}

double unit_value(const AppState& s, double bytes) { return bytes / unit_bytes(s); }
const char* unit_label(const AppState& s) { return enum_label(s.units); }

std::string signed_percent(double fraction) {
  const double percent = 100.0 * fraction;
  if (std::fabs(percent) < 0.05) return "0.0%";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", percent);
  return text;
}

double nice_step(double span, double ticks) {
  const double raw = span / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  return raw / magnitude < 2 ? 2 * magnitude : raw / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
}

std::string throughput_text(const AppState& s) {
  const StepReport& step = s.estimate.step;
  if (!(step.step_time_s > 0)) return "";
  const std::string band = error_band_text(step.error_band);
  char text[384];
  // MFU counts against the dense BF16 peak, fp8 GEMMs or not: an fp8 run says so.
  std::snprintf(text, sizeof text, "%.0f tokens/s/GPU and MFU %.1f%%%s", step.tokens_per_s_per_gpu, 100.0 * step.mfu,
                s.config.training.precision == Precision::kFp8 ? " of the BF16 peak" : "");
  std::string out = text;
  // The band once, after every figure it covers (MFU and the time to train scale with tokens/s; an
  // as-a-user review read it twice in one sentence). Relative: MFU 47% +-2% is 46-48%.
  const bool days = step.time_to_train_s > 0;
  if (days) {
    const double tokens = s.config.training.tokens_to_train;
    char trillions[32];
    std::snprintf(trillions, sizeof trillions, "%.3g T", tokens / 1e12);
    const std::string count = tokens >= 1e12 ? trillions : format_count(tokens);
    std::snprintf(text, sizeof text, "; %s to train %s tokens", format_duration(step.time_to_train_s).c_str(), count.c_str());
    out += text;
  }
  out += " (" + std::string(step.error_band.runs > 0 ? (days ? "each " : "both ") : "") + band + ")";
  const std::string host = host_bound_text(step);
  if (!host.empty()) out += ". " + host;
  return out;
}

std::string memory_band_line(const AppState& s) {
  const MemoryBand& band = s.estimate.memory_band;
  std::string out = "Peak memory " + memory_band_text(band) + ".";
  if (band.capacity_within) out += " The capacity is within that error of the prediction: the verdict could go either way.";
  return out;
}

std::string rank_name(const RankMemory& rank, size_t ranks) {
  std::string name = rank.role;
  if (ranks > 1) name += " " + std::to_string(rank.pp_stage);
  return name;
}

// The link for a Markdown report: the page's address (or the build's public one); from a local file
// with no public address, the state itself, which `meshfit estimate --state` and any copy of the
// page (#state) read.
std::string link_text(const AppState& s) {
  if (s.local_file && s.public_url.empty()) return " (state `" + s.state + "`)";
  return " ([open]({{url}}))";
}

// The run's non-empty free-text fields (FieldGroup::kRun), one "key: text" each, newlines flattened.
std::vector<std::pair<std::string, std::string>> run_texts(const Config& config) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ConfigField& field : config_fields()) {
    if (field.group != FieldGroup::kRun) continue;
    std::string text = field.get(config).get<std::string>();
    if (text.empty()) continue;
    std::replace(text.begin(), text.end(), '\n', ' ');
    out.emplace_back(field.key, text);
  }
  return out;
}

std::string replicas_mark(const Layout& layout) {
  return layout.dp_replicate > 1 ? " (r" + std::to_string(layout.dp_replicate) + ")" : std::string();
}

std::string markdown_report(const AppState& s) {
  if (!s.estimate.valid() || has_errors(s.issues)) return "meshfit: the inputs have problems" + link_text(s) + "\n";
  const Config& c = s.config;
  const MemoryReport& report = s.estimate.memory;
  std::string out;
  char line[512];
  const std::string replicas = (c.layout.dp_replicate > 1 ? " dp_replicate=" + std::to_string(c.layout.dp_replicate) : "") +
                               (c.layout.hpz_partition_size > 1 ? " hpz=" + std::to_string(c.layout.hpz_partition_size) : "");
  std::snprintf(line, sizeof line, "**meshfit**: %s on %lld x %s, dp=%lld%s tp=%lld pp=%lld cp=%lld vpp=%lld, seq %lld, "
                "global batch %lld, micro-batch %lld, recompute %s, %s%s\n\n",
                c.model.name.c_str(), (long long)c.cluster.gpus, c.gpu.id.c_str(), (long long)effective_dp(c), replicas.c_str(),
                (long long)c.layout.tp, (long long)c.layout.pp, (long long)c.layout.cp, (long long)c.layout.vpp,
                (long long)c.training.seq, (long long)c.training.global_batch, (long long)c.training.micro_batch,
                to_string(c.training.recompute), to_string(c.training.framework), link_text(s).c_str());
  out += line;
  if (spatial_temporal(c.layout)) {
    std::snprintf(line, sizeof line, "Model parallelism: tp=%lld as %lld conventional x a %lldx%lld spatial-temporal "
                  "(PrimePar-style) square, *%s*.\n\n", (long long)c.layout.tp,
                  (long long)(c.layout.tp / (c.layout.st_q * c.layout.st_q)), (long long)c.layout.st_q,
                  (long long)c.layout.st_q, kSpatialTemporalNote);
    out += line;
  }
  for (const auto& run_text : run_texts(c)) out += "> " + run_text.first + ": " + run_text.second + "\n\n";
  out += std::string("| rank (") + unit_label(s) + ") |";
  for (int i = 0; i < kComponentCount; ++i) out += std::string(" ") + component_label(Component(i)) + " |";
  out += " device | % of capacity |\n|---|";
  for (int i = 0; i < kComponentCount + 2; ++i) out += "---:|";
  out += "\n";
  for (const RankMemory& rank : report.ranks) {
    out += "| " + rank_name(rank, report.ranks.size()) + " |";
    for (int i = 0; i < kComponentCount; ++i) {
      std::snprintf(line, sizeof line, " %.2f |", unit_value(s, rank.bytes(Component(i))));
      out += line;
    }
    std::snprintf(line, sizeof line, " **%.2f** | %.0f%% |\n", unit_value(s, rank.device_bytes),
                  100.0 * rank.device_bytes / report.capacity_bytes);
    out += line;
  }
  std::snprintf(line, sizeof line, "\nVerdict: **%s** (capacity %s; tight at %.0f%%). ", to_string(report.verdict),
                format_bytes(s, report.capacity_bytes).c_str(), 100.0 * report.headroom);
  out += line + memory_band_line(s) + " ";
  if (s.estimate.step.step_time_s > 0)
    std::snprintf(line, sizeof line, "Predicted %s.\n", throughput_text(s).c_str());
  else
    std::snprintf(line, sizeof line, "Throughput not predicted (the GPU has no compute figure).\n");
  out += line;
  out += compare_markdown(s);
  if (!s.search.top.empty()) {
    out += "\nFastest layouts that fit:\n\n| # | dp | tp | pp | cp | vpp | mb | zero | recompute | sp | memory | tokens/s/GPU | MFU |\n"
           "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|\n";
    for (size_t i = 0; i < std::min<size_t>(10, s.search.top.size()); ++i) {
      const LayoutCandidate& l = s.search.top[i];
      const std::string tp = std::to_string(l.layout.tp) +
                             (l.spatial_temporal() ? " (ST " + std::to_string(l.layout.st_q) + "x" +
                                                         std::to_string(l.layout.st_q) + " \\*)"
                                                   : "");
      const std::string dp = std::to_string(l.layout.dp) + replicas_mark(l.layout);
      // Sequence parallelism told apart: two rows that differ only in it looked identical with different
      // memory (an as-a-user review).
      std::snprintf(line, sizeof line, "| %zu | %s | %s | %lld | %lld | %lld | %lld | %lld | %s | %s | %s | %.0f | %.1f%% |\n",
                    i + 1, dp.c_str(), tp.c_str(), (long long)l.layout.pp, (long long)l.layout.cp,
                    (long long)l.layout.vpp, (long long)l.micro_batch, (long long)l.layout.zero, to_string(l.recompute),
                    l.sp ? "on" : "off", format_bytes(s, l.device_bytes, 1).c_str(), l.step.tokens_per_s_per_gpu, 100.0 * l.step.mfu);
      out += line;
    }
    out += "\ntokens/s/GPU and MFU: " + error_band_text(s.search.top.front().step.error_band) + ".\n";
    bool marked = false;
    for (size_t i = 0; i < std::min<size_t>(10, s.search.top.size()); ++i) marked |= s.search.top[i].spatial_temporal();
    if (c.layout.dp_replicate > 1) out += "\n(rN) after dp: N replicas of each shard group (dp_replicate).\n";
    if (marked)
      out += std::string("\n\\* spatial-temporal (PrimePar-style) model parallelism: ") + kSpatialTemporalNote +
             "; no launch config exists for it.\n";
  }
  return out;
}

std::string csv_report(const AppState& s) {
  std::string out = "role,pp_stage";
  for (int i = 0; i < kComponentCount; ++i) out += std::string(",") + to_string(Component(i)) + "_bytes";
  out += ",peak_allocated_bytes,peak_reserved_bytes,device_bytes\n";
  if (!s.estimate.valid() || has_errors(s.issues)) return out;
  char value[48];
  for (const RankMemory& rank : s.estimate.memory.ranks) {
    out += std::string(rank.role) + "," + std::to_string(rank.pp_stage);
    for (int i = 0; i < kComponentCount; ++i) {
      std::snprintf(value, sizeof value, ",%.0f", rank.bytes(Component(i)));
      out += value;
    }
    for (double bytes : {rank.peak_allocated_bytes, rank.peak_reserved_bytes, rank.device_bytes}) {
      std::snprintf(value, sizeof value, ",%.0f", bytes);
      out += value;
    }
    out += "\n";
  }
  return out;
}

std::string json_report(const AppState& s) {
  nlohmann::json layouts = nlohmann::json::array();
  for (size_t i = 0; i < std::min<size_t>(20, s.search.top.size()); ++i) layouts.push_back(layout_candidate_to_json(s.search.top[i]));
  return nlohmann::json{{"state", s.state}, {"estimate", estimate_to_json(s.config, s.estimate, s.issues)}, {"layouts", layouts}}
      .dump(2);
}

}  // namespace meshfit::ui
