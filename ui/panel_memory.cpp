// panel_memory.cpp — the memory view: per-rank stacked bars with capacity and "tight" lines, the
// legend, the numbers as a table, and the predicted step of the current layout. Reads core's typed
// MemoryReport and StepReport (api.h); every tooltip shows the formula with the user's numbers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "memory/finetune.h"
#include "panels.h"
#include "units.h"

namespace meshfit::ui {

namespace {

// Component colours, fixed so charts read the same everywhere (order of core's Component enum).
const ImU32 kComponentColors[kComponentCount] = {
    IM_COL32(76, 114, 176, 255),  IM_COL32(129, 167, 219, 255), IM_COL32(221, 132, 82, 255),
    IM_COL32(85, 168, 104, 255),  IM_COL32(196, 78, 82, 255),   IM_COL32(129, 114, 179, 255),
    IM_COL32(147, 120, 96, 255),  IM_COL32(218, 139, 195, 255), IM_COL32(140, 140, 140, 255),
    IM_COL32(204, 185, 116, 255), IM_COL32(100, 181, 205, 255)};

// The formula behind one component of one rank, with the user's numbers in it.
std::string component_formula(const AppState& s, const RankMemory& rank, Component component) {
  const RankIntermediates& in = rank.intermediates;
  const StageActivations& act = in.activations;
  const std::string params = format_count(in.parameters);
  const std::string total = format_bytes(s, rank.bytes(component));
  char text[512];
  switch (component) {
    case Component::kWeights:
      if (in.hpz_secondary_bytes > 0)  // DeepSpeed ZeRO++ hpZ
        std::snprintf(text, sizeof text, "parameters on rank x bytes/param = %s x %.4g B\n+ hpZ second partition (over %lld ranks) %s = %s",
                      params.c_str(), in.weight_bytes_per_param, (long long)s.config.layout.hpz_partition_size,
                      format_bytes(s, in.hpz_secondary_bytes).c_str(), total.c_str());
      else
        std::snprintf(text, sizeof text, "parameters on rank x bytes/param = %s x %.4g B = %s", params.c_str(),
                      in.weight_bytes_per_param, total.c_str());
      break;
    case Component::kGradients:
      std::snprintf(text, sizeof text, "%s x %.4g B/param (sharded where the framework shards them) = %s", params.c_str(),
                    in.grad_bytes_per_param, total.c_str());
      break;
    case Component::kOptimizerStates:
      std::snprintf(text, sizeof text, "%s x %.4g B/param (fp32 master + moments, over %s = %lld) = %s", params.c_str(),
                    in.optimizer_bytes_per_param, s.config.layout.dp_replicate > 1 ? "dp*cp/dp_replicate" : "dp*cp",
                    (long long)s.estimate.memory.optimizer_shard_ranks, total.c_str());
      break;
    case Component::kActivations: {
      // With activation offloading the layers' saved tensors mostly wait in CPU memory: the sum
      // says so (a page review found "32 layers x 0.125 GiB ... = 0.88 GiB").
      const double on_cpu = act.offloaded_bytes + (in.peak_at_backward ? act.offload_backward_release : 0.0);
      const std::string offloaded = on_cpu > 0 ? " - in CPU memory " + format_bytes(s, on_cpu, 3) : "";
      std::snprintf(text, sizeof text,
                    "%lld micro-batch%s in flight x %.3g layers x %s per layer%s\n+ recompute working %s + embedding %s "
                    "+ head input %s = %s",
                    (long long)act.in_flight, act.in_flight == 1 ? "" : "es", act.layers_per_in_flight,
                    format_bytes(s, act.layer_bytes, 3).c_str(), offloaded.c_str(),
                    format_bytes(s, in.peak_at_backward ? act.recompute_working_bytes : 0.0, 3).c_str(),
                    format_bytes(s, act.embedding_bytes, 3).c_str(), format_bytes(s, act.head_input_bytes, 3).c_str(),
                    total.c_str());
      break;
    }
    case Component::kLogitsLoss:
      if (in.bytes_per_logit == 0 && in.logits_bytes > 0) {  // loss=fused_linear: no logits tensor
        std::snprintf(text, sizeof text, "fused linear cross-entropy, no logits tensor: head-input gradient + one chunk of logits = %s%s",
                      format_bytes(s, in.logits_bytes).c_str(),
                      rank.bytes(component) == 0 ? "\n(freed before the backward peak of this stage)" : "");
        break;
      }
      std::snprintf(text, sizeof text, "s*b*v/(tp*cp) = %s logits x %.3g B each = %s%s", format_count(in.logits_elements).c_str(),
                    in.logits_elements > 0 ? in.logits_bytes / in.logits_elements : 0.0, format_bytes(s, in.logits_bytes).c_str(),
                    rank.bytes(component) == 0 && in.logits_elements > 0 ? "\n(freed before the backward peak of this stage)" : "");
      break;
    case Component::kCommBuffers:
      std::snprintf(text, sizeof text, "ZeRO-3/FSDP gathers and reduce buckets; largest unit %s parameters = %s",
                    format_count(in.largest_unit_parameters).c_str(), total.c_str());
      break;
    case Component::kWorkspace:
      std::snprintf(text, sizeof text, "cuBLAS workspace + backward gradient temporaries + SP all-gather = %s", total.c_str());
      break;
    case Component::kFragmentation:
      std::snprintf(text, sizeof text, "8%% of the memory allocated and freed each step (caching allocator) = %s", total.c_str());
      break;
    case Component::kNccl:
      std::snprintf(text, sizeof text, "%lld communicators x 0.5 GB (outside PyTorch's allocator) = %s",
                    (long long)in.nccl_communicators, total.c_str());
      break;
    case Component::kCudaContext:
      std::snprintf(text, sizeof text, "CUDA context and kernels (outside PyTorch's allocator) = %s", total.c_str());
      break;
    case Component::kPagedOptimizer:
      std::snprintf(text, sizeof text, "bitsandbytes paged optimizer states in CUDA managed memory (nvidia-smi only) = %s",
                    total.c_str());
      break;
  }
  return text;
}

void draw_legend(const AppState& s) {
  const float swatch = 0.7f * s.em;
  for (int i = 0; i < kComponentCount; ++i) {
    const char* label = component_label(Component(i));
    const float width = swatch + 0.3f * s.em + ImGui::CalcTextSize(label).x + s.em;
    if (i > 0) {
      ImGui::SameLine();
      if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
    }
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 0.2f * s.em), ImVec2(p.x + swatch, p.y + 0.2f * s.em + swatch),
                                              kComponentColors[i]);
    ImGui::Dummy(ImVec2(swatch, swatch));
    ImGui::SameLine(0, 0.3f * s.em);
    ImGui::TextUnformatted(label);
  }
}

// The bars' frame: x of a byte count.
struct BarChart {
  ImVec2 origin;
  float label_width = 0, width = 0;
  double max_bytes = 0;
  float x(double bytes) const { return origin.x + label_width + float(bytes / max_bytes) * width; }
};

// Axis ticks every "nice" step in the chosen unit, under a chart `height` high.
void draw_axis(const AppState& s, ImDrawList* draw, const BarChart& chart, float top, float height) {
  const ImVec2 origin = chart.origin;
  const double max_bytes = chart.max_bytes;
  const float em = s.em;
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const double unit = unit_bytes(s);
  const double span = max_bytes / unit;
  // As many ticks as their labels fit side by side (a phone in MiB ran "0 20000400006000080000" together).
  char widest[32];
  std::snprintf(widest, sizeof widest, "%g", span);
  const float label_room = ImGui::CalcTextSize(widest).x + 1.0f * em;
  const double ticks = std::clamp(double(chart.width / label_room), 2.0, 6.0);
  const double step = nice_step(span, ticks);
  float labels_end = 0;  // the right edge of the last tick label: the unit goes after it ("25GiB" ran together)
  for (double tick = 0; tick <= span; tick += step) {
    const float x = chart.x(tick * unit);
    draw->AddLine(ImVec2(x, origin.y + top), ImVec2(x, origin.y + height - 1.4f * em), ImGui::GetColorU32(ImGuiCol_Separator, 0.5f));
    char label[32];
    std::snprintf(label, sizeof label, "%g", tick);
    const float width = ImGui::CalcTextSize(label).x;
    draw->AddText(ImVec2(x - width / 2, origin.y + height - 1.3f * em), dim, label);
    labels_end = x + width / 2;
  }
  draw->AddText(ImVec2(std::max(chart.x(max_bytes), labels_end) + 0.4f * em, origin.y + height - 1.3f * em), dim, unit_label(s));
}

void draw_rank_bars(AppState& s) {
  const MemoryReport& report = s.estimate.memory;
  const std::vector<RankMemory>& ranks = report.ranks;
  const double capacity = report.capacity_bytes;
  const double headroom = report.headroom;
  BarChart chart;
  chart.max_bytes = capacity * 1.08;
  for (const RankMemory& rank : ranks) chart.max_bytes = std::max(chart.max_bytes, rank.device_bytes * 1.03);

  const float em = s.em;
  const float bar_height = 1.5f * em;
  const float row = bar_height + 0.5f * em;
  const float top = 1.4f * em;
  // A phone's width: narrower name and value columns (the worst bar keeps its outline, not its tag).
  const bool narrow = narrow_window(s);
  chart.label_width = (narrow ? 4.6f : 6.5f) * em;
  chart.origin = ImGui::GetCursorScreenPos();
  chart.width = std::max((narrow ? 6.0f : 10.0f) * em, ImGui::GetContentRegionAvail().x - chart.label_width - (narrow ? 7.6f : 9.5f) * em);
  const ImVec2 origin = chart.origin;
  const float height = top + row * float(ranks.size()) + 1.6f * em;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 text_color = ImGui::GetColorU32(ImGuiCol_Text);
  draw_axis(s, draw, chart, top, height);

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  std::string tooltip;
  // The values beside the bars go on last, over the capacity and headroom lines and on the panel's
  // colour: drawn before them, a line crossed "41.3 GiB 52% < worst" when a bar ended near it.
  struct Label {
    ImVec2 at;
    ImU32 color;
    std::string text;
  };
  std::vector<Label> labels;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankMemory& rank = ranks[r];
    const float y = origin.y + top + row * float(r);
    const float text_y = y + (bar_height - ImGui::GetFontSize()) / 2;
    const std::string name = rank_name(rank, ranks.size());
    draw->AddText(ImVec2(origin.x, text_y), text_color, name.c_str());
    double cursor = 0;
    for (int i = 0; i < kComponentCount; ++i) {
      const double bytes = rank.bytes(Component(i));
      if (bytes <= 0) continue;
      const ImVec2 a(chart.x(cursor), y), b(chart.x(cursor + bytes), y + bar_height);
      draw->AddRectFilled(a, b, kComponentColors[i]);
      if (mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y)
        tooltip = name + " - " + component_label(Component(i)) + ": " + format_bytes(s, bytes, 3) + " (" +
                  std::to_string((long long)std::llround(bytes)) + " bytes)\n" + component_formula(s, rank, Component(i));
      cursor += bytes;
    }
    // The part beyond capacity: hatched in the overflow colour over the components, outlined, with
    // the components' colours still seen through it (a review could not tell which overflowed when a
    // 60% fill covered them: 110 GiB of activations looked like the weights).
    const double bar_end = std::max(cursor, rank.device_bytes);
    if (bar_end > capacity) {
      const ImVec2 a(chart.x(capacity), y), b(chart.x(bar_end), y + bar_height);
      draw->AddRectFilled(a, b, (overflow_color() & 0x00FFFFFF) | 0x26000000u);
      draw->PushClipRect(a, b, true);
      for (float hx = a.x - bar_height; hx < b.x; hx += 0.6f * em)
        draw->AddLine(ImVec2(hx, b.y), ImVec2(hx + bar_height, a.y), overflow_color(), 0.12f * em);
      draw->PopClipRect();
      draw->AddRect(a, b, overflow_color(), 0, 0, 2.0f);
      s.widget_rects["bar_overflow"] = Rect{a.x, a.y, b.x - a.x, b.y - a.y};  // for the browser tests
    }
    char value[64];
    std::snprintf(value, sizeof value, "%s  %.0f%%", format_bytes(s, rank.device_bytes, 1).c_str(),
                  100.0 * rank.device_bytes / capacity);
    // On a phone the bars are short and the values would sit on the capacity lines: a column.
    const float value_x = narrow ? chart.x(chart.max_bytes) + 0.4f * em : chart.x(rank.device_bytes) + 0.4f * em;
    labels.push_back({ImVec2(value_x, text_y), text_color, value});
    if (int64_t(r) == report.worst_rank) {
      draw->AddRect(ImVec2(chart.x(0) - 2, y - 2), ImVec2(chart.x(rank.device_bytes) + 2, y + bar_height + 2), text_color, 0, 0, 2.0f);
      // On a phone the word does not fit beside the value column: the arrow alone, the outline beside it.
      labels.push_back({ImVec2(value_x + ImGui::CalcTextSize(value).x + 0.2f * em, text_y), error_text_color(s),
                        narrow ? "<" : "< worst"});
    }
    if (mouse.y >= y && mouse.y < y + bar_height && mouse.x >= origin.x && mouse.x < chart.x(0) && tooltip.empty())
      tooltip = name + ": allocated " + format_bytes(s, rank.peak_allocated_bytes, 3) + ", reserved " +
                format_bytes(s, rank.peak_reserved_bytes, 3) + ", device " + format_bytes(s, rank.device_bytes, 3);
  }
  // Capacity and headroom lines.
  const float line_top = origin.y + 0.2f * em, line_bottom = origin.y + height - 1.4f * em;
  draw->AddLine(ImVec2(chart.x(headroom * capacity), line_top), ImVec2(chart.x(headroom * capacity), line_bottom), kAmber, 2.0f);
  draw->AddLine(ImVec2(chart.x(capacity), line_top), ImVec2(chart.x(capacity), line_bottom), kRed, 2.0f);
  char label[64];
  std::snprintf(label, sizeof label, "%.0f%%", 100 * headroom);
  draw->AddText(ImVec2(chart.x(headroom * capacity) - ImGui::CalcTextSize(label).x - 0.2f * em, line_top),
                warning_text_color(s), label);
  std::snprintf(label, sizeof label, "capacity %s", format_bytes(s, capacity, 1).c_str());
  draw->AddText(ImVec2(chart.x(capacity) + 0.3f * em, line_top), error_text_color(s), label);
  const ImU32 panel = ImGui::GetColorU32(ImGuiCol_WindowBg);
  for (const Label& l : labels) {
    const ImVec2 size = ImGui::CalcTextSize(l.text.c_str());
    draw->AddRectFilled(ImVec2(l.at.x - 0.15f * em, l.at.y), ImVec2(l.at.x + size.x + 0.15f * em, l.at.y + size.y), panel);
    draw->AddText(l.at, l.color, l.text.c_str());
  }
  ImGui::Dummy(ImVec2(chart.label_width + chart.width + 4.0f * em, height));
  if (!tooltip.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tooltip.c_str());
}

// The table's headers, short: with the components' full names its 15 columns ran past a 1440 px
// window and hid reserved and device behind a scroll. The full name is the legend's, and the hover's.
constexpr const char* kShortHeaders[kComponentCount] = {"Weights", "Grads", "Optimizer", "Activ.",  "Logits", "Comm",
                                                       "Workspace", "Frag.", "NCCL",      "Context", "Paged"};

void rank_table_note(const AppState& s);
void draw_rank_totals(AppState& s);

// A row per component (the legend's names) and the three peaks, a column per rank, headed by its
// name ("middle 1") or, when those are too wide, its stage number. False (nothing drawn) when even
// that is wider than the window.
bool draw_rank_table_turned(AppState& s) {
  const std::vector<RankMemory>& ranks = s.estimate.memory.ranks;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float cell = 2.0f * style.CellPadding.x + 1.0f;
  const char* const kPeaks[] = {"peak allocated", "peak reserved", "device"};
  float label = 0, value = 0, named = 0, numbered = 0;
  for (const char* peak : kPeaks) label = std::max(label, ImGui::CalcTextSize(peak).x);
  for (int i = 0; i < kComponentCount; ++i) label = std::max(label, ImGui::CalcTextSize(component_label(Component(i))).x);
  char text[32];
  for (const RankMemory& rank : ranks) {
    for (int i = 0; i < kComponentCount; ++i) {
      std::snprintf(text, sizeof text, "%.2f", unit_value(s, rank.bytes(Component(i))));
      value = std::max(value, ImGui::CalcTextSize(text).x);
    }
    std::snprintf(text, sizeof text, "%.2f", unit_value(s, rank.device_bytes));  // the largest peak
    value = std::max(value, ImGui::CalcTextSize(text).x);
    named += std::max(value, ImGui::CalcTextSize(rank_name(rank, ranks.size()).c_str()).x) + cell;
    numbered += std::max(value, ImGui::CalcTextSize(std::to_string(rank.pp_stage).c_str()).x) + cell;
  }
  const float avail = ImGui::GetContentRegionAvail().x;
  const float corner = std::max(label, ImGui::CalcTextSize("stage").x) + cell;
  const bool names = corner + named <= avail;
  if (!names && corner + numbered > avail) return false;
  if (!ImGui::BeginTable("ranks turned", 1 + int(ranks.size()),
                         ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit))
    return true;
  ImGui::TableSetupColumn(names ? unit_label(s) : "stage");
  for (const RankMemory& rank : ranks)
    ImGui::TableSetupColumn(names ? rank_name(rank, ranks.size()).c_str() : std::to_string(rank.pp_stage).c_str());
  ImGui::TableHeadersRow();
  const auto row = [&](const char* name, auto bytes_of) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(name);
    for (const RankMemory& rank : ranks) {
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", unit_value(s, bytes_of(rank)));
    }
  };
  for (int i = 0; i < kComponentCount; ++i)
    row(component_label(Component(i)), [i](const RankMemory& rank) { return rank.bytes(Component(i)); });
  row(kPeaks[0], [](const RankMemory& rank) { return rank.peak_allocated_bytes; });
  row(kPeaks[1], [](const RankMemory& rank) { return rank.peak_reserved_bytes; });
  row(kPeaks[2], [](const RankMemory& rank) { return rank.device_bytes; });
  ImGui::EndTable();
  record_rect(s, "rank_table_turned");
  rank_table_note(s);
  return true;
}

void draw_rank_totals(AppState& s) {
  const std::vector<RankMemory>& ranks = s.estimate.memory.ranks;
  if (!ImGui::BeginTable("rank totals", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp))
    return;
  for (const char* column : {"rank", "allocated", "reserved", "device"}) ImGui::TableSetupColumn(column);
  ImGui::TableHeadersRow();
  for (const RankMemory& rank : ranks) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(rank_name(rank, ranks.size()).c_str());
    for (double bytes : {rank.peak_allocated_bytes, rank.peak_reserved_bytes, rank.device_bytes}) {
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", unit_value(s, bytes));
    }
  }
  ImGui::EndTable();
  record_rect(s, "rank_table_totals");
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("each rank's components: tap its bar in the chart, or open the page in a wider window");
  ImGui::PopTextWrapPos();
  rank_table_note(s);
}

void draw_rank_table(AppState& s) {
  const std::vector<RankMemory>& ranks = s.estimate.memory.ranks;
  const int columns = 1 + kComponentCount + 3;
  // As tall as its rows (a row is a text line and the cell padding), and the horizontal scrollbar
  // when the columns are wider than the window (a phone): every table ended in an empty row.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float row_height = ImGui::GetTextLineHeight() + 2.0f * style.CellPadding.y;
  const float cell = 2.0f * style.CellPadding.x + 1.0f;  // padding and the border
  float width = ImGui::CalcTextSize("middle 000").x + cell;
  for (const char* header : kShortHeaders) width += std::max(ImGui::CalcTextSize(header).x, ImGui::CalcTextSize("0000.00").x) + cell;
  for (const char* header : {"allocated", "reserved", "device"}) width += ImGui::CalcTextSize(header).x + cell;
  // Wider than the window (a phone): the same numbers turned, a row per component and a column per
  // rank, when that fits (the chart shows at most a few ranks): nothing hides behind a sideways scroll.
  const bool too_wide = width > ImGui::GetContentRegionAvail().x;
  if (too_wide && draw_rank_table_turned(s)) return;
  // More ranks than that on a phone (pp 8, or MiB's wider figures): each rank's three totals, the
  // figures a user compares with the capacity, in a table that fits and scrolls with the page.
  if (too_wide && narrow_window(s)) {
    draw_rank_totals(s);
    return;
  }
  const float scrollbar = too_wide ? style.ScrollbarSize : 0.0f;
  const float table_height = std::min(float(ranks.size() + 1) * row_height + scrollbar + 2.0f * style.CellPadding.y, 14.0f * s.em);
  if (!ImGui::BeginTable("ranks", columns, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollX |
                                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit,
                         ImVec2(0, table_height)))
    return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("rank");
  for (int i = 0; i < kComponentCount; ++i) ImGui::TableSetupColumn(kShortHeaders[i]);
  ImGui::TableSetupColumn("allocated");
  ImGui::TableSetupColumn("reserved");
  ImGui::TableSetupColumn("device");
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
  for (int column = 0; column < columns; ++column) {
    ImGui::TableSetColumnIndex(column);
    ImGui::TableHeader(ImGui::TableGetColumnName(column));
    const int component = column - 1;
    if (component >= 0 && component < kComponentCount && ImGui::IsItemHovered())
      ImGui::SetTooltip("%s", component_label(Component(component)));
  }
  for (const RankMemory& rank : ranks) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(rank_name(rank, ranks.size()).c_str());
    for (int i = 0; i < kComponentCount; ++i) {
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", unit_value(s, rank.bytes(Component(i))));
    }
    for (double bytes : {rank.peak_allocated_bytes, rank.peak_reserved_bytes, rank.device_bytes}) {
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", unit_value(s, bytes));
    }
  }
  ImGui::EndTable();
  record_rect(s, "rank_table");
  rank_table_note(s);
}

void rank_table_note(const AppState& s) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("all figures in %s, each rank at its peak moment (gradients freed after the last step are 0 at a "
                      "forward-time peak); allocated ~ torch.cuda.max_memory_allocated, reserved ~ max_memory_reserved, "
                      "device ~ nvidia-smi",
                      unit_label(s));
  ImGui::PopTextWrapPos();
}

}  // namespace

namespace {

// The predicted step of the current layout, term by term (perf_model.h), as one stacked bar.
void draw_step_breakdown(AppState& s) {
  const StepReport& step = s.estimate.step;
  const StepBreakdown& b = step.breakdown;
  ImGui::SeparatorText("Predicted step time of this layout");
  if (!(step.step_time_s > 0)) {  // a GPU without compute figures: core says why (a warning)
    ImGui::TextWrapped("Not predicted: the GPU has no compute or bandwidth figure (enter them under Hardware).");
    return;
  }
  // Wrapped (a phone cut it mid-word); HFU said as what it adds to MFU.
  ImGui::TextWrapped("%.2f s per step; hardware FLOPs utilisation (HFU, recomputed FLOPs included) %.1f%%; MFU below counts "
                     "model FLOPs only (PaLM convention)", step.step_time_s, 100.0 * step.hfu);
  ImGui::TextWrapped("%s", throughput_text(s).c_str());
  record_rect(s, "throughput");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Band: median |predicted / measured - 1| of tokens/s/GPU over the measured runs in tests/data that the\n"
                      "text names (this framework and GPU family, or the framework on any GPU when the family has too few): %s.\n"
                      "Half the runs lie within it. MFU scales with tokens/s, the time to train inversely.",
                      *step.error_band.basis ? step.error_band.basis : "none");
  const std::pair<double, const char*> terms[] = {
      {b.compute_s, "compute"},          {b.tp_comm_s, "TP comm"},      {b.cp_comm_s, "CP comm"},
      {b.pp_bubble_s, "pipeline bubble"}, {b.pp_p2p_s, "pipeline P2P"}, {b.dp_comm_s, "DP / ZeRO comm"},
      {b.optimizer_s, "optimizer step"}};
  const ImU32 colors[] = {IM_COL32(85, 168, 104, 255), IM_COL32(76, 114, 176, 255), IM_COL32(129, 114, 179, 255),
                          IM_COL32(196, 78, 82, 255), IM_COL32(221, 132, 82, 255), IM_COL32(204, 185, 116, 255),
                          IM_COL32(140, 140, 140, 255)};
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x - 1.0f * s.em, height = 1.2f * s.em;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  float x = origin.x;
  std::string tooltip;
  for (size_t i = 0; i < std::size(terms); ++i) {
    const auto& [seconds, label] = terms[i];
    const float w = float(seconds / step.step_time_s) * width;
    draw->AddRectFilled(ImVec2(x, origin.y), ImVec2(x + w, origin.y + height), colors[i]);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (mouse.x >= x && mouse.x < x + w && mouse.y >= origin.y && mouse.y < origin.y + height) {
      char text[96];
      std::snprintf(text, sizeof text, "%s: %.3f s (%.1f%% of the step)", label, seconds, 100.0 * seconds / step.step_time_s);
      tooltip = text;
    }
    x += w;
  }
  ImGui::Dummy(ImVec2(width, height));
  if (!tooltip.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tooltip.c_str());
  for (size_t i = 0; i < std::size(terms); ++i) {
    char text[64];
    std::snprintf(text, sizeof text, "%s %.1f%%", terms[i].second, 100.0 * terms[i].first / step.step_time_s);
    if (i > 0) {
      ImGui::SameLine();
      if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(text).x + 1.5f * s.em) ImGui::NewLine();
    }
    const ImVec2 p = ImGui::GetCursorScreenPos();
    draw->AddRectFilled(ImVec2(p.x, p.y + 0.2f * s.em), ImVec2(p.x + 0.7f * s.em, p.y + 0.9f * s.em), colors[i]);
    ImGui::Dummy(ImVec2(0.7f * s.em, 0.7f * s.em));
    ImGui::SameLine(0, 0.3f * s.em);
    ImGui::TextUnformatted(text);
  }
}

}  // namespace

// "How to make it fit": core's fit_advice (searched changes in fit_advice_before's order), one click to apply.
bool draw_fit_advice(AppState& s) {
  const FitAdvice& advice = s.fit;
  bool changed = false;
  const Verdict verdict = s.estimate.memory.verdict;
  if (verdict != Verdict::kFits) {
    ImGui::SeparatorText(verdict == Verdict::kOutOfMemory ? "How to make it fit" : "How to get under the tight threshold");
    if (s.fit_pending) {
      ImGui::TextDisabled("Searching for changes that fit...");
    } else if (!(s.estimate.step.step_time_s > 0)) {
      ImGui::TextWrapped("Ranking changes needs the GPU's dense BF16 TFLOPS and HBM bandwidth: enter them under Hardware.");
    } else if (advice.suggestions.empty()) {
      // Layouts that fit above the threshold are said before "add GPUs" (an as-a-user review saw 405B on
      // 256 H100 told to add GPUs beside 210 layouts that fit, the fastest at 97%).
      const bool others_fit = !s.search_stale && s.search.valid() && s.search.feasible > 0;
      char fit_line[160] = "";
      if (others_fit)
        std::snprintf(fit_line, sizeof fit_line, " %lld layouts fit above it: \"Use the fastest layout\" applies the fastest, and",
                      (long long)s.search.feasible);
      text_wrapped_at_spaces(std::string(is_finetune(s.config.training)
                                             ? "No change of one or two layout dimensions or fine-tuning settings brings the worst rank under "
                                             : "No change of one or two layout dimensions brings the worst rank under ") +
                             capacity_percent_text(s.config.training.headroom) + " of capacity." + fit_line + (others_fit ? " see " : " See ") +
                             (is_finetune(s.config.training) ? "Methods for every fine-tuning setup on these GPUs and Layouts for every evaluated layout"
                                                             : "Layouts for every evaluated layout") +
                             (others_fit ? "." : ", or add GPUs."));
    } else if (narrow_window(s)) {
      // A phone's width: the change, then its figures and the button under it (five columns
      // would leave the change a letter wide).
      for (size_t i = 0; i < advice.suggestions.size(); ++i) {
        const FitSuggestion& f = advice.suggestions[i];
        ImGui::PushID(f.change.c_str());  // by the change, not the row: see below
        ImGui::TextWrapped("%s", f.change.c_str());
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("worst rank %s (%.0f%%), %.0f tokens/s/GPU (%+.1f%%)", format_bytes(s, f.device_bytes, 1).c_str(),
                            100.0 * f.device_bytes / s.config.gpu.memory_bytes, f.tokens_per_s_per_gpu, 100.0 * f.throughput_change);
        ImGui::PopTextWrapPos();
        if (ImGui::Button("Apply")) {
          s.config = f.config;
          changed = true;
        }
        record_rect(s, ("fit_apply_" + std::to_string(i)).c_str());
        ImGui::PopID();
        ImGui::Separator();
      }
    } else if (ImGui::BeginTable("fit", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
      ImGui::TableSetupColumn("change", ImGuiTableColumnFlags_WidthStretch);
      ImGui::TableSetupColumn("worst rank");
      ImGui::TableSetupColumn("tokens/s/GPU");
      ImGui::TableSetupColumn("vs now");
      ImGui::TableSetupColumn("");
      ImGui::TableHeadersRow();
      for (size_t i = 0; i < advice.suggestions.size(); ++i) {
        const FitSuggestion& f = advice.suggestions[i];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", f.change.c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%s (%.0f%%)", format_bytes(s, f.device_bytes, 1).c_str(), 100.0 * f.device_bytes / s.config.gpu.memory_bytes);
        ImGui::TableNextColumn();
        ImGui::Text("%.0f", f.tokens_per_s_per_gpu);
        ImGui::TableNextColumn();
        ImGui::Text("%+.1f%%", 100.0 * f.throughput_change);
        ImGui::TableNextColumn();
        // Identified by the change it applies, not its row: an edit committed by the same click (a
        // field losing focus) rebuilds the list, and a row's button then applied another change (an
        // as-a-user review saw "pp 1 -> 2" clicked and "tp 1 -> 2" applied).
        ImGui::PushID(f.change.c_str());
        if (inline_button(s, "Apply")) {
          s.config = f.config;
          changed = true;
        }
        ImGui::PopID();
        record_rect(s, ("fit_apply_" + std::to_string(i)).c_str());
      }
      ImGui::EndTable();
    }
  }
  if (!s.fit_pending) {
    ImGui::PushTextWrapPos(0.0f);
    if (verdict != Verdict::kFits && fit_advice_costly(advice))
      ImGui::TextDisabled("Each changes one or two dimensions; the Layouts view ranks every layout, any number of changes.");
    // Short of out of memory, where the changes above aim under the tight line.
    ImGui::TextDisabled("On this layout, short of out of memory: %s.", fit_limits_text(advice, s.config).c_str());
    ImGui::PopTextWrapPos();
  }
  return changed;
}

// Fine-tuning: trainable and frozen parameters, and the worst rank's peak split as LLMem does
// (Kim et al. 2024): the transformer body apart from the output section (LM head states, head input,
// logits and loss), plus the host memory offload needs.
static void draw_fine_tuning_line(const AppState& s) {
  if (!is_finetune(s.config.training)) return;
  const MemoryReport& report = s.estimate.memory;
  const RankMemory& worst = report.worst();
  const RankIntermediates& in = worst.intermediates;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::Text("%s: %s trainable, %s frozen parameters on the worst rank's stage. Peak allocated %s = body %s + output "
              "section %s (LM head, logits and loss).",
              enum_label(s.config.training.finetune), format_count(in.trainable_parameters).c_str(),
              format_count(in.frozen_parameters).c_str(), format_bytes(s, worst.peak_allocated_bytes).c_str(),
              format_bytes(s, in.body_section_bytes).c_str(), format_bytes(s, in.output_section_bytes).c_str());
  ImGui::PopTextWrapPos();
}

// CPU memory that offload needs, states and activations named apart (a page review read "Offload:
// 3.38 GiB" without knowing it was the activations), pretraining or fine-tuning.
static void draw_offload_line(const AppState& s) {
  const RankMemory& worst = s.estimate.memory.worst();
  if (worst.host_bytes <= 0) return;
  const double activations = worst.intermediates.activations.offloaded_bytes;
  const double states = worst.host_bytes - activations;
  const int64_t per_node = std::min(s.config.cluster.gpus, s.config.cluster.gpus_per_node);
  std::string parts;
  if (states > 0) parts += "model states " + format_bytes(s, states);
  if (activations > 0) parts += std::string(parts.empty() ? "" : " + ") + "saved activations " + format_bytes(s, activations);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::Text("Offload: %s of CPU memory per rank (%s), %s per node of %lld GPUs.", format_bytes(s, worst.host_bytes).c_str(),
              parts.c_str(), format_bytes(s, worst.host_bytes * double(per_node)).c_str(), (long long)per_node);
  ImGui::PopTextWrapPos();
}

bool draw_memory_view(AppState& s) {
  if (!s.estimate.valid() || has_errors(s.issues)) {
    input_problems(s, s.issues, "the memory is estimated once they are fixed");
    return false;
  }
  const MemoryReport& report = s.estimate.memory;
  ImGui::PushTextWrapPos(0.0f);  // a phone's width wraps the summary instead of cutting it
  const char* batches = report.num_microbatches == 1 ? "micro-batch" : "micro-batches";
  if (s.estimate.step.step_time_s > 0)
    ImGui::TextWrapped("%s, %.3g B parameters, %lld %s per step; predicted %s", s.config.model.name.c_str(),
                       report.total_parameters / 1e9, (long long)report.num_microbatches, batches, throughput_text(s).c_str());
  else
    ImGui::Text("%s, %.3g B parameters, %lld %s per step; throughput not predicted", s.config.model.name.c_str(),
                report.total_parameters / 1e9, (long long)report.num_microbatches, batches);
  // How far to trust the peak, beside the numbers it qualifies; the sources in the tooltip.
  ImGui::TextWrapped("%s", memory_band_line(s).c_str());
  record_rect(s, "memory_band");
  if (ImGui::IsItemHovered()) {  // wrapped: a fine-tune's band names a dozen sources
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(36.0f * s.em);
    ImGui::TextUnformatted("Band: median |predicted / measured - 1| of the peak over the measured runs in tests/data that the "
                           "text names, each on the figure its source reports (max reserved, nvidia-smi). Half the runs lie "
                           "within it. Published runs are out of sample; meshfit's own tests/gpu steps set its allocator "
                           "constants.");
    ImGui::Text("Sources: %s.", s.estimate.memory_band.basis.empty() ? "none" : s.estimate.memory_band.basis.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  ImGui::PopTextWrapPos();
  draw_fine_tuning_line(s);
  draw_offload_line(s);
  draw_legend(s);
  ImGui::Spacing();
  // On a phone the view scrolls as a whole, so the chart takes all its rows' height and never scrolls
  // on its own: a finger dragged over a pp 16 chart scrolled only the chart, and the page under it
  // could not be moved from there. A desktop window gives the bars 55% of the room, scrolling beyond.
  const bool narrow = narrow_window(s);
  const float rows_height = (1.4f + 2.0f * float(report.ranks.size()) + 2.2f) * s.em;
  const float chart_height = narrow ? rows_height : std::min(ImGui::GetContentRegionAvail().y * 0.55f, rows_height);
  if (ImGui::BeginChild("bars", ImVec2(0, std::max(chart_height, 6.0f * s.em)), false,
                        narrow ? ImGuiWindowFlags_NoScrollWithMouse : ImGuiWindowFlags_None))
    draw_rank_bars(s);
  ImGui::EndChild();
  record_rect(s, "rank_bars");
  const bool changed = draw_fit_advice(s);
  ImGui::Checkbox("Show the numbers as a table", &s.show_rank_table);
  if (s.show_rank_table) draw_rank_table(s);
  draw_step_breakdown(s);
  return changed;
}

}  // namespace meshfit::ui
