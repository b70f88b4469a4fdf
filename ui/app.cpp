// app.cpp — the page's frame and its state: init, reading a link, recompute, theme, and the window
// that lays out the panels (panel_*.cpp). Sizes are multiples of the font size (em) so the layout
// survives any devicePixelRatio. Results come from core's typed pipeline (api.h: estimate,
// search_layouts, encode_state/decode_state), the same one the CLI and the JS API serialise.
//
// Index
// [SECTION] State: init, links, recompute
// [SECTION] Theme and frame
#include "app.h"

#include <algorithm>
#include <chrono>

#include "imgui.h"
#include "panels.h"
#include "io/serialize.h"
#include "io/url_state.h"
#include "search/fit_advice.h"
#include "search/layout_repair.h"
#include "spec/structure.h"

namespace meshfit::ui {

using nlohmann::json;

// [SECTION] State: init, links, recompute

void init(AppState& s) {
  Config& c = s.config;
  c = default_config();
  c.model = *find_model_preset("llama3.1-70b");
  c.cluster.gpus = 64;
  c.training.seq = 8192;
  c.layout.tp = 8;
  c.layout.pp = 4;
  s.override_memory = false;
  s.input_issues.clear();
  s.dirty = true;
  recompute(s);
}

void set_state(AppState& s, const std::string& encoded) {
  ParsedConfig decoded = decode_state(encoded);
  s.config = decoded.config;  // every field of the link, pipeline split and flags included
  s.input_issues = std::move(decoded.issues);
  const auto preset = find_gpu_preset(s.config.gpu.id);
  s.override_memory = preset && preset->memory_bytes != s.config.gpu.memory_bytes;
  s.layout_note.clear();  // a link is shown as written, its problems listed
  s.link_issues_dismissed = false;
  s.text_errors.clear();
  s.dirty = true;
  recompute(s);
}

namespace {

// The mirror: what a screen reader hears and what the browser tests read. `version` lets a test
// wait for the result of its own action instead of sleeping.
std::string make_mirror(const AppState& s) {
  const bool ok = s.estimate.valid() && !has_errors(s.issues);
  json mirror = {{"ok", ok}, {"state", s.state}, {"issues", issues_to_json(s.issues)}, {"version", s.mirror_version + 1}};
  if (ok) {
    const MemoryReport& report = s.estimate.memory;
    mirror["verdict"] = to_string(report.verdict);
    mirror["worst_rank"] = report.worst_rank;
    mirror["capacity_bytes"] = report.capacity_bytes;
    mirror["config"] = config_to_json(s.config);
    mirror["tokens_per_s_per_gpu"] = s.estimate.step.tokens_per_s_per_gpu;
    mirror["mfu"] = s.estimate.step.mfu;
    mirror["ranks"] = json::array();
    for (const RankMemory& rank : report.ranks)
      mirror["ranks"].push_back({{"role", rank.role}, {"pp_stage", rank.pp_stage},
                                 {"peak_allocated_bytes", rank.peak_allocated_bytes},
                                 {"peak_reserved_bytes", rank.peak_reserved_bytes},
                                 {"device_bytes", rank.device_bytes}});
  }
  mirror["layout_note"] = s.layout_note;
  mirror["local_file"] = s.local_file;
  mirror["public_url"] = s.public_url;
  json fit = {{"largest_micro_batch", s.fit.largest_micro_batch}, {"largest_seq", s.fit.largest_seq}, {"suggestions", json::array()}};
  for (const FitSuggestion& f : s.fit.suggestions)
    fit["suggestions"].push_back({{"change", f.change}, {"device_bytes", f.device_bytes},
                                  {"tokens_per_s_per_gpu", f.tokens_per_s_per_gpu}, {"throughput_change", f.throughput_change},
                                  {"state", encode_state(f.config)}});
  mirror["fit"] = fit;
  mirror["link_issues"] = s.link_issues_dismissed ? json::array() : issues_to_json(s.input_issues);
  mirror["text_errors"] = s.text_errors;
  mirror["choices"] = {{"tp", tp_choices(s.config)}, {"pp", pp_choices(s.config)}, {"cp", cp_choices(s.config)},
                       {"vpp", vpp_choices(s.config)}};  // what the layout choosers offer
  const BannerColors banner = verdict_colors(ok ? s.estimate.memory.verdict : Verdict::kOutOfMemory, ok);
  const auto rgb = [](ImU32 c) { return json::array({c & 0xFF, (c >> 8) & 0xFF, (c >> 16) & 0xFF}); };
  mirror["banner"] = {{"text", verdict_text(s)}, {"background", rgb(banner.background)}, {"color", rgb(banner.text)}};
  mirror["layouts_feasible"] = s.search.feasible;
  mirror["selected_layout"] = s.selected_candidate;
  mirror["search_running"] = s.running_search != nullptr;
  mirror["search_progress"] = s.running_search ? s.running_search->progress() : 1.0;
  mirror["search_complete"] = s.search.complete && !s.search_stale;
  // The ranked layouts' labels as the table shows them, spatial-temporal ones with their marking.
  mirror["search_spatial_temporal"] = s.search_spatial_temporal;
  mirror["layouts"] = json::array();
  for (size_t i = 0; i < std::min<size_t>(s.search.top.size(), 20); ++i)
    mirror["layouts"].push_back({{"label", candidate_label(s.search.top[i])},
                                 {"spatial_temporal_q", s.search.top[i].layout.st_q},
                                 {"marking", s.search.top[i].spatial_temporal() ? kSpatialTemporalNote : ""}});
  mirror["spatial_temporal_q"] = s.config.layout.st_q;
  return mirror.dump(-1, ' ', false, json::error_handler_t::replace);
}

constexpr double kFirstSearchSliceMs = 40;  // in recompute: most searches finish within it
constexpr int64_t kSearchSliceWork = 64;      // work units between clock checks (a step is <= 6 evaluations)

void select_current_candidate(AppState& s) {
  s.selected_candidate = -1;
  for (size_t i = 0; i < s.search.top.size(); ++i)
    if (same_layout(s.config, s.search.top[i])) s.selected_candidate = int(i);
}

}  // namespace

bool search_running(const AppState& s) { return s.running_search != nullptr; }

bool step_search(AppState& s, double budget_ms) {
  if (!s.running_search) return false;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  LayoutSearch& search = *s.running_search;
  while (!search.advance(kSearchSliceWork))
    if (std::chrono::duration<double, std::milli>(Clock::now() - start).count() >= budget_ms) break;
  if (search.done()) {
    s.search = search.take_result();
    s.running_search.reset();
    s.search_stale = false;
    select_current_candidate(s);
  }
  s.mirror = make_mirror(s);
  ++s.mirror_version;
  return s.running_search != nullptr;
}

void cancel_search(AppState& s) {
  if (!s.running_search) return;
  s.running_search.reset();
  s.mirror = make_mirror(s);
  ++s.mirror_version;
}

void recompute(AppState& s) {
  s.estimate = estimate(s.config);
  s.issues = s.input_issues;
  s.issues.insert(s.issues.end(), s.estimate.memory.issues.begin(), s.estimate.memory.issues.end());
  s.field_issues.clear();
  for (const Issue& issue : s.issues) s.field_issues.emplace(issue.field, issue.message);  // the first per field
  s.state = encode_state(s.config);  // the shareable state of what was typed, valid or not

  // Every layout for this model, GPU and training: the search ignores the config's layout fields. It
  // runs in slices (step_search): a first one now, the rest across frames, the last result shown.
  SearchOptions options;
  options.top_k = 200;
  options.keep_all_max = 4000;
  if (s.search_under_headroom) options.memory_limit = std::min(1.0, std::max(0.01, s.config.training.headroom));
  options.spatial_temporal = s.search_spatial_temporal;
  s.running_search = std::make_shared<LayoutSearch>(s.config, options);
  s.search_stale = true;
  s.fit = s.estimate.valid() && !has_errors(s.issues) ? fit_advice(s.config) : FitAdvice{};
  s.dirty = false;
  select_current_candidate(s);
  step_search(s, kFirstSearchSliceMs);  // also writes the mirror
}

namespace {

// After an edit: when it broke the layout, move to the nearest valid one (core's
// nearest_valid_layout), keeping the dimensions this edit chose, and say what moved.
void keep_layout_valid(AppState& s, const Config& before) {
  const Layout& a = before.layout;
  const Layout& b = s.config.layout;
  LayoutPins pins;
  pins.tp = a.tp != b.tp;
  pins.pp = a.pp != b.pp;
  pins.cp = a.cp != b.cp;
  pins.vpp = a.vpp != b.vpp;
  pins.zero = a.zero != b.zero;
  pins.micro_batch = before.training.micro_batch != s.config.training.micro_batch;
  const LayoutRepair repair = nearest_valid_layout(s.config, pins);
  s.layout_note = repair.summary();
  if (repair.moved()) s.config = repair.config;
}

}  // namespace

// [SECTION] Theme and frame

void apply_theme(AppState& s) {
  ImGuiStyle style;
  if (s.dark) ImGui::StyleColorsDark(&style);
  else ImGui::StyleColorsLight(&style);
  style.WindowRounding = 0.0f;
  style.FrameRounding = 0.25f * s.em / 13.0f * 13.0f / 4.0f;
  style.FramePadding = ImVec2(0.4f * s.em, 0.25f * s.em);
  style.ItemSpacing = ImVec2(0.5f * s.em, 0.35f * s.em);
  style.CellPadding = ImVec2(0.35f * s.em, 0.15f * s.em);
  style.WindowPadding = ImVec2(0.75f * s.em, 0.75f * s.em);
  style.ScrollbarSize = 0.8f * s.em;
  style.GrabMinSize = 0.6f * s.em;
  style.IndentSpacing = 1.2f * s.em;
  ImGui::GetStyle() = style;
}

bool draw(AppState& s) {
  if (s.dirty) recompute(s);
  const Config before = s.config;
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->Pos);
  ImGui::SetNextWindowSize(viewport->Size);
  ImGui::Begin("meshfit", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus |
                   ImGuiWindowFlags_NoSavedSettings);
  draw_header(s);
  ImGui::Separator();
  bool changed = false;
  // Below ~44 em (about 700 CSS px) one column: the verdict banner above, then the inputs as the
  // first tab beside the results, each full width.
  const bool narrow = viewport->Size.x < 44.0f * s.em;
  if (!narrow) {
    if (ImGui::BeginChild("inputs", ImVec2(17.0f * s.em, 0), true)) changed |= draw_inputs(s);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  if (ImGui::BeginChild("results", ImVec2(0, 0), false)) {
    if (ImGui::BeginTabBar("views", ImGuiTabBarFlags_FittingPolicyResizeDown)) {
      if (narrow) {
        const bool inputs_open = ImGui::BeginTabItem("Inputs");
        record_rect(s, "tab_inputs");
        if (inputs_open) {
          if (ImGui::BeginChild("inputs", ImVec2(0, 0), false)) changed |= draw_inputs(s);
          ImGui::EndChild();
          ImGui::EndTabItem();
        }
      }
      const bool memory_open = ImGui::BeginTabItem(narrow ? "Memory" : "Per-rank memory");
      record_rect(s, "tab_memory");
      if (memory_open) {
        changed |= draw_memory_view(s);
        ImGui::EndTabItem();
      }
      const bool layouts_open = ImGui::BeginTabItem("Layouts");
      record_rect(s, "tab_layouts");
      if (layouts_open) {
        changed |= draw_layouts_view(s);
        ImGui::EndTabItem();
      }
      const bool validation_open = ImGui::BeginTabItem("Validation");
      record_rect(s, "tab_validation");
      if (validation_open) {
        draw_validation_view(s);
        ImGui::EndTabItem();
      }
      ImGui::EndTabBar();
    }
  }
  ImGui::EndChild();
  ImGui::End();
  if (changed) {
    s.input_issues.clear();  // the link's problems are the user's edit now
    keep_layout_valid(s, before);
    s.dirty = true;
  }
  return changed;
}

}  // namespace meshfit::ui
