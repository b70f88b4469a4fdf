// panels.h — what the panel files of the page share (internal to ui/): one draw function per panel
// (inputs, memory view, layouts view, header) and the small widgets and formats they all use.
#pragma once

#include <string>

#include "app_state.h"
#include "imgui.h"

namespace meshfit::ui {

constexpr ImU32 kRed = IM_COL32(235, 87, 87, 255);
constexpr ImU32 kAmber = IM_COL32(230, 160, 40, 255);
constexpr ImU32 kGreen = IM_COL32(60, 180, 100, 255);

// [SECTION] Panels (one file each)
bool draw_inputs(AppState& s);         // panel_inputs.cpp; true when the config changed
void draw_memory_view(AppState& s);    // panel_memory.cpp
bool draw_layouts_view(AppState& s);   // panel_layouts.cpp; true when a layout was applied
void draw_header(AppState& s);         // panel_header.cpp (verdict line, copy/export buttons)

// [SECTION] Formats and widgets (widgets.cpp)
std::string format_bytes(const AppState& s, double bytes, int decimals = 2);  // "12.34 GiB" / "13.25 GB"
double unit_value(const AppState& s, double bytes);
const char* unit_label(const AppState& s);
std::string format_count(double value);                                       // "8.030 B", "12.00 M"
std::string rank_name(const RankMemory& rank, size_t ranks);                  // "first 0", or "only"
std::string candidate_label(const LayoutCandidate& c);                        // "dp=8 tp=8 ... sp=1"
void record_rect(AppState& s, const char* name);   // the last item's rectangle, for the DOM mirror
void field_issue(const AppState& s, const char* field);  // the field's first message, in red
void apply_candidate(AppState& s, const LayoutCandidate& c);

}  // namespace meshfit::ui
