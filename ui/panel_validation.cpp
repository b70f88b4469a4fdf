// panel_validation.cpp — the Validation tab: every public measured run (tests/data, compiled into
// core: io/measured_runs.h) beside its prediction, the metric compared, the signed error, the source
// and the median, so a user sees how far to trust a number for a setup like theirs. Same rows as
// `meshfit validate`: the pretraining runs, the fine-tuning runs, then the step-time model against the
// published throughput runs (io/throughput_runs.h) with the error bands every tokens/s carries, and
// meshfit's own ground truth: training steps measured on one H100 (and one H200) by tests/gpu (io/gpu_runs.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "io/gpu_runs.h"
#include "io/memory_band.h"
#include "io/throughput_runs.h"
#include "memory/overheads.h"
#include "panels.h"

namespace meshfit::ui {

namespace {

constexpr double kLargeMiss = 0.25;  // a memory error this large is marked in the warning colour


// A row whose predicted verdict agrees with its fit/OOM label, or not, in the theme's readable colour.
ImVec4 agreement_color(const AppState& s, bool agrees) {
  return ImGui::ColorConvertU32ToFloat4(agrees ? ok_text_color(s) : error_text_color(s));
}

// Every named constant behind the predictions (memory/overheads.h kMemoryConstants): value, what it
// stands for, how it was obtained and its source, so a reader sees which figures are assumptions.
void draw_named_constants(AppState& s) {
  int assumed = 0;
  for (const NamedConstant& k : kMemoryConstants) assumed += k.basis == ConstantBasis::kAssumed;
  char header[160];
  std::snprintf(header, sizeof header, "Named constants in the memory predictions (%d, %d of them assumed)",
                int(std::size(kMemoryConstants)), assumed);
  ImGui::TextWrapped("%s", header);  // a phone cut it at "(18, 0 of them a"
  record_rect(s, "named_constants");
  const auto value_text = [](const NamedConstant& k) {
    char text[64];
    if (std::string(k.unit) == "bytes") std::snprintf(text, sizeof text, "%.6g MiB", bytes_to_mib(k.value));  // binary label
    else std::snprintf(text, sizeof text, "%.6g %s", k.value, k.unit);
    return std::string(text);
  };
  const auto basis = [&s](const NamedConstant& k) {
    if (k.basis == ConstantBasis::kAssumed) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(warning_text_color(s)), "assumed");
    else ImGui::TextUnformatted(enum_label(k.basis));
  };
  if (narrow_window(s)) {
    // A phone's width: one column, each constant as its name, value and basis, then what it stands for
    // and its source wrapped at spaces: the five columns showed the name and a sliver of the value.
    if (!ImGui::BeginTable("constants", 1, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) return;
    for (const NamedConstant& k : kMemoryConstants) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const float width = ImGui::GetContentRegionAvail().x;
      ImGui::TextUnformatted(k.name);
      ImGui::Text("%s, ", value_text(k).c_str());
      ImGui::SameLine(0.0f, 0.0f);
      basis(k);
      ImGui::TextUnformatted(wrap_at_spaces(k.meaning, ImGui::GetFontSize(), width).c_str());
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      ImGui::TextUnformatted(wrap_at_spaces(k.source, ImGui::GetFontSize(), width).c_str());
      ImGui::PopStyleColor();
    }
    ImGui::EndTable();
    record_rect(s, "constants_narrow");
    return;
  }
  // What each stands for and its source wrap in the width left (they ran hundreds of pixels past a
  // 1440 px window, behind a sideways scroll).
  if (!ImGui::BeginTable("constants", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit))
    return;
  for (const char* column : {"constant", "value", "basis"}) ImGui::TableSetupColumn(column);
  ImGui::TableSetupColumn("stands for", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("source", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableHeadersRow();
  for (const NamedConstant& k : kMemoryConstants) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(k.name);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(value_text(k).c_str());
    ImGui::TableNextColumn();
    basis(k);
    for (const char* text : {k.meaning, k.source}) {  // ImGui's wrap: at spaces, and inside a token longer than the column
      ImGui::TableNextColumn();
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextUnformatted(text);
      ImGui::PopTextWrapPos();
    }
  }
  ImGui::EndTable();
}

// A phone-width window: two columns, the run (and its source) and what was compared, wrapped at
// spaces: the eight-column table showed the run's name and a sliver of the metric.
void draw_report_narrow(AppState& s, const ValidationReport& v, const char* id, float height) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                    ImGuiTableFlags_SizingStretchProp, ImVec2(0, height)))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("run, source", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("measured \xE2\x86\x92 predicted", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableHeadersRow();
  for (const ValidationRow& row : v.rows) {
    const MeasuredRun& run = row.run;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const float width = ImGui::GetContentRegionAvail().x;
    ImGui::TextUnformatted(wrap_at_spaces(run.label, ImGui::GetFontSize(), width).c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextUnformatted(wrap_at_spaces(run.source, ImGui::GetFontSize(), width).c_str());
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered() && !run.notes.empty()) ImGui::SetTooltip("%s", run.notes.c_str());
    ImGui::TableNextColumn();
    std::string compared = std::string(enum_label(run.metric)) + ": ";
    if (run.measured_bytes > 0) compared += format_bytes(s, run.measured_bytes) + " \xE2\x86\x92 ";
    if (!run.expressible) {
      ImGui::TextDisabled("%s", wrap_at_spaces(compared + run.why_not, ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x).c_str());
      continue;
    }
    compared += format_bytes(s, row.predicted_bytes);
    if (run.measured_bytes > 0) compared += " (" + signed_percent(row.signed_error) + ")";
    ImGui::TextUnformatted(wrap_at_spaces(compared, ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x).c_str());
    const std::string verdict = std::string(run.oom ? "OOM" : "ran") + ", predicted " + to_string(row.verdict) + ", " +
                                (row.label_agrees ? "agrees" : "disagrees");
    ImGui::TextColored(agreement_color(s, row.label_agrees), "%s",
                       wrap_at_spaces(verdict, ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x).c_str());
  }
  ImGui::EndTable();
}

// The memory error bands of pretraining's, or the fine-tunes', methods and setups (io/memory_band.h):
// what the line beside each estimate rests on, published runs apart from tests/gpu's own steps.
void draw_memory_bands(AppState& s, bool finetune) {
  static const std::vector<MemoryBand> all = memory_bands();
  std::vector<const MemoryBand*> bands;
  for (const MemoryBand& band : all)
    if ((band.scope.rfind("pretraining", 0) != 0) == finetune) bands.push_back(&band);
  // A phone gets one wrapped line per band (five columns scrolled sideways, the medians out of view).
  const bool narrow = narrow_window(s);
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                (narrow ? ImGuiTableFlags_SizingStretchProp : ImGuiTableFlags_SizingFixedFit);
  if (!ImGui::BeginTable(finetune ? "memory_bands_finetune" : "memory_bands", narrow ? 1 : 5, flags)) return;
  if (narrow) {
    ImGui::TableSetupColumn("band of: published, tests/gpu (median)");
  } else {
    for (const char* column : {"band of", "published", "median", "tests/gpu", "median"}) ImGui::TableSetupColumn(column);
  }
  ImGui::TableHeadersRow();
  const auto cell = [](const MemoryBandRuns& kind) {
    char text[48] = "-";
    if (kind.runs > 0) std::snprintf(text, sizeof text, "%d (%.1f%%)", kind.runs, 100.0 * kind.median_abs_error);
    return std::string(text);
  };
  for (const MemoryBand* band : bands) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (narrow)  // wrapped at spaces: ImGui's own wrap split "(2.1%)" after its point
      ImGui::TextUnformatted(wrap_at_spaces(band->scope + ": published " + cell(band->published) + ", tests/gpu " +
                                                cell(band->own_steps),
                                            ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x)
                                 .c_str());
    else
      ImGui::TextUnformatted(band->scope.c_str());
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(36.0f * s.em);
      ImGui::Text("Sources: %s", band->basis.empty() ? "none published" : band->basis.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    if (narrow) continue;
    for (const MemoryBandRuns* kind : {&band->published, &band->own_steps}) {
      ImGui::TableNextColumn();
      ImGui::Text("%d", kind->runs);
      ImGui::TableNextColumn();
      if (kind->runs > 0) ImGui::Text("%.1f%%", 100.0 * kind->median_abs_error);
      else ImGui::TextDisabled("-");
    }
  }
  ImGui::EndTable();
  record_rect(s, finetune ? "memory_bands_finetune" : "memory_bands");
  ImGui::Spacing();
}

void draw_report(AppState& s, const ValidationReport& v, const char* id) {
  ImGui::TextWrapped("Median |error| %.1f%% (signed %+.1f%%) over %lld measured runs; %lld of %lld fit/OOM labels "
                     "disagree; %lld runs that ran out of memory predicted to fit. Each run is predicted on the "
                     "metric its source reports; hover or tap a source for its notes. The band beside each estimate "
                     "is its method and setup's below: the median over published configurations (a repeat counted "
                     "once), widened to the method on any framework, then every "
                     "run, with fewer than %d; tests/gpu's own steps are in-sample.",
                     100.0 * v.median_abs_error, 100.0 * v.median_signed_error, (long long)v.measured_rows,
                     (long long)v.label_disagreements, (long long)v.label_rows, (long long)v.false_fits, kMinMemoryBandRuns);
  draw_memory_bands(s, std::string(id) == "validation_finetune");
  const float height = std::max(8.0f * s.em, ImGui::GetContentRegionAvail().y - 0.5f * s.em);
  if (narrow_window(s)) {
    draw_report_narrow(s, v, id, height);
    return;
  }
  if (!ImGui::BeginTable(id, 8,
                         ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollX |
                             ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit,
                         ImVec2(0, height)))
    return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (const char* column : {"run", "metric", "measured", "predicted", "error", "label", "predicted verdict", "source"})
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
    // A large miss in the warning colour: beside a green "fits, agrees" a -51% read as a good row.
    if (run.expressible && run.measured_bytes > 0)
      ImGui::TextColored(std::fabs(row.signed_error) >= kLargeMiss ? ImGui::ColorConvertU32ToFloat4(warning_text_color(s))
                                                                  : ImGui::GetStyleColorVec4(ImGuiCol_Text),
                         "%s", signed_percent(row.signed_error).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(run.oom ? "OOM" : "ran");
    ImGui::TableNextColumn();
    // The predicted verdict and whether it agrees with the label: the colour alone read "oom" in green
    // as "fits".
    if (run.expressible) ImGui::TextColored(agreement_color(s, row.label_agrees), "%s, %s",
                                            to_string(row.verdict), row.label_agrees ? "agrees" : "disagrees");
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
  ImGui::TextWrapped("tokens/s per GPU: median |error| %.1f%% over %d measured runs (published and tests/gpu). The band beside each predicted "
                     "tokens/s, MFU and time to train is the median for its framework and GPU family below (with fewer than %d runs, "
                     "the framework's runs on every GPU family, and it says so); other combinations are not validated. "
                     "Each band names the sources behind it. %s",
                     100.0 * v.median_abs_error, int(v.rows.size()), kMinBandRuns, kThroughputBandNote);
  record_rect(s, "validation_throughput");
  // The summaries fit their rows (no scrolling: a scrolling table fills the space left).
  // On a phone the columns keep their widths and the table scrolls sideways (squeezed, "401" runs
  // were cut to "40"), as tall as its rows and the scrollbar.
  const bool narrow = narrow_window(s);
  const ImGuiStyle& style = ImGui::GetStyle();
  const float row_height = ImGui::GetTextLineHeight() + 2 * style.CellPadding.y;
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                (narrow ? ImGuiTableFlags_ScrollX : 0);
  int table = 0;
  for (const auto* list : {&v.sources, &v.bands}) {
    const ImVec2 size(0, narrow ? float(list->size() + 1) * row_height + style.ScrollbarSize + 2 * style.CellPadding.y : 0.0f);
    const bool bands = list == &v.bands;
    if (!ImGui::BeginTable(table++ == 0 ? "throughput_sources" : "throughput_bands", bands ? 5 : 4, flags, size)) continue;
    for (const char* column : {bands ? "framework, GPU family (band)" : "source", "runs", "median |error|", "signed"})
      ImGui::TableSetupColumn(column);
    if (bands) ImGui::TableSetupColumn("sources");
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
      ImGui::TextUnformatted(signed_percent(summary.median_signed_error).c_str());
      if (bands) {  // the key is "framework family" (throughput_runs.cpp)
        ImGui::TableNextColumn();
        const size_t space = summary.key.find(' ');
        const auto framework = enum_from_key<Framework>(summary.key.substr(0, space));
        ImGui::TextUnformatted(framework && space != std::string::npos
                                   ? throughput_error_band(*framework, summary.key.substr(space + 1)).basis
                                   : "");
      }
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
      ImGui::TextUnformatted(signed_percent(row.signed_error).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.run.source.c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", row.run.citation.c_str());
    }
  }
  ImGui::EndTable();
}

// The figures of a GPU ground-truth row the table shows, each as measured, predicted, error (the
// test's table, tests/core/test_gpu_ground_truth.cpp); the allocator reserve and the memory outside
// the allocator are the differences of these, their medians are below.
constexpr GpuMetric kGpuTableMetrics[] = {GpuMetric::kPeakAllocated, GpuMetric::kPeakReserved, GpuMetric::kDevice,
                                          GpuMetric::kModelStates,   GpuMetric::kStepTransient, GpuMetric::kTokensPerS};

constexpr const char* kOfPeak = " (of peak allocated)";  // a median taken over the row's peak allocated

std::string format_gpu_figure(const AppState& s, GpuMetric metric, double value) {
  if (metric != GpuMetric::kTokensPerS) return format_bytes(s, value);
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

// meshfit against its own measurements on one H100 and one H200 (tests/data/gpu_memory_measured.csv, written by
// tests/gpu/run.sh): every row's figures measured and predicted, then the medians per figure.
void draw_gpu_ground_truth(AppState& s) {
  const GpuValidation& v = gpu_validation();  // computed once, on the first view of this sub-tab
  // The rows' software is "GPU, driver, CUDA, PyTorch, harness commit (date)": each machine once, then
  // each harness commit the rows were measured at.
  std::set<std::string> machines, harnesses;
  int ran_oom = 0, not_compared = 0;  // why the medians below count fewer rows than the table holds
  for (const GpuRow& row : v.rows) {
    ran_oom += row.run.expressible && row.run.oom;
    not_compared += !row.run.expressible;
    const size_t harness = row.run.software.find(", harness ");
    machines.insert(row.run.software.substr(0, harness));
    if (harness != std::string::npos) harnesses.insert(row.run.software.substr(harness + 10));
  }
  std::string ran_on, commits;
  for (const std::string& machine : machines) ran_on += (ran_on.empty() ? "one " : " and one ") + machine;
  for (const std::string& harness : harnesses) commits += (commits.empty() ? "" : ", ") + harness;
  if (narrow_window(s))  // a phone keeps the table and its medians on one screen: the machines are in each row's tooltip
    ImGui::TextWrapped("%d rows measured by meshfit's harness (tests/gpu), beside the prediction (%d ran out of memory: "
                       "label only; %d not expressible). Error = predicted / measured - 1; tap a row for its settings.",
                       int(v.rows.size()), ran_oom, not_compared);
  else
    ImGui::TextWrapped("%d rows measured by meshfit's harness (tests/gpu, at %s) on %s, beside meshfit's prediction "
                       "for the same configuration (%d ran out of memory: compared on the fit/OOM label alone; %d not "
                       "expressible). Error = predicted / measured - 1; hover a row for its settings.",
                       int(v.rows.size()), commits.c_str(), ran_on.c_str(), ran_oom, not_compared);
  record_rect(s, "validation_gpu_intro");
  const ImGuiStyle& style = ImGui::GetStyle();
  // The medians below keep their room; the rows' table scrolls in what is left.
  const float row_height = ImGui::GetTextLineHeight() + 2 * style.CellPadding.y;
  // The medians' columns are as wide as their headers, the first as its longest label: room for a
  // horizontal scrollbar only where they do not fit (phones), so no empty band shows below them.
  const std::string longest_figure = std::string(enum_label(GpuMetric::kOutsideAllocator)) + kOfPeak;
  const float medians_width = ImGui::CalcTextSize(longest_figure.c_str()).x +
                              ImGui::CalcTextSize("rowsmedian |error|max |error|signed").x + 10 * style.CellPadding.x + s.em;
  const bool medians_scroll = medians_width > ImGui::GetContentRegionAvail().x;
  const float medians_height = (kGpuMetricCount + 1) * row_height +
                               (medians_scroll ? style.ScrollbarSize : 0.0f);
  const float summary_height = medians_height + 3 * ImGui::GetTextLineHeightWithSpacing();
  // At least eight rows' worth (six on a phone, whose header and view grid take more of the height).
  const float least = (narrow_window(s) ? 6.0f : 8.0f) * s.em;
  const float height = std::max(least, ImGui::GetContentRegionAvail().y - summary_height - 0.5f * s.em);
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollX;
  constexpr int kColumns = 2 + 3 * int(std::size(kGpuTableMetrics)) + 1;
  if (ImGui::BeginTable("validation_gpu", kColumns, flags | ImGuiTableFlags_ScrollY, ImVec2(0, height))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("row");
    ImGui::TableSetupColumn("predicted verdict");
    for (GpuMetric metric : kGpuTableMetrics) {
      ImGui::TableSetupColumn(enum_label(metric));
      ImGui::TableSetupColumn("predicted");
      ImGui::TableSetupColumn("error");
    }
    ImGui::TableSetupColumn("model and settings");
    ImGui::TableHeadersRow();
    for (const GpuRow& row : v.rows) {
      const GpuRun& run = row.run;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(run.id.c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%s", run.label.c_str(), run.software.c_str());
      record_rect(s, ("gpu_row_" + run.id).c_str());  // the rows on screen, for the browser tests
      ImGui::TableNextColumn();
      if (!run.expressible) ImGui::TextDisabled("not compared");
      else if (run.oom) ImGui::TextColored(agreement_color(s, row.label_agrees),
                                           "ran OOM; predicted %s", to_string(row.verdict));
      else ImGui::TextColored(agreement_color(s, row.label_agrees), "%s, %s", to_string(row.verdict),
                              row.label_agrees ? "agrees" : "disagrees");
      for (GpuMetric metric : kGpuTableMetrics) {
        const size_t m = size_t(metric);
        ImGui::TableNextColumn();
        if (run.expressible && !run.oom) ImGui::TextUnformatted(format_gpu_figure(s, metric, run.measured[m]).c_str());
        else ImGui::TextDisabled("-");
        ImGui::TableNextColumn();
        if (run.expressible) ImGui::TextUnformatted(format_gpu_figure(s, metric, row.predicted[m]).c_str());
        ImGui::TableNextColumn();
        if (run.expressible && !run.oom) ImGui::TextUnformatted(signed_percent(gpu_signed_error(row, metric)).c_str());
      }
      ImGui::TableNextColumn();
      if (run.expressible) ImGui::TextUnformatted(run.label.c_str());
      else ImGui::TextDisabled("not compared: %s", run.why_not.c_str());
    }
    ImGui::EndTable();
    record_rect(s, "validation_gpu");  // the table's visible area
  }
  ImGui::TextWrapped("Medians per figure (allocator reserve and outside the allocator as shares of the row's peak "
                     "allocated); fit/OOM labels: %d of %d disagree.", v.label_disagreements, v.label_rows);
  record_rect(s, "validation_gpu_summary");
  if (!ImGui::BeginTable("validation_gpu_medians", 5, flags, ImVec2(0, medians_height))) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (const char* column : {"figure", "rows", "median |error|", "max |error|", "signed"})  // widths: medians_width
    ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  for (const GpuMetricSummary& summary : v.metrics) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%s%s", enum_label(summary.metric), gpu_error_over_peak(summary.metric) ? kOfPeak : "");
    ImGui::TableNextColumn();
    ImGui::Text("%d", summary.rows);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%%", 100.0 * summary.median_abs_error);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%%", 100.0 * summary.max_abs_error);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(signed_percent(summary.median_signed_error).c_str());
  }
  ImGui::EndTable();
  record_rect(s, "validation_gpu_medians");
  // Under the medians it qualifies (above them it pushed the table off a phone's first screen).
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", kGpuGroundTruthInSample);
  ImGui::PopTextWrapPos();
}

}  // namespace

// The GPU ground truth's medians table as one line of text, for the DOM mirror (a screen reader).
std::string gpu_ground_truth_summary() {
  const GpuValidation& v = gpu_validation();
  std::string text;
  for (const GpuMetricSummary& summary : v.metrics) {
    char part[160];
    std::snprintf(part, sizeof part, "%s: %d rows, median |error| %.1f%%, max %.1f%%, signed %+.1f%%; ",
                  enum_label(summary.metric), summary.rows, 100.0 * summary.median_abs_error,
                  100.0 * summary.max_abs_error, 100.0 * summary.median_signed_error);
    text += part;
  }
  char labels[96];
  std::snprintf(labels, sizeof labels, "fit/OOM labels: %d of %d disagree.", v.label_disagreements, v.label_rows);
  return text + labels;
}

void draw_validation_view(AppState& s) {
  if (!s.validation_ready) {
    s.validation = validate_against_measurements();
    s.finetune_validation = validate_finetune_against_measurements();
    s.validation_ready = true;
  }
  // One table per sub-tab, each filling the panel: nested scrolling tables would catch the wheel
  // meant for the panel.
  if (!ImGui::BeginTabBar("validation_views")) return;
  // A phone's width holds the five labels only in their short forms (the long ones were cut to
  // "Memory...", "Memory..."): the same tabs, the same ids.
  const bool narrow = narrow_window(s);
  const auto sub_tab = [&s, narrow](const char* label, const char* short_label, const char* rect) {
    char id[96];
    std::snprintf(id, sizeof id, "%s###%s", narrow ? short_label : label, rect);
    const bool open = ImGui::BeginTabItem(id);
    record_rect(s, rect);
    return open;
  };
  if (sub_tab("Memory: pretraining", "Pretrain", "validation_tab_memory")) {
    draw_report(s, s.validation, "validation");
    ImGui::EndTabItem();
  }
  if (sub_tab("Memory: fine-tuning", "Fine-tune", "validation_tab_finetune")) {
    draw_report(s, s.finetune_validation, "validation_finetune");
    ImGui::EndTabItem();
  }
  if (sub_tab("Step time (tokens/s)", "Speed", "validation_tab_throughput")) {
    draw_throughput(s);
    ImGui::EndTabItem();
  }
  if (sub_tab("GPU ground truth", "GPU", "validation_tab_gpu")) {
    draw_gpu_ground_truth(s);
    ImGui::EndTabItem();
  }
  if (sub_tab("Named constants", "Consts", "validation_tab_constants")) {  // "Constants" overflowed in the light theme
    draw_named_constants(s);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

}  // namespace meshfit::ui
