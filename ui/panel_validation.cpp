// panel_validation.cpp — the Validation tab: every public measured run (tests/data, compiled into
// core: io/measured_runs.h) beside its prediction, the metric compared, the signed error, the source
// and the median, so a user sees how far to trust a number for a setup like theirs. Same rows as
// `meshfit validate`: the pretraining runs, the fine-tuning runs, then the step-time model against the
// published throughput runs (io/throughput_runs.h) with the error bands every tokens/s carries.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

#include "io/throughput_runs.h"
#include "memory/overheads.h"
#include "panels.h"

namespace meshfit::ui {

namespace {

// Every named constant behind the predictions (memory/overheads.h kMemoryConstants): value, what it
// stands for, how it was obtained and its source, so a reader sees which figures are assumptions.
void draw_named_constants(AppState& s) {
  int assumed = 0;
  for (const NamedConstant& k : kMemoryConstants) assumed += k.basis == ConstantBasis::kAssumed;
  char header[160];
  std::snprintf(header, sizeof header, "Named constants in the memory predictions (%d, %d of them assumed)",
                int(std::size(kMemoryConstants)), assumed);
  ImGui::TextUnformatted(header);
  record_rect(s, "named_constants");
  if (!ImGui::BeginTable("constants", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                             ImGuiTableFlags_ScrollX))
    return;
  for (const char* column : {"constant", "value", "basis", "stands for", "source"}) ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  for (const NamedConstant& k : kMemoryConstants) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(k.name);
    ImGui::TableNextColumn();
    if (std::string(k.unit) == "bytes") ImGui::Text("%.6g MiB", bytes_to_mib(k.value));  // binary label
    else ImGui::Text("%.6g %s", k.value, k.unit);
    ImGui::TableNextColumn();
    if (k.basis == ConstantBasis::kAssumed) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(warning_text_color(s)), "assumed");
    else ImGui::TextUnformatted(enum_label(k.basis));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(k.meaning);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(k.source);
  }
  ImGui::EndTable();
}

void draw_report(AppState& s, const ValidationReport& v, const char* id) {
  ImGui::TextWrapped("Median |error| %.1f%% (signed %+.1f%%) over %lld measured runs; %lld of %lld fit/OOM labels "
                     "disagree; %lld runs that ran out of memory predicted to fit. Each run is predicted on the "
                     "metric its source reports; hover a source for its notes.",
                     100.0 * v.median_abs_error, 100.0 * v.median_signed_error, (long long)v.measured_rows,
                     (long long)v.label_disagreements, (long long)v.label_rows, (long long)v.false_fits);
  const float height = std::max(8.0f * s.em, ImGui::GetContentRegionAvail().y - 0.5f * s.em);
  if (!ImGui::BeginTable(id, 8,
                         ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollX |
                             ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit,
                         ImVec2(0, height)))
    return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (const char* column : {"run", "metric", "measured", "predicted", "error", "label", "verdict", "source"})
    ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  for (const ValidationRow& row : v.rows) {
    const MeasuredRun& run = row.run;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(run.label.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(enum_label(run.metric));
    ImGui::TableNextColumn();
    if (run.measured_bytes > 0) ImGui::TextUnformatted(format_bytes(s, run.measured_bytes).c_str());
    else ImGui::TextDisabled("-");
    ImGui::TableNextColumn();
    if (run.expressible) ImGui::TextUnformatted(format_bytes(s, row.predicted_bytes).c_str());
    else ImGui::TextDisabled("not expressible");
    ImGui::TableNextColumn();
    if (run.expressible && run.measured_bytes > 0) ImGui::Text("%+.1f%%", 100.0 * row.signed_error);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(run.oom ? "OOM" : "ran");
    ImGui::TableNextColumn();
    if (run.expressible) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(row.label_agrees ? kGreen : kRed), "%s",
                                            to_string(row.verdict));
    else ImGui::TextDisabled("%s", run.why_not.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(run.source.c_str());
    if (ImGui::IsItemHovered() && !run.notes.empty()) ImGui::SetTooltip("%s", run.notes.c_str());
  }
  ImGui::EndTable();
}

// The step-time model against tests/data/layouts_measured.csv: medians per source and per framework
// x GPU family (the bands shown beside every tokens/s), then every run.
void draw_throughput(AppState& s) {
  const ThroughputValidation& v = throughput_validation();
  ImGui::TextWrapped("tokens/s per GPU: median |error| %.1f%% over %d published runs. The band beside each predicted "
                     "tokens/s, MFU and time to train is the median for its framework and GPU family below; other "
                     "combinations are not validated.",
                     100.0 * v.median_abs_error, int(v.rows.size()));
  record_rect(s, "validation_throughput");
  // The summaries fit their rows (no scrolling: a scrolling table fills the space left).
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  int table = 0;
  for (const auto* list : {&v.sources, &v.bands}) {
    if (!ImGui::BeginTable(table++ == 0 ? "throughput_sources" : "throughput_bands", 4, flags)) continue;
    for (const char* column : {list == &v.sources ? "source" : "framework, GPU family (band)", "runs", "median |error|", "signed"})
      ImGui::TableSetupColumn(column);
    ImGui::TableHeadersRow();
    for (const ThroughputSummary& summary : *list) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(summary.key.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%d", summary.runs);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f%%", 100.0 * summary.median_abs_error);
      ImGui::TableNextColumn();
      ImGui::Text("%+.1f%%", 100.0 * summary.median_signed_error);
    }
    ImGui::EndTable();
    ImGui::Spacing();
  }
  const float height = std::max(8.0f * s.em, ImGui::GetContentRegionAvail().y - 0.5f * s.em);
  if (!ImGui::BeginTable("validation_throughput", 5, flags | ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY, ImVec2(0, height)))
    return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (const char* column : {"run", "measured tokens/s/GPU", "predicted", "error", "source"}) ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;  // 434 rows: draw only the visible ones
  clipper.Begin(int(v.rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const ThroughputRow& row = v.rows[size_t(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.run.label.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.0f", row.run.measured_tokens_per_s_per_gpu);
      ImGui::TableNextColumn();
      ImGui::Text("%.0f", row.predicted_tokens_per_s_per_gpu);
      ImGui::TableNextColumn();
      ImGui::Text("%+.1f%%", 100.0 * row.signed_error);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.run.source.c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", row.run.citation.c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace

void draw_validation_view(AppState& s) {
  if (!s.validation_ready) {
    s.validation = validate_against_measurements();
    s.finetune_validation = validate_finetune_against_measurements();
    s.validation_ready = true;
  }
  // One table per sub-tab, each filling the panel: nested scrolling tables would catch the wheel
  // meant for the panel.
  if (!ImGui::BeginTabBar("validation_views")) return;
  const auto sub_tab = [&s](const char* label, const char* rect) {
    const bool open = ImGui::BeginTabItem(label);
    record_rect(s, rect);
    return open;
  };
  if (sub_tab("Memory: pretraining", "validation_tab_memory")) {
    draw_report(s, s.validation, "validation");
    ImGui::EndTabItem();
  }
  if (sub_tab("Memory: fine-tuning", "validation_tab_finetune")) {
    draw_report(s, s.finetune_validation, "validation_finetune");
    ImGui::EndTabItem();
  }
  if (sub_tab("Step time (tokens/s)", "validation_tab_throughput")) {
    draw_throughput(s);
    ImGui::EndTabItem();
  }
  if (sub_tab("Named constants", "validation_tab_constants")) {
    draw_named_constants(s);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

}  // namespace meshfit::ui
