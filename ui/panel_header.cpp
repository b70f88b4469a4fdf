// panel_header.cpp — the header (verdict of the worst rank, copy/export buttons, units, theme) and
// the exports it offers: Markdown for issues, CSV of the ranks, and JSON through the CLI's own
// serialisers (estimate_to_json, layout_candidate_to_json), so an export reads like `--json`.
#include <algorithm>
#include <cstdio>

#include "app.h"
#include "panels.h"
#include "io/serialize.h"

namespace meshfit::ui {

std::string markdown_report(const AppState& s) {
  if (!s.estimate.valid() || has_errors(s.issues)) return "meshfit: the inputs have problems ({{url}})\n";
  const Config& c = s.config;
  const MemoryReport& report = s.estimate.memory;
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "**meshfit**: %s on %lld x %s, dp=%lld tp=%lld pp=%lld cp=%lld vpp=%lld, seq %lld, "
                "global batch %lld, micro-batch %lld, recompute %s, %s ([open](%s))\n\n",
                c.model.name.c_str(), (long long)c.cluster.gpus, c.gpu.id.c_str(), (long long)effective_dp(c),
                (long long)c.layout.tp, (long long)c.layout.pp, (long long)c.layout.cp, (long long)c.layout.vpp,
                (long long)c.training.seq, (long long)c.training.global_batch, (long long)c.training.micro_batch,
                to_string(c.training.recompute), to_string(c.training.framework), "{{url}}");
  out += line;
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
  std::snprintf(line, sizeof line, "\nVerdict: **%s** (capacity %s; tight at %.0f%%). Predicted %.0f tokens/s/GPU, MFU %.1f%%.\n",
                to_string(report.verdict), format_bytes(s, report.capacity_bytes).c_str(), 100.0 * report.headroom,
                s.estimate.step.tokens_per_s_per_gpu, 100.0 * s.estimate.step.mfu);
  out += line;
  if (!s.search.top.empty()) {
    out += "\nFastest layouts that fit:\n\n| # | dp | tp | pp | cp | vpp | mb | zero | recompute | memory | tokens/s/GPU | MFU |\n"
           "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
    for (size_t i = 0; i < std::min<size_t>(10, s.search.top.size()); ++i) {
      const LayoutCandidate& l = s.search.top[i];
      std::snprintf(line, sizeof line, "| %zu | %lld | %lld | %lld | %lld | %lld | %lld | %lld | %s | %s | %.0f | %.1f%% |\n",
                    i + 1, (long long)l.layout.dp, (long long)l.layout.tp, (long long)l.layout.pp, (long long)l.layout.cp,
                    (long long)l.layout.vpp, (long long)l.micro_batch, (long long)l.layout.zero, to_string(l.recompute),
                    format_bytes(s, l.device_bytes, 1).c_str(), l.step.tokens_per_s_per_gpu, 100.0 * l.step.mfu);
      out += line;
    }
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

namespace {

// A button that hands the shell a file to download, its text made only when pressed.
void export_button(AppState& s, const char* label, const char* file_name, const char* mime,
                   std::string (*report)(const AppState&)) {
  if (!ImGui::Button(label)) return;
  s.outbox.download_name = file_name;
  s.outbox.download_text = report(s);
  s.outbox.download_mime = mime;
}

}  // namespace

void draw_header(AppState& s) {
  ImGui::TextUnformatted("meshfit");
  ImGui::SameLine();
  ImGui::TextDisabled("will it fit? per-rank training memory and the fastest layout");
  ImGui::SameLine(0, 2.0f * s.em);
  if (s.estimate.valid() && !has_errors(s.issues)) {
    const MemoryReport& report = s.estimate.memory;
    const RankMemory& worst = s.estimate.worst();
    const ImU32 color = report.verdict == Verdict::kFits ? kGreen : report.verdict == Verdict::kTight ? kAmber : kRed;
    char text[160];
    std::snprintf(text, sizeof text, "%s: worst rank %s uses %s of %s (%.0f%%)", enum_label(report.verdict),
                  rank_name(worst, report.ranks.size()).c_str(), format_bytes(s, worst.device_bytes, 1).c_str(),
                  format_bytes(s, report.capacity_bytes, 1).c_str(), 100.0 * worst.device_bytes / report.capacity_bytes);
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    ImGui::TextUnformatted(text);
    ImGui::PopStyleColor();
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, kRed);
    ImGui::TextUnformatted("invalid inputs: see the messages next to the fields");
    ImGui::PopStyleColor();
  }
  if (ImGui::Button("Copy link")) {
    s.outbox.clipboard = "{{url}}";
    s.status = "Link copied.";
  }
  record_rect(s, "copy_link");
  ImGui::SameLine();
  if (ImGui::Button("Copy as Markdown")) {
    s.outbox.clipboard = markdown_report(s);
    s.status = "Markdown copied: paste it in an issue.";
  }
  record_rect(s, "copy_markdown");
  ImGui::SameLine();
  export_button(s, "Export JSON", "meshfit.json", "application/json", json_report);
  record_rect(s, "export_json");
  ImGui::SameLine();
  export_button(s, "Export CSV", "meshfit-ranks.csv", "text/csv", csv_report);
  ImGui::SameLine();
  if (ImGui::Button(s.units_gb ? "Units: GB" : "Units: GiB")) s.units_gb = !s.units_gb;
  ImGui::SameLine();
  if (ImGui::Button(s.dark ? "Light theme" : "Dark theme")) {
    s.dark = !s.dark;
    apply_theme(s);
  }
  ImGui::SameLine();
  if (ImGui::Button("Formulas & sources")) s.outbox.open_docs = true;
  if (!s.status.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", s.status.c_str());
  }
}

}  // namespace meshfit::ui
