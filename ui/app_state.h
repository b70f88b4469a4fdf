// app_state.h — the one explicit state of the calculator page (hello_imgui style: no statics).
// The inputs are a core Config, edited in place by the panels; the results are core's typed
// reports, recomputed by recompute() when the config changes. The shell (shell/web) owns the
// platform: it feeds events, drains the outbox and mirrors results.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api.h"
#include "io/measured_runs.h"
#include "search/fit_advice.h"

namespace meshfit::ui {

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;   // CSS pixels, for the DOM mirror (tests, accessibility)
};

// What the app asks the shell to do after a frame.
struct Outbox {
  std::string clipboard;               // copy this text
  std::string download_name, download_text, download_mime;
  bool open_docs = false;
};

struct AppState {
  Config config;                       // the inputs, valid or not
  bool override_memory = false;        // view: the GPU memory field is shown for a preset GPU
  std::vector<Issue> input_issues;     // problems of the link the config was read from (until an edit)
  bool link_issues_dismissed = false;  // the banner listing them was closed
  bool dirty = true;                   // config changed: recompute before drawing
  std::map<std::string, std::string> field_text;   // what is typed in each count field
  std::map<std::string, std::string> text_errors;  // field -> why its text was refused (value kept)
  std::string layout_note;             // what the last edit moved to keep the layout valid, and why

  // Derived (recompute()).
  Estimate estimate;                   // memory report + step of the config
  std::vector<Issue> issues;           // input_issues + validation
  std::map<std::string, std::string> field_issues;  // field -> first message
  FitAdvice fit;                       // how to make it fit (core's fit_advice), largest micro-batch/seq
  SearchResult search;                 // all layouts for the GPU count (keep_all for the scatter): the last
                                       // finished search, kept on screen while a new one runs
  std::shared_ptr<LayoutSearch> running_search;  // in progress: advanced a slice per frame (step_search)
  bool search_stale = false;           // `search` belongs to earlier inputs (a new one runs or was cancelled)
  std::string state;                   // the shareable URL state of the config
  std::string mirror;                  // JSON for the DOM mirror (aria-live region + tests)
  int64_t mirror_version = 0;          // bumps when mirror changes
  ValidationReport validation;         // the measured runs vs their predictions (fixed data)
  bool validation_ready = false;       // computed on the first view of the Validation tab

  // View.
  bool units_gb = false;               // GiB (binary) by default; GB (decimal) on request
  bool dark = true;
  bool show_rank_table = true;
  char layout_filter[64] = "";
  bool search_under_headroom = false;  // rank only layouts below the "tight" threshold
  bool search_spatial_temporal = false;  // also weigh spatial-temporal (PrimePar-style) layouts (modelled only)
  int selected_candidate = -1;         // index into search.top when it matches the config's layout
  std::string hf_text;                 // the paste-HF-config box
  std::string hf_message;
  std::string status;                  // a short line after copy/export
  std::map<std::string, Rect> widget_rects;  // named widgets for the mirror

  std::string public_url;              // the build's public address of the page ("" = none)
  bool local_file = false;             // the page runs from file:// (its own address helps nobody else)

  Outbox outbox;
  float em = 16.0f;                    // font size in CSS pixels: all layout in multiples of it
};

}  // namespace meshfit::ui
