// panel_layouts.cpp — the layouts view: rejection counts, the ranked table of the fastest layouts
// that fit (click a row to use it; right-click copies its launch flags), and the scatter of every evaluated layout, memory vs
// throughput, with the Pareto front. Reads core's SearchResult directly.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

#include "app.h"
#include "io/serialize.h"
#include "panels.h"

namespace meshfit::ui {

namespace {

double exposed_comm_fraction(const LayoutCandidate& c) {
  const StepBreakdown& b = c.step.breakdown;
  return (b.tp_comm_s + b.cp_comm_s + b.pp_p2p_s + b.dp_comm_s) / c.step.step_time_s;
}

// (~170 lines: one ImGui table, wide or narrow, its columns, sort, filter and row actions; ImGui's table API
// reads best as one block between BeginTable and EndTable.)
bool draw_layout_table(AppState& s) {
  const std::vector<LayoutCandidate>& top = s.search.top;
  const double capacity = s.config.gpu.memory_bytes;
  ImGui::SetNextItemWidth(16.0f * s.em);
  // Short enough for the field (a review saw "(all must" cut off); the words all have to match.
  ImGui::InputTextWithHint("##filter", "filter: tp=8 recompute=none", s.layout_filter, sizeof s.layout_filter);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("key=value words, all of which a row must match (dp, tp, pp, cp, vpp, mb, zero, recompute, sp)");
  record_rect(s, "layout_filter");
  // A phone has no right-click, and no room for all of it on one line: wrapped, with the header's
  // Copy launch flags in its place.
  const bool narrow = narrow_window(s);
  if (!narrow) ImGui::SameLine();
  ImGui::PushTextWrapPos(0.0f);
  // The sort and the filter work on these rows only (a review sorted by memory and missed the
  // smallest layouts, which are on the scatter's Pareto front below).
  ImGui::TextDisabled(narrow ? "(the %zu fastest of %lld feasible, which the sort and filter cover; tap a row to use it, then Copy launch flags above)"
                             : "(the %zu fastest of %lld feasible, which the sort and filter cover; click a row to use it, right-click for its launch flags)",
                      top.size(), (long long)s.search.feasible);
  ImGui::PopTextWrapPos();
  char under[64];
  std::snprintf(under, sizeof under, "only under the tight threshold (%.0f%%)###under_headroom", 100.0 * s.config.training.headroom);
  // Beside the note when the line has room for the whole checkbox, else under it (a page review saw
  // "only under the tight thre" cut at the window's edge at 1440 px).
  if (!narrow) {
    ImGui::SameLine();
    const float needed = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                         ImGui::CalcTextSize(under, nullptr, /*hide_text_after_double_hash=*/true).x;
    if (ImGui::GetContentRegionAvail().x < needed) ImGui::NewLine();
  }
  if (ImGui::Checkbox(under, &s.search_under_headroom)) s.dirty = true;
  if (!top.empty()) {  // every row shares the framework and GPU, so one band covers the table's tokens/s and MFU
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("tokens/s/GPU and MFU: %s", error_band_text(top.front().step.error_band).c_str());
    ImGui::TextDisabled("memory: %s", memory_band_text(s.estimate.memory_band).c_str());
    if (s.config.layout.dp_replicate > 1)
      ImGui::TextDisabled("(rN) after dp: N replicas of each shard group (dp_replicate), the most up to yours that hold on that layout.");
    ImGui::PopTextWrapPos();
  }
  // Every evaluated layout (not only these rows) as CSV, through core's writer.
  ImGui::BeginDisabled(s.running_search != nullptr || s.export_search != nullptr);
  if (ImGui::Button("Export layouts CSV")) export_layouts_csv(s);
  ImGui::EndDisabled();
  record_rect(s, "export_layouts_csv");
  if (s.export_search) {
    ImGui::SameLine();
    ImGui::TextDisabled("exporting: %.0f%%", 100.0 * s.export_search->progress());
  }
  if (!narrow) ImGui::SameLine();  // a phone's line has no room beside the button
  if (ImGui::Checkbox("include spatial-temporal (PrimePar-style)", &s.search_spatial_temporal)) s.dirty = true;
  record_rect(s, "search_spatial_temporal");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Also rank layouts whose tp group runs PrimePar's q x q block rotation (Wang et al., ASPLOS'24).\n"
                      "Modelled, not implemented by any public framework: no launch flags are offered for them.");
  bool any_spatial_temporal = false;
  for (const LayoutCandidate& c : top) any_spatial_temporal |= c.spatial_temporal();

  // Space-separated terms, all of which must match: a "key=value" term must equal one of the label's
  // words (pp=1 matched pp=16 and vpp=1 as a substring: an as-a-user review); any other term, "none"
  // or "zero=" with no value, may be part of a word.
  const auto words_of = [](const std::string& text) {
    std::vector<std::string> words;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find(' ', start);
      if (end == std::string::npos) end = text.size();
      if (end > start) words.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return words;
  };
  const std::vector<std::string> terms = words_of(s.layout_filter);
  std::vector<int> rows;
  for (int i = 0; i < int(top.size()); ++i) {
    const std::vector<std::string> words = words_of(candidate_label(top[size_t(i)]));
    const bool keep = std::all_of(terms.begin(), terms.end(), [&](const std::string& term) {
      const bool exact = term.find('=') != std::string::npos && term.back() != '=';
      return std::any_of(words.begin(), words.end(), [&](const std::string& word) {
        return exact ? word == term : word.find(term) != std::string::npos;
      });
    });
    if (keep) rows.push_back(i);
  }
  if (!terms.empty()) ImGui::TextDisabled("%zu of the %zu listed match the filter", rows.size(), top.size());
  bool changed = false;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit;
  const float height = std::max(8.0f * s.em, ImGui::GetContentRegionAvail().y * 0.5f);
  if (any_spatial_temporal) {
    ImGui::PushStyleColor(ImGuiCol_Text, warning_text_color(s));
    ImGui::TextWrapped("* spatial-temporal (PrimePar-style) layouts: %s. Shown to weigh the idea; no launch config "
                       "exists for them.", kSpatialTemporalNote);
    ImGui::PopStyleColor();
    record_rect(s, "spatial_temporal_note");
  }
  // A link's sort (s.sort, s.order) is the default of a fresh table (its id carries sort_generation);
  // after that the table's own sort specs are read back into the view. Each column's user id is its
  // LayoutColumn. A phone-width window has four: the layout's degrees wrapped in one, then memory and
  // speed (sixteen columns showed three rows' dp, tp and pp; memory and tokens/s were off screen).
  constexpr int kColumns = int(enum_count<LayoutColumn>());
  const LayoutColumn narrow_columns[] = {LayoutColumn::kRank, LayoutColumn::kModelParallel, LayoutColumn::kDeviceBytes,
                                         LayoutColumn::kTokensPerSPerGpu};
  const std::string table_id = (narrow ? "layouts_narrow##" : "layouts##") + std::to_string(s.sort_generation);
  const ImGuiTableFlags table_flags = narrow ? (flags & ~ImGuiTableFlags_ScrollX & ~ImGuiTableFlags_SizingFixedFit) | ImGuiTableFlags_SizingStretchProp
                                            : flags;
  if (!ImGui::BeginTable(table_id.c_str(), narrow ? 4 : kColumns, table_flags, ImVec2(0, narrow ? std::max(height, 0.6f * ImGui::GetMainViewport()->Size.y) : height)))
    return false;
  ImGui::TableSetupScrollFreeze(0, 1);
  const auto setup_column = [&](LayoutColumn column, const char* label, ImGuiTableColumnFlags column_flags) {
    // A first click on a speed column lists the fastest first.
    if (column != s.sort && (column == LayoutColumn::kTokensPerSPerGpu || column == LayoutColumn::kMfu))
      column_flags |= ImGuiTableColumnFlags_PreferSortDescending;
    if (column == s.sort)
      column_flags |= ImGuiTableColumnFlags_DefaultSort | (s.order == SortOrder::kDescending ? ImGuiTableColumnFlags_PreferSortDescending
                                                                                          : ImGuiTableColumnFlags_PreferSortAscending);
    ImGui::TableSetupColumn(label, column_flags, 0.0f, ImGuiID(column));
  };
  if (narrow) {
    setup_column(LayoutColumn::kRank, "#", ImGuiTableColumnFlags_WidthFixed);
    setup_column(LayoutColumn::kModelParallel, "layout", ImGuiTableColumnFlags_WidthStretch | ImGuiTableColumnFlags_NoSort);
    setup_column(LayoutColumn::kDeviceBytes, "memory", ImGuiTableColumnFlags_WidthFixed);
    setup_column(LayoutColumn::kTokensPerSPerGpu, "tokens/s", ImGuiTableColumnFlags_WidthFixed);
  } else {
    for (int c = 0; c < kColumns; ++c) setup_column(LayoutColumn(c), enum_label(LayoutColumn(c)), ImGuiTableColumnFlags_None);
  }
  ImGui::TableHeadersRow();
  float layout_width = 0;  // the narrow table's wrapped column, as laid out (the header row is still current)
  if (narrow && ImGui::TableSetColumnIndex(1)) layout_width = ImGui::GetContentRegionAvail().x;
  if (ImGuiTableSortSpecs* sort = ImGui::TableGetSortSpecs(); sort && sort->SpecsCount > 0) {
    const ImGuiTableColumnSortSpecs& spec = sort->Specs[0];
    const LayoutColumn column = LayoutColumn(std::clamp<int>(int(spec.ColumnUserID), 0, kColumns - 1));
    // A phone's table cannot show every column: a link's sort by one it lacks stays the link's.
    const bool shown = !narrow || std::find(std::begin(narrow_columns), std::end(narrow_columns), s.sort) != std::end(narrow_columns);
    if (shown || sort->SpecsDirty) {
      s.sort = column;
      s.order = spec.SortDirection == ImGuiSortDirection_Descending ? SortOrder::kDescending : SortOrder::kAscending;
    }
    sort->SpecsDirty = false;
    const auto key = [&](int i) -> double {
      const LayoutCandidate& c = top[size_t(i)];
      switch (s.sort) {
        case LayoutColumn::kDp: return double(c.layout.dp);
        case LayoutColumn::kTp: return double(c.layout.tp);
        case LayoutColumn::kPp: return double(c.layout.pp);
        case LayoutColumn::kCp: return double(c.layout.cp);
        case LayoutColumn::kVpp: return double(c.layout.vpp);
        case LayoutColumn::kMicroBatch: return double(c.micro_batch);
        case LayoutColumn::kZero: return double(c.layout.zero);
        case LayoutColumn::kRecompute: return double(c.recompute);
        case LayoutColumn::kSp: return c.sp ? 1.0 : 0.0;
        case LayoutColumn::kDeviceBytes: case LayoutColumn::kCapacityShare: return c.device_bytes;
        // As shown: descending (the arrow down, order=desc in a link) is fastest first (a review saw a
        // link's order=desc list the slowest first under negated keys).
        case LayoutColumn::kTokensPerSPerGpu: return c.step.tokens_per_s_per_gpu;
        case LayoutColumn::kMfu: return c.step.mfu;
        case LayoutColumn::kBubble: return c.step.bubble_fraction;
        case LayoutColumn::kModelParallel: return double(c.layout.st_q);
        case LayoutColumn::kRank: break;
      }
      return double(i);
    };
    std::stable_sort(rows.begin(), rows.end(), [&](int a, int b) {
      return s.order == SortOrder::kAscending ? key(a) < key(b) : key(a) > key(b);
    });
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    const int i = rows[r];
    const LayoutCandidate& c = top[size_t(i)];
    const double share = c.device_bytes / capacity;
    std::string layout_text, memory_text, speed_text;
    float row_height = 0;
    if (narrow) {
      char text[200];
      std::snprintf(text, sizeof text, "dp%lld%s tp%lld pp%lld cp%lld vpp%lld mb%lld zero%lld %s%s%s", (long long)c.layout.dp,
                    replicas_mark(c.layout).c_str(), (long long)c.layout.tp, (long long)c.layout.pp, (long long)c.layout.cp,
                    (long long)c.layout.vpp, (long long)c.micro_batch, (long long)c.layout.zero, to_string(c.recompute),
                    c.layout.tp > 1 ? (c.sp ? " sp" : " no-sp") : "", c.spatial_temporal() ? " ST*" : "");
      layout_text = wrap_at_spaces(text, ImGui::GetFontSize(), layout_width);
      std::snprintf(text, sizeof text, "%s\n%s", format_bytes(s, c.device_bytes, 1).c_str(), capacity_percent_text(share).c_str());
      memory_text = text;
      std::snprintf(text, sizeof text, "%.0f\nMFU %.0f%%", c.step.tokens_per_s_per_gpu, 100.0 * c.step.mfu);
      speed_text = text;
      row_height = std::max(ImGui::CalcTextSize(layout_text.c_str()).y, 2.0f * ImGui::GetTextLineHeight());
    }
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    char id[32];
    std::snprintf(id, sizeof id, "%d##row%d", i + 1, i);
    if (ImGui::Selectable(id, i == s.selected_candidate, ImGuiSelectableFlags_SpanAllColumns, ImVec2(0, row_height))) {
      apply_candidate(s, c);
      changed = true;
    }
    if (r < 3) record_rect(s, ("layout_row_" + std::to_string(r)).c_str());
    if (ImGui::BeginPopupContextItem()) {  // right-click: this row's layout as launch flags
      if (c.spatial_temporal()) {
        ImGui::TextDisabled("Layout %d is spatial-temporal: %s.", i + 1, kSpatialTemporalNote);
        ImGui::TextDisabled("No launch flags exist for it.");
      } else {
        ImGui::TextDisabled("Copy launch flags of layout %d", i + 1);
        launch_flags_menu(s, apply(s.config, c), r == 0 ? "row_flags_" : "");
      }
      ImGui::EndPopup();
    }
    if (narrow) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(layout_text.c_str());
      ImGui::TableNextColumn();
      if (share >= s.config.training.headroom) ImGui::PushStyleColor(ImGuiCol_Text, warning_text_color(s));
      ImGui::TextUnformatted(memory_text.c_str());
      if (share >= s.config.training.headroom) ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(speed_text.c_str());
      continue;
    }
    ImGui::TableNextColumn();
    ImGui::Text("%lld%s", (long long)c.layout.dp, replicas_mark(c.layout).c_str());
    const long long values[] = {c.layout.tp, c.layout.pp, c.layout.cp, c.layout.vpp, c.micro_batch, c.layout.zero};
    for (long long v : values) {
      ImGui::TableNextColumn();
      ImGui::Text("%lld", v);
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(to_string(c.recompute));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(c.layout.tp > 1 ? (c.sp ? "on" : "off") : "-");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_bytes(s, c.device_bytes, 1).c_str());
    ImGui::TableNextColumn();
    if (share >= s.config.training.headroom) ImGui::PushStyleColor(ImGuiCol_Text, warning_text_color(s));  // AA in both themes
    ImGui::TextUnformatted(capacity_percent_text(share).c_str());
    if (share >= s.config.training.headroom) ImGui::PopStyleColor();
    ImGui::TableNextColumn();
    ImGui::Text("%.0f", c.step.tokens_per_s_per_gpu);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%%", 100.0 * c.step.mfu);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%% / %.1f%%", 100.0 * c.step.breakdown.pp_bubble_s / c.step.step_time_s, 100.0 * exposed_comm_fraction(c));
    ImGui::TableNextColumn();
    if (c.spatial_temporal()) {
      ImGui::PushStyleColor(ImGuiCol_Text, warning_text_color(s));
      ImGui::Text("ST %lldx%lld * (modelled only)", (long long)c.layout.st_q, (long long)c.layout.st_q);
      ImGui::PopStyleColor();
    } else {
      ImGui::TextUnformatted(c.layout.tp > 1 ? "Megatron TP" : "-");
    }
  }
  ImGui::EndTable();
  return changed;
}

bool draw_scatter(AppState& s) {
  const std::vector<LayoutCandidate>& all = s.search.all;
  if (all.empty()) return false;
  const double capacity = s.config.gpu.memory_bytes;
  // The scales cover every point drawn: the evaluated sample, the table's rows and the Pareto front
  // (a search too large to keep every layout samples `all`; its best rows ran off the top of the plot).
  double max_x = capacity * 1.1, max_y = 1;
  int off_scale = 0;  // layouts past twice the capacity, drawn at the right edge
  const SearchResult& search = s.search;
  for (const std::vector<LayoutCandidate>* list : {&all, &search.top, &search.pareto})
    for (const LayoutCandidate& c : *list) {
      max_x = std::max(max_x, std::min(c.device_bytes, capacity * 2.0));
      max_y = std::max(max_y, c.step.tokens_per_s_per_gpu);
    }
  for (const LayoutCandidate& c : all) off_scale += c.device_bytes > capacity * 2.0;
  max_x *= 1.02;
  max_y *= 1.08;
  const float em = s.em;
  // A phone's view scrolls as one column, whose space left is a strip: the plot takes half the screen
  // there (an as-a-user review saw it 80 px tall).
  const float least = narrow_window(s) ? 0.5f * ImGui::GetMainViewport()->Size.y : 10.0f * em;
  const ImVec2 size(ImGui::GetContentRegionAvail().x, std::max(least, ImGui::GetContentRegionAvail().y - 0.5f * em));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  // The x axis's caption, wrapped to the plot's width (a phone cut it at "red: capac").
  std::string caption = std::string("peak device memory per GPU (") + unit_label(s) + "); red: capacity";
  if (off_scale > 0) caption += "; " + std::to_string(off_scale) + " past 2x capacity, drawn at the right edge";
  caption = wrap_at_spaces(caption, ImGui::GetFontSize(), size.x - 4.5f * em);
  const float caption_height = ImGui::CalcTextSize(caption.c_str()).y;
  const ImVec2 plot_min(origin.x + 4.0f * em, origin.y + 0.5f * em),
      plot_max(origin.x + size.x - 0.5f * em, origin.y + size.y - 1.4f * em - caption_height);
  const auto to_screen = [&](double bytes, double speed) {
    return ImVec2(plot_min.x + float(std::min(bytes, max_x) / max_x) * (plot_max.x - plot_min.x),
                  plot_max.y - float(speed / max_y) * (plot_max.y - plot_min.y));
  };
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  draw->AddRect(plot_min, plot_max, ImGui::GetColorU32(ImGuiCol_Border));
  draw->AddLine(to_screen(capacity, 0), to_screen(capacity, max_y), IM_COL32(235, 87, 87, 255), 1.5f);
  char label[64];
  // Gridlines with labels at 1-2-5 steps on both axes (one label per axis read as a range, not a scale).
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Separator, 0.35f);
  const double x_span = unit_value(s, max_x), x_step = nice_step(x_span, std::max(2.0, double(plot_max.x - plot_min.x) / (6.0 * em)));
  for (double tick = x_step; tick < x_span; tick += x_step) {
    const float x = to_screen(tick * unit_bytes(s), 0).x;
    draw->AddLine(ImVec2(x, plot_min.y), ImVec2(x, plot_max.y), grid);
    std::snprintf(label, sizeof label, "%g", tick);
    draw->AddText(ImVec2(x - ImGui::CalcTextSize(label).x / 2, plot_max.y + 0.2f * em), dim, label);
  }
  const double y_step = nice_step(max_y, std::max(2.0, double(plot_max.y - plot_min.y) / (3.0 * em)));
  for (double tick = 0; tick < max_y; tick += y_step) {
    const float y = to_screen(0, tick).y;
    if (tick > 0) draw->AddLine(ImVec2(plot_min.x, y), ImVec2(plot_max.x, y), grid);
    std::snprintf(label, sizeof label, "%g", tick);
    draw->AddText(ImVec2(plot_min.x - ImGui::CalcTextSize(label).x - 0.3f * em, y - 0.5f * em), dim, label);
  }
  draw->AddText(ImVec2(plot_min.x, plot_max.y + 1.2f * em), dim, caption.c_str());
  draw->PushClipRect(plot_min, plot_max, true);  // nothing drawn below runs outside the plot
  draw->AddText(ImVec2(plot_min.x + 0.3f * em, plot_min.y + 0.2f * em), dim, "tokens/s/GPU");

  const ImU32 feasible = IM_COL32(76, 140, 220, 200), infeasible = IM_COL32(220, 90, 90, 120);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int hovered = -1;
  float best_distance = 0.5f * em * 0.5f * em;
  for (int i = 0; i < int(all.size()); ++i) {
    const LayoutCandidate& c = all[size_t(i)];
    const ImVec2 p = to_screen(c.device_bytes, c.step.tokens_per_s_per_gpu);
    draw->AddCircleFilled(p, 0.18f * em, c.feasible ? feasible : infeasible, 8);
    const float dx = p.x - mouse.x, dy = p.y - mouse.y;
    if (dx * dx + dy * dy < best_distance) {
      best_distance = dx * dx + dy * dy;
      hovered = i;
    }
  }
  std::vector<ImVec2> front;
  for (const LayoutCandidate& c : s.search.pareto) front.push_back(to_screen(c.device_bytes, c.step.tokens_per_s_per_gpu));
  if (front.size() > 1) draw->AddPolyline(front.data(), int(front.size()), IM_COL32(60, 200, 120, 255), 0, 2.0f);
  // The ring marks the config as it is now, wherever it falls (a layout outside the table's top rows,
  // applied from a point, had none: a review saw nothing mark what had just been chosen).
  if (s.estimate.valid() && s.estimate.step.tokens_per_s_per_gpu > 0)
    draw->AddCircle(to_screen(s.estimate.memory.worst().device_bytes, s.estimate.step.tokens_per_s_per_gpu), 0.45f * em,
                    ImGui::GetColorU32(ImGuiCol_Text), 0, 2.0f);
  draw->PopClipRect();
  ImGui::InvisibleButton("scatter", size);
  bool changed = false;
  if (hovered >= 0 && ImGui::IsItemHovered()) {
    const LayoutCandidate& c = all[size_t(hovered)];
    ImGui::SetTooltip("%s\n%s, %s of capacity\n%.0f tokens/s/GPU, MFU %.1f%%\n%s", candidate_label(c).c_str(),
                      format_bytes(s, c.device_bytes).c_str(), c.feasible ? "within" : "over",
                      c.step.tokens_per_s_per_gpu, 100.0 * c.step.mfu, c.feasible ? "click to use it" : "does not fit");
    // Only a layout that fits is applied: its tooltip says "does not fit" otherwise (a review saw a
    // red point's click apply an out-of-memory layout).
    if (ImGui::IsItemClicked() && c.feasible) {
      apply_candidate(s, c);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool draw_layouts_view(AppState& s) {
  if (!s.search.valid()) {
    input_problems(s, s.search.issues, "the layouts are searched once they are fixed");
    return false;
  }
  if (s.running_search) {
    ImGui::Text("Searching layouts: %.0f%%...", 100.0 * s.running_search->progress());
    ImGui::SameLine();
    if (inline_button(s, "Cancel")) cancel_search(s);
    record_rect(s, "search_cancel");
    if (s.search.evaluated > 0) ImGui::TextDisabled("(showing the previous result until it finishes)");
  } else if (s.search_stale) {
    ImGui::TextDisabled("Search cancelled: the layouts below are from the previous inputs.");
  }
  if (!s.search.complete)
    ImGui::TextWrapped("The search stopped at its work budget: the layouts below are the best found so far.");
  ImGui::Text("%lld layouts evaluated for %lld GPU%s, %lld feasible.", (long long)s.search.evaluated,
              (long long)s.config.cluster.gpus, s.config.cluster.gpus == 1 ? "" : "s", (long long)s.search.feasible);
  // The same link in `meshfit search --state` pins the degrees it names (a review saw 960 layouts
  // there against 21960 here and two different fastest rows): say which this is.
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Every layout for the GPU count: the config's own tp, pp, cp, vpp, ZeRO stage and micro-batch are not\n"
                      "pinned here. `meshfit search --state <link>` pins the degrees a link names; drop them to search all.");
  std::string rejected;
  for (int i = 0; i < kRejectReasonCount; ++i)
    if (s.search.rejected[size_t(i)] > 0)
      rejected += std::string(rejected.empty() ? "" : ", ") + enum_label(RejectReason(i)) + " " +
                  std::to_string(s.search.rejected[size_t(i)]);
  ImGui::TextWrapped("Rejected: %s", rejected.empty() ? "none" : rejected.c_str());
  bool changed = draw_layout_table(s);
  // The legend on a line of its own: as the separator's title a phone cut it at "(blue fi...".
  ImGui::SeparatorText("All evaluated layouts: memory vs throughput");
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  text_wrapped_at_spaces("blue fits, red does not, green: the Pareto front (each faster than all with less memory)");
  ImGui::PopStyleColor();
  changed |= draw_scatter(s);
  return changed;
}


}  // namespace meshfit::ui
