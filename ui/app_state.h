// app_state.h — the one explicit state of the calculator page (hello_imgui style: no statics).
// The inputs are a core Config, edited in place by the panels; the results are core's typed
// reports, recomputed by recompute() when the config changes. The shell (shell/web) owns the
// platform: it feeds events, drains the outbox and mirrors results.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api.h"
#include "io/measured_runs.h"
#include "io/url_state.h"
#include "search/fit_advice.h"
#include "search/method_select.h"

namespace meshfit::ui {

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;   // CSS pixels, for the DOM mirror (tests, accessibility)
};

// What the app asks the shell to do after a frame.
struct Outbox {
  std::string clipboard;               // copy this text
  std::string fetch_url;               // fetch this (only a checked Hugging Face config.json URL); the
                                       // answer comes back through fetched_hf_config (app.h)
  std::string download_name, download_text, download_mime;
  bool open_docs = false;
};

struct AppState {
  Config config;                       // the inputs, valid or not
  bool override_memory = false;        // view: the GPU memory field is shown for a preset GPU
  std::vector<Issue> input_issues;     // problems of the link the config was read from (until an edit)
  std::string link_as_given;           // that link, kept as the page's link until an edit (nothing it held is lost)
  // Pretraining -> fine-tuning: the config before and just after the stack's defaults, so that going
  // back to pretraining restores what the defaults changed and the user has not edited since.
  std::optional<Config> before_finetune, after_finetune;
  bool finetune_switched = false;      // this edit switched the training mode or stack: commit_edit moves
                                       // after_finetune to what the defaults and the layout repair wrote
  bool link_issues_dismissed = false;  // the banner listing them was closed
  bool dirty = true;                   // config changed: recompute before drawing
  std::map<std::string, std::string> field_text;   // what is typed in each count field
  std::map<std::string, std::string> text_errors;  // field -> why its text was refused (value kept)
  std::string layout_note;             // what the last edit moved to keep the layout valid, and why
  std::string defaults_note;           // what switching the training mode or stack set (its defaults)
  bool defaults_note_fresh = false;    // set by this edit: commit_edit keeps it (any other edit clears it)

  // Derived (recompute()).
  Estimate estimate;                   // memory report + step of the config
  std::vector<Issue> issues;           // input_issues + validation
  std::map<std::string, std::string> field_issues;  // field -> first message
  std::set<std::string> field_warnings;             // fields whose first message is a warning (amber, not red)
  FitAdvice fit;                       // how to make it fit (core's fit_advice), largest micro-batch/seq
  bool fit_pending = false;            // `fit` is not yet computed for the config: the next frame's work
                                       // (step_search), so a commit never waits for it
  std::map<std::string, FitAdvice> fit_cache;  // by config state: a config seen again answers at once
  SearchResult search;                 // all layouts for the GPU count (keep_all for the scatter): the last
                                       // finished search, kept on screen while a new one runs
  std::shared_ptr<LayoutSearch> running_search;  // in progress: advanced a slice per frame (step_search)
  bool search_stale = false;           // `search` belongs to earlier inputs (a new one runs or was cancelled)
  std::shared_ptr<LayoutSearch> export_search;  // "Export layouts CSV" when `search` kept only some
                                       // of the evaluated layouts: the full list, in slices like the search
  std::string state;                   // the shareable URL state of the config
  std::string link;                    // state + the view (io/url_state's encode_view): the URL hash
  std::string form;                    // JSON of the inputs panel's fields for the DOM form (describe_form);
                                       // made by recompute, not by every search slice
  std::string mirror;                  // JSON for the DOM mirror (aria-live region + tests)
  int64_t mirror_version = 0;          // bumps when mirror changes
  ValidationReport validation;         // the measured runs vs their predictions (fixed data)
  bool validation_ready = false;       // computed on the first view of the Validation tab
  ValidationReport finetune_validation;  // the fine-tuning runs (tests/data/finetune_measured.csv)
  MethodRanking methods;               // fine-tuning methods for the config (core's rank_finetune_methods)
  bool methods_ready = false;          // computed when the Methods tab is shown after an edit

  // Compare: a pinned configuration beside the edited one (part of the link: pin=<its state>).
  bool pinned = false;
  Config pin_config;
  Estimate pin_estimate;               // of pin_config, computed when pinned

  // View (part of the link, PageView; the selected row is the layout's own fields).
  ViewUnits units = ViewUnits::kGibibytes;   // GiB (binary) by default; GB (decimal) or MiB on request
  ViewTab tab = ViewTab::kMemory;      // the tab on screen
  int select_tab = 0;                  // frames left in which the tab a link asked for is selected (ImGui
                                       // shows a programmatic selection a frame late)
  LayoutColumn sort = LayoutColumn::kRank;  // the layouts table's sort (read back from the table)
  SortOrder order = SortOrder::kAscending;
  int sort_generation = 0;             // bumped when a link sets the sort: a fresh table takes it as default
  bool dark = true;
  bool show_rank_table = true;
  char layout_filter[64] = "";
  bool search_under_headroom = false;  // rank only layouts below the "tight" threshold
  bool methods_under_headroom = false; // show only methods below the "tight" threshold
  bool search_spatial_temporal = false;  // also weigh spatial-temporal (PrimePar-style) layouts (modelled only)
  int selected_candidate = -1;         // index into search.top when it matches the config's layout
  std::string hf_text;                 // the paste-HF-config box
  std::string hf_message;
  struct HfFetch {                     // "Fetch config.json" by Hugging Face model id
    std::string id;                    // what is typed
    std::string fetched_id;            // the id of the request in flight (the field may change meanwhile)
    bool waiting = false;              // asked the shell, no answer yet
    bool arrived = false;              // an answer to import on the next frame
    int status = 0;                    // HTTP status; 0: no answer (offline, blocked)
    std::string body;
  } hf_fetch;
  std::string status;                  // a short line after copy/export
  std::map<std::string, Rect> widget_rects;  // named widgets for the mirror
  std::string focus_field;             // the DOM form's focused field: brought into view once
  bool text_field_numeric = false;     // this frame's active text field takes a number (phone number pad)
  bool coarse_pointer = false;         // a touch screen: larger hit targets

  std::string public_url;              // the build's public address of the page ("" = none)
  bool local_file = false;             // the page runs from file:// (its own address helps nobody else)

  Outbox outbox;
  float em = 16.0f;                    // font size in CSS pixels: all layout in multiples of it
};

}  // namespace meshfit::ui
