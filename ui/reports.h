// reports.h — the byte formats the panels and the exports share (reports.cpp; no ImGui, so the
// native tests use them too). The exports themselves are declared in app.h.
#pragma once

#include <string>

#include "app_state.h"

namespace meshfit::ui {

std::string format_bytes(const AppState& s, double bytes, int decimals = 2);  // "12.34 GiB" / "13.25 GB"
double unit_value(const AppState& s, double bytes);
const char* unit_label(const AppState& s);
std::string format_count(double value);                                       // "8.030 B", "12.00 M"
// The predicted tokens/s/GPU and MFU with their validation error band, and the time to train when
// tokens_to_train is set; "" when the step is not predicted.
std::string throughput_text(const AppState& s);
std::string rank_name(const RankMemory& rank, size_t ranks);                  // "first 0", or "only"

}  // namespace meshfit::ui
