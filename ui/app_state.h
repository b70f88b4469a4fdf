// app_state.h — the one explicit state of the calculator page (hello_imgui style: no statics).
// Form holds what the user typed, valid or not; everything else is derived from it by recompute().
// The shell (shell/web) owns the platform: it feeds events, drains the outbox and mirrors results.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layout_search.h"

namespace meshfit::ui {

// The inputs as typed. Field names follow the config schema (core/serialize.h).
struct Form {
  std::string model = "llama3.1-70b";  // preset id or "custom"
  int64_t hidden = 8192, layers = 80, heads = 64, kv_heads = 8, ffn = 28672, vocab = 128256;
  bool tied_embeddings = false;
  int norm = 0;                        // 0 rmsnorm, 1 layernorm
  int mlp = 0;                         // 0 swiglu, 1 gelu
  std::string gpu = "h100-sxm";        // preset id or "custom"
  bool override_memory = false;
  double gpu_memory_gib = 80;
  int64_t gpus = 64, gpus_per_node = 8;
  int64_t seq = 8192, global_batch = 512, micro_batch = 1;
  int precision = 0;                   // 0 bf16, 1 fp8
  int optimizer = 0;                   // 0 adamw, 1 sgd, 2 adam8bit
  int recompute = 0;                   // 0 none, 1 selective, 2 full
  bool flash = true, sp = true;
  int framework = 0;                   // 0 megatron, 1 fsdp, 2 deepspeed
  int64_t zero = 1;
  int64_t tp = 8, pp = 4, cp = 1, vpp = 1;
  double headroom = 0.8;
};

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
  Form form;
  bool dirty = true;                   // form changed: recompute before drawing

  // Derived (recompute()).
  nlohmann::json estimate;             // run_estimate(inputs): the CLI's JSON
  std::map<std::string, std::string> field_issues;  // field -> first message
  SearchResult search;                 // all layouts for the GPU count (keep_all for the scatter): the last
                                       // finished search, kept on screen while a new one runs
  std::shared_ptr<LayoutSearch> running_search;  // in progress: advanced a slice per frame (step_search)
  bool search_stale = false;           // `search` belongs to earlier inputs (a new one is running or was cancelled)
  std::string state;                   // the shareable URL state of the form
  nlohmann::json link_issues = nlohmann::json::array();  // what decoding the last URL state reported
  nlohmann::json mirror_estimate;      // the estimate's part of the mirror (recompute)
  std::string mirror;                  // JSON for the DOM mirror (aria-live region + tests)
  int64_t mirror_version = 0;          // bumps when mirror changes

  // View.
  bool units_gb = false;               // GiB (binary) by default; GB (decimal) on request
  bool dark = true;
  bool show_rank_table = true;
  char layout_filter[64] = "";
  bool search_under_headroom = false;  // rank only layouts below the "tight" threshold
  int selected_candidate = -1;         // index into search.top when it matches the form's layout
  std::string hf_text;                 // the paste-HF-config box
  std::string hf_message;
  std::string status;                  // a short line after copy/export
  std::map<std::string, Rect> widget_rects;  // named widgets for the mirror

  Outbox outbox;
  float em = 16.0f;                    // font size in CSS pixels: all layout in multiples of it
};

}  // namespace meshfit::ui
