// app.h — the calculator's Dear ImGui application: one AppState, a function per panel.
// Frame order (by the shell): NewFrame -> draw(state) -> Render. No platform or emscripten calls here.
#pragma once

#include <string>

#include "app_state.h"
#include "spec/config_schema.h"

namespace meshfit::ui {

// The page's default: Llama 3.1 70B on 64 H100, TP 8, PP 4, sequence 8192.
void init(AppState& state);
// Replaces the config with a shareable state (the URL hash); unknown/bad fields show as issues.
void set_state(AppState& state, const std::string& encoded);
// Recomputes estimate, search, state string and mirror from the config (called by draw when dirty).
void recompute(AppState& state);
// Advances a running layout search for about `budget_ms` milliseconds (one slice per frame keeps the
// page responsive); the result replaces the shown one when it is done. Returns whether one still runs.
bool step_search(AppState& state, double budget_ms);
bool search_running(const AppState& state);
void cancel_search(AppState& state);  // keeps the last finished result on screen
// The shell's answer to outbox.fetch_url: HTTP status (0 = none: offline, blocked) and body. It is
// imported on the next frame, through the same path as a pasted config.json.
void fetched_hf_config(AppState& state, int status, const std::string& body);
// Rebuilds the DOM mirror after a change that is not an input (a message under a box, the methods
// view's ranking).
void refresh_mirror(AppState& state);
// After an edit of the config (`before` = the config before it): the link's problems are dropped,
// a layout the edit broke moves to the nearest valid one (saying what moved), results recompute.
void commit_edit(AppState& state, const Config& before);
// A field's value as the config holds it, for the fine-tuning snapshots: dp as given (0 = derived
// from the GPU count), where the schema's getter writes it resolved; set_held_value is its inverse.
nlohmann::json held_value(const ConfigField& field, const Config& config);
void set_held_value(const ConfigField& field, Config& config, const nlohmann::json& value);
// Sets one inputs-panel field from text typed or chosen in the page's DOM form (the accessible twin
// of the panel), through the same parsing and schema setters as the panel; text that is not a
// valid value is refused beside the field. Returns whether the config changed.
bool set_form_field(AppState& state, const std::string& field, const std::string& text);
// Style for the theme at a font size of `em` CSS pixels.
void apply_theme(AppState& state);
// All panels; returns true when the config changed during this frame.
bool draw(AppState& state);

// The view of the page as a link carries it (tab, units, sort, filter, pinned config).
PageView current_view(const AppState& state);
// "Export layouts CSV": every evaluated layout (core's layouts_to_csv) to the outbox; when the page's
// search kept only some, a full search runs in slices first (step_search) and the download follows.
void export_layouts_csv(AppState& state);

std::string markdown_report(const AppState& state);  // "{{url}}" stands for the page link
std::string csv_report(const AppState& state);
std::string json_report(const AppState& state);

}  // namespace meshfit::ui
