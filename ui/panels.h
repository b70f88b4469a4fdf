// panels.h — what the panel files of the page share (internal to ui/): one draw function per panel
// (inputs, memory view, layouts view, validation view, header) and the small widgets and formats they all use.
#pragma once

#include <string>
#include <vector>

#include "app_state.h"
#include "reports.h"
#include "imgui.h"

namespace meshfit::ui {

constexpr ImU32 kRed = IM_COL32(235, 87, 87, 255);
constexpr ImU32 kAmber = IM_COL32(230, 160, 40, 255);

// The verdict banner: a filled band whose text meets WCAG AA (>= 4.5:1) against its fill, the same
// in both themes (fits: white on green 5.3:1; tight: black on amber 11:1; oom: white on red 6.6:1).
struct BannerColors {
  ImU32 background, text;
};
BannerColors verdict_colors(Verdict verdict, bool valid);
// Message text (errors, warnings) readable on the theme's window background (AA in both themes).
ImU32 error_text_color(const AppState& s);
ImU32 warning_text_color(const AppState& s);
ImU32 ok_text_color(const AppState& s);
ImU32 overflow_color();                // the part of a bar beyond capacity (hatched over the bar)

// [SECTION] Panels (one file each)
bool draw_inputs(AppState& s);         // panel_inputs.cpp; true when the config changed
bool draw_memory_view(AppState& s);    // panel_memory.cpp; true when a suggested change was applied
bool draw_layouts_view(AppState& s);   // panel_layouts.cpp; true when a layout was applied
void draw_header(AppState& s);         // panel_header.cpp (name, verdict banner; on a wide window the buttons too)
void draw_header_buttons(AppState& s); // copy/export/units/pin/theme buttons (a phone draws them atop the view)
void draw_validation_view(AppState& s);  // panel_validation.cpp (measured runs vs predictions)
std::string gpu_ground_truth_summary();  // panel_validation.cpp: the GPU ground truth's medians as text
bool draw_methods_view(AppState& s);   // panel_methods.cpp; true when a method was applied
void ensure_methods(AppState& s);      // computes the method ranking for the config if it is stale
bool draw_compare_view(AppState& s);   // panel_compare.cpp; true when the pinned config was restored
std::string verdict_text(const AppState& s);  // the banner's line: verdict, worst rank, share of capacity

// [SECTION] Formats and widgets (widgets.cpp)
std::string candidate_label(const LayoutCandidate& c);                        // "dp=8 tp=8 ... sp=1"
void record_rect(AppState& s, const char* name);   // the last item's rectangle, for the DOM mirror
// SameLine for the next item when it fits on this line, else a new line (narrow windows): a button
// labelled `next_label`, or any item `width` CSS pixels wide.
void flow(const char* next_label);
void flow_width(float width);
void field_issue(const AppState& s, const char* field);  // the field's first message, in red
void apply_candidate(AppState& s, const LayoutCandidate& c);
// One column (verdict first, inputs as a tab) below ~44 em, about 700 CSS px: phones, small windows.
bool narrow_window(const AppState& s);
// An inline button: ImGui's small one, a full-height one (a finger's target) on a narrow window.
bool inline_button(const AppState& s, const char* label);
// Lines of at most `width` at `font_size`, broken at spaces only, a number kept with its unit.
std::string wrap_at_spaces(const std::string& text, float font_size, float width);
// Text wrapped at spaces to the space left on the line (ImGui's TextWrapped also breaks after '.',
// which split preset names such as "llama3.1-70b": an as-a-user review).
void text_wrapped_at_spaces(const std::string& text);
// A share of the GPU's capacity as a percentage: one decimal just under 100% (99.6%, not 100%).
std::string capacity_percent_text(double share);
// The inputs' errors as a list, under a line saying what waits for them ("the layouts are searched
// once they are fixed"): the memory, Layouts and Methods views of inputs that do not validate.
void input_problems(const AppState& s, const std::vector<Issue>& issues, const char* what_waits);
// Whether the inputs panel shows this schema field as a count typed as text (panel_inputs.cpp).
bool is_count_field(const std::string& field);
// The inputs panel's fields in its order, as JSON for the page's DOM form (panel_inputs.cpp):
// [{field, label, kind: count|number|choice|flag, value, error, options?: [{value, label}]}].
std::string describe_form(const AppState& s);
// The "Copy launch flags" menu items for a config (the current one, or a layouts-table row's): each
// puts the export on the clipboard; `rect_prefix` names the items for the DOM mirror ("" = none).
void launch_flags_menu(AppState& s, const Config& config, const std::string& rect_prefix);

}  // namespace meshfit::ui
