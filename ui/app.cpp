// app.cpp — the panels of the calculator page. Sizes are multiples of the font size (em) so the
// layout survives any devicePixelRatio. Numbers come from core's JSON API (run_estimate), the same
// path the CLI and the JS API run, and from search_layouts for the ranked layouts and the scatter.
//
// Index
// [SECTION] Helpers: formatting, colours, form <-> config object
// [SECTION] Recompute and state
// [SECTION] Inputs panel
// [SECTION] Memory view: per-rank stacked bars, legend, table
// [SECTION] Layouts view: rejections, ranked table, scatter
// [SECTION] Header, exports, frame
#include "app.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "api.h"
#include "imgui.h"
#include "misc/cpp/imgui_stdlib.h"
#include "serialize.h"
#include "units.h"
#include "url_state.h"

namespace meshfit::ui {

using nlohmann::json;

// [SECTION] Helpers: formatting, colours, form <-> config object

namespace {

const char* const kNorms[] = {"rmsnorm", "layernorm"};
const char* const kMlps[] = {"swiglu", "gelu"};
const char* const kPrecisions[] = {"bf16", "fp8"};
const char* const kOptimizers[] = {"adamw", "sgd", "adam8bit"};
const char* const kRecomputes[] = {"none", "selective", "full"};
const char* const kFrameworks[] = {"megatron", "fsdp", "deepspeed"};
const char* const kFrameworkLabels[] = {"Megatron-LM", "PyTorch FSDP2", "DeepSpeed ZeRO"};

// Component colours, fixed so charts read the same everywhere (order of core's Component enum).
const ImU32 kComponentColors[kComponentCount] = {
    IM_COL32(76, 114, 176, 255),  IM_COL32(129, 167, 219, 255), IM_COL32(221, 132, 82, 255),
    IM_COL32(85, 168, 104, 255),  IM_COL32(196, 78, 82, 255),   IM_COL32(129, 114, 179, 255),
    IM_COL32(147, 120, 96, 255),  IM_COL32(218, 139, 195, 255), IM_COL32(140, 140, 140, 255),
    IM_COL32(204, 185, 116, 255)};

template <size_t N>
int index_of(const char* const (&words)[N], const std::string& word) {
  for (size_t i = 0; i < N; ++i)
    if (word == words[i]) return int(i);
  return 0;
}

std::string format_bytes(const AppState& s, double bytes, int decimals = 2) {
  char text[48];
  if (s.units_gb) std::snprintf(text, sizeof text, "%.*f GB", decimals, bytes_to_gb(bytes));
  else std::snprintf(text, sizeof text, "%.*f GiB", decimals, bytes_to_gib(bytes));
  return text;
}
double unit_value(const AppState& s, double bytes) { return s.units_gb ? bytes_to_gb(bytes) : bytes_to_gib(bytes); }
const char* unit_label(const AppState& s) { return s.units_gb ? "GB" : "GiB"; }

std::string format_count(double value) {
  char text[32];
  if (value >= 1e9) std::snprintf(text, sizeof text, "%.3f B", value / 1e9);
  else if (value >= 1e6) std::snprintf(text, sizeof text, "%.2f M", value / 1e6);
  else std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

void set_model_fields(Form& f, const ModelSpec& m) {
  f.hidden = m.hidden, f.layers = m.layers, f.heads = m.heads, f.kv_heads = m.kv_heads, f.ffn = m.ffn;
  f.vocab = m.vocab, f.tied_embeddings = m.tied_embeddings;
  f.norm = int(m.norm), f.mlp = int(m.mlp);
}

json form_to_object(const Form& f) {
  json o = json::object();
  if (f.model == "custom") {
    o["hidden"] = f.hidden;
    o["layers"] = f.layers;
    o["heads"] = f.heads;
    o["kv_heads"] = f.kv_heads;
    o["ffn"] = f.ffn;
    o["vocab"] = f.vocab;
    o["tied_embeddings"] = f.tied_embeddings;
    o["norm"] = kNorms[f.norm];
    o["mlp"] = kMlps[f.mlp];
  } else {
    o["model"] = f.model;
  }
  o["gpu"] = f.gpu;
  if (f.gpu == "custom" || f.override_memory) o["gpu_memory_gib"] = f.gpu_memory_gib;
  o["gpus"] = f.gpus;
  o["gpus_per_node"] = f.gpus_per_node;
  o["seq"] = f.seq;
  o["global_batch"] = f.global_batch;
  o["micro_batch"] = f.micro_batch;
  o["precision"] = kPrecisions[f.precision];
  o["optimizer"] = kOptimizers[f.optimizer];
  o["recompute"] = kRecomputes[f.recompute];
  o["flash"] = f.flash;
  o["sp"] = f.sp;
  o["framework"] = kFrameworks[f.framework];
  o["zero"] = f.zero;
  o["tp"] = f.tp;
  o["pp"] = f.pp;
  o["cp"] = f.cp;
  o["vpp"] = f.vpp;
  o["headroom"] = f.headroom;
  return o;
}

// Fills the form from a state's fields over core's defaults (what an encoded state is relative to).
Form form_from_fields(const json& fields) {
  Form f;
  const Config defaults = default_config();
  f.model = "custom";
  f.hidden = 4096, f.layers = 32, f.heads = 32, f.kv_heads = 8, f.ffn = 14336, f.vocab = 128256;
  f.gpu = defaults.gpu.id;
  f.gpus = defaults.cluster.gpus;
  f.gpus_per_node = defaults.cluster.gpus_per_node;
  f.seq = defaults.training.seq;
  f.global_batch = defaults.training.global_batch;
  f.micro_batch = defaults.training.micro_batch;
  f.tp = f.pp = f.cp = f.vpp = 1;
  f.zero = defaults.layout.zero;
  const auto integer = [&](const char* key, int64_t& out) {
    if (fields.contains(key) && fields[key].is_number()) out = int64_t(fields[key].get<double>());
  };
  const auto boolean = [&](const char* key, bool& out) {
    if (fields.contains(key) && fields[key].is_boolean()) out = fields[key].get<bool>();
  };
  const auto word = [&](const char* key, auto& words, int& out) {
    if (fields.contains(key) && fields[key].is_string()) out = index_of(words, fields[key].get<std::string>());
  };
  if (fields.contains("model") && fields["model"].is_string()) {
    f.model = fields["model"].get<std::string>();
    if (auto preset = find_model_preset(f.model)) set_model_fields(f, *preset);
  }
  bool dims = false;
  for (const char* key : {"hidden", "layers", "heads", "kv_heads", "ffn", "vocab"}) dims |= fields.contains(key);
  if (dims) f.model = "custom";
  integer("hidden", f.hidden);
  integer("layers", f.layers);
  integer("heads", f.heads);
  integer("kv_heads", f.kv_heads);
  integer("ffn", f.ffn);
  integer("vocab", f.vocab);
  boolean("tied_embeddings", f.tied_embeddings);
  word("norm", kNorms, f.norm);
  word("mlp", kMlps, f.mlp);
  if (fields.contains("gpu") && fields["gpu"].is_string()) f.gpu = fields["gpu"].get<std::string>();
  if (fields.contains("gpu_memory_gib") && fields["gpu_memory_gib"].is_number()) {
    f.gpu_memory_gib = fields["gpu_memory_gib"].get<double>();
    f.override_memory = true;
  }
  integer("gpus", f.gpus);
  integer("gpus_per_node", f.gpus_per_node);
  integer("seq", f.seq);
  integer("global_batch", f.global_batch);
  integer("micro_batch", f.micro_batch);
  word("precision", kPrecisions, f.precision);
  word("optimizer", kOptimizers, f.optimizer);
  word("recompute", kRecomputes, f.recompute);
  boolean("flash", f.flash);
  boolean("sp", f.sp);
  word("framework", kFrameworks, f.framework);
  integer("zero", f.zero);
  integer("tp", f.tp);
  integer("pp", f.pp);
  integer("cp", f.cp);
  integer("vpp", f.vpp);
  if (fields.contains("headroom") && fields["headroom"].is_number()) f.headroom = fields["headroom"].get<double>();
  return f;
}

std::string candidate_label(const LayoutCandidate& c) {
  char text[160];
  std::snprintf(text, sizeof text, "dp=%lld tp=%lld pp=%lld cp=%lld vpp=%lld mb=%lld zero=%lld recompute=%s sp=%d",
                (long long)c.layout.dp, (long long)c.layout.tp, (long long)c.layout.pp, (long long)c.layout.cp,
                (long long)c.layout.vpp, (long long)c.micro_batch, (long long)c.layout.zero, to_string(c.recompute),
                c.sp ? 1 : 0);
  return text;
}

bool matches_form(const LayoutCandidate& c, const Form& f) {
  return c.layout.tp == f.tp && c.layout.pp == f.pp && c.layout.cp == f.cp && c.layout.vpp == f.vpp &&
         c.micro_batch == f.micro_batch && c.layout.zero == f.zero && int(c.recompute) == f.recompute &&
         (c.sp == f.sp || f.tp == 1);
}

void apply_candidate(AppState& s, const LayoutCandidate& c) {
  Form& f = s.form;
  f.tp = c.layout.tp, f.pp = c.layout.pp, f.cp = c.layout.cp, f.vpp = c.layout.vpp;
  f.micro_batch = c.micro_batch, f.zero = c.layout.zero, f.recompute = int(c.recompute);
  if (c.layout.tp > 1) f.sp = c.sp;
  s.dirty = true;
}

constexpr double kFirstSearchSliceMs = 40;  // in recompute: most searches finish within it
constexpr int64_t kSearchSliceWork = 500;     // work units between clock checks

void select_current_candidate(AppState& s) {
  s.selected_candidate = -1;
  for (size_t i = 0; i < s.search.top.size(); ++i)
    if (matches_form(s.search.top[i], s.form)) s.selected_candidate = int(i);
}

// The mirror: what a screen reader hears and what the browser tests read.
void update_mirror(AppState& s) {
  json mirror = s.mirror_estimate;
  mirror["layouts_feasible"] = s.search.feasible;
  mirror["selected_layout"] = s.selected_candidate;
  mirror["link_issues"] = s.link_issues;
  mirror["search_running"] = s.running_search != nullptr;
  mirror["search_progress"] = s.running_search ? s.running_search->progress() : 1.0;
  mirror["search_complete"] = s.search.complete && !s.search_stale;
  s.mirror = mirror.dump(-1, ' ', false, json::error_handler_t::replace);
  ++s.mirror_version;
}

}  // namespace

// [SECTION] Recompute and state

void init(AppState& s) {
  s.form = Form{};
  s.dirty = true;
  recompute(s);
}

void set_state(AppState& s, const std::string& encoded) {
  const json decoded = run_decode_state(encoded);
  s.form = form_from_fields(decoded["fields"]);
  // Problems of the link itself (invalid text, duplicate keys, a bad version) are shown until the
  // next link: the form keeps only the fields that could be read.
  s.link_issues = json::array();
  for (const json& issue : decoded["issues"])
    if (issue["severity"] == "error") s.link_issues.push_back(issue);
  s.dirty = true;
  recompute(s);
}

void recompute(AppState& s) {
  const json inputs = form_to_object(s.form);
  s.estimate = run_estimate(inputs);
  s.field_issues.clear();
  for (const json& issue : s.estimate["issues"]) {
    const std::string field = issue["field"].get<std::string>();
    if (!s.field_issues.count(field)) s.field_issues[field] = issue["message"].get<std::string>();
  }
  // The shareable state of what was typed, valid or not.
  const ParsedConfig parsed = parse_config(inputs);
  s.state = encode_state(parsed.config);
  // Every layout for this model, GPU and training: the search ignores the form's layout fields. It
  // runs in slices (step_search): a first one now, the rest across frames, the last result shown.
  s.running_search.reset();
  if (!has_errors(parsed.issues)) {
    SearchOptions options;
    options.top_k = 200;
    options.keep_all_max = 4000;
    if (s.search_under_headroom) options.memory_limit = std::min(1.0, std::max(0.01, s.form.headroom));
    s.running_search = std::make_shared<LayoutSearch>(parsed.config, options);
    s.search_stale = true;
    step_search(s, kFirstSearchSliceMs);
  } else {
    s.search = SearchResult{};
    s.search.issues = parsed.issues;
    s.search_stale = false;
  }
  select_current_candidate(s);

  json mirror = {{"ok", s.estimate["ok"]}, {"state", s.state}, {"issues", s.estimate["issues"]}};
  if (s.estimate["ok"].get<bool>()) {
    mirror["verdict"] = s.estimate["verdict"];
    mirror["worst_rank"] = s.estimate["worst_rank"];
    mirror["capacity_bytes"] = s.estimate["capacity_bytes"];
    mirror["config"] = s.estimate["config"];
    mirror["tokens_per_s_per_gpu"] = s.estimate["tokens_per_s_per_gpu"];
    mirror["mfu"] = s.estimate["mfu"];
    mirror["ranks"] = json::array();
    for (const json& rank : s.estimate["ranks"])
      mirror["ranks"].push_back({{"role", rank["role"]}, {"pp_stage", rank["pp_stage"]},
                                 {"peak_allocated_bytes", rank["peak_allocated_bytes"]},
                                 {"peak_reserved_bytes", rank["peak_reserved_bytes"]},
                                 {"device_bytes", rank["device_bytes"]}});
  }
  s.mirror_estimate = std::move(mirror);
  update_mirror(s);
  s.dirty = false;
}

bool search_running(const AppState& s) { return s.running_search != nullptr; }

bool step_search(AppState& s, double budget_ms) {
  if (!s.running_search) return false;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  LayoutSearch& search = *s.running_search;
  // Small slices with a clock check between them: one node costs at most ~100 memory evaluations.
  while (!search.advance(kSearchSliceWork)) {
    if (std::chrono::duration<double, std::milli>(Clock::now() - start).count() >= budget_ms) break;
  }
  if (search.done()) {
    s.search = search.take_result();
    s.running_search.reset();
    s.search_stale = false;
    select_current_candidate(s);
  }
  update_mirror(s);
  return s.running_search != nullptr;
}

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

// [SECTION] Inputs panel

namespace {

void record_rect(AppState& s, const char* name) {
  const ImVec2 min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
  s.widget_rects[name] = Rect{min.x, min.y, max.x - min.x, max.y - min.y};
}

void field_issue(const AppState& s, const char* field) {
  const auto it = s.field_issues.find(field);
  if (it == s.field_issues.end()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(235, 87, 87, 255));
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(it->second.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

bool input_count(AppState& s, const char* label, const char* field, int64_t& value, int64_t step = 1) {
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::TextUnformatted(label);
  const int64_t step_fast = step * 8;
  const std::string id = std::string("##") + field;
  ImGui::SetNextItemWidth(-FLT_MIN);
  const bool changed = ImGui::InputScalar(id.c_str(), ImGuiDataType_S64, &value, &step, &step_fast, "%lld");
  record_rect(s, field);
  field_issue(s, field);
  return changed;
}

template <size_t N>
bool combo_words(const char* label, int& index, const char* const (&words)[N]) {
  ImGui::SetNextItemWidth(-FLT_MIN);
  return ImGui::Combo(label, &index, words, int(N));
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n && d <= 1 << 20; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// A degree chooser that offers only the values valid for the rest of the inputs, plus the current
// value when it is not one of them (so a bad value from a link shows, with its message).
bool degree_combo(AppState& s, const char* label, const char* field, int64_t& value, const std::vector<int64_t>& valid) {
  ImGui::TextUnformatted(label);
  ImGui::SetNextItemWidth(-FLT_MIN);
  char preview[32];
  const bool is_valid = std::find(valid.begin(), valid.end(), value) != valid.end();
  std::snprintf(preview, sizeof preview, is_valid ? "%lld" : "%lld (invalid)", (long long)value);
  bool changed = false;
  const std::string id = std::string("##") + field;
  if (ImGui::BeginCombo(id.c_str(), preview)) {
    for (int64_t option : valid) {
      char text[24];
      std::snprintf(text, sizeof text, "%lld", (long long)option);
      if (ImGui::Selectable(text, option == value)) {
        value = option;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  record_rect(s, field);
  field_issue(s, field);
  return changed;
}

bool draw_inputs(AppState& s) {
  Form& f = s.form;
  bool changed = false;

  ImGui::SeparatorText("Model");
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (ImGui::BeginCombo("##model", f.model.c_str())) {
    for (const ModelPreset& preset : model_presets()) {
      if (ImGui::Selectable(preset.id, f.model == preset.id)) {
        f.model = preset.id;
        set_model_fields(f, preset.spec);
        changed = true;
      }
    }
    if (ImGui::Selectable("custom", f.model == "custom")) {
      f.model = "custom";
      changed = true;
    }
    ImGui::EndCombo();
  }
  record_rect(s, "model");
  field_issue(s, "model");
  if (f.model != "custom") {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("hidden %lld, %lld layers, %lld heads (%lld kv), ffn %lld, vocab %lld", (long long)f.hidden,
                       (long long)f.layers, (long long)f.heads, (long long)f.kv_heads, (long long)f.ffn, (long long)f.vocab);
    ImGui::PopStyleColor();
    if (ImGui::SmallButton("Edit dimensions")) {
      f.model = "custom";
      changed = true;
    }
  } else {
    changed |= input_count(s, "hidden", "hidden", f.hidden, 128);
    changed |= input_count(s, "layers", "layers", f.layers);
    changed |= input_count(s, "attention heads", "heads", f.heads);
    changed |= input_count(s, "key/value heads", "kv_heads", f.kv_heads);
    changed |= input_count(s, "ffn", "ffn", f.ffn, 128);
    changed |= input_count(s, "vocab", "vocab", f.vocab, 128);
    changed |= ImGui::Checkbox("tied embeddings", &f.tied_embeddings);
    changed |= combo_words("norm", f.norm, kNorms);
    changed |= combo_words("mlp", f.mlp, kMlps);
  }
  if (ImGui::TreeNode("Paste HF config.json")) {
    ImGui::InputTextMultiline("##hf", &s.hf_text, ImVec2(-FLT_MIN, 6.0f * s.em));
    record_rect(s, "hf_config");
    if (ImGui::Button("Import")) {
      const json imported = run_parse_hf_config(s.hf_text);
      if (imported["ok"].get<bool>()) {
        const json& m = imported["model"];
        f.model = "custom";
        f.hidden = m["hidden"], f.layers = m["layers"], f.heads = m["heads"], f.kv_heads = m["kv_heads"];
        f.ffn = m["ffn"], f.vocab = m["vocab"], f.tied_embeddings = m["tied_embeddings"];
        f.norm = index_of(kNorms, m["norm"].get<std::string>());
        f.mlp = index_of(kMlps, m["mlp"].get<std::string>());
        s.hf_message = "Imported " + imported["model_type"].get<std::string>() + ".";
        changed = true;
      } else {
        s.hf_message.clear();
        for (const json& issue : imported["issues"]) s.hf_message += issue["message"].get<std::string>() + "\n";
      }
    }
    if (!s.hf_message.empty()) ImGui::TextWrapped("%s", s.hf_message.c_str());
    ImGui::TreePop();
  }

  ImGui::SeparatorText("Hardware");
  ImGui::SetNextItemWidth(-FLT_MIN);
  const GpuSpec* current = nullptr;
  for (const GpuPreset& preset : gpu_presets())
    if (f.gpu == preset.id) current = &preset.spec;
  if (ImGui::BeginCombo("##gpu", current ? current->name.c_str() : f.gpu.c_str())) {
    for (const GpuPreset& preset : gpu_presets())
      if (ImGui::Selectable(preset.spec.name.c_str(), f.gpu == preset.id)) {
        f.gpu = preset.id;
        changed = true;
      }
    if (ImGui::Selectable("Custom GPU", f.gpu == "custom")) {
      f.gpu = "custom";
      changed = true;
    }
    ImGui::EndCombo();
  }
  record_rect(s, "gpu");
  field_issue(s, "gpu");
  if (f.gpu != "custom") changed |= ImGui::Checkbox("override memory", &f.override_memory);
  if (f.gpu == "custom" || f.override_memory) {
    ImGui::TextUnformatted("memory (GiB)");
    ImGui::SetNextItemWidth(-FLT_MIN);
    changed |= ImGui::InputDouble("##gpu_memory_gib", &f.gpu_memory_gib, 1.0, 8.0, "%.2f");
    field_issue(s, "gpu_memory_gib");
  }
  changed |= input_count(s, "GPUs", "gpus", f.gpus, 8);
  changed |= input_count(s, "GPUs per node", "gpus_per_node", f.gpus_per_node);

  ImGui::SeparatorText("Training");
  changed |= input_count(s, "sequence length", "seq", f.seq, 1024);
  changed |= input_count(s, "global batch (sequences)", "global_batch", f.global_batch, 64);
  changed |= input_count(s, "micro-batch", "micro_batch", f.micro_batch);
  ImGui::TextUnformatted("framework");
  changed |= combo_words("##framework", f.framework, kFrameworkLabels);
  ImGui::TextUnformatted("recompute");
  changed |= combo_words("##recompute", f.recompute, kRecomputes);
  ImGui::TextUnformatted("precision / optimizer");
  ImGui::PushItemWidth((ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2);
  changed |= ImGui::Combo("##precision", &f.precision, kPrecisions, 2);
  ImGui::SameLine();
  changed |= ImGui::Combo("##optimizer", &f.optimizer, kOptimizers, 3);
  ImGui::PopItemWidth();
  field_issue(s, "precision");
  changed |= ImGui::Checkbox("FlashAttention", &f.flash);
  changed |= ImGui::Checkbox("sequence parallelism (with tp > 1)", &f.sp);

  ImGui::SeparatorText("Layout");
  std::vector<int64_t> tps, pps, cps, vpps;
  for (int64_t d : divisors(std::max<int64_t>(1, f.gpus)))
    if (f.heads > 0 && f.kv_heads > 0 && f.ffn > 0 && f.heads % d == 0 && f.kv_heads % d == 0 && f.ffn % d == 0) tps.push_back(d);
  if (f.tp > 0 && f.gpus % f.tp == 0)
    for (int64_t d : divisors(f.gpus / f.tp))
      if (d <= f.layers) pps.push_back(d);
  if (f.tp > 0 && f.pp > 0 && f.gpus % (f.tp * f.pp) == 0)
    for (int64_t d : divisors(f.gpus / (f.tp * f.pp)))
      if (d == 1 || f.seq % (2 * d) == 0) cps.push_back(d);
  vpps.push_back(1);
  if (f.pp > 1)
    for (int64_t v = 2; v * f.pp <= f.layers && v <= 16; ++v)
      if (f.layers % (f.pp * v) == 0) vpps.push_back(v);
  ImGui::PushItemWidth(-FLT_MIN);
  if (ImGui::BeginTable("degrees", 2, ImGuiTableFlags_SizingStretchSame)) {
    ImGui::TableNextColumn();
    changed |= degree_combo(s, "tp", "tp", f.tp, tps);
    ImGui::TableNextColumn();
    changed |= degree_combo(s, "pp", "pp", f.pp, pps);
    ImGui::TableNextColumn();
    changed |= degree_combo(s, "cp", "cp", f.cp, cps);
    ImGui::TableNextColumn();
    changed |= degree_combo(s, "vpp", "vpp", f.vpp, vpps);
    ImGui::EndTable();
  }
  ImGui::PopItemWidth();
  const int64_t mp = f.tp * f.pp * f.cp;
  if (mp > 0 && f.gpus % mp == 0) ImGui::TextDisabled("dp = gpus / (tp*pp*cp) = %lld", (long long)(f.gpus / mp));
  field_issue(s, "dp");
  field_issue(s, "gpus");
  ImGui::TextUnformatted(f.framework == 0 ? "distributed optimizer" : "ZeRO stage");
  ImGui::SetNextItemWidth(-FLT_MIN);
  {
    const int64_t options[3][4] = {{0, 1, -1, -1}, {0, 2, 3, -1}, {0, 1, 2, 3}};
    const char* labels[4] = {"0 (off)", "1", "2", "3"};
    const char* megatron[2] = {"off (plain DDP)", "on (ZeRO-1)"};
    const char* preview = f.framework == 0 && f.zero <= 1 ? megatron[f.zero] : (f.zero >= 0 && f.zero <= 3 ? labels[f.zero] : "?");
    if (ImGui::BeginCombo("##zero", preview)) {
      for (int64_t option : options[f.framework]) {
        if (option < 0) continue;
        const char* text = f.framework == 0 ? megatron[option] : labels[option];
        if (ImGui::Selectable(text, option == f.zero)) {
          f.zero = option;
          changed = true;
        }
      }
      ImGui::EndCombo();
    }
  }
  field_issue(s, "zero");
  field_issue(s, "global_batch");
  if (!s.search.top.empty() && ImGui::Button("Use the fastest layout", ImVec2(-FLT_MIN, 0))) {
    apply_candidate(s, s.search.top.front());
    changed = true;
  }
  record_rect(s, "best_layout");

  ImGui::SeparatorText("Verdict");
  ImGui::TextUnformatted("tight at (fraction of capacity)");
  ImGui::SetNextItemWidth(-FLT_MIN);
  const double headroom_min = 0.5, headroom_max = 1.0;
  changed |= ImGui::SliderScalar("##headroom", ImGuiDataType_Double, &f.headroom, &headroom_min, &headroom_max, "%.2f");
  field_issue(s, "headroom");
  return changed;
}

}  // namespace

// [SECTION] Memory view: per-rank stacked bars, legend, table

namespace {

// The formula behind one component of one rank, with the user's numbers in it.
std::string component_formula(const AppState& s, const json& rank, Component component) {
  const json& in = rank["intermediates"];
  const json& act = in["activations"];
  const double params = in["parameters"].get<double>();
  const double bytes = rank["components"][to_string(component)].get<double>();
  char text[512];
  switch (component) {
    case Component::kWeights:
      std::snprintf(text, sizeof text, "parameters on rank x bytes/param = %s x %.4g B = %s", format_count(params).c_str(),
                    in["weight_bytes_per_param"].get<double>(), format_bytes(s, bytes).c_str());
      break;
    case Component::kGradients:
      std::snprintf(text, sizeof text, "%s x %.4g B/param (sharded where the framework shards them) = %s",
                    format_count(params).c_str(), in["grad_bytes_per_param"].get<double>(), format_bytes(s, bytes).c_str());
      break;
    case Component::kOptimizerStates:
      std::snprintf(text, sizeof text, "%s x %.4g B/param (fp32 master + moments, over dp*cp = %lld) = %s",
                    format_count(params).c_str(), in["optimizer_bytes_per_param"].get<double>(),
                    s.estimate["optimizer_shard_ranks"].get<long long>(), format_bytes(s, bytes).c_str());
      break;
    case Component::kActivations:
      std::snprintf(text, sizeof text,
                    "%lld micro-batches in flight x %.3g layers x %s per layer\n+ recompute working %s + embedding %s "
                    "+ head input %s = %s",
                    act["in_flight"].get<long long>(), act["layers_per_in_flight"].get<double>(),
                    format_bytes(s, act["layer_bytes"].get<double>(), 3).c_str(),
                    format_bytes(s, rank["intermediates"]["peak_phase"] == "backward" ? act["recompute_working_bytes"].get<double>() : 0.0, 3).c_str(),
                    format_bytes(s, act["embedding_bytes"].get<double>(), 3).c_str(),
                    format_bytes(s, act["head_input_bytes"].get<double>(), 3).c_str(), format_bytes(s, bytes).c_str());
      break;
    case Component::kLogitsLoss: {
      const double elements = in["logits_elements"].get<double>();
      std::snprintf(text, sizeof text, "s*b*v/(tp*cp) = %s logits x %.3g B each = %s%s", format_count(elements).c_str(),
                    elements > 0 ? in["logits_bytes"].get<double>() / elements : 0.0,
                    format_bytes(s, in["logits_bytes"].get<double>()).c_str(),
                    bytes == 0 && elements > 0 ? "\n(freed before the backward peak of this stage)" : "");
      break;
    }
    case Component::kCommBuffers:
      std::snprintf(text, sizeof text, "ZeRO-3/FSDP gathers and reduce buckets; largest unit %s parameters = %s",
                    format_count(in["largest_unit_parameters"].get<double>()).c_str(), format_bytes(s, bytes).c_str());
      break;
    case Component::kWorkspace:
      std::snprintf(text, sizeof text, "cuBLAS workspace + backward gradient temporaries + SP all-gather = %s",
                    format_bytes(s, bytes).c_str());
      break;
    case Component::kFragmentation:
      std::snprintf(text, sizeof text, "8%% of the memory allocated and freed each step (caching allocator) = %s",
                    format_bytes(s, bytes).c_str());
      break;
    case Component::kNccl:
      std::snprintf(text, sizeof text, "%lld communicators x 0.5 GB (outside PyTorch's allocator) = %s",
                    in["nccl_communicators"].get<long long>(), format_bytes(s, bytes).c_str());
      break;
    case Component::kCudaContext:
      std::snprintf(text, sizeof text, "CUDA context and kernels (outside PyTorch's allocator) = %s", format_bytes(s, bytes).c_str());
      break;
  }
  return text;
}

std::string rank_name(const json& rank, size_t ranks) {
  std::string name = rank["role"].get<std::string>();
  if (ranks > 1) name += " " + std::to_string(rank["pp_stage"].get<long long>());
  return name;
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

void draw_rank_bars(AppState& s) {
  const json& est = s.estimate;
  const json& ranks = est["ranks"];
  const double capacity = est["capacity_bytes"].get<double>();
  const double headroom = est["headroom"].get<double>();
  const size_t worst = est["worst_rank"].get<size_t>();
  double max_bytes = capacity * 1.08;
  for (const json& rank : ranks) max_bytes = std::max(max_bytes, rank["device_bytes"].get<double>() * 1.03);

  const float em = s.em;
  const float label_width = 6.5f * em;
  const float bar_height = 1.5f * em;
  const float row = bar_height + 0.5f * em;
  const float top = 1.4f * em;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(10.0f * em, ImGui::GetContentRegionAvail().x - label_width - 4.5f * em);
  const float height = top + row * float(ranks.size()) + 1.6f * em;
  const auto x_of = [&](double bytes) { return origin.x + label_width + float(bytes / max_bytes) * width; };
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 text_color = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);

  // Axis ticks every "nice" step in the chosen unit.
  const double unit = s.units_gb ? kGB : kGiB;
  const double span = max_bytes / unit;
  const double raw_step = span / 6.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
  const double step = raw_step / magnitude < 2 ? 2 * magnitude : raw_step / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
  for (double tick = 0; tick <= span; tick += step) {
    const float x = x_of(tick * unit);
    draw->AddLine(ImVec2(x, origin.y + top), ImVec2(x, origin.y + height - 1.4f * em), ImGui::GetColorU32(ImGuiCol_Separator, 0.5f));
    char label[32];
    std::snprintf(label, sizeof label, "%g", tick);
    draw->AddText(ImVec2(x - ImGui::CalcTextSize(label).x / 2, origin.y + height - 1.3f * em), dim, label);
  }
  draw->AddText(ImVec2(x_of(max_bytes) + 0.3f * em, origin.y + height - 1.3f * em), dim, unit_label(s));

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  std::string tooltip;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const json& rank = ranks[r];
    const float y = origin.y + top + row * float(r);
    const std::string name = rank_name(rank, ranks.size());
    draw->AddText(ImVec2(origin.x, y + (bar_height - ImGui::GetFontSize()) / 2), text_color, name.c_str());
    double cursor = 0;
    for (int i = 0; i < kComponentCount; ++i) {
      const double bytes = rank["components"][to_string(Component(i))].get<double>();
      if (bytes <= 0) continue;
      const ImVec2 a(x_of(cursor), y), b(x_of(cursor + bytes), y + bar_height);
      draw->AddRectFilled(a, b, kComponentColors[i]);
      if (mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y)
        tooltip = name + " - " + component_label(Component(i)) + ": " + format_bytes(s, bytes, 3) + " (" +
                  std::to_string((long long)std::llround(bytes)) + " bytes)\n" + component_formula(s, rank, Component(i));
      cursor += bytes;
    }
    const double device = rank["device_bytes"].get<double>();
    char value[64];
    std::snprintf(value, sizeof value, "%s  %.0f%%", format_bytes(s, device, 1).c_str(), 100.0 * device / capacity);
    draw->AddText(ImVec2(x_of(device) + 0.4f * em, y + (bar_height - ImGui::GetFontSize()) / 2), text_color, value);
    if (r == worst) {
      draw->AddRect(ImVec2(x_of(0) - 2, y - 2), ImVec2(x_of(device) + 2, y + bar_height + 2), text_color, 0, 0, 2.0f);
      draw->AddText(ImVec2(x_of(device) + 0.6f * em + ImGui::CalcTextSize(value).x, y + (bar_height - ImGui::GetFontSize()) / 2),
                    IM_COL32(235, 87, 87, 255), "< worst");
    }
    if (mouse.y >= y && mouse.y < y + bar_height && mouse.x >= origin.x && mouse.x < x_of(0) && tooltip.empty())
      tooltip = name + ": allocated " + format_bytes(s, rank["peak_allocated_bytes"].get<double>(), 3) + ", reserved " +
                format_bytes(s, rank["peak_reserved_bytes"].get<double>(), 3) + ", device " + format_bytes(s, device, 3);
  }
  // Capacity and headroom lines.
  const float line_top = origin.y + 0.2f * em, line_bottom = origin.y + height - 1.4f * em;
  const ImU32 amber = IM_COL32(230, 160, 40, 255), red = IM_COL32(235, 87, 87, 255);
  draw->AddLine(ImVec2(x_of(headroom * capacity), line_top), ImVec2(x_of(headroom * capacity), line_bottom), amber, 2.0f);
  draw->AddLine(ImVec2(x_of(capacity), line_top), ImVec2(x_of(capacity), line_bottom), red, 2.0f);
  char label[64];
  std::snprintf(label, sizeof label, "%.0f%%", 100 * headroom);
  draw->AddText(ImVec2(x_of(headroom * capacity) - ImGui::CalcTextSize(label).x - 0.2f * em, line_top), amber, label);
  std::snprintf(label, sizeof label, "capacity %s", format_bytes(s, capacity, 1).c_str());
  draw->AddText(ImVec2(x_of(capacity) + 0.3f * em, line_top), red, label);
  ImGui::Dummy(ImVec2(label_width + width + 4.0f * em, height));
  if (!tooltip.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tooltip.c_str());
}

void draw_rank_table(const AppState& s) {
  const json& ranks = s.estimate["ranks"];
  const int columns = 1 + kComponentCount + 3;
  const float row_height = ImGui::GetTextLineHeightWithSpacing() + 2.0f * ImGui::GetStyle().CellPadding.y;
  const float table_height = std::min(float(ranks.size() + 1) * row_height + 0.3f * s.em, 14.0f * s.em);
  if (!ImGui::BeginTable("ranks", columns, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollX |
                                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit,
                         ImVec2(0, table_height)))
    return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("rank");
  for (int i = 0; i < kComponentCount; ++i) ImGui::TableSetupColumn(component_label(Component(i)));
  ImGui::TableSetupColumn("allocated");
  ImGui::TableSetupColumn("reserved");
  ImGui::TableSetupColumn("device");
  ImGui::TableHeadersRow();
  for (const json& rank : ranks) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(rank_name(rank, ranks.size()).c_str());
    for (int i = 0; i < kComponentCount; ++i) {
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", unit_value(s, rank["components"][to_string(Component(i))].get<double>()));
    }
    for (const char* key : {"peak_allocated_bytes", "peak_reserved_bytes", "device_bytes"}) {
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", unit_value(s, rank[key].get<double>()));
    }
  }
  ImGui::EndTable();
  ImGui::TextDisabled("all figures in %s; allocated ~ torch.cuda.max_memory_allocated, reserved ~ max_memory_reserved, "
                      "device ~ nvidia-smi",
                      unit_label(s));
}

// The predicted step of the current layout, term by term (perf_model.h), as one stacked bar.
void draw_step_breakdown(const AppState& s) {
  const json& est = s.estimate;
  const json& b = est["breakdown"];
  const double step = est["step_time_s"].get<double>();
  ImGui::SeparatorText("Predicted step time of this layout");
  ImGui::Text("%.2f s per step: %.0f tokens/s/GPU, MFU %.1f%% (model FLOPs, PaLM convention), HFU %.1f%%", step,
              est["tokens_per_s_per_gpu"].get<double>(), 100.0 * est["mfu"].get<double>(), 100.0 * est["hfu"].get<double>());
  const std::pair<const char*, const char*> terms[] = {
      {"compute_s", "compute"}, {"tp_comm_s", "TP comm"}, {"cp_comm_s", "CP comm"}, {"pp_bubble_s", "pipeline bubble"},
      {"pp_p2p_s", "pipeline P2P"}, {"dp_comm_s", "DP / ZeRO comm"}, {"optimizer_s", "optimizer step"}};
  const ImU32 colors[] = {IM_COL32(85, 168, 104, 255), IM_COL32(76, 114, 176, 255), IM_COL32(129, 114, 179, 255),
                          IM_COL32(196, 78, 82, 255), IM_COL32(221, 132, 82, 255), IM_COL32(204, 185, 116, 255),
                          IM_COL32(140, 140, 140, 255)};
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x - 1.0f * s.em, height = 1.2f * s.em;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  float x = origin.x;
  std::string tooltip;
  for (size_t i = 0; i < 7; ++i) {
    const double seconds = b[terms[i].first].get<double>();
    const float w = float(seconds / step) * width;
    draw->AddRectFilled(ImVec2(x, origin.y), ImVec2(x + w, origin.y + height), colors[i]);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (mouse.x >= x && mouse.x < x + w && mouse.y >= origin.y && mouse.y < origin.y + height) {
      char text[96];
      std::snprintf(text, sizeof text, "%s: %.3f s (%.1f%% of the step)", terms[i].second, seconds, 100.0 * seconds / step);
      tooltip = text;
    }
    x += w;
  }
  ImGui::Dummy(ImVec2(width, height));
  if (!tooltip.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tooltip.c_str());
  for (size_t i = 0; i < 7; ++i) {
    const double seconds = b[terms[i].first].get<double>();
    char text[64];
    std::snprintf(text, sizeof text, "%s %.1f%%", terms[i].second, 100.0 * seconds / step);
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

void draw_memory_view(AppState& s) {
  const json& est = s.estimate;
  if (!est["ok"].get<bool>()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(235, 87, 87, 255));
    ImGui::TextUnformatted("The inputs have problems; each is shown next to its field:");
    ImGui::PopStyleColor();
    for (const json& issue : est["issues"])
      ImGui::BulletText("%s: %s", issue["field"].get<std::string>().c_str(), issue["message"].get<std::string>().c_str());
    return;
  }
  const json& config = est["config"];
  ImGui::Text("%s, %.3g B parameters, %lld micro-batches per step; predicted %.0f tokens/s/GPU, MFU %.1f%%",
              config["model"].get<std::string>().c_str(), est["total_parameters"].get<double>() / 1e9,
              est["num_microbatches"].get<long long>(), est["tokens_per_s_per_gpu"].get<double>(), 100.0 * est["mfu"].get<double>());
  draw_legend(s);
  ImGui::Spacing();
  const float chart_height = std::min(ImGui::GetContentRegionAvail().y * 0.55f,
                                      (1.4f + 2.0f * float(est["ranks"].size()) + 2.2f) * s.em);
  if (ImGui::BeginChild("bars", ImVec2(0, std::max(chart_height, 6.0f * s.em)), false)) draw_rank_bars(s);
  ImGui::EndChild();
  ImGui::Checkbox("Show the numbers as a table", &s.show_rank_table);
  if (s.show_rank_table) draw_rank_table(s);
  draw_step_breakdown(s);
}

}  // namespace

// [SECTION] Layouts view: rejections, ranked table, scatter

namespace {

double exposed_comm_fraction(const LayoutCandidate& c) {
  const StepBreakdown& b = c.step.breakdown;
  return (b.tp_comm_s + b.cp_comm_s + b.pp_p2p_s + b.dp_comm_s) / c.step.step_time_s;
}

bool draw_layout_table(AppState& s) {
  const std::vector<LayoutCandidate>& top = s.search.top;
  const double capacity = s.estimate["capacity_bytes"].get<double>();
  ImGui::SetNextItemWidth(16.0f * s.em);
  ImGui::InputTextWithHint("##filter", "filter, e.g. tp=8 or recompute=none", s.layout_filter, sizeof s.layout_filter);
  record_rect(s, "layout_filter");
  ImGui::SameLine();
  ImGui::TextDisabled("(%zu fastest of %lld feasible; click a row to use it)", top.size(), (long long)s.search.feasible);
  ImGui::SameLine();
  if (ImGui::Checkbox("only under the tight threshold", &s.search_under_headroom)) s.dirty = true;

  std::vector<int> rows;
  for (int i = 0; i < int(top.size()); ++i) {
    const std::string label = candidate_label(top[size_t(i)]);
    bool keep = true;
    // Space-separated terms, all of which must appear.
    std::string filter = s.layout_filter;
    size_t start = 0;
    while (start < filter.size()) {
      size_t end = filter.find(' ', start);
      if (end == std::string::npos) end = filter.size();
      const std::string term = filter.substr(start, end - start);
      if (!term.empty() && label.find(term) == std::string::npos) keep = false;
      start = end + 1;
    }
    if (keep) rows.push_back(i);
  }
  bool changed = false;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit;
  const float height = std::max(8.0f * s.em, ImGui::GetContentRegionAvail().y * 0.5f);
  if (!ImGui::BeginTable("layouts", 15, flags, ImVec2(0, height))) return false;
  ImGui::TableSetupScrollFreeze(0, 1);
  const char* headers[] = {"#", "dp", "tp", "pp", "cp", "vpp", "mb", "zero", "recompute", "sp", "memory", "% cap",
                           "tokens/s/GPU", "MFU", "bubble / comm"};
  for (int c = 0; c < 15; ++c)
    ImGui::TableSetupColumn(headers[c], c == 0 ? ImGuiTableColumnFlags_DefaultSort : ImGuiTableColumnFlags_None);
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* sort = ImGui::TableGetSortSpecs(); sort && sort->SpecsCount > 0) {
    const ImGuiTableColumnSortSpecs& spec = sort->Specs[0];
    const auto key = [&](int i) -> double {
      const LayoutCandidate& c = top[size_t(i)];
      switch (spec.ColumnIndex) {
        case 1: return double(c.layout.dp);
        case 2: return double(c.layout.tp);
        case 3: return double(c.layout.pp);
        case 4: return double(c.layout.cp);
        case 5: return double(c.layout.vpp);
        case 6: return double(c.micro_batch);
        case 7: return double(c.layout.zero);
        case 8: return double(c.recompute);
        case 9: return c.sp ? 1.0 : 0.0;
        case 10: case 11: return c.device_bytes;
        case 12: return -c.step.tokens_per_s_per_gpu;
        case 13: return -c.step.mfu;
        case 14: return c.step.bubble_fraction;
        default: return double(i);
      }
    };
    std::stable_sort(rows.begin(), rows.end(), [&](int a, int b) {
      return spec.SortDirection == ImGuiSortDirection_Ascending ? key(a) < key(b) : key(a) > key(b);
    });
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    const int i = rows[r];
    const LayoutCandidate& c = top[size_t(i)];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    char id[32];
    std::snprintf(id, sizeof id, "%d##row%d", i + 1, i);
    if (ImGui::Selectable(id, i == s.selected_candidate, ImGuiSelectableFlags_SpanAllColumns)) {
      apply_candidate(s, c);
      changed = true;
    }
    if (r < 3) record_rect(s, ("layout_row_" + std::to_string(r)).c_str());
    const long long values[] = {c.layout.dp, c.layout.tp, c.layout.pp, c.layout.cp, c.layout.vpp, c.micro_batch, c.layout.zero};
    for (long long v : values) {
      ImGui::TableNextColumn();
      ImGui::Text("%lld", v);
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(to_string(c.recompute));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(c.layout.tp > 1 ? (c.sp ? "on" : "off") : "-");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_bytes(s, c.device_bytes, 1).c_str());
    ImGui::TableNextColumn();
    const double share = c.device_bytes / capacity;
    if (share >= s.form.headroom) ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(230, 160, 40, 255));
    ImGui::Text("%.0f%%", 100.0 * share);
    if (share >= s.form.headroom) ImGui::PopStyleColor();
    ImGui::TableNextColumn();
    ImGui::Text("%.0f", c.step.tokens_per_s_per_gpu);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%%", 100.0 * c.step.mfu);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%% / %.1f%%", 100.0 * c.step.breakdown.pp_bubble_s / c.step.step_time_s, 100.0 * exposed_comm_fraction(c));
  }
  ImGui::EndTable();
  return changed;
}

bool draw_scatter(AppState& s) {
  const std::vector<LayoutCandidate>& all = s.search.all;
  if (all.empty()) return false;
  const double capacity = s.estimate["capacity_bytes"].get<double>();
  double max_x = capacity * 1.1, max_y = 1;
  for (const LayoutCandidate& c : all) {
    max_x = std::max(max_x, std::min(c.device_bytes, capacity * 2.0));
    max_y = std::max(max_y, c.step.tokens_per_s_per_gpu);
  }
  max_x *= 1.02;
  max_y *= 1.08;
  const float em = s.em;
  const ImVec2 size(ImGui::GetContentRegionAvail().x, std::max(10.0f * em, ImGui::GetContentRegionAvail().y - 0.5f * em));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 plot_min(origin.x + 4.0f * em, origin.y + 0.5f * em), plot_max(origin.x + size.x - 0.5f * em, origin.y + size.y - 2.0f * em);
  const auto to_screen = [&](double bytes, double speed) {
    return ImVec2(plot_min.x + float(std::min(bytes, max_x) / max_x) * (plot_max.x - plot_min.x),
                  plot_max.y - float(speed / max_y) * (plot_max.y - plot_min.y));
  };
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  draw->AddRect(plot_min, plot_max, ImGui::GetColorU32(ImGuiCol_Border));
  draw->AddLine(to_screen(capacity, 0), to_screen(capacity, max_y), IM_COL32(235, 87, 87, 255), 1.5f);
  char label[64];
  std::snprintf(label, sizeof label, "peak device memory per GPU (%s); red: capacity", unit_label(s));
  draw->AddText(ImVec2(plot_min.x, plot_max.y + 0.4f * em), dim, label);
  draw->AddText(ImVec2(origin.x, plot_min.y), dim, "tok/s/GPU");
  std::snprintf(label, sizeof label, "%.0f", max_y);
  draw->AddText(ImVec2(origin.x, plot_min.y + 1.2f * em), dim, label);
  std::snprintf(label, sizeof label, "%.0f", unit_value(s, max_x));
  draw->AddText(ImVec2(plot_max.x - ImGui::CalcTextSize(label).x, plot_max.y + 0.4f * em), dim, label);

  const ImU32 feasible = IM_COL32(76, 140, 220, 200), infeasible = IM_COL32(220, 90, 90, 120);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int hovered = -1;
  float best_distance = 0.5f * em * 0.5f * em;
  for (int i = 0; i < int(all.size()); ++i) {
    const LayoutCandidate& c = all[size_t(i)];
    const ImVec2 p = to_screen(c.device_bytes, c.step.tokens_per_s_per_gpu);
    draw->AddCircleFilled(p, 0.18f * em, c.feasible ? feasible : infeasible, 8);
    const float dx = p.x - mouse.x, dy = p.y - mouse.y;
    if (dx * dx + dy * dy < best_distance) {
      best_distance = dx * dx + dy * dy;
      hovered = i;
    }
  }
  std::vector<ImVec2> front;
  for (const LayoutCandidate& c : s.search.pareto) front.push_back(to_screen(c.device_bytes, c.step.tokens_per_s_per_gpu));
  if (front.size() > 1) draw->AddPolyline(front.data(), int(front.size()), IM_COL32(60, 200, 120, 255), 0, 2.0f);
  if (s.selected_candidate >= 0) {
    const LayoutCandidate& c = s.search.top[size_t(s.selected_candidate)];
    draw->AddCircle(to_screen(c.device_bytes, c.step.tokens_per_s_per_gpu), 0.45f * em, ImGui::GetColorU32(ImGuiCol_Text), 0, 2.0f);
  }
  ImGui::InvisibleButton("scatter", size);
  bool changed = false;
  if (hovered >= 0 && ImGui::IsItemHovered()) {
    const LayoutCandidate& c = all[size_t(hovered)];
    ImGui::SetTooltip("%s\n%s, %s of capacity\n%.0f tokens/s/GPU, MFU %.1f%%\n%s", candidate_label(c).c_str(),
                      format_bytes(s, c.device_bytes).c_str(), c.feasible ? "within" : "over",
                      c.step.tokens_per_s_per_gpu, 100.0 * c.step.mfu, c.feasible ? "click to use it" : "does not fit");
    if (ImGui::IsItemClicked()) {
      apply_candidate(s, c);
      changed = true;
    }
  }
  return changed;
}

bool draw_layouts_view(AppState& s) {
  if (!s.search.valid()) {
    ImGui::TextWrapped("Fix the inputs marked on the left to search the layouts.");
    return false;
  }
  if (s.running_search) {
    ImGui::Text("Searching layouts: %.0f%%...", 100.0 * s.running_search->progress());
    ImGui::SameLine();
    if (ImGui::SmallButton("Cancel")) {
      s.running_search.reset();
      s.status = "Layout search cancelled: the layouts below are from the previous inputs.";
      update_mirror(s);
    }
    record_rect(s, "search_cancel");
    if (s.search_stale && s.search.evaluated > 0) ImGui::TextDisabled("(showing the previous result until it finishes)");
  } else if (s.search_stale) {
    ImGui::TextDisabled("Search cancelled: the layouts below are from the previous inputs.");
  }
  if (!s.search.complete)
    ImGui::TextWrapped("The search stopped at its work budget: the layouts below are the best found so far.");
  ImGui::Text("%lld layouts evaluated for %lld GPUs, %lld feasible.", (long long)s.search.evaluated,
              (long long)s.form.gpus, (long long)s.search.feasible);
  std::string rejected;
  for (int i = 0; i < kRejectReasonCount; ++i)
    if (s.search.rejected[size_t(i)] > 0)
      rejected += std::string(rejected.empty() ? "" : ", ") + to_string(RejectReason(i)) + " " +
                  std::to_string(s.search.rejected[size_t(i)]);
  ImGui::TextWrapped("Rejected: %s", rejected.empty() ? "none" : rejected.c_str());
  bool changed = draw_layout_table(s);
  ImGui::SeparatorText("All evaluated layouts: memory vs throughput (blue fits, red does not, green Pareto front)");
  changed |= draw_scatter(s);
  return changed;
}

}  // namespace

// [SECTION] Header, exports, frame

std::string markdown_report(const AppState& s) {
  const json& est = s.estimate;
  std::string out;
  char line[512];
  if (!est["ok"].get<bool>()) return "meshfit: the inputs have problems ({{url}})\n";
  const json& c = est["config"];
  std::snprintf(line, sizeof line, "**meshfit**: %s on %lld x %s, dp=%lld tp=%lld pp=%lld cp=%lld vpp=%lld, seq %lld, "
                "global batch %lld, micro-batch %lld, recompute %s, %s ([open](%s))\n\n",
                c["model"].get<std::string>().c_str(), c["gpus"].get<long long>(), c["gpu"].get<std::string>().c_str(),
                c["dp"].get<long long>(), c["tp"].get<long long>(), c["pp"].get<long long>(), c["cp"].get<long long>(),
                c["vpp"].get<long long>(), c["seq"].get<long long>(), c["global_batch"].get<long long>(),
                c["micro_batch"].get<long long>(), c["recompute"].get<std::string>().c_str(),
                c["framework"].get<std::string>().c_str(), "{{url}}");
  out += line;
  out += std::string("| rank (") + unit_label(s) + ") |";
  for (int i = 0; i < kComponentCount; ++i) out += std::string(" ") + component_label(Component(i)) + " |";
  out += " device | % of capacity |\n|---|";
  for (int i = 0; i < kComponentCount + 2; ++i) out += "---:|";
  out += "\n";
  const double capacity = est["capacity_bytes"].get<double>();
  for (const json& rank : est["ranks"]) {
    out += "| " + rank_name(rank, est["ranks"].size()) + " |";
    for (int i = 0; i < kComponentCount; ++i) {
      std::snprintf(line, sizeof line, " %.2f |", unit_value(s, rank["components"][to_string(Component(i))].get<double>()));
      out += line;
    }
    std::snprintf(line, sizeof line, " **%.2f** | %.0f%% |\n", unit_value(s, rank["device_bytes"].get<double>()),
                  100.0 * rank["device_bytes"].get<double>() / capacity);
    out += line;
  }
  std::snprintf(line, sizeof line, "\nVerdict: **%s** (capacity %s; tight at %.0f%%). Predicted %.0f tokens/s/GPU, MFU %.1f%%.\n",
                est["verdict"].get<std::string>().c_str(), format_bytes(s, capacity).c_str(),
                100.0 * est["headroom"].get<double>(), est["tokens_per_s_per_gpu"].get<double>(), 100.0 * est["mfu"].get<double>());
  out += line;
  if (!s.search.top.empty()) {
    out += "\nFastest layouts that fit:\n\n| # | dp | tp | pp | cp | vpp | mb | zero | recompute | memory | tokens/s/GPU | MFU |\n"
           "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
    for (size_t i = 0; i < std::min<size_t>(10, s.search.top.size()); ++i) {
      const LayoutCandidate& l = s.search.top[i];
      std::snprintf(line, sizeof line, "| %zu | %lld | %lld | %lld | %lld | %lld | %lld | %lld | %s | %s | %.0f | %.1f%% |\n",
                    i + 1, (long long)l.layout.dp, (long long)l.layout.tp, (long long)l.layout.pp, (long long)l.layout.cp,
                    (long long)l.layout.vpp, (long long)l.micro_batch, (long long)l.layout.zero, to_string(l.recompute),
                    format_bytes(s, l.device_bytes, 1).c_str(), l.step.tokens_per_s_per_gpu, 100.0 * l.step.mfu);
      out += line;
    }
  }
  return out;
}

std::string csv_report(const AppState& s) {
  std::string out = "role,pp_stage";
  for (int i = 0; i < kComponentCount; ++i) out += std::string(",") + to_string(Component(i)) + "_bytes";
  out += ",peak_allocated_bytes,peak_reserved_bytes,device_bytes\n";
  if (!s.estimate["ok"].get<bool>()) return out;
  char value[48];
  for (const json& rank : s.estimate["ranks"]) {
    out += rank["role"].get<std::string>() + "," + std::to_string(rank["pp_stage"].get<long long>());
    for (int i = 0; i < kComponentCount; ++i) {
      std::snprintf(value, sizeof value, ",%.0f", rank["components"][to_string(Component(i))].get<double>());
      out += value;
    }
    for (const char* key : {"peak_allocated_bytes", "peak_reserved_bytes", "device_bytes"}) {
      std::snprintf(value, sizeof value, ",%.0f", rank[key].get<double>());
      out += value;
    }
    out += "\n";
  }
  return out;
}

std::string json_report(const AppState& s) {
  json layouts = json::array();
  for (size_t i = 0; i < std::min<size_t>(20, s.search.top.size()); ++i) layouts.push_back(layout_candidate_to_json(s.search.top[i]));
  return json{{"state", s.state}, {"estimate", s.estimate}, {"layouts", layouts}}.dump(2);
}

namespace {

void draw_header(AppState& s) {
  const json& est = s.estimate;
  ImGui::TextUnformatted("meshfit");
  ImGui::SameLine();
  ImGui::TextDisabled("will it fit? per-rank training memory and the fastest layout");
  if (est["ok"].get<bool>()) {
    const std::string verdict = est["verdict"].get<std::string>();
    const ImU32 color = verdict == "fits" ? IM_COL32(60, 180, 100, 255) : verdict == "tight" ? IM_COL32(230, 160, 40, 255)
                                                                                           : IM_COL32(235, 87, 87, 255);
    const json& worst = est["ranks"][est["worst_rank"].get<size_t>()];
    char text[160];
    std::snprintf(text, sizeof text, "%s: worst rank %s uses %s of %s (%.0f%%)",
                  verdict == "fits" ? "FITS" : verdict == "tight" ? "TIGHT" : "OUT OF MEMORY",
                  rank_name(worst, est["ranks"].size()).c_str(), format_bytes(s, worst["device_bytes"].get<double>(), 1).c_str(),
                  format_bytes(s, est["capacity_bytes"].get<double>(), 1).c_str(),
                  100.0 * worst["device_bytes"].get<double>() / est["capacity_bytes"].get<double>());
    ImGui::SameLine(0, 2.0f * s.em);
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    ImGui::TextUnformatted(text);
    ImGui::PopStyleColor();
  } else {
    ImGui::SameLine(0, 2.0f * s.em);
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(235, 87, 87, 255));
    ImGui::TextUnformatted("invalid inputs: see the messages next to the fields");
    ImGui::PopStyleColor();
  }
  if (ImGui::Button("Copy link")) {
    s.outbox.clipboard = "{{url}}";
    s.status = "Link copied.";
  }
  record_rect(s, "copy_link");
  ImGui::SameLine();
  if (ImGui::Button("Copy as Markdown")) {
    s.outbox.clipboard = markdown_report(s);
    s.status = "Markdown copied: paste it in an issue.";
  }
  record_rect(s, "copy_markdown");
  ImGui::SameLine();
  if (ImGui::Button("Export JSON")) {
    s.outbox.download_name = "meshfit.json";
    s.outbox.download_text = json_report(s);
    s.outbox.download_mime = "application/json";
  }
  ImGui::SameLine();
  if (ImGui::Button("Export CSV")) {
    s.outbox.download_name = "meshfit-ranks.csv";
    s.outbox.download_text = csv_report(s);
    s.outbox.download_mime = "text/csv";
  }
  ImGui::SameLine();
  if (ImGui::Button(s.units_gb ? "Units: GB" : "Units: GiB")) s.units_gb = !s.units_gb;
  ImGui::SameLine();
  if (ImGui::Button(s.dark ? "Light theme" : "Dark theme")) {
    s.dark = !s.dark;
    apply_theme(s);
  }
  ImGui::SameLine();
  if (ImGui::Button("Formulas & sources")) s.outbox.open_docs = true;
  if (!s.status.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", s.status.c_str());
  }
  for (const json& issue : s.link_issues)
    ImGui::TextColored(ImVec4(0.95f, 0.45f, 0.35f, 1.0f), "Link: %s", issue["message"].get_ref<const std::string&>().c_str());
}

}  // namespace

bool draw(AppState& s) {
  if (s.dirty) recompute(s);
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->Pos);
  ImGui::SetNextWindowSize(viewport->Size);
  ImGui::Begin("meshfit", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus |
                   ImGuiWindowFlags_NoSavedSettings);
  draw_header(s);
  ImGui::Separator();
  bool changed = false;
  const float sidebar = 17.0f * s.em;
  if (ImGui::BeginChild("inputs", ImVec2(sidebar, 0), true)) changed |= draw_inputs(s);
  ImGui::EndChild();
  ImGui::SameLine();
  if (ImGui::BeginChild("results", ImVec2(0, 0), false)) {
    if (ImGui::BeginTabBar("views")) {
      const bool memory_open = ImGui::BeginTabItem("Per-rank memory");
      record_rect(s, "tab_memory");
      if (memory_open) {
        draw_memory_view(s);
        ImGui::EndTabItem();
      }
      const bool layouts_open = ImGui::BeginTabItem("Layouts");
      record_rect(s, "tab_layouts");
      if (layouts_open) {
        changed |= draw_layouts_view(s);
        ImGui::EndTabItem();
      }
      ImGui::EndTabBar();
    }
  }
  ImGui::EndChild();
  ImGui::End();
  if (changed) s.dirty = true;
  return changed;
}

}  // namespace meshfit::ui
