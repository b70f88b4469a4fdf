// panel_header.cpp — the header (verdict of the worst rank, copy/export buttons, units, theme) and
// the exports it offers: Markdown for issues, CSV of the ranks, and JSON through the CLI's own
// serialisers (estimate_to_json, layout_candidate_to_json), so an export reads like `--json`.
#include <algorithm>
#include <cstdio>

#include "app.h"
#include "panels.h"
#include "io/serialize.h"

namespace meshfit::ui {

// The link for a Markdown report: the page's address (or the build's public one); from a local file
// with no public address, the state itself, which `meshfit estimate --state` and any copy of the
// page (#state) read.
std::string link_text(const AppState& s) {
  if (s.local_file && s.public_url.empty()) return " (state `" + s.state + "`)";
  return " ([open]({{url}}))";
}

std::string markdown_report(const AppState& s) {
  if (!s.estimate.valid() || has_errors(s.issues)) return "meshfit: the inputs have problems" + link_text(s) + "\n";
  const Config& c = s.config;
  const MemoryReport& report = s.estimate.memory;
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "**meshfit**: %s on %lld x %s, dp=%lld tp=%lld pp=%lld cp=%lld vpp=%lld, seq %lld, "
                "global batch %lld, micro-batch %lld, recompute %s, %s%s\n\n",
                c.model.name.c_str(), (long long)c.cluster.gpus, c.gpu.id.c_str(), (long long)effective_dp(c),
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
  out += line;
  if (s.estimate.step.step_time_s > 0)
    std::snprintf(line, sizeof line, "Predicted %.0f tokens/s/GPU, MFU %.1f%%.\n", s.estimate.step.tokens_per_s_per_gpu,
                  100.0 * s.estimate.step.mfu);
  else
    std::snprintf(line, sizeof line, "Throughput not predicted (the GPU has no compute figure).\n");
  out += line;
  if (!s.search.top.empty()) {
    out += "\nFastest layouts that fit:\n\n| # | dp | tp | pp | cp | vpp | mb | zero | recompute | memory | tokens/s/GPU | MFU |\n"
           "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
    for (size_t i = 0; i < std::min<size_t>(10, s.search.top.size()); ++i) {
      const LayoutCandidate& l = s.search.top[i];
      const std::string tp = std::to_string(l.layout.tp) +
                             (l.spatial_temporal() ? " (ST " + std::to_string(l.layout.st_q) + "x" +
                                                         std::to_string(l.layout.st_q) + " \\*)"
                                                   : "");
      std::snprintf(line, sizeof line, "| %zu | %lld | %s | %lld | %lld | %lld | %lld | %lld | %s | %s | %.0f | %.1f%% |\n",
                    i + 1, (long long)l.layout.dp, tp.c_str(), (long long)l.layout.pp, (long long)l.layout.cp,
                    (long long)l.layout.vpp, (long long)l.micro_batch, (long long)l.layout.zero, to_string(l.recompute),
                    format_bytes(s, l.device_bytes, 1).c_str(), l.step.tokens_per_s_per_gpu, 100.0 * l.step.mfu);
      out += line;
    }
    bool marked = false;
    for (size_t i = 0; i < std::min<size_t>(10, s.search.top.size()); ++i) marked |= s.search.top[i].spatial_temporal();
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

std::string verdict_text(const AppState& s) {
  if (!s.estimate.valid() || has_errors(s.issues)) return "INVALID INPUTS  see the messages next to the fields";
  const MemoryReport& report = s.estimate.memory;
  const RankMemory& worst = s.estimate.worst();
  char line[200];
  std::snprintf(line, sizeof line, "%s  worst rank %s uses %s of %s (%.0f%% of capacity)",
                report.verdict == Verdict::kFits ? "FITS" : report.verdict == Verdict::kTight ? "TIGHT" : "OUT OF MEMORY",
                rank_name(worst, report.ranks.size()).c_str(), format_bytes(s, worst.device_bytes, 1).c_str(),
                format_bytes(s, report.capacity_bytes, 1).c_str(), 100.0 * worst.device_bytes / report.capacity_bytes);
  return line;
}

namespace {

// The verdict as a full-width coloured band: verdict, worst rank and its share of capacity; under
// it, the line saying what the last edit moved to keep the layout valid.
void draw_verdict_banner(AppState& s) {
  const bool valid = s.estimate.valid() && !has_errors(s.issues);
  const std::string text = verdict_text(s);
  const Verdict verdict = valid ? s.estimate.memory.verdict : Verdict::kOutOfMemory;
  const BannerColors colors = verdict_colors(verdict, valid);
  const float em = s.em;
  const ImVec2 min = ImGui::GetCursorScreenPos();
  const float font_size = ImGui::GetFontSize() * 1.15f;
  const float width = ImGui::GetContentRegionAvail().x;
  const float wrap = width - 1.2f * em;  // narrow windows wrap the line instead of cutting it
  const ImVec2 text_size = ImGui::GetFont()->CalcTextSizeA(font_size, FLT_MAX, wrap, text.c_str());
  const ImVec2 size(width, std::max(2.0f * em, text_size.y + 0.85f * em));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(min, ImVec2(min.x + size.x, min.y + size.y), colors.background, 0.25f * em);
  draw->AddText(ImGui::GetFont(), font_size, ImVec2(min.x + 0.6f * em, min.y + (size.y - text_size.y) / 2), colors.text,
                text.c_str(), nullptr, wrap);
  ImGui::Dummy(size);
  record_rect(s, "verdict_banner");
  // What a link could not use, each in the CLI's words, until dismissed or edited away.
  if (!s.input_issues.empty() && !s.link_issues_dismissed) {
    const BannerColors colors = verdict_colors(Verdict::kTight, true);
    ImGui::PushStyleColor(ImGuiCol_ChildBg, colors.background);
    ImGui::PushStyleColor(ImGuiCol_Text, colors.text);
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float height = line * float(s.input_issues.size() + 1) + 0.8f * em;
    if (ImGui::BeginChild("link_issues", ImVec2(0, height), false)) {
      ImGui::SetCursorPos(ImVec2(0.5f * em, 0.4f * em));
      ImGui::Text("This link has %zu problem%s; these keys were not used:", s.input_issues.size(),
                  s.input_issues.size() == 1 ? "" : "s");
      ImGui::SameLine(ImGui::GetContentRegionAvail().x - 4.0f * em);
      ImGui::PushStyleColor(ImGuiCol_Button, IM_COL32(255, 255, 255, 200));
      ImGui::PushStyleColor(ImGuiCol_ButtonHovered, IM_COL32(255, 255, 255, 255));
      if (ImGui::SmallButton("Dismiss")) {
        s.link_issues_dismissed = true;
        s.dirty = true;  // the mirror says so
      }
      ImGui::PopStyleColor(2);
      record_rect(s, "dismiss_link_issues");
      for (const Issue& issue : s.input_issues) {
        ImGui::SetCursorPosX(1.2f * em);
        ImGui::Text("%s: %s", issue.field.c_str(), issue.message.c_str());
      }
    }
    ImGui::EndChild();
    record_rect(s, "link_issues");
    ImGui::PopStyleColor(2);
  }
  if (!s.layout_note.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, warning_text_color(s));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::Text("Layout moved to stay valid: %s", s.layout_note.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    record_rect(s, "layout_note");
  }
}

// SameLine for the next button when it fits on this line, else a new line (narrow windows).
void flow(const char* next_label) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float next = ImGui::CalcTextSize(next_label).x + 2 * style.FramePadding.x;
  const float right = ImGui::GetItemRectMax().x + style.ItemSpacing.x + next;
  if (right <= ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x) ImGui::SameLine();
}

}  // namespace

void draw_header(AppState& s) {
  ImGui::TextUnformatted("meshfit");
  flow("will it fit? per-rank training memory and the fastest layout");
  ImGui::TextDisabled("will it fit? per-rank training memory and the fastest layout");
  if (ImGui::Button("Copy link")) {
    s.outbox.clipboard = "{{url}}";
    s.status = s.local_file && s.public_url.empty()
                   ? "Link copied; this page is a local file, so the link opens only on this computer."
                   : "Link copied.";
  }
  record_rect(s, "copy_link");
  flow("Copy as Markdown");
  if (ImGui::Button("Copy as Markdown")) {
    s.outbox.clipboard = markdown_report(s);
    s.status = s.local_file && s.public_url.empty() ? "Markdown copied, with the state instead of a local file's link."
                                                     : "Markdown copied: paste it in an issue.";
  }
  record_rect(s, "copy_markdown");
  flow("Copy launch flags");
  ImGui::BeginDisabled(!s.estimate.valid() || has_errors(s.issues));
  if (ImGui::Button("Copy launch flags")) ImGui::OpenPopup("launch_flags");
  ImGui::EndDisabled();
  record_rect(s, "copy_flags");
  if (ImGui::BeginPopup("launch_flags")) {
    launch_flags_menu(s, s.config, "copy_flags_");
    ImGui::EndPopup();
  }
  flow("Export JSON");
  export_button(s, "Export JSON", "meshfit.json", "application/json", json_report);
  record_rect(s, "export_json");
  flow("Export CSV");
  export_button(s, "Export CSV", "meshfit-ranks.csv", "text/csv", csv_report);
  flow("Units: GiB");
  if (ImGui::Button(s.units_gb ? "Units: GB" : "Units: GiB")) s.units_gb = !s.units_gb;
  flow("Light theme");
  if (ImGui::Button(s.dark ? "Light theme" : "Dark theme")) {
    s.dark = !s.dark;
    apply_theme(s);
  }
  flow("Formulas & sources");
  if (ImGui::Button("Formulas & sources")) s.outbox.open_docs = true;
  if (!s.status.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", s.status.c_str());
  }
  draw_verdict_banner(s);
}

}  // namespace meshfit::ui
