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
#include <cstdio>
#include <iterator>
#include <limits>

#include "imgui.h"
#include "panels.h"
#include "io/serialize.h"
#include "io/url_state.h"
#include "search/fit_advice.h"
#include "search/layout_repair.h"
#include "spec/config_schema.h"
#include "spec/input_limits.h"
#include "spec/structure.h"
#include "spec/validate.h"  // kMaxBatch
#include "memory/finetune.h"  // is_finetune

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
  s.link_as_given.clear();
  s.before_finetune.reset();
  s.after_finetune.reset();
  s.dirty = true;
  recompute(s);
}

namespace {

// The view a link asked for (decode_state checked every value; a bad one stayed at its default).
void apply_view(AppState& s, const PageView& view) {
  s.units = view.units;
  s.tab = view.tab;
  s.select_tab = 2;
  if (view.sort != s.sort || view.order != s.order) {
    s.sort = view.sort;
    s.order = view.order;
    ++s.sort_generation;  // a fresh table takes the link's sort as its default
  }
  std::snprintf(s.layout_filter, sizeof s.layout_filter, "%s", view.filter.c_str());
  if (view.pin.empty()) unpin(s);
  else pin_config(s, decode_state(view.pin).config);
}

}  // namespace

PageView current_view(const AppState& s) {
  PageView view;
  view.tab = s.tab;
  view.units = s.units;
  view.sort = s.sort;
  view.order = s.order;
  view.filter = s.layout_filter;
  if (s.pinned) view.pin = encode_state(s.pin_config);
  return view;
}

namespace {

// The page's link: the config's state and the view, or a link with errors kept as given (set_state).
std::string page_link(const AppState& s) {
  return s.link_as_given.empty() ? s.state + encode_view(current_view(s)) : s.link_as_given;
}

}  // namespace

void set_state(AppState& s, const std::string& encoded) {
  PageView view;
  ParsedConfig decoded = decode_state(encoded, &view);
  // A link of view keys only ("#tab=validation", as a docs page may write) opens the page's own
  // configuration in that view, as an empty link does: it read "no model" and showed nothing.
  std::vector<Issue> state_issues;
  if (state_to_object(encoded, state_issues).empty() && !has_errors(state_issues)) {
    init(s);
    apply_view(s, view);
    // Its view keys' problems are still the link's (a page review saw units=parsec&tab=nosuch load the
    // example without a word): listed, as a link with config keys lists them. No version is not one:
    // a view-only link names no configuration to version.
    state_issues.erase(std::remove_if(state_issues.begin(), state_issues.end(), [](const Issue& i) { return i.field == "v"; }),
                       state_issues.end());
    s.input_issues = state_issues;
    s.layout_note.clear();
    s.defaults_note.clear();
    s.link_issues_dismissed = false;
    s.text_errors.clear();
    recompute(s);
    return;
  }
  apply_view(s, view);
  s.config = decoded.config;  // every field of the link, pipeline split and flags included
  s.before_finetune.reset();  // a new link: no pretraining config of this page's to go back to
  s.after_finetune.reset();
  s.input_issues = std::move(decoded.issues);
  // A link with errors (a newer version, a repeated key, a bad value) stays in the address bar as
  // written until the user edits: rewritten, it would lose what this page could not read, and a
  // reload or "Copy link" would then read something else (a v=2 link as v=1). One whose problems
  // are warnings is used, and rewritten without what was dropped; one refused as too large is not
  // kept (it is not a link anyone could use).
  s.link_as_given = has_errors(s.input_issues) && encoded.size() <= kMaxStateBytes ? encoded : std::string();
  const auto preset = find_gpu_preset(s.config.gpu.id);
  s.override_memory = preset && preset->memory_bytes != s.config.gpu.memory_bytes;
  s.layout_note.clear();  // a link is shown as written, its problems listed
  s.defaults_note.clear();
  s.link_issues_dismissed = false;
  s.text_errors.clear();
  // A count the link gave that could not be read stays in its field as written, refused beside it
  // (an as-a-user review saw seq=abc shown as 4096 under "seq must be an integer, got abc").
  const std::map<std::string, std::string> texts = state_texts(encoded);
  for (const Issue& issue : s.input_issues) {
    const auto given = texts.find(issue.field);
    if (issue.severity != Severity::kError || given == texts.end() || !is_count_field(issue.field)) continue;
    s.field_text[issue.field] = given->second;
    s.text_errors.emplace(issue.field, issue.message);
  }
  s.dirty = true;
  recompute(s);
}

namespace {

// The searches' options: every layout for the model, GPU and training (top 200 for the table,
// up to kPageKeepAll evaluated ones for the scatter).
constexpr int64_t kPageKeepAll = 4000;

SearchOptions page_search_options(const AppState& s) {
  SearchOptions options;
  options.top_k = 200;
  options.keep_all_max = kPageKeepAll;
  if (s.search_under_headroom) options.memory_limit = std::min(1.0, std::max(0.01, s.config.training.headroom));
  options.spatial_temporal = s.search_spatial_temporal;
  return options;
}

json compare_to_json(const AppState& s) {
  json out = {{"pinned", s.pinned}};
  if (!s.pinned) return out;
  out["pin_state"] = encode_state(s.pin_config);
  const auto side = [](const Estimate& e) {
    json j = {{"ok", e.valid()}};
    if (!e.valid()) return j;
    j["verdict"] = to_string(e.memory.verdict);
    j["device_bytes"] = e.worst().device_bytes;
    j["ranks"] = json::array();
    for (const RankMemory& rank : e.memory.ranks) j["ranks"].push_back(rank.device_bytes);
    j["step_time_s"] = e.step.step_time_s;
    j["tokens_per_s_per_gpu"] = e.step.tokens_per_s_per_gpu;
    j["mfu"] = e.step.mfu;
    return j;
  };
  out["pinned_result"] = side(s.pin_estimate);
  out["current_result"] = side(s.estimate);
  json diff = json::array();
  for (const ConfigDifference& d : config_differences(s.pin_config, s.config))
    diff.push_back({{"key", d.key}, {"pinned", d.pinned}, {"current", d.current}});
  out["diff"] = diff;
  return out;
}

// The mirror: what a screen reader hears and what the browser tests read. `version` lets a test
// wait for the result of its own action instead of sleeping.
std::string make_mirror(const AppState& s) {
  const bool ok = s.estimate.valid() && !has_errors(s.issues);
  json mirror = {{"ok", ok}, {"state", s.state}, {"link", s.link}, {"issues", issues_to_json(s.issues)},
                 {"version", s.mirror_version + 1}};
  mirror["view"] = {{"tab", to_string(s.tab)}, {"units", to_string(s.units)}, {"sort", to_string(s.sort)},
                    {"order", to_string(s.order)}, {"filter", std::string(s.layout_filter)}};
  mirror["compare"] = compare_to_json(s);
  mirror["fit_pending"] = s.fit_pending;
  mirror["export_running"] = s.export_search != nullptr;
  if (ok) {
    const MemoryReport& report = s.estimate.memory;
    mirror["verdict"] = to_string(report.verdict);
    mirror["worst_rank"] = report.worst_rank;
    mirror["capacity_bytes"] = report.capacity_bytes;
    mirror["config"] = config_to_json(s.config);
    mirror["tokens_per_s_per_gpu"] = s.estimate.step.tokens_per_s_per_gpu;
    mirror["mfu"] = s.estimate.step.mfu;
    mirror["throughput_text"] = throughput_text(s);  // as the memory view shows it, error band included
    mirror["memory_band_text"] = memory_band_line(s);  // the peak's band, as the memory view shows it
    mirror["ranks"] = json::array();
    for (const RankMemory& rank : report.ranks)
      mirror["ranks"].push_back({{"role", rank.role}, {"pp_stage", rank.pp_stage},
                                 {"peak_allocated_bytes", rank.peak_allocated_bytes},
                                 {"peak_reserved_bytes", rank.peak_reserved_bytes},
                                 {"device_bytes", rank.device_bytes}});
  }
  // The Validation tab's GPU ground truth medians, as its sub-tab's table shows them (computed once).
  if (s.tab == ViewTab::kValidation) mirror["validation_gpu"] = {{"medians", gpu_ground_truth_summary()}};
  mirror["layout_note"] = s.layout_note;
  mirror["defaults_note"] = s.defaults_note;
  mirror["import_message"] = s.hf_message;  // under the Paste config box: what was imported, or why not
  mirror["hf_fetching"] = s.hf_fetch.waiting;
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
  if (s.methods_ready) {  // the Methods view's ranking, once shown for this config
    json methods = {{"ranked", json::array()}, {"rejected", json::array()}};
    for (const MethodCandidate& c : s.methods.ranked)
      methods["ranked"].push_back({{"finetune", to_string(c.config.training.finetune)}, {"strategy", c.strategy},
                                   {"recompute", to_string(c.config.training.recompute)}, {"device_bytes", c.device_bytes},
                                   {"host_bytes", c.host_bytes},
                                   {"step_time_s", c.step_predicted ? json(c.step_time_s) : json()},
                                   {"state", encode_state(c.config)}});
    for (const MethodCandidate& c : s.methods.rejected)
      methods["rejected"].push_back({{"finetune", to_string(c.config.training.finetune)}, {"strategy", c.strategy},
                                     {"reason", c.rejected}});
    mirror["methods"] = methods;
  }
  // The accessible twins of the canvas (shell.html): the inputs panel's fields, and the first rows
  // of the layouts table as the page shows them (its sort is the search's: fastest first; spatial-temporal
  // ones with their marking).
  mirror["form"] = json::parse(s.form.empty() ? "[]" : s.form);
  mirror["layouts"] = json::array();
  for (size_t i = 0; i < std::min<size_t>(20, s.search.top.size()); ++i) {
    const LayoutCandidate& c = s.search.top[i];
    mirror["layouts"].push_back({{"dp", c.layout.dp}, {"tp", c.layout.tp}, {"pp", c.layout.pp}, {"cp", c.layout.cp},
                                 {"vpp", c.layout.vpp}, {"micro_batch", c.micro_batch}, {"zero", c.layout.zero},
                                 {"recompute", to_string(c.recompute)}, {"device_bytes", c.device_bytes},
                                 {"tokens_per_s_per_gpu", c.step.tokens_per_s_per_gpu}, {"mfu", c.step.mfu},
                                 {"label", candidate_label(c)}, {"spatial_temporal_q", c.layout.st_q},
                                 {"marking", c.spatial_temporal() ? kSpatialTemporalNote : ""}});
  }
  mirror["search_spatial_temporal"] = s.search_spatial_temporal;
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

bool search_running(const AppState& s) {
  return s.running_search != nullptr || s.fit_pending || s.export_search != nullptr;
}

namespace {

// The fit advice of the config, from the cache or computed now (a frame of its own, after the commit
// was drawn); the cache holds the last few configs, so going back and forth answers at once.
constexpr size_t kFitCacheSize = 32;

void compute_fit_advice(AppState& s) {
  s.fit_pending = false;
  if (!s.estimate.valid() || has_errors(s.issues)) {
    s.fit = FitAdvice{};
    return;
  }
  const auto cached = s.fit_cache.find(s.state);
  if (cached != s.fit_cache.end()) {
    s.fit = cached->second;
    return;
  }
  s.fit = fit_advice(s.config);
  if (s.fit_cache.size() >= kFitCacheSize) s.fit_cache.clear();
  s.fit_cache.emplace(s.state, s.fit);
}

// "Export layouts CSV" of a search that kept only part of its evaluated layouts: the full search
// runs in slices; when done, its every layout goes to the download.
void step_export(AppState& s, double budget_ms) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  LayoutSearch& search = *s.export_search;
  while (!search.advance(kSearchSliceWork))
    if (std::chrono::duration<double, std::milli>(Clock::now() - start).count() >= budget_ms) break;
  if (!search.done()) return;
  const SearchResult all = search.take_result();
  s.export_search.reset();
  s.outbox.download_name = "meshfit-layouts.csv";
  s.outbox.download_text = layouts_to_csv(all.all);
  s.outbox.download_mime = "text/csv";
  s.status = "Exported " + std::to_string(all.all.size()) + " evaluated layouts.";
}

}  // namespace

void export_layouts_csv(AppState& s) {
  if (!s.search.valid() || s.running_search) return;  // the button waits for the search
  if (int64_t(s.search.all.size()) < kPageKeepAll) {  // the page's search kept every evaluated layout
    s.outbox.download_name = "meshfit-layouts.csv";
    s.outbox.download_text = layouts_to_csv(s.search.all);
    s.outbox.download_mime = "text/csv";
    s.status = "Exported " + std::to_string(s.search.all.size()) + " evaluated layouts.";
    return;
  }
  SearchOptions options = page_search_options(s);
  options.keep_all_max = std::numeric_limits<int64_t>::max();
  s.export_search = std::make_shared<LayoutSearch>(s.config, options);
  s.status = "Exporting every evaluated layout...";
}

bool step_search(AppState& s, double budget_ms) {
  if (s.fit_pending) {  // the frame after the commit was drawn (fit_advice is milliseconds: 0.2 ms natively
                        // for 70B out of memory on 64 GPUs); the search's slices follow
    compute_fit_advice(s);
    s.mirror = make_mirror(s);
    ++s.mirror_version;
    return search_running(s);
  }
  if (!s.running_search && s.export_search) {
    step_export(s, budget_ms);
    s.mirror = make_mirror(s);
    ++s.mirror_version;
    return search_running(s);
  }
  if (!s.running_search) return s.fit_pending;
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
  return search_running(s);
}

void fetched_hf_config(AppState& s, int status, const std::string& body) {
  if (!s.hf_fetch.waiting) return;  // no request of ours is in flight
  s.hf_fetch.status = status;
  s.hf_fetch.body = body;
  s.hf_fetch.arrived = true;
}

void refresh_mirror(AppState& s) {
  s.mirror = make_mirror(s);
  ++s.mirror_version;
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
  // A link whose model could not be read (an unknown preset) leaves no dimensions: one issue on the
  // model says so, not six "must be a positive integer, got 0" (an as-a-user review).
  const bool model_unread = std::any_of(s.input_issues.begin(), s.input_issues.end(),
                                        [](const Issue& i) { return i.field == "model" && i.severity == Severity::kError; });
  for (const Issue& issue : s.estimate.memory.issues) {
    const ConfigField* field = find_config_field(issue.field);
    if (model_unread && field && field->dimension) continue;
    s.issues.push_back(issue);
  }
  s.field_issues.clear();
  s.field_warnings.clear();
  for (const Issue& issue : s.issues)  // the first per field, and whether it is only a warning
    if (s.field_issues.emplace(issue.field, issue.message).second && issue.severity == Severity::kWarning)
      s.field_warnings.insert(issue.field);
  s.state = encode_state(s.config);  // the shareable state of what was typed, valid or not
  s.link = page_link(s);

  // Every layout for this model, GPU and training: the search ignores the config's layout fields. It
  // runs in slices (step_search): a first one now, the rest across frames, the last result shown.
  s.running_search = std::make_shared<LayoutSearch>(s.config, page_search_options(s));
  s.export_search.reset();  // an export of earlier inputs is moot
  s.search_stale = true;
  // How to make it fit: a frame of its own after this one (step_search), from the cache when seen.
  s.fit = FitAdvice{};
  s.fit_pending = true;
  if (const auto cached = s.fit_cache.find(s.state); cached != s.fit_cache.end()) compute_fit_advice(s);
  s.methods_ready = false;  // recomputed when the Methods view is next shown
  s.form = describe_form(s);
  s.dirty = false;
  select_current_candidate(s);
  step_search(s, kFirstSearchSliceMs);  // also writes the mirror
}

namespace {

// A view change (tab, units, sort, filter, pin) moves the link without a recompute.
void refresh_link(AppState& s) {
  const std::string link = page_link(s);
  if (link == s.link) return;
  s.link = link;
  s.mirror = make_mirror(s);
  ++s.mirror_version;
}

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
  const int64_t framework_zero = b.zero;  // before the repair (b is the config's own layout)
  // A fine-tuning stack is launched with a per-device batch and accumulation steps, and its global
  // batch follows from them (HF per_device_train_batch_size x gradient_accumulation_steps x ranks): a
  // micro-batch typed that the global batch cannot hold keeps the accumulation steps and raises the
  // global batch, where the repair would undo what was typed (an as-a-user review saw micro_batch 2
  // reverted at the stack's global batch of 1).
  std::string batch_note;
  TrainingSpec& t = s.config.training;
  const int64_t dp = effective_dp(s.config), before_dp = effective_dp(before);
  const int64_t before_per_step = before.training.micro_batch * before_dp;
  if (is_finetune(t) && pins.micro_batch && before.training.global_batch == t.global_batch && dp > 0 && before_dp > 0 &&
      t.global_batch % (t.micro_batch * dp) != 0 && before.training.global_batch % before_per_step == 0) {
    const int64_t accumulation = before.training.global_batch / before_per_step;
    const int64_t wanted = accumulation * t.micro_batch * dp;
    if (wanted <= kMaxBatch) {
      batch_note = "global_batch " + std::to_string(t.global_batch) + " \xE2\x86\x92 " + std::to_string(wanted) + " to hold micro_batch " +
                   std::to_string(t.micro_batch) + " (" + std::to_string(accumulation) + " accumulation step" +
                   (accumulation == 1 ? "" : "s") + " x dp " + std::to_string(dp) + ")";
      t.global_batch = wanted;
    }
  }
  const LayoutRepair repair = nearest_valid_layout(s.config, pins);
  s.layout_note = repair.summary();
  if (!batch_note.empty()) s.layout_note = s.layout_note.empty() ? batch_note : batch_note + "; " + s.layout_note;
  if (repair.moved()) s.config = repair.config;
  // A framework without the user's ZeRO stage took its default (the framework chooser): said, as the
  // repair's own moves are (an as-a-user review saw zero 3 -> 1 on a switch to Megatron-LM unsaid).
  // (A training-mode or stack switch sets the stage with its defaults, and its own note says so.)
  if (before.training.framework != s.config.training.framework && a.zero != framework_zero &&
      before.training.finetune == s.config.training.finetune && before.training.stack == s.config.training.stack &&
      !framework_profile(s.config.training.framework).offers_zero(a.zero)) {
    const std::string moved = "zero " + std::to_string(a.zero) + " \xE2\x86\x92 " + std::to_string(framework_zero) + ": " +
                              enum_label(s.config.training.framework) + " has no stage " + std::to_string(a.zero) +
                              " (its default stage taken)";
    s.layout_note = s.layout_note.empty() ? moved : moved + "; " + s.layout_note;
  }
}

// The fine-tuning snapshot after a training-mode or stack switch, once the layout repair has run. The
// first switch takes the whole config. A later switch (LoRA -> QLoRA, a stack) moves each field the
// user has not edited since (the same in the snapshot and before the switch) to what its defaults and
// the repair wrote, so the way back to pretraining undoes them too; an as-a-user review saw the tp and
// cp that QLoRA's repair moved stay after LoRA -> QLoRA -> pretraining. Edited fields keep their values.
void take_finetune_snapshot(AppState& s, const Config& before) {
  if (!s.finetune_switched || !s.before_finetune || !s.after_finetune) return;
  if (before.training.finetune == FinetuneMethod::kNone) {
    s.after_finetune = s.config;
    return;
  }
  for (const ConfigField& field : config_fields())
    if (field.get && field.set && held_value(field, before) == held_value(field, *s.after_finetune))
      set_held_value(field, *s.after_finetune, held_value(field, s.config));
}

}  // namespace

nlohmann::json held_value(const ConfigField& field, const Config& config) {
  if (std::string(field.key) == "dp") return config.layout.dp;
  return field.get(config);
}

void set_held_value(const ConfigField& field, Config& config, const nlohmann::json& value) {
  if (std::string(field.key) == "dp") config.layout.dp = value.get<int64_t>();
  else field.set(config, value);
}

void commit_edit(AppState& s, const Config& before) {
  s.input_issues.clear();  // the link's problems are the user's edit now
  s.link_as_given.clear();
  if (!s.defaults_note_fresh) s.defaults_note.clear();
  s.defaults_note_fresh = false;
  keep_layout_valid(s, before);
  take_finetune_snapshot(s, before);
  s.finetune_switched = false;
  s.dirty = true;
}

// [SECTION] Theme and frame

void apply_theme(AppState& s) {
  ImGuiStyle style;
  if (s.dark) {
    ImGui::StyleColorsDark(&style);
  } else {
    ImGui::StyleColorsLight(&style);
    // White fields and checkboxes on the light grey panel need an edge to be seen (WCAG 1.4.11
    // asks 3:1 for a control's boundary): a 1 px border, #8c8c8c on white is 3.4:1.
    style.FrameBorderSize = 1.0f;
    style.Colors[ImGuiCol_Border] = ImVec4(0.0f, 0.0f, 0.0f, 0.45f);
    // Secondary text (hints, the error band beside every tokens/s, axis labels): ImGui's #999 on the
    // #f0f0f0 panel is 2.6:1; #6b6b6b is 4.7:1 (WCAG AA's 4.5:1 for body text), still lighter than
    // the text. The dark theme's #808080 on #0f0f0f is already 4.8:1.
    style.Colors[ImGuiCol_TextDisabled] = ImVec4(0.42f, 0.42f, 0.42f, 1.0f);
  }
  style.WindowRounding = 0.0f;
  style.FrameRounding = 0.25f * s.em / 13.0f * 13.0f / 4.0f;
  style.FramePadding = ImVec2(0.4f * s.em, 0.25f * s.em);
  style.ItemSpacing = ImVec2(0.5f * s.em, 0.35f * s.em);
  style.CellPadding = ImVec2(0.35f * s.em, 0.15f * s.em);
  style.WindowPadding = ImVec2(0.75f * s.em, 0.75f * s.em);
  style.ScrollbarSize = 0.8f * s.em;
  style.GrabMinSize = 0.6f * s.em;
  style.IndentSpacing = 1.2f * s.em;
  if (s.coarse_pointer) {
    // A finger, not a mouse: rows and buttons about 2.4 em (38 CSS px at 16 px; WCAG 2.5.8 asks
    // 24 px at least, Apple's HIG 44 pt), wider scrollbars and grabs, more space between targets.
    style.FramePadding = ImVec2(0.6f * s.em, 0.7f * s.em);
    style.ItemSpacing = ImVec2(0.6f * s.em, 0.55f * s.em);
    style.ItemInnerSpacing = ImVec2(0.5f * s.em, 0.4f * s.em);
    style.CellPadding = ImVec2(0.45f * s.em, 0.45f * s.em);
    style.ScrollbarSize = 1.2f * s.em;
    style.GrabMinSize = 1.4f * s.em;
    style.TouchExtraPadding = ImVec2(0.2f * s.em, 0.2f * s.em);
  }
  ImGui::GetStyle() = style;
}

bool draw(AppState& s) {
  if (s.dirty) recompute(s);
  const Config before = s.config;
  s.text_field_numeric = false;  // the active count field says so again while it is active
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->Pos);
  ImGui::SetNextWindowSize(viewport->Size);
  ImGui::Begin("meshfit", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus |
                   ImGuiWindowFlags_NoSavedSettings);
  draw_header(s);
  ImGui::Separator();
  bool changed = false;
  bool inputs_drawn = !narrow_window(s);
  // Below ~44 em (about 700 CSS px) one column: the verdict banner above, then the views, the results
  // first (a phone opens on the answer) and the inputs second, each full width.
  const bool narrow = narrow_window(s);
  if (!narrow) {
    if (ImGui::BeginChild("inputs", ImVec2(17.0f * s.em, 0), true)) changed |= draw_inputs(s);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  // One view's content, under whichever switch drew its label.
  const auto draw_view = [&](ViewTab which) {
    switch (which) {
      case ViewTab::kMemory: changed |= draw_memory_view(s); break;
      case ViewTab::kInputs:  // only on a phone: in the view itself, which scrolls with the buttons above
        inputs_drawn = true;
        changed |= draw_inputs(s);
        break;
      case ViewTab::kLayouts: changed |= draw_layouts_view(s); break;
      case ViewTab::kMethods: changed |= draw_methods_view(s); break;
      case ViewTab::kCompare: changed |= draw_compare_view(s); break;
      case ViewTab::kValidation: draw_validation_view(s); break;
    }
  };
  // The views, each once: its label in the phone's grid, its tab label on a wide window (none for
  // Inputs, which is the column there) and the rect the browser tests and links find it by.
  const struct {
    ViewTab which;
    const char* label;
    const char* wide_label;
    const char* rect;
  } views[] = {{ViewTab::kMemory, "Memory", "Per-rank memory", "tab_memory"},
               {ViewTab::kInputs, "Inputs", nullptr, "tab_inputs"},
               {ViewTab::kLayouts, "Layouts", "Layouts", "tab_layouts"},
               {ViewTab::kMethods, "Methods", "Methods", "tab_methods"},
               {ViewTab::kCompare, "Compare", s.pinned ? "Compare" : "Compare (pin first)", "tab_compare"},
               {ViewTab::kValidation, "Validation", "Validation", "tab_validation"}};
  if (narrow) {
    // Six tab labels in one row at phone width are cut to "Memo...", "Layou..." (ImGui shrinks
    // them to fit): the views are a grid of full-label buttons instead, three a row, the open one
    // in the active tab's colour, fixed under the verdict (it scrolled away with the view). The
    // DOM form's focus brings its field into view: Inputs opens.
    if (!s.focus_field.empty()) s.tab = ViewTab::kInputs;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width = (ImGui::GetContentRegionAvail().x - 2.0f * style.ItemSpacing.x) / 3.0f;
    for (size_t i = 0; i < std::size(views); ++i) {
      if (i % 3 != 0) ImGui::SameLine();
      const bool open = s.tab == views[i].which;
      ImGui::PushStyleColor(ImGuiCol_Button, style.Colors[open ? ImGuiCol_TabActive : ImGuiCol_Tab]);
      ImGui::PushStyleColor(ImGuiCol_ButtonHovered, style.Colors[ImGuiCol_TabHovered]);
      ImGui::PushStyleColor(ImGuiCol_ButtonActive, style.Colors[ImGuiCol_TabActive]);
      // The open one also framed in the text colour: the two fills differ by 1.3:1 in the light theme.
      ImGui::PushStyleColor(ImGuiCol_Border, style.Colors[ImGuiCol_Text]);
      ImGui::PushStyleVar(ImGuiStyleVar_FrameBorderSize, open ? 2.0f : 0.0f);
      if (ImGui::Button(views[i].label, ImVec2(width, 0))) s.tab = views[i].which;
      ImGui::PopStyleVar();
      ImGui::PopStyleColor(4);
      record_rect(s, views[i].rect);
    }
    ImGui::Separator();
  }
  if (ImGui::BeginChild("results", ImVec2(0, 0), false)) {
    if (narrow) {
      // The header's buttons lead the view and scroll with it (panel_header.cpp draw_header).
      draw_header_buttons(s);
      ImGui::Separator();
      draw_view(s.tab);
    } else if (ImGui::BeginTabBar("views", ImGuiTabBarFlags_FittingPolicyResizeDown)) {
      // The tab a link asked for is selected once; after that the tab on screen is the view's. (A
      // link's "inputs" tab has no tab here: the inputs are the column.)
      for (const auto& view : views) {
        if (view.wide_label == nullptr) continue;
        const ImGuiTabItemFlags flags = s.select_tab > 0 && s.tab == view.which ? ImGuiTabItemFlags_SetSelected : 0;
        const bool open = ImGui::BeginTabItem(view.wide_label, nullptr, flags);
        record_rect(s, view.rect);
        if (open && s.select_tab == 0) s.tab = view.which;
        if (open) {
          draw_view(view.which);
          ImGui::EndTabItem();
        }
      }
      ImGui::EndTabBar();
    }
  }
  ImGui::EndChild();
  ImGui::End();
  if (s.select_tab > 0) --s.select_tab;
  if (inputs_drawn) s.focus_field.clear();  // brought into view by record_rect; else not on the panel
  refresh_link(s);
  if (changed) commit_edit(s, before);
  return changed;
}

}  // namespace meshfit::ui
