// panel_inputs.cpp — the inputs panel: model, hardware, training, layout and verdict threshold.
// Edits the AppState's Config in place. The degree and ZeRO choosers offer what structure.h and
// the framework profile allow, the same rules validate() and the layout search apply. Also the
// panel's accessible twin: describe_form lists the same fields in the same order (label, value,
// choices, message) for the page's DOM form, and set_form_field applies what is typed there
// through the config schema's setters (core/spec/config_schema.h), as the panel's widgets do.
//
// Index
// [SECTION] Field tables (labels, limits, units: one row each, for the panel and its DOM twin)
// [SECTION] Widgets
// [SECTION] Panel
// [SECTION] DOM form (describe_form, set_form_field)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "app.h"
#include "io/import_export.h"
#include "io/launch_config.h"
#include "io/number_text.h"
#include "io/serialize.h"
#include "memory/finetune.h"
#include "perf/perf_model.h"
#include "spec/validate.h"
#include "panels.h"  // imgui.h, before its std::string helpers
#include "imgui_internal.h"  // GetActiveID: a field being typed in is not overwritten
#include "misc/cpp/imgui_stdlib.h"
#include "spec/config_schema.h"
#include "spec/structure.h"
#include "units.h"

namespace meshfit::ui {

namespace {

// A pasted or fetched import over the current inputs: applied when usable (the rest of the inputs
// kept), every issue listed under the box (nothing dropped silently). Returns whether it applied.
bool import_into(AppState& s, const LaunchImport& imported, const std::string& source) {
  std::vector<Issue> issues = imported.issues;
  const Config before = s.config;
  s.config = apply_import(s.config, imported, issues);
  const bool applied = imported.ok() && !has_errors(issues);
  s.hf_message = std::string(applied ? "Imported as " : "Not imported (") + source + (applied ? "." : "):");
  for (const Issue& issue : issues) {
    // "give --gpus" is the CLI's answer; here the field is on the page and keeps its value.
    const ConfigField* field = find_config_field(issue.field);
    if (issue.code == IssueCode::kMissingModel && issue.severity == Severity::kWarning && field &&
        !imported.fields.contains(issue.field) && issue.message.find("give --") != std::string::npos) {
      const nlohmann::json kept = field->get(s.config);
      s.hf_message += "\nnote: " + issue.message.substr(0, issue.message.find("give --")) + "the page's " + issue.field + " (" +
                      (kept.is_string() ? kept.get<std::string>() : kept.dump()) + ") is kept.";
      continue;
    }
    s.hf_message += std::string("\n") + (issue.severity == Severity::kError ? "error: " : "note: ") + issue.message;
  }
  if (!applied) s.config = before;
  return applied;
}

// [SECTION] Field tables (labels, limits, units: one row each, for the panel and its DOM twin)

struct CountField {
  const char* field;  // schema key (config_schema.h), also the widget's mirror name
  const char* label;
  int64_t max;        // input_limits.h
};
constexpr CountField kCountFields[] = {
    {"hidden", "hidden", kMaxHidden},
    {"layers", "layers", kMaxLayers},
    {"heads", "attention heads", kMaxHeads},
    {"kv_heads", "key/value heads", kMaxHeads},
    {"head_dim", "head dim (0 = hidden / heads)", kMaxHeadDim},
    {"ffn", "ffn", kMaxFfn},
    {"vocab", "vocab", kMaxVocab},
    {"gpu_nvlink_domain", "NVLink domain (GPUs)", kMaxGpus},
    {"gpu_sms", "SMs / compute units (0 = unknown)", kMaxGpuSms},
    {"gpus", "GPUs", kMaxGpus},
    {"gpus_per_node", "GPUs per node", kMaxGpus},
    {"seq", "sequence length", kMaxSeq},
    {"global_batch", "global batch (sequences)", kMaxBatch},
    {"micro_batch", "micro-batch", kMaxBatch},
    {"recompute_layers", "recomputed layers per stage (0 = all)", kMaxLayers},
    {"lora_rank", "LoRA rank r", kMaxHidden},
};
const CountField* find_count_field(const std::string& field) {
  for (const CountField& row : kCountFields)
    if (field == row.field) return &row;
  return nullptr;
}

}  // namespace

bool is_count_field(const std::string& field) { return find_count_field(field) != nullptr; }

namespace {

// A custom GPU's figures as the panel shows them: stored value = shown value * scale.
struct FigureField {
  const char* field;
  const char* label;
  double GpuSpec::*member;
  double scale;
  const char* format;
};
const FigureField kFigureFields[] = {
    {"gpu_bf16_tflops", "dense BF16 TFLOPS", &GpuSpec::bf16_flops, 1e12, "%.0f"},
    {"gpu_fp8_tflops", "dense FP8 TFLOPS (0 = none)", &GpuSpec::fp8_flops, 1e12, "%.0f"},
    {"gpu_hbm_tbps", "HBM bandwidth (TB/s)", &GpuSpec::hbm_bytes_per_s, 1e12, "%.2f"},
    {"gpu_nvlink_gbps", "NVLink per GPU (GB/s)", &GpuSpec::nvlink_bytes_per_s, 1e9, "%.0f"},
    {"gpu_nic_gbps", "network per GPU (GB/s)", &GpuSpec::internode_bytes_per_s, 1e9, "%.1f"},
};

// Checkboxes: schema key and label (their values go through the schema row's get/set).
struct FlagField {
  const char* field;
  const char* label;
};
constexpr FlagField kModelFlags[] = {
    {"tied_embeddings", "tied embeddings"}, {"linear_bias", "linear biases"}, {"dropout", "dropout"}, {"qk_norm", "QK-norm"}};
constexpr FlagField kTrainingFlags[] = {{"flash", "FlashAttention"},
                                        {"sp", "sequence parallelism (with tp > 1)"},
                                        {"async_tp", "Async TP (torch.compile)"}};

// torchao float8 under FSDP2 (torchtitan [float8] enable_fsdp_float8_all_gather): offered where it
// applies, and wherever it is on (so that a conflicting value can be turned off).
constexpr FlagField kFp8AllGather = {"fp8_all_gather", "fp8 param all-gather"};
// torchtune enable_activation_offloading: beside recompute, whose saved tensors it moves.
constexpr FlagField kOffloadActivations = {"offload_activations", "offload activations to CPU"};
// PEFT use_dora / torchtune use_dora: beside the adapters it decomposes.
constexpr FlagField kDora = {"dora", "DoRA (weight-decomposed LoRA)"};
// PEFT modules_to_save: the embedding or the head trained in full beside the adapters.
constexpr FlagField kTrainedModules[] = {{kModulesToSave[0].key, kModulesToSave[0].label},
                                         {kModulesToSave[1].key, kModulesToSave[1].label}};
bool shows_fp8_all_gather(const TrainingSpec& t) {
  return t.fp8_all_gather ||
         ((t.framework == Framework::kFsdp || t.framework == Framework::kMegatron) && t.precision == Precision::kFp8);
}

// The verdict threshold's range (the slider's and the DOM field's).
constexpr double kHeadroomMin = 0.5, kHeadroomMax = 1.0;

// [SECTION] Widgets

// A count field that reads what was typed ("8k", "4,096", "1e4": core's parse_count_text) and
// commits on Enter or when it loses focus, never per keystroke (so a slow search never blocks
// typing). Text that is not a whole number in range stays in the field with its message beside it
// and the config keeps its last good value.
bool input_count(AppState& s, const char* field, int64_t& value) {
  const CountField& row = *find_count_field(field);
  const int64_t max = row.max;
  ImGui::TextUnformatted(row.label);
  ImGui::SetNextItemWidth(-FLT_MIN);
  const std::string id = std::string("##") + field;
  std::string& text = s.field_text[field];
  const bool refused = s.text_errors.count(field) > 0;
  if (ImGui::GetActiveID() != ImGui::GetID(id.c_str()) && !refused) text = std::to_string(value);
  ImGui::InputText(id.c_str(), &text, ImGuiInputTextFlags_AutoSelectAll);
  if (ImGui::IsItemActive()) s.text_field_numeric = true;  // a phone shows its number pad
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

// A checkbox on a boolean schema field.
bool checkbox_field(AppState& s, const FlagField& flag) {
  const ConfigField* schema = find_config_field(flag.field);
  bool value = schema->get(s.config).get<bool>();
  const bool changed = ImGui::Checkbox(flag.label, &value);
  if (changed) schema->set(s.config, value);
  record_rect(s, flag.field);
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

// A combo on a line of its own under its label (two side by side cut "bf16 mixed (fp32 master)" to
// "bf16 mixed (f" in the 17 em panel, and a phone's column is no wider), its rectangle recorded as `key`.
template <typename Enum>
bool combo_line(AppState& s, const char* label, const char* key, Enum& value) {
  ImGui::TextUnformatted(label);
  ImGui::SetNextItemWidth(-FLT_MIN);
  const bool changed = combo_enum(("##" + std::string(key)).c_str(), value);
  record_rect(s, key);
  return changed;
}

constexpr const char* kReplicasLabel = "shard-group replicas (dp_replicate)";

// The dp_replicate chooser shows where the framework replicates shard groups at this ZeRO stage, and
// wherever a value other than 1 needs putting right.
bool shows_replicas(const Config& c) {
  const FrameworkProfile& profile = framework_profile(c.training.framework);
  return c.layout.dp_replicate != 1 || (profile.replicas_mechanism != nullptr && c.layout.zero >= profile.replicas_from_zero);
}

constexpr const char* kHpzLabel = "hpZ ranks (hpz_partition_size)";

// DeepSpeed ZeRO++ hpZ's chooser: at ZeRO-3 with tp 1, and wherever a value other than 1 needs
// putting right.
bool shows_hpz(const Config& c) {
  return c.layout.hpz_partition_size != 1 ||
         (c.training.framework == Framework::kDeepSpeed && c.layout.zero == 3 && c.layout.tp == 1 && c.layout.dp_replicate == 1);
}

// A degree chooser that offers only the values valid for the rest of the inputs, plus the current
// value when it is not one of them (so a bad value from a link shows, with its message).
bool degree_combo(AppState& s, const char* field, int64_t& value, const std::vector<int64_t>& valid,
                  const char* label = nullptr) {
  ImGui::TextUnformatted(label != nullptr ? label : field);
  ImGui::SetNextItemWidth(-FLT_MIN);
  char preview[32];
  // Marked invalid when it is not a valid choice, unless there are no choices because another field is
  // wrong (tp=3 on 8 GPUs left pp and cp "1 (invalid)": an as-a-user review) and this one has no issue.
  const bool is_valid = std::find(valid.begin(), valid.end(), value) != valid.end() ||
                        (valid.empty() && s.field_issues.count(field) == 0);
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
    if (m.head_dim > 0 && m.head_dim * m.heads != m.hidden)
      ImGui::TextWrapped("head dim %lld (not hidden / heads)", (long long)m.head_dim);
    ImGui::PopStyleColor();
    if (inline_button(s, "Edit dimensions")) {
      m.name = "custom";  // every architecture field stays, biases and dropout included
      changed = true;
    }
    record_rect(s, "edit_dimensions");
  } else {
    changed |= input_count(s, "hidden", m.hidden);
    changed |= input_count(s, "layers", m.layers);
    changed |= input_count(s, "heads", m.heads);
    changed |= input_count(s, "kv_heads", m.kv_heads);
    changed |= input_count(s, "head_dim", m.head_dim);
    changed |= input_count(s, "ffn", m.ffn);
    changed |= input_count(s, "vocab", m.vocab);
    for (const FlagField& flag : kModelFlags) changed |= checkbox_field(s, flag);
    ImGui::SetNextItemWidth(-FLT_MIN);
    changed |= combo_enum("##norm", m.norm);
    record_rect(s, "norm");
    ImGui::SetNextItemWidth(-FLT_MIN);
    changed |= combo_enum("##mlp", m.mlp);
    record_rect(s, "mlp");
  }
  // One box for every launch config people paste; the format is detected (core/io/launch_config.h).
  // A fetched config.json (the shell's answer to the Fetch button) takes the same path.
  if (s.hf_fetch.arrived) {
    s.hf_fetch.arrived = s.hf_fetch.waiting = false;
    if (s.hf_fetch.status == 200 && s.hf_fetch.body.size() <= kMaxImportBytes) s.hf_text = s.hf_fetch.body;
    changed |= import_into(s, import_fetched_hf_config(s.hf_fetch.fetched_id, s.hf_fetch.status, s.hf_fetch.body),
                           "Hugging Face config.json, fetched for " + s.hf_fetch.fetched_id);
    s.hf_fetch.body.clear();
    refresh_mirror(s);
  }
  // A frame's height on a phone, a finger's target (16 px as a plain tree node).
  const bool hf_open = ImGui::TreeNodeEx("Paste config", narrow_window(s) ? ImGuiTreeNodeFlags_Framed | ImGuiTreeNodeFlags_FramePadding : 0);
  record_rect(s, "hf_toggle");
  if (hf_open) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("An HF config.json, a Megatron-LM command line, a torchtitan TOML, a DeepSpeed JSON or a meshfit JSON.");
    ImGui::PopTextWrapPos();
    ImGui::InputTextMultiline("##hf", &s.hf_text, ImVec2(-FLT_MIN, 6.0f * s.em));
    record_rect(s, "hf_config");
    if (ImGui::Button("Import")) {
      s.hf_message.clear();
      const std::optional<LaunchFormat> format = detect_launch_format(s.hf_text);
      if (!format) {
        const std::string what = unimported_format(s.hf_text);
        s.hf_message = what.empty() ? std::string("Not ") + kImportFormatsText + "."
                                    : "This is " + what + ", which meshfit exports but does not read: paste " + kImportFormatsText + ".";
      } else {
        changed |= import_into(s, import_launch_config(*format, s.hf_text), enum_label(*format));
      }
      refresh_mirror(s);
    }
    record_rect(s, "hf_import");
    // Or a public model's config.json from huggingface.co, by id (the page needs to be online).
    ImGui::TextDisabled("Or a Hugging Face model id:");
    ImGui::SetNextItemWidth(-FLT_MIN);
    ImGui::InputTextWithHint("##hf_model_id", "Qwen/Qwen2.5-7B", &s.hf_fetch.id);
    record_rect(s, "hf_model_id");
    ImGui::BeginDisabled(s.hf_fetch.waiting);
    if (ImGui::Button(s.hf_fetch.waiting ? "Fetching config.json...###hf_fetch" : "Fetch config.json###hf_fetch")) {
      std::vector<Issue> issues;
      // The id is checked before a URL exists (launch_config.h hf_config_url); only that URL is fetched.
      if (const std::optional<std::string> url = hf_config_url(s.hf_fetch.id, issues)) {
        s.outbox.fetch_url = *url;
        s.hf_fetch.fetched_id = s.hf_fetch.id;
        s.hf_fetch.waiting = true;
        s.hf_message = "Fetching " + *url + " ...";
      } else {
        s.hf_message = "Not fetched:";
        for (const Issue& issue : issues) s.hf_message += "\nerror: " + issue.message;
      }
      refresh_mirror(s);
    }
    ImGui::EndDisabled();
    record_rect(s, "hf_fetch");
    if (!s.hf_message.empty()) ImGui::TextWrapped("%s", s.hf_message.c_str());
    ImGui::TreePop();
  }
  return changed;
}

// A non-negative finite figure in display units (value_bytes = shown * scale); anything else typed
// is refused and the figure keeps its value, so no NaN or inf reaches the model.
bool figure_accepted(double shown, double scale) { return std::isfinite(shown) && shown >= 0 && shown * scale < 1e30; }

// A number shown in display units (value = shown * scale), at most max_value.
bool input_scaled(AppState& s, const char* label, const char* field, double& value, double scale, const char* format,
                  double max_value) {
  ImGui::TextUnformatted(label);
  ImGui::SetNextItemWidth(-FLT_MIN);
  double shown = value / scale;
  bool changed = false;
  const std::string id = std::string("##") + field;
  if (ImGui::InputDouble(id.c_str(), &shown, 0.0, 0.0, format) && std::isfinite(shown) && shown >= 0 &&
      shown * scale <= max_value) {
    value = shown * scale;
    changed = true;
  }
  if (ImGui::IsItemActive()) s.text_field_numeric = true;
  record_rect(s, field);
  return changed;
}

bool input_figure(AppState& s, const FigureField& row) {
  return input_scaled(s, row.label, row.field, s.config.gpu.*row.member, row.scale, row.format, 1e30);
}

// Every figure of a custom GPU: compute, memory bandwidth, interconnect and NVLink domain size.
bool draw_custom_gpu_figures(AppState& s) {
  GpuSpec& g = s.config.gpu;
  bool changed = false;
  for (const FigureField& row : kFigureFields) changed |= input_figure(s, row);
  int64_t domain = g.nvlink_domain;
  if (input_count(s, "gpu_nvlink_domain", domain) && domain >= 1) {
    g.nvlink_domain = domain;
    changed = true;
  }
  int64_t sms = g.sms;
  if (input_count(s, "gpu_sms", sms) && sms >= 0) {
    g.sms = sms;
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
  if (c.gpu.id != "custom") {
    if (ImGui::Checkbox("override memory", &s.override_memory)) {
      if (!s.override_memory)
        if (auto preset = find_gpu_preset(c.gpu.id)) c.gpu.memory_bytes = preset->memory_bytes;
      changed = true;
    }
    record_rect(s, "override_memory");
  }
  if (c.gpu.id == "custom" || s.override_memory) {
    ImGui::TextUnformatted("memory (GiB)");
    ImGui::SetNextItemWidth(-FLT_MIN);
    double gib = bytes_to_gib(c.gpu.memory_bytes);
    if (ImGui::InputDouble("##gpu_memory_gib", &gib, 1.0, 8.0, "%.2f")) {
      c.gpu.memory_bytes = gib_to_bytes(gib);
      changed = true;
    }
    if (ImGui::IsItemActive()) s.text_field_numeric = true;
    record_rect(s, "gpu_memory_gib");
    field_issue(s, "gpu_memory_gib");
  }
  if (c.gpu.id == "custom") changed |= draw_custom_gpu_figures(s);
  changed |= input_count(s, "gpus", c.cluster.gpus);
  changed |= input_count(s, "gpus_per_node", c.cluster.gpus_per_node);
  return changed;
}

constexpr const char* kTokensToTrainLabel = "tokens to train (billions, 0 = none)";

bool draw_training(AppState& s) {
  TrainingSpec& t = s.config.training;
  bool changed = false;
  ImGui::SeparatorText("Training");
  changed |= input_count(s, "seq", t.seq);
  changed |= input_count(s, "global_batch", t.global_batch);
  changed |= input_count(s, "micro_batch", t.micro_batch);
  // For the time to train (days); the schema's range (validate.h kMaxTokensToTrain) bounds it here too.
  changed |= input_scaled(s, kTokensToTrainLabel, "tokens_to_train", t.tokens_to_train, 1e9, "%.9g",
                          kMaxTokensToTrain);
  field_issue(s, "tokens_to_train");
  if (combo_line(s, "framework", "framework", t.framework)) {
    // A stage the new framework does not offer becomes its default (FSDP: full sharding).
    const FrameworkProfile& profile = framework_profile(t.framework);
    if (!profile.offers_zero(s.config.layout.zero)) s.config.layout.zero = profile.default_zero;
    changed = true;
  }
  changed |= combo_line(s, "recompute", "recompute", t.recompute);
  // Megatron's block method: full recompute on the first N layers of each stage, the rest saved whole.
  if (t.recompute == Recompute::kFull) {
    changed |= input_count(s, "recompute_layers", t.recompute_layers);
  }
  changed |= checkbox_field(s, kOffloadActivations);
  field_issue(s, "offload_activations");
  changed |= combo_line(s, "precision", "precision", t.precision);
  field_issue(s, "precision");
  if (shows_fp8_all_gather(t)) {
    changed |= checkbox_field(s, kFp8AllGather);
    field_issue(s, "fp8_all_gather");
  }
  changed |= combo_line(s, "optimizer", "optimizer", t.optimizer);
  changed |= combo_line(s, "cross-entropy", "loss", t.loss);
  field_issue(s, "loss");
  if (t.loss == LossKind::kAuto) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    const LossKind loss = effective_loss(framework_profile(t.framework), t, s.config.layout.tp);
    ImGui::TextWrapped("auto = %s", enum_label(loss));
    // torchtitan compiles the loss with the model by default ([compile] components); a run that
    // compiled its blocks only keeps the eager loss, 12 bytes per logit instead of 4.
    if (loss == LossKind::kCompiled && t.framework == Framework::kFsdp)
      ImGui::TextWrapped("as torchtitan's [compile] components = [\"model\", \"loss\"]; choose eager for a run that compiled only the blocks.");
    ImGui::PopStyleColor();
  }
  changed |= combo_line(s, "allocator", "allocator", t.allocator);
  const FlagField* async_tp = nullptr;
  for (const FlagField& flag : kTrainingFlags) {
    if (std::string(flag.field) == "async_tp") async_tp = &flag;
    else changed |= checkbox_field(s, flag);
  }
  changed |= combo_line(s, "kernels (compiled = torch.compile)", "kernels", t.kernels);
  changed |= combo_line(s, "RMSNorm kernel", "norm_kernel", t.norm_kernel);
  field_issue(s, "norm_kernel");
  if (t.norm_kernel == NormKernel::kAuto && s.config.model.norm == NormKind::kRmsNorm && t.kernels != Kernels::kCompiled) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    const bool eager = runs_eager_rmsnorm(s.config);
    ImGui::TextWrapped("auto = %s", !eager                                   ? "fused: one kernel each way (TE, apex, Triton, F.rms_norm)"
                                    : t.finetune != FinetuneMethod::kNone ? "eager: the fine-tuning stack's upcasting RMSNorm"
                                                                          : "eager: Hugging Face models' LlamaRMSNorm");
    // torchtitan's 2024 RMSNorm (models/norms.py) was the x.float() chain its published runs of that
    // year timed; today's nn.RMSNorm is one kernel. Said where a user compares with those runs.
    if (!eager && t.framework == Framework::kFsdp)
      ImGui::TextWrapped("torchtitan's 2024 RMSNorm ran as eager fp32 ops: choose eager to compare with its runs of then.");
    ImGui::PopStyleColor();
  }
  if (async_tp) changed |= checkbox_field(s, *async_tp);
  // DP overlap: auto follows the framework at this ZeRO stage (memory_model.h dp_comm_overlapped).
  changed |= combo_line(s, "DP comm overlap", "dp_comm_overlap", t.dp_comm_overlap);
  if (t.dp_comm_overlap == DpCommOverlap::kAuto) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("auto = %s: %s", dp_comm_overlapped(t, s.config.layout.zero) ? "on" : "off",
                       framework_profile(t.framework).dp_overlap_default_source);
    ImGui::PopStyleColor();
  }
  return changed;
}

// Says under the verdict what a mode or stack switch set, field by field ("global_batch 16 -> 1").
void note_defaults(AppState& s, const Config& before, const std::string& whose) {
  std::string changes;
  for (const ConfigDifference& d : config_differences(before, s.config)) {
    if (d.key == "finetune" || d.key == "stack") continue;
    changes += (changes.empty() ? "" : ", ") + d.key + " " + d.pinned + " -> " + d.current;
  }
  s.defaults_note = changes.empty() ? "" : whose + ": " + changes;
  s.defaults_note_fresh = true;
}

// The stack's defaults for a fine-tuning config (finetune.h), as a link that leaves them out gets.
// `lora_too`: the adapter settings as well (a new stack, or fine-tuning just switched on).
// What they change is said under the verdict ("global_batch 16 -> 1"): a batch or checkpointing the
// user set must not change unseen.
// `keep_batch`: the global batch is the user's (from fine-tuning to fine-tuning, or a new stack); from
// pretraining the stack's (no accumulation) replaces a pretraining batch.
void apply_finetune_defaults(AppState& s, const Config& before, bool lora_too, bool keep_batch) {
  Config& c = s.config;
  // From pretraining: no pipeline or context parallelism, which no fine-tuning stack runs (the search
  // and the exports keep pp = cp = 1; an as-a-user review saw LoRA keep pp 4 and read FITS at a 75%
  // bubble). tp stays: FSDP2 and Megatron fine-tunes can split it (QLoRA's refusal moves it). Set
  // before the stack's batch is derived, so that it counts the data-parallel ranks of that layout (a
  // later review saw the batch of the pp 4 layout make the page move to cp 4).
  Config base = c;
  if (!keep_batch) {
    base.layout.pp = base.layout.cp = base.layout.vpp = 1;
    base.layout.pp_first_stage_layers = base.layout.pp_last_stage_layers = 0;
  }
  const Config with = with_finetune_defaults(base, finetune_defaults(base, false));
  const TrainingSpec keep = c.training;
  c = with;
  // The user's batch stays when the layout the method runs can divide it: the stack's batch is one
  // sequence per data-parallel rank, so a multiple of it. LoRA -> QLoRA at tp 8 on 64 GPUs runs tp 1,
  // dp 64, which LoRA's batch of 8 cannot fill: the stack's 64 then, said in the note (it was left with
  // no layout at all).
  if (keep_batch && with.training.global_batch > 0 && keep.global_batch % with.training.global_batch == 0)
    c.training.global_batch = keep.global_batch;
  if (!lora_too) {
    c.training.lora_rank = keep.lora_rank;
    c.training.lora_alpha = keep.lora_alpha;
    c.training.lora_targets = keep.lora_targets;
    c.training.lora_dropout = keep.lora_dropout;
  }
  note_defaults(s, before, std::string(enum_label(c.training.stack)) + "'s defaults for " + enum_label(c.training.finetune));
}

// A switch of the training mode (the radio buttons, or the DOM form): the stack's defaults when
// fine-tuning starts or changes kind, the pretraining config back when it ends. Returns whether the
// mode changed.
bool switch_finetune(AppState& s, FinetuneMethod to) {
  Config& c = s.config;
  TrainingSpec& t = c.training;
  const FinetuneMethod before = t.finetune;
  if (to == before) return false;
  const Config before_config = c;
  t.finetune = to;
  if (t.finetune == FinetuneMethod::kNone) {
    // Back to the pretraining config fine-tuning started from (when this page switched to it): each
    // field the stack's defaults changed then, and the user has not edited since, takes its
    // pretraining value again (framework, batch, ZeRO stage...). An as-a-user review saw them stay.
    std::vector<std::pair<const ConfigField*, nlohmann::json>> restore;
    if (s.before_finetune && s.after_finetune)
      for (const ConfigField& field : config_fields()) {
        if (std::string(field.key) == "finetune" || !field.get || !field.set) continue;
        const nlohmann::json was = held_value(field, *s.before_finetune);
        if (was != held_value(field, *s.after_finetune) && held_value(field, c) == held_value(field, *s.after_finetune))
          restore.emplace_back(&field, was);
      }
    // The pretraining defaults of what fine-tuning set, then the restored values over them.
    const TrainingSpec plain = default_config().training;
    t.precision = plain.precision;
    t.optimizer = plain.optimizer;
    t.optimizer_in_backward = plain.optimizer_in_backward;
    t.loss = plain.loss;
    t.allocator = plain.allocator;
    t.offload = plain.offload;
    for (const auto& [field, was] : restore) set_held_value(*field, c, was);
    note_defaults(s, before_config, restore.empty() ? "pretraining's defaults" : "back to the pretraining settings");
  } else {
    apply_finetune_defaults(s, before_config, before == FinetuneMethod::kNone || before == FinetuneMethod::kFull,
                            before != FinetuneMethod::kNone);
  }
  if (before == FinetuneMethod::kNone) {
    s.before_finetune = before_config;
    s.after_finetune = c;  // taken again after the layout repair (commit_edit)
  } else if (t.finetune == FinetuneMethod::kNone) {
    s.before_finetune.reset();
    s.after_finetune.reset();
  }
  s.finetune_switched = t.finetune != FinetuneMethod::kNone;
  return true;
}

// A new fine-tuning stack: its defaults, adapter settings included. Returns whether it changed.
bool switch_stack(AppState& s, FinetuneStack to) {
  if (to == s.config.training.stack) return false;
  const Config before = s.config;
  s.config.training.stack = to;
  apply_finetune_defaults(s, before, true, true);
  s.finetune_switched = true;
  return true;
}

// What the alpha and dropout fields take, the canvas's and the DOM form's alike.
bool lora_alpha_accepted(double alpha) { return std::isfinite(alpha) && alpha > 0 && alpha < 1e6; }
bool lora_dropout_accepted(double dropout) { return std::isfinite(dropout) && dropout >= 0 && dropout < 1; }

// The target-module choices the panel offers (any other list comes from a link or an import).
constexpr const char* kLoraTargetPresets[] = {"all-linear", "attention", "q,v", "q,v,o,gate,up,down", "q,k,v,o"};

constexpr const char* kDoubleQuantLabel = "double quantisation";
constexpr const char* kKbitUpcastLabel = "fp32 upcast of the rest (kbit)";
constexpr const char* kOptimizerInBackwardLabel = "optimizer step in backward";

// Training mode: pretraining, or fine-tuning (full, LoRA, QLoRA) with its stack and adapter settings.
// Switching the mode or the stack applies the stack's defaults (precision, checkpointing, optimizer,
// loss, sharding), which the inputs below then show and edit.
bool draw_finetune(AppState& s) {
  Config& c = s.config;
  TrainingSpec& t = c.training;
  ImGui::SeparatorText("Training mode");
  FinetuneMethod chosen = t.finetune;
  for (const EnumName<FinetuneMethod>& entry : EnumNames<FinetuneMethod>::table) {
    if (entry.label == nullptr) continue;
    // Two a line: four do not fit the inputs column (17 em).
    if (entry.value == FinetuneMethod::kFull || entry.value == FinetuneMethod::kQlora) ImGui::SameLine();
    const char* label = entry.value == FinetuneMethod::kNone ? "pretraining" : entry.value == FinetuneMethod::kFull ? "full fine-tune" : entry.value == FinetuneMethod::kLora ? "LoRA" : "QLoRA";
    if (ImGui::RadioButton(label, t.finetune == entry.value)) chosen = entry.value;
    record_rect(s, (std::string("finetune_") + entry.key).c_str());
    if (t.finetune == entry.value) record_rect(s, "finetune");  // the DOM form's chooser sits over the chosen one
  }
  bool changed = switch_finetune(s, chosen);
  field_issue(s, "finetune");
  if (!is_finetune(t)) return changed;
  FinetuneStack stack = t.stack;
  if (combo_line(s, "stack (its defaults)", "stack", stack)) changed |= switch_stack(s, stack);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", finetune_stack_profile(t.stack).source);
  if (has_adapters(t)) {
    changed |= input_count(s, "lora_rank", t.lora_rank);
    const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
    ImGui::TextUnformatted("alpha / dropout");
    ImGui::SetNextItemWidth(half);
    double alpha = t.lora_alpha;
    if (ImGui::InputDouble("##lora_alpha", &alpha, 0.0, 0.0, "%.0f") && lora_alpha_accepted(alpha)) {
      t.lora_alpha = alpha;
      changed = true;
    }
    record_rect(s, "lora_alpha");
    field_issue(s, "lora_alpha");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(half);
    double dropout = t.lora_dropout;
    if (ImGui::InputDouble("##lora_dropout", &dropout, 0.0, 0.0, "%.2f") && lora_dropout_accepted(dropout)) {
      t.lora_dropout = dropout;
      changed = true;
    }
    record_rect(s, "lora_dropout");
    field_issue(s, "lora_dropout");
    ImGui::TextUnformatted("target modules");
    ImGui::SetNextItemWidth(-FLT_MIN);
    if (ImGui::BeginCombo("##lora_targets", t.lora_targets.c_str())) {
      for (const char* preset : kLoraTargetPresets)
        if (ImGui::Selectable(preset, t.lora_targets == preset)) {
          t.lora_targets = preset;
          changed = true;
        }
      ImGui::EndCombo();
    }
    record_rect(s, "lora_targets");
    field_issue(s, "lora_targets");
    changed |= checkbox_field(s, kDora);
    field_issue(s, "dora");
    for (const FlagField& flag : kTrainedModules) {
      changed |= checkbox_field(s, flag);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", find_config_field(flag.field)->help);
      field_issue(s, flag.field);
    }
    changed |= combo_line(s, "adapter dtype", "adapter_dtype", t.adapter_dtype);
  }
  if (t.finetune == FinetuneMethod::kQlora) {
    changed |= ImGui::Checkbox(kDoubleQuantLabel, &t.double_quant);
    record_rect(s, "double_quant");
    changed |= ImGui::Checkbox(kKbitUpcastLabel, &t.kbit_upcast);
    record_rect(s, "kbit_upcast");
  }
  changed |= combo_line(s, "offload to CPU", "offload", t.offload);
  field_issue(s, "offload");
  changed |= ImGui::Checkbox(kOptimizerInBackwardLabel, &t.optimizer_in_backward);
  record_rect(s, "optimizer_in_backward");
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
    if (inline_button(s, "Use Megatron TP instead")) {
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
  // Replicated shard groups, where the framework has them at this stage (or a value to put right).
  if (shows_replicas(c)) {
    changed |= degree_combo(s, "dp_replicate", l.dp_replicate, replicas_choices(c), kReplicasLabel);
    // The note only where the value holds (an invalid one shows its error instead).
    if (l.dp_replicate > 1 && replicas_hold(profile, l.dp_replicate, l.zero, effective_dp(c), l.cp)) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      ImGui::TextWrapped("%s: states sharded over %lld ranks, each shard kept by %lld replicas", profile.replicas_mechanism,
                         (long long)shard_group_ranks(c), (long long)l.dp_replicate);
      ImGui::PopStyleColor();
    }
  }
  if (shows_hpz(c)) {
    changed |= degree_combo(s, "hpz_partition_size", l.hpz_partition_size, hpz_choices(c), kHpzLabel);
    if (l.hpz_partition_size > 1 && hpz_rule(c.training.framework, l.hpz_partition_size, l, effective_dp(c)) == HpzRule::kHolds) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      ImGui::TextWrapped("ZeRO++ hpZ: a second copy of the weights sharded over %lld ranks; the backward gathers inside them",
                         (long long)l.hpz_partition_size);
      ImGui::PopStyleColor();
    }
  }
  field_issue(s, "global_batch");
  if (!s.search.top.empty() && ImGui::Button("Use the fastest layout", ImVec2(-FLT_MIN, 0))) {
    apply_candidate(s, s.search.top.front());
    changed = true;
  }
  record_rect(s, "best_layout");
  return changed;
}

// The run's free-text fields (FieldGroup::kRun: notes, ...) straight from the schema, through its
// accessors: a new one appears here without UI code. validate() checks what is typed (UTF-8, length).
bool draw_run(AppState& s) {
  bool changed = false;
  // Closed by default: names and notes are secondary, and a closed header draws nothing each frame.
  if (!ImGui::CollapsingHeader("Run name and notes")) return changed;
  for (const ConfigField& field : config_fields()) {
    if (field.group != FieldGroup::kRun) continue;
    ImGui::TextUnformatted(field.help);
    ImGui::SetNextItemWidth(-FLT_MIN);
    std::string text = field.get(s.config).get<std::string>();
    if (ImGui::InputText((std::string("##") + field.key).c_str(), &text)) {
      field.set(s.config, text);
      changed = true;
    }
    record_rect(s, field.key);
    field_issue(s, field.key);
  }
  return changed;
}

}  // namespace

// [SECTION] Panel

bool draw_inputs(AppState& s) {
  bool changed = draw_model(s);
  changed |= draw_hardware(s);
  changed |= draw_finetune(s);
  changed |= draw_training(s);
  changed |= draw_layout(s);
  ImGui::SeparatorText("Verdict");
  ImGui::TextUnformatted("tight at (fraction of capacity)");
  ImGui::SetNextItemWidth(-FLT_MIN);
  changed |= ImGui::SliderScalar("##headroom", ImGuiDataType_Double, &s.config.training.headroom, &kHeadroomMin,
                                 &kHeadroomMax, "%.2f");
  record_rect(s, "headroom");
  field_issue(s, "headroom");
  changed |= draw_run(s);
  return changed;
}

// [SECTION] DOM form (describe_form, set_form_field)

namespace {

using nlohmann::json;

// The message shown beside a field: what its text was refused for, else validation's first.
std::string field_message(const AppState& s, const std::string& field) {
  if (const auto it = s.text_errors.find(field); it != s.text_errors.end()) return it->second;
  if (const auto it = s.field_issues.find(field); it != s.field_issues.end()) return it->second;
  return "";
}

json form_entry(const AppState& s, const std::string& field, const char* label, const char* kind, const std::string& value) {
  return {{"field", field}, {"label", label}, {"kind", kind}, {"value", value}, {"error", field_message(s, field)}};
}

json count_entry(const AppState& s, const char* field) {
  const CountField& row = *find_count_field(field);
  const auto typed = s.field_text.find(field);
  const bool refused = s.text_errors.count(field) > 0 && typed != s.field_text.end();
  const std::string value = refused ? typed->second : find_config_field(field)->get(s.config).dump();
  return form_entry(s, field, row.label, "count", value);
}

json option(const std::string& value, const std::string& label) { return {{"value", value}, {"label", label}}; }

template <typename Enum>
json enum_entry_json(const AppState& s, const char* field, const char* label, Enum value) {
  json entry = form_entry(s, field, label, "choice", enum_key(value));
  entry["options"] = json::array();
  for (const EnumName<Enum>& name : EnumNames<Enum>::table)
    if (name.label != nullptr) entry["options"].push_back(option(name.key, name.label));
  return entry;
}

json degree_entry(const AppState& s, const char* field, int64_t value, const std::vector<int64_t>& valid,
                  const char* label = nullptr) {
  json entry = form_entry(s, field, label != nullptr ? label : field, "choice", std::to_string(value));
  entry["options"] = json::array();
  if (std::find(valid.begin(), valid.end(), value) == valid.end())
    entry["options"].push_back(option(std::to_string(value), std::to_string(value) + " (invalid)"));
  for (int64_t v : valid) entry["options"].push_back(option(std::to_string(v), std::to_string(v)));
  return entry;
}

json flag_entry(const AppState& s, const FlagField& flag) {
  return form_entry(s, flag.field, flag.label, "flag", find_config_field(flag.field)->get(s.config).get<bool>() ? "true" : "false");
}

json number_entry(const AppState& s, const char* field, const char* label, double value, const char* format) {
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return form_entry(s, field, label, "number", text);
}

// A number typed in the DOM form: the whole text one finite number (strtod's reading), else nothing.
std::optional<double> parse_number(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  while (end && (*end == ' ' || *end == '\t')) ++end;
  if (end == begin || (end && *end != 0) || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A choice from the DOM form for one of the degree fields: one of the values its chooser offers.
bool set_degree(Config& c, const std::string& field, const std::string& text, const std::vector<int64_t>& valid) {
  const CountText parsed = parse_count_text(text, kMaxGpus);
  if (!parsed.ok || std::find(valid.begin(), valid.end(), parsed.value) == valid.end()) return false;
  return find_config_field(field)->set(c, json(parsed.value));
}

}  // namespace

std::string describe_form(const AppState& s) {
  const Config& c = s.config;
  json form = json::array();
  json model = form_entry(s, "model", "model", "choice", c.model.name);
  model["options"] = json::array();
  bool listed = c.model.name == "custom";
  for (const ModelPreset& preset : model_presets()) {
    model["options"].push_back(option(preset.id, preset.id));
    listed |= c.model.name == preset.id;
  }
  if (!listed) model["options"].push_back(option(c.model.name, c.model.name));
  model["options"].push_back(option("custom", "custom (edit dimensions)"));
  form.push_back(model);
  if (c.model.name == "custom") {
    for (const char* field : {"hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "vocab"}) form.push_back(count_entry(s, field));
    for (const FlagField& flag : kModelFlags) form.push_back(flag_entry(s, flag));
    form.push_back(enum_entry_json(s, "norm", "normalisation", c.model.norm));
    form.push_back(enum_entry_json(s, "mlp", "MLP kind", c.model.mlp));
  }
  json gpu = form_entry(s, "gpu", "GPU", "choice", c.gpu.id);
  gpu["options"] = json::array();
  for (const GpuPreset& preset : gpu_presets()) gpu["options"].push_back(option(preset.id, preset.spec.name));
  gpu["options"].push_back(option("custom", "Custom GPU"));
  form.push_back(gpu);
  if (c.gpu.id == "custom" || s.override_memory)
    form.push_back(number_entry(s, "gpu_memory_gib", "memory (GiB)", bytes_to_gib(c.gpu.memory_bytes), "%.2f"));
  if (c.gpu.id == "custom") {
    for (const FigureField& row : kFigureFields)
      form.push_back(number_entry(s, row.field, row.label, c.gpu.*row.member / row.scale, row.format));
    form.push_back(count_entry(s, "gpu_nvlink_domain"));
    form.push_back(count_entry(s, "gpu_sms"));
  }
  for (const char* field : {"gpus", "gpus_per_node"}) form.push_back(count_entry(s, field));
  // Training mode (draw_finetune's order): the stack and the adapter settings while fine-tuning.
  const TrainingSpec& t = c.training;
  form.push_back(enum_entry_json(s, "finetune", "training mode", t.finetune));
  if (is_finetune(t)) {
    form.push_back(enum_entry_json(s, "stack", "fine-tuning stack", t.stack));
    if (has_adapters(t)) {
      form.push_back(count_entry(s, "lora_rank"));
      form.push_back(number_entry(s, "lora_alpha", "LoRA alpha", t.lora_alpha, "%.9g"));
      form.push_back(number_entry(s, "lora_dropout", "LoRA dropout", t.lora_dropout, "%.9g"));
      json targets = form_entry(s, "lora_targets", "LoRA target modules", "choice", t.lora_targets);
      targets["options"] = json::array();
      bool listed = false;
      for (const char* preset : kLoraTargetPresets) {
        targets["options"].push_back(option(preset, preset));
        listed |= t.lora_targets == preset;
      }
      if (!listed) targets["options"].push_back(option(t.lora_targets, t.lora_targets));
      form.push_back(targets);
      form.push_back(flag_entry(s, kDora));
      for (const FlagField& flag : kTrainedModules) form.push_back(flag_entry(s, flag));
      form.push_back(enum_entry_json(s, "adapter_dtype", "adapter dtype", t.adapter_dtype));
    }
    if (t.finetune == FinetuneMethod::kQlora) {
      form.push_back(form_entry(s, "double_quant", kDoubleQuantLabel, "flag", t.double_quant ? "true" : "false"));
      form.push_back(form_entry(s, "kbit_upcast", kKbitUpcastLabel, "flag", t.kbit_upcast ? "true" : "false"));
    }
    form.push_back(enum_entry_json(s, "offload", "offload to CPU", t.offload));
    form.push_back(form_entry(s, "optimizer_in_backward", kOptimizerInBackwardLabel, "flag", t.optimizer_in_backward ? "true" : "false"));
  }
  for (const char* field : {"seq", "global_batch", "micro_batch"}) form.push_back(count_entry(s, field));
  form.push_back(number_entry(s, "tokens_to_train", kTokensToTrainLabel, t.tokens_to_train / 1e9, "%.9g"));
  form.push_back(enum_entry_json(s, "framework", "framework", t.framework));
  form.push_back(enum_entry_json(s, "recompute", "recompute", t.recompute));
  if (t.recompute == Recompute::kFull) form.push_back(count_entry(s, "recompute_layers"));
  form.push_back(flag_entry(s, kOffloadActivations));
  form.push_back(enum_entry_json(s, "precision", "precision", t.precision));
  if (shows_fp8_all_gather(t)) form.push_back(flag_entry(s, kFp8AllGather));
  form.push_back(enum_entry_json(s, "optimizer", "optimizer", t.optimizer));
  form.push_back(enum_entry_json(s, "loss", "cross-entropy", t.loss));
  form.push_back(enum_entry_json(s, "allocator", "allocator", t.allocator));
  for (const FlagField& flag : kTrainingFlags) form.push_back(flag_entry(s, flag));
  form.push_back(enum_entry_json(s, "kernels", "kernels", t.kernels));
  form.push_back(enum_entry_json(s, "norm_kernel", "RMSNorm kernel", t.norm_kernel));
  form.push_back(enum_entry_json(s, "dp_comm_overlap", "DP comm overlap", t.dp_comm_overlap));
  const Layout& l = c.layout;
  form.push_back(degree_entry(s, "tp", l.tp, tp_choices(c)));
  form.push_back(degree_entry(s, "pp", l.pp, pp_choices(c)));
  form.push_back(degree_entry(s, "cp", l.cp, cp_choices(c)));
  form.push_back(degree_entry(s, "vpp", l.vpp, vpp_choices(c)));
  const FrameworkProfile& profile = framework_profile(t.framework);
  json zero = form_entry(s, "zero", t.framework == Framework::kMegatron ? "distributed optimizer" : "ZeRO stage", "choice",
                         std::to_string(l.zero));
  zero["options"] = json::array();
  if (!profile.offers_zero(l.zero)) zero["options"].push_back(option(std::to_string(l.zero), "? (invalid)"));
  for (int64_t stage : zero_choices(t.framework)) zero["options"].push_back(option(std::to_string(stage), profile.zero_stages[size_t(stage)]));
  form.push_back(zero);
  if (shows_replicas(c)) form.push_back(degree_entry(s, "dp_replicate", l.dp_replicate, replicas_choices(c), kReplicasLabel));
  if (shows_hpz(c)) form.push_back(degree_entry(s, "hpz_partition_size", l.hpz_partition_size, hpz_choices(c), kHpzLabel));
  json headroom = number_entry(s, "headroom", "tight at (fraction of capacity)", t.headroom, "%.2f");
  headroom["min"] = kHeadroomMin;
  headroom["max"] = kHeadroomMax;
  form.push_back(headroom);
  return form.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool set_form_field(AppState& s, const std::string& field, const std::string& text) {
  Config& c = s.config;
  const Config before = c;
  bool changed = false;
  if (const CountField* row = find_count_field(field)) {
    // As the canvas field does: text that is not a whole number in range stays, with its message.
    s.field_text[field] = text;
    const CountText parsed = parse_count_text(text, row->max);
    if (!parsed.ok) {
      s.text_errors[field] = parsed.message;
      s.dirty = true;
      return false;
    }
    s.text_errors.erase(field);
    if (field == "gpu_nvlink_domain" && parsed.value < 1) return false;
    changed = find_config_field(field)->get(c) != json(parsed.value) && find_config_field(field)->set(c, json(parsed.value));
  } else if (field == "model") {
    if (text == "custom") {
      changed = c.model.name != "custom";
      c.model.name = "custom";  // every architecture field stays, as "Edit dimensions" does
    } else if (const std::optional<ModelSpec> preset = find_model_preset(text)) {
      c.model = *preset;
      changed = true;
    }
  } else if (field == "gpu") {
    if (text == "custom") {
      changed = c.gpu.id != "custom";
      c.gpu.id = "custom";  // every figure prefilled from the GPU chosen so far
      c.gpu.name = "Custom GPU";
    } else if (const std::optional<GpuSpec> preset = find_gpu_preset(text)) {
      c.gpu = *preset;
      s.override_memory = false;
      changed = true;
    }
  } else if (field == "gpu_memory_gib") {
    const std::optional<double> gib = parse_number(text);
    changed = gib && find_config_field(field)->set(c, json(*gib));
  } else if (field == "finetune") {
    if (const std::optional<FinetuneMethod> to = enum_from_key<FinetuneMethod>(text)) changed = switch_finetune(s, *to);
  } else if (field == "stack") {
    if (const std::optional<FinetuneStack> to = enum_from_key<FinetuneStack>(text)) changed = switch_stack(s, *to);
  } else if (field == "lora_alpha" || field == "lora_dropout") {
    const std::optional<double> value = parse_number(text);
    const bool ok = value && (field == "lora_alpha" ? lora_alpha_accepted(*value) : lora_dropout_accepted(*value));
    changed = ok && find_config_field(field)->get(c) != json(*value) && find_config_field(field)->set(c, json(*value));
  } else if (field == "lora_targets") {
    // One of the choices the form offers: a preset, or the list already there.
    bool offered = text == c.training.lora_targets;
    for (const char* preset : kLoraTargetPresets) offered |= text == preset;
    changed = offered && text != c.training.lora_targets && find_config_field(field)->set(c, json(text));
  } else if (field == "tokens_to_train") {
    const std::optional<double> billions = parse_number(text);
    changed = billions && find_config_field(field)->set(c, json(*billions * 1e9));  // the schema refuses < 0 or > 1e18
  } else if (field == "headroom") {
    const std::optional<double> value = parse_number(text);
    if (value && *value >= kHeadroomMin && *value <= kHeadroomMax) changed = find_config_field(field)->set(c, json(*value));
  } else if (field == "tp" || field == "cp") {
    changed = set_degree(c, field, text, field == "tp" ? tp_choices(c) : cp_choices(c));
  } else if (field == "pp" || field == "vpp") {
    if (set_degree(c, field, text, field == "pp" ? pp_choices(c) : vpp_choices(c))) {
      if (c.layout.pp == 1) c.layout.vpp = 1;
      choose_pipeline_split(c.model.layers, framework_profile(c.training.framework), c.layout);  // as the search does
      changed = true;
    }
  } else if (field == "dp_replicate") {
    changed = set_degree(c, field, text, replicas_choices(c));
  } else if (field == "hpz_partition_size") {
    changed = set_degree(c, field, text, hpz_choices(c));
  } else if (field == "zero") {
    const CountText parsed = parse_count_text(text, 3);
    const std::vector<int64_t> stages = zero_choices(c.training.framework);
    if (parsed.ok && std::find(stages.begin(), stages.end(), parsed.value) != stages.end()) {
      c.layout.zero = parsed.value;
      changed = true;
    }
  } else {
    for (const FigureField& row : kFigureFields)
      if (field == row.field) {
        const std::optional<double> shown = parse_number(text);
        if (shown && figure_accepted(*shown, row.scale)) {
          c.gpu.*row.member = *shown * row.scale;
          changed = true;
        }
      }
    const ConfigField* schema = find_config_field(field);
    if (!changed && schema && schema->set && (schema->kind == FieldKind::kWord || schema->kind == FieldKind::kBoolean)) {
      const json value = schema->kind == FieldKind::kBoolean ? json(text == "true") : json(text);
      if (schema->kind == FieldKind::kBoolean && text != "true" && text != "false") return false;
      changed = schema->set(c, value);
      if (changed && field == "framework") {
        // A stage the new framework does not offer becomes its default, as the panel's chooser does.
        const FrameworkProfile& profile = framework_profile(c.training.framework);
        if (!profile.offers_zero(c.layout.zero)) c.layout.zero = profile.default_zero;
      }
    }
  }
  if (changed) commit_edit(s, before);
  else s.dirty = true;  // the mirror answers (a refused choice shows as the value it kept)
  return changed;
}

}  // namespace meshfit::ui
