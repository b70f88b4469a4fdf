// panel_header.cpp — the header (verdict of the worst rank, copy/export buttons, units, theme); the
// exports it offers (Markdown, CSV, JSON) are made in reports.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "app.h"
#include "panels.h"
#include "io/serialize.h"
#include "spec/config_schema.h"

namespace meshfit::ui {

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
  // A link whose only errors are keys meshfit does not know: nothing computed until they are dismissed.
  const bool unknown_keys_only =
      has_errors(s.issues) && std::all_of(s.issues.begin(), s.issues.end(), [](const Issue& i) {
        return i.severity != Severity::kError || i.code == IssueCode::kUnknownField;
      });
  if (unknown_keys_only && !s.link_issues_dismissed)
    return "LINK NOT USED  it names keys meshfit does not know (above): Dismiss to use the rest of it";
  if (!s.estimate.valid() || has_errors(s.issues)) return "INVALID INPUTS  see the messages next to the fields";
  const MemoryReport& report = s.estimate.memory;
  const RankMemory& worst = s.estimate.worst();
  // Who: a pipeline's worst stage, or, with one stage, every GPU alike ("worst rank only uses" read
  // as "fits with room").
  char who[80];
  if (report.ranks.size() > 1)
    // Stages count from 0 as the CLI and the JSON number them ("stage 1 of 8" read as the first).
    std::snprintf(who, sizeof who, "worst rank (pipeline stage %lld of stages 0-%lld)", (long long)worst.pp_stage,
                  (long long)s.config.layout.pp - 1);
  else
    std::snprintf(who, sizeof who, "%s", s.config.cluster.gpus == 1 ? "the GPU" : "every GPU");
  // Paged optimizer states past the capacity: the driver keeps them in host memory (memory_model.h),
  // so the GPU holds its capacity and the rest waits on the host (a page review: "uses 139%").
  const double spill = paged_spill_bytes(worst, report.capacity_bytes);
  if (spill > 0 && report.verdict != Verdict::kOutOfMemory) {
    char paged[240];
    std::snprintf(paged, sizeof paged,
                  "TIGHT (PAGED)  %s needs %s: %s on the GPU and %s of paged optimizer states in host memory, paged over PCIe each step",
                  who, format_bytes(s, worst.device_bytes, 1).c_str(), format_bytes(s, report.capacity_bytes, 1).c_str(),
                  format_bytes(s, spill, 1).c_str());
    return paged;
  }
  // Near the capacity, enough decimals that the two figures and the share differ as they do (a page
  // review read "OUT OF MEMORY  uses 79.2 GiB of 79.2 GiB (100%)", 79.198 of 79.179).
  int decimals = 1;
  while (decimals < 3 && format_bytes(s, worst.device_bytes, decimals) == format_bytes(s, report.capacity_bytes, decimals))
    ++decimals;
  const double percent = 100.0 * worst.device_bytes / report.capacity_bytes;
  const int percent_decimals = std::fabs(percent - 100.0) < 0.5 ? 2 : 0;
  char line[200];
  std::snprintf(line, sizeof line, "%s  %s uses %s of %s (%.*f%% of capacity)",
                report.verdict == Verdict::kFits ? "FITS" : report.verdict == Verdict::kTight ? "TIGHT" : "OUT OF MEMORY", who,
                format_bytes(s, worst.device_bytes, decimals).c_str(), format_bytes(s, report.capacity_bytes, decimals).c_str(),
                percent_decimals, percent);
  // The capacity inside the peak's error band (memory_band.h): the call is said to be open where it is
  // made, not only in the memory view's band line.
  const MemoryBand& band = s.estimate.memory_band;
  if (band.capacity_within) return line + (", within the " + memory_band_percent(band) + " error: could go either way");
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
  const std::string drawn = wrap_at_spaces(text, font_size, wrap);
  const ImVec2 text_size = ImGui::GetFont()->CalcTextSizeA(font_size, FLT_MAX, 0.0f, drawn.c_str());
  const ImVec2 size(width, std::max(2.0f * em, text_size.y + 0.85f * em));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(min, ImVec2(min.x + size.x, min.y + size.y), colors.background, 0.25f * em);
  draw->AddText(ImGui::GetFont(), font_size, ImVec2(min.x + 0.6f * em, min.y + (size.y - text_size.y) / 2), colors.text,
                drawn.c_str());
  ImGui::Dummy(size);
  record_rect(s, "verdict_banner");
  // What a link could not use, each in the CLI's words, until dismissed or edited away.
  if (!s.input_issues.empty() && !s.link_issues_dismissed) {
    const BannerColors colors = verdict_colors(Verdict::kTight, true);
    ImGui::PushStyleColor(ImGuiCol_ChildBg, colors.background);
    ImGui::PushStyleColor(ImGuiCol_Text, colors.text);
    // Each problem wrapped to the band (a phone cut "state: \"1\" is not a..." at the edge), the
    // Dismiss button on the title's line, which leaves it room.
    const float spacing = ImGui::GetStyle().ItemSpacing.y;
    const float text_width = ImGui::GetContentRegionAvail().x - 1.7f * em;
    std::vector<std::string> lines;
    // Each line says what is wrong with its key, a missing one included ("model: no model..."; a
    // review read "these keys were not used" beside a key the link did not have).
    const std::string title = "This link has " + std::to_string(s.input_issues.size()) + " problem" +
                              (s.input_issues.size() == 1 ? ":" : "s:");
    const float button = ImGui::CalcTextSize("Dismiss").x + 2.0f * ImGui::GetStyle().FramePadding.x + 1.0f * em;
    const std::string title_lines = wrap_at_spaces(title, ImGui::GetFontSize(), text_width - button);
    float height = std::max(ImGui::GetFrameHeight(), ImGui::CalcTextSize(title_lines.c_str()).y) + spacing + 0.8f * em;
    for (const Issue& issue : s.input_issues) {
      lines.push_back(wrap_at_spaces(issue.field + ": " + issue.message, ImGui::GetFontSize(), text_width));
      height += ImGui::CalcTextSize(lines.back().c_str()).y + spacing;
    }
    if (ImGui::BeginChild("link_issues", ImVec2(0, height), false)) {
      ImGui::SetCursorPos(ImVec2(0.5f * em, 0.4f * em));
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted(title_lines.c_str());
      ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - button + 0.5f * em);
      ImGui::PushStyleColor(ImGuiCol_Button, IM_COL32(255, 255, 255, 200));
      ImGui::PushStyleColor(ImGuiCol_ButtonHovered, IM_COL32(255, 255, 255, 255));
      if (inline_button(s, "Dismiss")) {
        // Dismissed, the keys meshfit does not know are dropped and the rest of the link is used; a
        // bad value of a known field stays an error beside its field.
        s.link_issues_dismissed = true;
        std::vector<Issue>& issues = s.input_issues;
        issues.erase(std::remove_if(issues.begin(), issues.end(), [](const Issue& i) { return i.code == IssueCode::kUnknownField; }),
                     issues.end());
        s.link_as_given.clear();  // the user let the link go: the page's own link from here
        recompute(s);
      }
      ImGui::PopStyleColor(2);
      record_rect(s, "dismiss_link_issues");
      for (const std::string& line : lines) {
        ImGui::SetCursorPosX(1.2f * em);
        ImGui::TextUnformatted(line.c_str());
      }
    }
    ImGui::EndChild();
    record_rect(s, "link_issues");
    ImGui::PopStyleColor(2);
  }
  // What the last edit changed beyond the field edited: wrapped, in the warning colour.
  const auto note = [&s](const std::string& text, const char* rect) {
    if (text.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, warning_text_color(s));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    record_rect(s, rect);
  };
  if (!s.defaults_note.empty()) note("Set by the training mode: " + s.defaults_note + " (edit them back below).", "defaults_note");
  if (!s.layout_note.empty()) note("Layout moved to stay valid: " + s.layout_note, "layout_note");
}


}  // namespace

void draw_header(AppState& s) {
  // A phone sees the answer first: the banner right under the name; its buttons scroll with the
  // view (draw_header_buttons, called by the app at the top of the view), so that the fixed part
  // is the name, the verdict and the view switcher (the buttons took 300 of 844 px there).
  const bool narrow = narrow_window(s);
  ImGui::TextUnformatted("meshfit");
  flow("will it fit? per-rank training memory and the fastest layout");
  ImGui::TextDisabled("will it fit? per-rank training memory and the fastest layout");
  if (narrow) draw_verdict_banner(s);
  // The run's name and notes; on a phone, where they stay on screen above every view, at most about
  // two lines each (a 300-character name took seven), the whole text in the Inputs' fields.
  for (const auto& run_text : run_texts(s.config)) {
    std::string text = run_text.second;
    constexpr size_t kPhoneChars = 80;
    if (narrow && text.size() > kPhoneChars) {
      size_t cut = kPhoneChars;
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
      text = text.substr(0, cut) + "\xE2\x80\xA6";
    }
    ImGui::TextWrapped("%s: %s", run_text.first.c_str(), text.c_str());
  }
  if (narrow) return;
  draw_header_buttons(s);
  draw_verdict_banner(s);
}

void draw_header_buttons(AppState& s) {
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
  if (ImGui::Button("Export CSV")) ImGui::OpenPopup("export_csv");
  record_rect(s, "export_csv");
  if (ImGui::BeginPopup("export_csv")) {
    if (ImGui::Selectable("Per-rank memory of this configuration")) {
      s.outbox.download_name = "meshfit-ranks.csv";
      s.outbox.download_text = csv_report(s);
      s.outbox.download_mime = "text/csv";
    }
    record_rect(s, "csv_ranks");
    ImGui::BeginDisabled(!s.search.valid() || s.running_search != nullptr || s.export_search != nullptr);
    if (ImGui::Selectable("Every evaluated layout (the layout search)")) export_layouts_csv(s);
    ImGui::EndDisabled();
    record_rect(s, "csv_layouts");
    ImGui::EndPopup();
  }
  // Units: binary GiB, decimal GB (datasheets), binary MiB (nvidia-smi, allocator logs).
  // The label and its three radio buttons stay on one line (a radio is a frame-high circle and its label).
  const ImGuiStyle& style = ImGui::GetStyle();
  float units_width = ImGui::CalcTextSize("Units:").x;
  for (int u = 0; u < int(enum_count<ViewUnits>()); ++u)
    units_width += 2 * style.ItemSpacing.x + ImGui::GetFrameHeight() + style.ItemInnerSpacing.x +
                   ImGui::CalcTextSize(enum_label(ViewUnits(u))).x;
  flow_width(units_width);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Units:");
  for (int u = 0; u < int(enum_count<ViewUnits>()); ++u) {
    ImGui::SameLine();
    const ViewUnits units = ViewUnits(u);
    if (ImGui::RadioButton(enum_label(units), s.units == units)) s.units = units;
    record_rect(s, (std::string("units_") + to_string(units)).c_str());
  }
  flow(s.pinned ? "Re-pin" : "Pin to compare");
  if (ImGui::Button(s.pinned ? "Re-pin" : "Pin to compare")) {
    pin_config(s, s.config);
    s.select_tab = 2;
    s.tab = ViewTab::kCompare;
    s.status = "Pinned: edit the inputs to compare with it.";
  }
  record_rect(s, "pin");
  flow("Light theme");
  if (ImGui::Button(s.dark ? "Light theme" : "Dark theme")) {
    s.dark = !s.dark;
    apply_theme(s);
  }
  flow("Formulas & sources");
  if (ImGui::Button("Formulas & sources")) s.outbox.open_docs = true;
  record_rect(s, "formulas");
  if (!s.status.empty()) {
    flow(s.status.c_str());
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s", s.status.c_str());  // wrapped: a phone cut "Pinned: edit the inpu..."
    ImGui::PopTextWrapPos();
  }
}

}  // namespace meshfit::ui
