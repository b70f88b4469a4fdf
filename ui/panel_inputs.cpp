// panel_inputs.cpp — the inputs panel: model, hardware, training, layout and verdict threshold.
// Edits the AppState's Config in place. The degree and ZeRO choosers offer what structure.h and
// the framework profile allow, the same rules validate() and the layout search apply.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/import_export.h"
#include "io/launch_config.h"
#include "io/number_text.h"
#include "io/serialize.h"
#include "spec/validate.h"
#include "panels.h"  // imgui.h, before its std::string helpers
#include "imgui_internal.h"  // GetActiveID: a field being typed in is not overwritten
#include "misc/cpp/imgui_stdlib.h"
#include "spec/structure.h"
#include "units.h"

namespace meshfit::ui {

namespace {

// A count field that reads what was typed ("8k", "4,096", "1e4": core's parse_count_text) and
// commits on Enter or when it loses focus, never per keystroke (so a slow search never blocks
// typing). Text that is not a whole number in range stays in the field with its message beside it
// and the config keeps its last good value.
bool input_count(AppState& s, const char* label, const char* field, int64_t& value, int64_t max) {
  ImGui::TextUnformatted(label);
  ImGui::SetNextItemWidth(-FLT_MIN);
  const std::string id = std::string("##") + field;
  std::string& text = s.field_text[field];
  const bool refused = s.text_errors.count(field) > 0;
  if (ImGui::GetActiveID() != ImGui::GetID(id.c_str()) && !refused) text = std::to_string(value);
  ImGui::InputText(id.c_str(), &text, ImGuiInputTextFlags_AutoSelectAll);
  const bool commit = ImGui::IsItemDeactivatedAfterEdit() ||
                      (ImGui::IsItemActive() && (ImGui::IsKeyPressed(ImGuiKey_Enter) || ImGui::IsKeyPressed(ImGuiKey_KeypadEnter)));
  record_rect(s, field);
  bool changed = false;
  if (commit) {
    const CountText parsed = parse_count_text(text, max);
    if (parsed.ok) {
      s.text_errors.erase(field);
      changed = parsed.value != value;
      value = parsed.value;
      text = std::to_string(value);
    } else {
      s.text_errors[field] = parsed.message;
    }
    if (!changed) s.dirty = true;  // the mirror reports the refusal (or its end)
  }
  if (const auto it = s.text_errors.find(field); it != s.text_errors.end()) {
    ImGui::PushStyleColor(ImGuiCol_Text, error_text_color(s));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(it->second.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
  } else {
    field_issue(s, field);
  }
  return changed;
}

// A combo over an enum's name table (display labels; aliases are not offered).
template <typename Enum>
bool combo_enum(const char* id, Enum& value) {
  bool changed = false;
  if (ImGui::BeginCombo(id, enum_label(value))) {
    for (const EnumName<Enum>& entry : EnumNames<Enum>::table) {
      if (entry.label == nullptr) continue;
      if (ImGui::Selectable(entry.label, entry.value == value)) {
        value = entry.value;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

// A degree chooser that offers only the values valid for the rest of the inputs, plus the current
// value when it is not one of them (so a bad value from a link shows, with its message).
bool degree_combo(AppState& s, const char* field, int64_t& value, const std::vector<int64_t>& valid) {
  ImGui::TextUnformatted(field);
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

bool draw_model(AppState& s) {
  ModelSpec& m = s.config.model;
  bool changed = false;
  ImGui::SeparatorText("Model");
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (ImGui::BeginCombo("##model", m.name.c_str())) {
    for (const ModelPreset& preset : model_presets()) {
      if (ImGui::Selectable(preset.id, m.name == preset.id)) {
        m = preset.spec;
        changed = true;
      }
    }
    if (ImGui::Selectable("custom", m.name == "custom")) {
      m.name = "custom";
      changed = true;
    }
    ImGui::EndCombo();
  }
  record_rect(s, "model");
  field_issue(s, "model");
  if (m.name != "custom") {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("hidden %lld, %lld layers, %lld heads (%lld kv), ffn %lld, vocab %lld", (long long)m.hidden,
                       (long long)m.layers, (long long)m.heads, (long long)m.kv_heads, (long long)m.ffn, (long long)m.vocab);
    ImGui::PopStyleColor();
    if (ImGui::SmallButton("Edit dimensions")) {
      m.name = "custom";  // every architecture field stays, biases and dropout included
      changed = true;
    }
    record_rect(s, "edit_dimensions");
  } else {
    changed |= input_count(s, "hidden", "hidden", m.hidden, kMaxHidden);
    changed |= input_count(s, "layers", "layers", m.layers, kMaxLayers);
    changed |= input_count(s, "attention heads", "heads", m.heads, kMaxHeads);
    changed |= input_count(s, "key/value heads", "kv_heads", m.kv_heads, kMaxHeads);
    changed |= input_count(s, "ffn", "ffn", m.ffn, kMaxFfn);
    changed |= input_count(s, "vocab", "vocab", m.vocab, kMaxVocab);
    changed |= ImGui::Checkbox("tied embeddings", &m.tied_embeddings);
    changed |= ImGui::Checkbox("linear biases", &m.linear_bias);
    changed |= ImGui::Checkbox("dropout", &m.dropout);
    ImGui::SetNextItemWidth(-FLT_MIN);
    changed |= combo_enum("##norm", m.norm);
    ImGui::SetNextItemWidth(-FLT_MIN);
    changed |= combo_enum("##mlp", m.mlp);
  }
  // One box for every launch config people paste; the format is detected (core/io/launch_config.h).
  const bool hf_open = ImGui::TreeNode("Paste config");
  record_rect(s, "hf_toggle");
  if (hf_open) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("An HF config.json, a Megatron-LM command line, a torchtitan TOML or a DeepSpeed JSON.");
    ImGui::PopTextWrapPos();
    ImGui::InputTextMultiline("##hf", &s.hf_text, ImVec2(-FLT_MIN, 6.0f * s.em));
    record_rect(s, "hf_config");
    if (ImGui::Button("Import")) {
      s.hf_message.clear();
      const std::optional<LaunchFormat> format = detect_launch_format(s.hf_text);
      if (!format) {
        s.hf_message = "Not a config.json, a Megatron-LM command line, a torchtitan TOML or a DeepSpeed JSON.";
      } else {
        const LaunchImport imported = import_launch_config(*format, s.hf_text);
        std::vector<Issue> issues = imported.issues;
        const Config before = s.config;
        s.config = apply_import(s.config, imported, issues);
        const bool applied = imported.ok() && !has_errors(issues);
        s.hf_message = std::string(applied ? "Imported as " : "Not imported (") + enum_label(*format) + (applied ? "." : "):");
        for (const Issue& issue : issues) s.hf_message += std::string("\n") + (issue.severity == Severity::kError ? "error: " : "note: ") + issue.message;
        changed |= applied;
        if (!applied) s.config = before;
      }
    }
    record_rect(s, "hf_import");
    if (!s.hf_message.empty()) ImGui::TextWrapped("%s", s.hf_message.c_str());
    ImGui::TreePop();
  }
  return changed;
}

// A non-negative finite figure in display units (value_bytes = shown * scale); anything else typed
// is refused and the figure keeps its value, so no NaN or inf reaches the model.
bool input_figure(AppState& s, const char* label, const char* id, double& value, double scale, const char* format) {
  ImGui::TextUnformatted(label);
  ImGui::SetNextItemWidth(-FLT_MIN);
  double shown = value / scale;
  bool changed = false;
  if (ImGui::InputDouble(id, &shown, 0.0, 0.0, format) && std::isfinite(shown) && shown >= 0 && shown * scale < 1e30) {
    value = shown * scale;
    changed = true;
  }
  record_rect(s, id + 2);
  return changed;
}

// Every figure of a custom GPU: compute, memory bandwidth, interconnect and NVLink domain size.
bool draw_custom_gpu_figures(AppState& s) {
  GpuSpec& g = s.config.gpu;
  bool changed = false;
  changed |= input_figure(s, "dense BF16 TFLOPS", "##gpu_bf16_tflops", g.bf16_flops, 1e12, "%.0f");
  changed |= input_figure(s, "dense FP8 TFLOPS (0 = none)", "##gpu_fp8_tflops", g.fp8_flops, 1e12, "%.0f");
  changed |= input_figure(s, "HBM bandwidth (TB/s)", "##gpu_hbm_tbps", g.hbm_bytes_per_s, 1e12, "%.2f");
  changed |= input_figure(s, "NVLink per GPU (GB/s)", "##gpu_nvlink_gbps", g.nvlink_bytes_per_s, 1e9, "%.0f");
  changed |= input_figure(s, "network per GPU (GB/s)", "##gpu_nic_gbps", g.internode_bytes_per_s, 1e9, "%.1f");
  int64_t domain = g.nvlink_domain;
  if (input_count(s, "NVLink domain (GPUs)", "gpu_nvlink_domain", domain, kMaxGpus) && domain >= 1) {
    g.nvlink_domain = domain;
    changed = true;
  }
  return changed;
}

bool draw_hardware(AppState& s) {
  Config& c = s.config;
  bool changed = false;
  ImGui::SeparatorText("Hardware");
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (ImGui::BeginCombo("##gpu", c.gpu.name.c_str())) {
    for (const GpuPreset& preset : gpu_presets())
      if (ImGui::Selectable(preset.spec.name.c_str(), c.gpu.id == preset.id)) {
        c.gpu = preset.spec;
        s.override_memory = false;
        changed = true;
      }
    if (ImGui::Selectable("Custom GPU", c.gpu.id == "custom")) {
      // Every figure prefilled from the GPU chosen so far (the nearest preset), then edited.
      c.gpu.id = "custom";
      c.gpu.name = "Custom GPU";
      changed = true;
    }
    ImGui::EndCombo();
  }
  record_rect(s, "gpu");
  field_issue(s, "gpu");
  if (c.gpu.id != "custom" && ImGui::Checkbox("override memory", &s.override_memory)) {
    if (!s.override_memory)
      if (auto preset = find_gpu_preset(c.gpu.id)) c.gpu.memory_bytes = preset->memory_bytes;
    changed = true;
  }
  if (c.gpu.id == "custom" || s.override_memory) {
    ImGui::TextUnformatted("memory (GiB)");
    ImGui::SetNextItemWidth(-FLT_MIN);
    double gib = bytes_to_gib(c.gpu.memory_bytes);
    if (ImGui::InputDouble("##gpu_memory_gib", &gib, 1.0, 8.0, "%.2f")) {
      c.gpu.memory_bytes = gib_to_bytes(gib);
      changed = true;
    }
    field_issue(s, "gpu_memory_gib");
  }
  if (c.gpu.id == "custom") changed |= draw_custom_gpu_figures(s);
  changed |= input_count(s, "GPUs", "gpus", c.cluster.gpus, kMaxGpus);
  changed |= input_count(s, "GPUs per node", "gpus_per_node", c.cluster.gpus_per_node, kMaxGpus);
  return changed;
}

bool draw_training(AppState& s) {
  TrainingSpec& t = s.config.training;
  bool changed = false;
  ImGui::SeparatorText("Training");
  changed |= input_count(s, "sequence length", "seq", t.seq, kMaxSeq);
  changed |= input_count(s, "global batch (sequences)", "global_batch", t.global_batch, kMaxBatch);
  changed |= input_count(s, "micro-batch", "micro_batch", t.micro_batch, kMaxBatch);
  ImGui::TextUnformatted("framework");
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (combo_enum("##framework", t.framework)) {
    // A stage the new framework does not offer becomes its default (FSDP: full sharding).
    const FrameworkProfile& profile = framework_profile(t.framework);
    if (!profile.offers_zero(s.config.layout.zero)) s.config.layout.zero = profile.default_zero;
    changed = true;
  }
  record_rect(s, "framework");
  ImGui::TextUnformatted("recompute");
  ImGui::SetNextItemWidth(-FLT_MIN);
  changed |= combo_enum("##recompute", t.recompute);
  ImGui::TextUnformatted("precision / optimizer");
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  ImGui::SetNextItemWidth(half);
  changed |= combo_enum("##precision", t.precision);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(half);
  changed |= combo_enum("##optimizer", t.optimizer);
  field_issue(s, "precision");
  ImGui::TextUnformatted("cross-entropy / allocator");
  ImGui::SetNextItemWidth(half);
  changed |= combo_enum("##loss", t.loss);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(half);
  changed |= combo_enum("##allocator", t.allocator);
  changed |= ImGui::Checkbox("FlashAttention", &t.flash);
  changed |= ImGui::Checkbox("sequence parallelism (with tp > 1)", &t.sp);
  changed |= ImGui::Checkbox("torch.compile", &t.compile);
  ImGui::SameLine();
  changed |= ImGui::Checkbox("AsyncTP", &t.async_tp);
  return changed;
}

bool draw_layout(AppState& s) {
  Config& c = s.config;
  Layout& l = c.layout;
  bool changed = false;
  ImGui::SeparatorText("Layout");
  bool pipeline_changed = false;
  ImGui::PushItemWidth(-FLT_MIN);
  if (ImGui::BeginTable("degrees", 2, ImGuiTableFlags_SizingStretchSame)) {
    ImGui::TableNextColumn();
    changed |= degree_combo(s, "tp", l.tp, tp_choices(c));
    ImGui::TableNextColumn();
    pipeline_changed |= degree_combo(s, "pp", l.pp, pp_choices(c));
    ImGui::TableNextColumn();
    changed |= degree_combo(s, "cp", l.cp, cp_choices(c));
    ImGui::TableNextColumn();
    pipeline_changed |= degree_combo(s, "vpp", l.vpp, vpp_choices(c));
    ImGui::EndTable();
  }
  ImGui::PopItemWidth();
  if (pipeline_changed) {
    if (l.pp == 1) l.vpp = 1;
    choose_pipeline_split(c.model.layers, framework_profile(c.training.framework), l);  // as the search does
    changed = true;
  }
  if (l.pp_first_stage_layers > 0 || l.pp_last_stage_layers > 0)
    ImGui::TextDisabled("uneven split: first stage %lld, last stage %lld layers", (long long)l.pp_first_stage_layers,
                        (long long)l.pp_last_stage_layers);
  field_issue(s, "pp_first_stage_layers");
  if (spatial_temporal(l)) {
    ImGui::PushStyleColor(ImGuiCol_Text, warning_text_color(s));
    ImGui::TextWrapped("tp = %lld conventional x %lldx%lld spatial-temporal square (PrimePar-style): %s.",
                       (long long)(l.tp / (l.st_q * l.st_q)), (long long)l.st_q, (long long)l.st_q, kSpatialTemporalNote);
    ImGui::PopStyleColor();
    if (ImGui::SmallButton("Use Megatron TP instead")) {
      l.st_q = 1;
      changed = true;
    }
    record_rect(s, "spatial_temporal_off");
  }
  field_issue(s, "spatial_temporal_q");
  const int64_t mesh = l.tp * l.pp * l.cp;
  if (mesh > 0 && c.cluster.gpus % mesh == 0)
    ImGui::TextDisabled("dp = gpus / (tp*pp*cp) = %lld", (long long)(c.cluster.gpus / mesh));
  field_issue(s, "dp");
  field_issue(s, "gpus");
  const FrameworkProfile& profile = framework_profile(c.training.framework);
  ImGui::TextUnformatted(c.training.framework == Framework::kMegatron ? "distributed optimizer" : "ZeRO stage");
  ImGui::SetNextItemWidth(-FLT_MIN);
  const char* preview = profile.offers_zero(l.zero) ? profile.zero_stages[size_t(l.zero)] : "?";
  if (ImGui::BeginCombo("##zero", preview)) {
    for (int64_t option : zero_choices(c.training.framework)) {
      if (ImGui::Selectable(profile.zero_stages[size_t(option)], option == l.zero)) {
        l.zero = option;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  record_rect(s, "zero");
  field_issue(s, "zero");
  field_issue(s, "global_batch");
  if (!s.search.top.empty() && ImGui::Button("Use the fastest layout", ImVec2(-FLT_MIN, 0))) {
    apply_candidate(s, s.search.top.front());
    changed = true;
  }
  record_rect(s, "best_layout");
  return changed;
}

}  // namespace

bool draw_inputs(AppState& s) {
  bool changed = draw_model(s);
  changed |= draw_hardware(s);
  changed |= draw_training(s);
  changed |= draw_layout(s);
  ImGui::SeparatorText("Verdict");
  ImGui::TextUnformatted("tight at (fraction of capacity)");
  ImGui::SetNextItemWidth(-FLT_MIN);
  const double headroom_min = 0.5, headroom_max = 1.0;
  changed |= ImGui::SliderScalar("##headroom", ImGuiDataType_Double, &s.config.training.headroom, &headroom_min,
                                 &headroom_max, "%.2f");
  field_issue(s, "headroom");
  return changed;
}

}  // namespace meshfit::ui
