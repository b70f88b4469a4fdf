// panel_methods.cpp — the methods view: core's rank_finetune_methods (search/method_select.h, LLMem's
// method decision generalised) for the model, GPU, count and sequence of the inputs: every fine-tuning
// method and distributed strategy that fits, fastest first (click a row to use it), then every other
// one with the reason it was rejected. Computed when the view is first shown after an edit.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "app.h"
#include "io/url_state.h"
#include "memory/finetune.h"
#include "perf/perf_model.h"
#include "panels.h"

namespace meshfit::ui {

namespace {

std::string method_label(const MethodCandidate& c) {
  return std::string(enum_label(c.config.training.finetune)) + ", " + c.strategy;
}

// Why a method was rejected, its bytes in the page's units (a review saw "GiB" here under units=gb).
std::string rejected_text(const AppState& s, const MethodCandidate& c) {
  return rejected_reason(c, [&s](double bytes) { return format_bytes(s, bytes, 1); });
}

}  // namespace

void ensure_methods(AppState& s) {
  if (s.methods_ready) return;
  s.methods = rank_finetune_methods(methods_base_config(s.config), MethodOptions{});
  s.methods_ready = true;
  refresh_mirror(s);
}

bool draw_methods_view(AppState& s) {
  ensure_methods(s);
  const MethodRanking& ranking = s.methods;
  if (has_errors(ranking.issues)) {
    input_problems(s, ranking.issues, "the methods are ranked once they are fixed");
    return false;
  }
  ImGui::PushTextWrapPos(0.0f);
  // The base the methods were ranked from (methods_base_config): a pretraining config's batch is not theirs.
  const Config& base = ranking.base;
  // A GPU without compute figures: no step time, the methods ranked by the memory they leave instead
  // (the reason is the ranking's own check, not a search of its issues by field).
  const std::optional<Issue> no_step = step_unpredictable(base);
  const bool timed = !no_step && (ranking.ranked.empty() || ranking.ranked.front().step_predicted);
  ImGui::Text("Fine-tuning %s on %lld x %s at sequence %lld, micro-batch %lld, global batch %lld: %zu methods fit, "
              "those under the tight threshold first, each group %s first; click a row to use it. Each is evaluated "
              "with and without gradient checkpointing (the one under the threshold, else the %s, is shown).",
              base.model.name.c_str(), (long long)base.cluster.gpus, base.gpu.name.c_str(), (long long)base.training.seq,
              (long long)base.training.micro_batch, (long long)base.training.global_batch, ranking.ranked.size(),
              timed ? "fastest" : "smallest", timed ? "faster" : "smaller");
  if (no_step)
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(warning_text_color(s)),
                       "%s The methods are ranked by their worst rank's memory instead.", no_step->message.c_str());
  // One grey note either way, the same height: clicking a row of a pretraining page makes it a
  // fine-tune, and a note that vanished moved the table up under the pointer (a page review saw the
  // row below the one clicked highlighted, one more click from applying it).
  char pretraining_note[320];
  std::snprintf(pretraining_note, sizeof pretraining_note,
                "The inputs are a pretraining run (its layouts are in the Layouts view): these are the fine-tuning "
                "methods for its model, GPUs and sequence, with the %s stack's defaults, as `meshfit methods` ranks them.",
                enum_label(base.training.stack));
  const float wrap_width = ImGui::GetContentRegionAvail().x;
  const float note_height = ImGui::CalcTextSize(pretraining_note, nullptr, false, wrap_width).y;
  const float note_top = ImGui::GetCursorPosY();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  if (!is_finetune(s.config.training))
    ImGui::TextUnformatted(pretraining_note);
  else
    ImGui::Text("The inputs are this fine-tune (%s, %s stack): its own row is the run they describe; another row applies that "
                "method with the same model, GPUs and sequence.",
                enum_label(s.config.training.finetune), enum_label(s.config.training.stack));
  ImGui::PopStyleColor();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float pad = note_height - (ImGui::GetCursorPosY() - note_top - spacing) - spacing;  // a Dummy adds its spacing too
  if (pad > 0.0f) ImGui::Dummy(ImVec2(0.0f, pad));
  ImGui::PopTextWrapPos();
  // As the Layouts view offers: a method at 91% of capacity ranked first is one allocator spike from OOM.
  char threshold[64];
  std::snprintf(threshold, sizeof threshold, "only under the tight threshold (%.0f%%)", 100.0 * s.config.training.headroom);
  ImGui::Checkbox(threshold, &s.methods_under_headroom);
  record_rect(s, "methods_under_headroom");
  bool changed = false;
  // A phone-width window has no room for eight columns (the table showed the method and half the
  // strategy; the memory and step time were off to the right): each method is one row whose
  // figures go under its name, wrapped at spaces.
  const bool narrow = ImGui::GetContentRegionAvail().x < 30.0f * s.em;
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                (narrow ? ImGuiTableFlags_SizingStretchProp : ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit);
  // On a phone the view is one scrolling column whose space left is a strip: the table takes most of
  // the screen (an as-a-user review saw two rows in a 150 px box above a full-height Rejected list).
  const float height = narrow ? std::max(8.0f * s.em, 0.6f * ImGui::GetMainViewport()->Size.y)
                              : std::max(8.0f * s.em, ImGui::GetContentRegionAvail().y * 0.55f);
  if (ImGui::BeginTable("methods", narrow ? 2 : 8, flags, ImVec2(0, height))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    if (narrow) {
      ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed);
      ImGui::TableSetupColumn("method: GPU memory, step time", ImGuiTableColumnFlags_WidthStretch);
    } else {
      for (const char* column : {"#", "method", "strategy", "checkpointing", "GPU memory", "% cap", "host / GPU", "step time"})
        ImGui::TableSetupColumn(column);
    }
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < ranking.ranked.size(); ++i) {
      const MethodCandidate& c = ranking.ranked[i];
      const double share = c.device_bytes / s.config.gpu.memory_bytes;
      const bool tight = share >= s.config.training.headroom;  // the warning colour, as the Layouts view marks it
      if (tight && s.methods_under_headroom) continue;
      // Each method's memory with its own band (memory_band.h): LoRA's and QLoRA's differ several-fold.
      const std::string memory = format_bytes(s, c.device_bytes, 1) + " " + memory_band_percent(c.memory_band);
      // No step time on a GPU without compute figures (the issues above the table say why).
      char step[48] = "step time not predicted";
      if (c.step_predicted) std::snprintf(step, sizeof step, "%.3f s per step", c.step_time_s);
      char figures[224];
      std::snprintf(figures, sizeof figures, "%s (%.0f%%)%s%s%s, %s%s", memory.c_str(), 100.0 * share, c.host_bytes > 0 ? " + host " : "", c.host_bytes > 0 ? format_bytes(s, c.host_bytes, 1).c_str() : "",
                    c.host_bytes > 0 ? " per GPU" : "", step,
                    c.config.training.recompute == Recompute::kNone ? "" : ", checkpointing");
      std::string text;
      float row_height = 0;
      if (narrow) {
        const float width = ImGui::GetContentRegionAvail().x - 3.0f * s.em;  // the stretch column, about
        text = wrap_at_spaces(method_label(c) + ": " + figures, ImGui::GetFontSize(), width);
        row_height = ImGui::CalcTextSize(text.c_str()).y;
      }
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      char id[32];
      std::snprintf(id, sizeof id, "%zu##method%zu", i + 1, i);
      if (ImGui::Selectable(id, false, ImGuiSelectableFlags_SpanAllColumns, ImVec2(0, row_height))) {
        s.config = c.config;
        s.status = "Using " + method_label(c) + ".";
        changed = true;
      }
      if (i < 3) record_rect(s, ("method_row_" + std::to_string(i)).c_str());
      if (narrow) {
        ImGui::TableNextColumn();
        if (tight) ImGui::PushStyleColor(ImGuiCol_Text, warning_text_color(s));
        ImGui::TextUnformatted(text.c_str());
        if (tight) ImGui::PopStyleColor();
        continue;
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(enum_label(c.config.training.finetune));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(c.strategy.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(c.config.training.recompute == Recompute::kNone ? "no" : "yes");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(memory.c_str());
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(36.0f * s.em);
        ImGui::TextUnformatted(memory_band_text(c.memory_band).c_str());
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
      ImGui::TableNextColumn();
      if (tight) ImGui::PushStyleColor(ImGuiCol_Text, warning_text_color(s));
      ImGui::Text("%.0f%%", 100.0 * share);
      if (tight) ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      if (c.host_bytes > 0) {
        ImGui::TextUnformatted(format_bytes(s, c.host_bytes, 1).c_str());
        // Per GPU (an as-a-user review read 131 GiB as the run's whole need): a node holds its GPUs' share.
        const int64_t per_node = std::min(c.config.cluster.gpus_per_node, c.config.cluster.gpus);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("CPU memory per GPU; the %lld GPUs of a node need %s of host memory together.", (long long)per_node,
                            format_bytes(s, c.host_bytes * double(per_node), 1).c_str());
      } else {
        ImGui::TextDisabled("-");
      }
      ImGui::TableNextColumn();
      if (c.step_predicted)
        ImGui::Text("%.3f s", c.step_time_s);
      else
        ImGui::TextDisabled("-");
    }
    ImGui::EndTable();
  }
  ImGui::SeparatorText("Rejected");
  if (narrow) {  // each as a wrapped line: its reason is the long part
    ImGui::PushTextWrapPos(0.0f);
    for (const MethodCandidate& c : ranking.rejected) {
      ImGui::Bullet();
      ImGui::TextUnformatted(wrap_at_spaces(method_label(c) + ": " + rejected_text(s, c), ImGui::GetFontSize(),
                                            ImGui::GetContentRegionAvail().x).c_str());
    }
    ImGui::PopTextWrapPos();
  } else if (ImGui::BeginTable("methods_rejected", 3, flags)) {
    for (const char* column : {"method", "strategy", "why not"}) ImGui::TableSetupColumn(column);
    ImGui::TableHeadersRow();
    for (const MethodCandidate& c : ranking.rejected) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(enum_label(c.config.training.finetune));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(c.strategy.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(rejected_text(s, c).c_str());
    }
    ImGui::EndTable();
  }
  return changed;
}

}  // namespace meshfit::ui
