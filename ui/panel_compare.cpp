// panel_compare.cpp — the Compare tab: draws compare.cpp's rows (a pinned configuration beside the
// edited one) and the inputs that differ, with Pin/Unpin/Go back.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "app.h"
#include "io/serialize.h"
#include "panels.h"

namespace meshfit::ui {

bool draw_compare_view(AppState& s) {
  const float em = s.em;
  if (!s.pinned) {
    ImGui::TextWrapped("Pin this configuration, then edit the inputs: the pinned one and the edited one are shown here "
                       "side by side (per-rank peaks, step time, tokens/s, and the inputs that differ), and in the "
                       "Markdown export. The pin is part of the link.");
    if (ImGui::Button("Pin this configuration")) pin_config(s, s.config);
    record_rect(s, "compare_pin");
    return false;
  }
  bool changed = false;
  if (ImGui::Button("Unpin")) unpin(s);
  record_rect(s, "compare_unpin");
  flow("Pin this one instead");
  if (s.pinned && ImGui::Button("Pin this one instead")) pin_config(s, s.config);
  record_rect(s, "compare_repin");
  flow("Go back to the pinned one");
  if (s.pinned && ImGui::Button("Go back to the pinned one")) {
    s.config = s.pin_config;
    changed = true;
  }
  record_rect(s, "compare_restore");
  if (!s.pinned) return changed;

  const std::vector<CompareRow> rows = compare_rows(s);
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  // A phone-width window has no room for four columns: each row's two values and the change go
  // under its label, wrapped.
  const bool narrow = ImGui::GetContentRegionAvail().x < 30.0f * em;
  if (narrow && ImGui::BeginTable("compare", 2, flags | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("pinned \xE2\x86\x92 this (change)", ImGuiTableColumnFlags_WidthStretch, 2.0f);
    ImGui::TableHeadersRow();
    for (const CompareRow& row : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", row.label.c_str());
      ImGui::TableNextColumn();
      const std::string text = row.pinned + " \xE2\x86\x92 " + row.current + (row.change.empty() ? "" : " (" + row.change + ")");
      // Broken at spaces only: ImGui's wrap split "30.5 GiB" after the point.
      ImGui::TextUnformatted(wrap_at_spaces(text, ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x).c_str());
    }
    ImGui::EndTable();
  } else if (!narrow && ImGui::BeginTable("compare", 4, flags)) {
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn("pinned");
    ImGui::TableSetupColumn("this configuration");
    ImGui::TableSetupColumn("change");
    ImGui::TableHeadersRow();
    for (const CompareRow& row : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.label.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.pinned.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.current.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.change.c_str());
    }
    ImGui::EndTable();
  }
  record_rect(s, "compare_table");

  ImGui::Dummy(ImVec2(0, 0.4f * em));
  const std::vector<ConfigDifference> diff = config_differences(s.pin_config, s.config);
  if (diff.empty()) {
    ImGui::TextDisabled("The inputs are the same as the pinned configuration's.");
  } else if (ImGui::BeginTable("compare_inputs", 3, flags)) {
    ImGui::TableSetupColumn("input that differs");
    ImGui::TableSetupColumn("pinned");
    ImGui::TableSetupColumn("this configuration");
    ImGui::TableHeadersRow();
    for (const ConfigDifference& d : diff) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(d.key.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(d.pinned.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(d.current.c_str());
    }
    ImGui::EndTable();
  }
  record_rect(s, "compare_diff");
  return changed;
}

}  // namespace meshfit::ui
