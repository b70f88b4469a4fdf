// panel_inputs.cpp — the inputs panel: model, hardware, training, layout and verdict threshold.
// Edits the AppState's Config in place. The degree and ZeRO choosers offer what structure.h and
// the framework profile allow, the same rules validate() and the layout search apply.
#include <algorithm>
#include <cstdio>

#include "io/import_export.h"
#include "panels.h"  // imgui.h, before its std::string helpers
#include "misc/cpp/imgui_stdlib.h"
#include "spec/structure.h"
#include "units.h"

namespace meshfit::ui {

namespace {

bool input_count(AppState& s, const char* label, const char* field, int64_t& value, int64_t step = 1) {
  ImGui::TextUnformatted(label);
  const int64_t step_fast = step * 8;
  const std::string id = std::string("##") + field;
  ImGui::SetNextItemWidth(-FLT_MIN);
  const bool changed = ImGui::InputScalar(id.c_str(), ImGuiDataType_S64, &value, &step, &step_fast, "%lld");
  record_rect(s, field);
  field_issue(s, field);
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
    changed |= input_count(s, "hidden", "hidden", m.hidden, 128);
    changed |= input_count(s, "layers", "layers", m.layers);
    changed |= input_count(s, "attention heads", "heads", m.heads);
    changed |= input_count(s, "key/value heads", "kv_heads", m.kv_heads);
    changed |= input_count(s, "ffn", "ffn", m.ffn, 128);
    changed |= input_count(s, "vocab", "vocab", m.vocab, 128);
    changed |= ImGui::Checkbox("tied embeddings", &m.tied_embeddings);
    changed |= ImGui::Checkbox("linear biases", &m.linear_bias);
    changed |= ImGui::Checkbox("dropout", &m.dropout);
    ImGui::SetNextItemWidth(-FLT_MIN);
    changed |= combo_enum("##norm", m.norm);
    ImGui::SetNextItemWidth(-FLT_MIN);
    changed |= combo_enum("##mlp", m.mlp);
  }
  const bool hf_open = ImGui::TreeNode("Paste HF config.json");
  record_rect(s, "hf_toggle");
  if (hf_open) {
    ImGui::InputTextMultiline("##hf", &s.hf_text, ImVec2(-FLT_MIN, 6.0f * s.em));
    record_rect(s, "hf_config");
    if (ImGui::Button("Import")) {
      const HfImport imported = import_hf_config(s.hf_text);
      s.hf_message.clear();
      if (imported.ok()) {
        m = imported.model;  // the whole architecture as imported
        s.hf_message = "Imported " + imported.model_type + ".";
        changed = true;
      } else {
        for (const Issue& issue : imported.issues) s.hf_message += issue.message + "\n";
      }
    }
    record_rect(s, "hf_import");
    if (!s.hf_message.empty()) ImGui::TextWrapped("%s", s.hf_message.c_str());
    ImGui::TreePop();
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
      const double memory_bytes = c.gpu.memory_bytes;
      c.gpu = GpuSpec{};
      c.gpu.memory_bytes = memory_bytes;
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
  changed |= input_count(s, "GPUs", "gpus", c.cluster.gpus, 8);
  changed |= input_count(s, "GPUs per node", "gpus_per_node", c.cluster.gpus_per_node);
  return changed;
}

bool draw_training(AppState& s) {
  TrainingSpec& t = s.config.training;
  bool changed = false;
  ImGui::SeparatorText("Training");
  changed |= input_count(s, "sequence length", "seq", t.seq, 1024);
  changed |= input_count(s, "global batch (sequences)", "global_batch", t.global_batch, 64);
  changed |= input_count(s, "micro-batch", "micro_batch", t.micro_batch);
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
  changed |= ImGui::Checkbox("FlashAttention", &t.flash);
  changed |= ImGui::Checkbox("sequence parallelism (with tp > 1)", &t.sp);
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
