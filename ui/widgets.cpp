// widgets.cpp — formats and small widgets shared by the panels (panels.h). Sizes in em.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "io/launch_config.h"
#include "memory/finetune.h"
#include "io/serialize.h"
#include "panels.h"
#include "units.h"

namespace meshfit::ui {

std::string candidate_label(const LayoutCandidate& c) {
  char text[160];
  std::snprintf(text, sizeof text, "dp=%lld tp=%lld pp=%lld cp=%lld vpp=%lld mb=%lld zero=%lld recompute=%s sp=%d",
                (long long)c.layout.dp, (long long)c.layout.tp, (long long)c.layout.pp, (long long)c.layout.cp,
                (long long)c.layout.vpp, (long long)c.micro_batch, (long long)c.layout.zero, to_string(c.recompute),
                c.sp ? 1 : 0);
  const std::string label = std::string(text) + (c.layout.dp_replicate > 1 ? " dpr=" + std::to_string(c.layout.dp_replicate) : "") +
                            (c.layout.hpz_partition_size > 1 ? " hpz=" + std::to_string(c.layout.hpz_partition_size) : "");
  if (c.spatial_temporal())  // marked wherever a layout is named: it cannot be launched
    return label + " st_q=" + std::to_string(c.layout.st_q) + " (spatial-temporal: " + kSpatialTemporalNote + ")";
  return label;
}

void flow_width(float width) {
  const float right = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + width;
  if (right <= ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x) ImGui::SameLine();
}

void flow(const char* next_label) { flow_width(ImGui::CalcTextSize(next_label).x + 2 * ImGui::GetStyle().FramePadding.x); }

void record_rect(AppState& s, const char* name) {
  const ImVec2 min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
  s.widget_rects[name] = Rect{min.x, min.y, max.x - min.x, max.y - min.y};
  if (!s.focus_field.empty() && s.focus_field == name) {
    ImGui::SetScrollHereY(0.5f);  // the field a keyboard or screen reader reached in the DOM form
    s.focus_field.clear();
  }
}

bool narrow_window(const AppState& s) { return ImGui::GetMainViewport()->Size.x < 44.0f * s.em; }

bool inline_button(const AppState& s, const char* label) {
  return narrow_window(s) ? ImGui::Button(label) : ImGui::SmallButton(label);
}

// Lines of at most `width` broken at spaces only, a number kept with its unit ("102.5 GiB"):
// ImGui's own wrapping also breaks after '.' and ',', which split "102.5" on a phone.
namespace {

// Whether the word at `at` is a unit a number before it carries (trailing punctuation aside).
bool unit_follows(const std::string& text, size_t at) {
  size_t end = text.find(' ', at);
  if (end == std::string::npos) end = text.size();
  while (end > at && std::strchr(",.;:)", text[end - 1]) != nullptr) --end;
  const std::string word = text.substr(at, end - at);
  for (const char* unit : {"B", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB", "s", "ms", "us", "min", "h", "days", "GPUs", "GPU", "%"})
    if (word == unit) return true;
  return false;
}

}  // namespace

std::string wrap_at_spaces(const std::string& text, float font_size, float width) {
  const auto fits = [&](const std::string& line) {
    return ImGui::GetFont()->CalcTextSizeA(font_size, FLT_MAX, 0.0f, line.c_str()).x <= width;
  };
  std::string out, line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    // A space between a number and its unit joins them ("30.5 GiB"; "dp64 tp1" still breaks).
    while (end != std::string::npos && end > 0 && text[end - 1] >= '0' && text[end - 1] <= '9' && unit_follows(text, end + 1))
      end = text.find(' ', end + 1);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    const std::string joined = start == 0 ? word : line + " " + word;
    if (start > 0 && !line.empty() && !word.empty() && !fits(joined)) {
      out += line + "\n";
      line = word;
    } else {
      line = joined;
    }
    start = end + 1;
  }
  return out + line;
}


BannerColors verdict_colors(Verdict verdict, bool valid) {
  if (!valid || verdict == Verdict::kOutOfMemory) return {IM_COL32(180, 35, 24, 255), IM_COL32(255, 255, 255, 255)};
  if (verdict == Verdict::kTight) return {IM_COL32(240, 180, 41, 255), IM_COL32(0, 0, 0, 255)};
  return {IM_COL32(30, 123, 69, 255), IM_COL32(255, 255, 255, 255)};
}

ImU32 error_text_color(const AppState& s) { return s.dark ? IM_COL32(255, 120, 120, 255) : IM_COL32(176, 0, 32, 255); }
ImU32 warning_text_color(const AppState& s) { return s.dark ? IM_COL32(240, 180, 41, 255) : IM_COL32(138, 80, 0, 255); }
// Agreement green: 60,180,100 on the light theme's 0.94 grey was 2.3:1; 20,110,50 is 5.6:1 (on the
// dark theme's 0.06 grey the lighter green is 7.2:1).
ImU32 ok_text_color(const AppState& s) { return s.dark ? IM_COL32(60, 180, 100, 255) : IM_COL32(20, 110, 50, 255); }
ImU32 overflow_color() { return IM_COL32(180, 35, 24, 255); }

void text_wrapped_at_spaces(const std::string& text) {
  ImGui::TextUnformatted(wrap_at_spaces(text, ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x).c_str());
}

void input_problems(const AppState& s, const std::vector<Issue>& issues, const char* what_waits) {
  // A phone has no inputs column beside the view: the list is the way to see them (an as-a-user
  // review read "marked on the left" there, and Methods listed nothing).
  ImGui::PushStyleColor(ImGuiCol_Text, error_text_color(s));
  text_wrapped_at_spaces(std::string("The inputs have problems (each is also shown at its field") +
                         (narrow_window(s) ? " under Inputs" : " on the left") + "); " + what_waits + ":");
  ImGui::PopStyleColor();
  for (const Issue& issue : issues)
    if (issue.severity == Severity::kError) {
      ImGui::Bullet();
      text_wrapped_at_spaces(issue.field + ": " + issue.message);  // BulletText does not wrap
    }
}

void field_issue(const AppState& s, const char* field) {
  const auto it = s.field_issues.find(field);
  if (it == s.field_issues.end()) return;
  // A warning in amber (an as-a-user review saw "gpus=12 is not a multiple of gpus_per_node" in error red).
  ImGui::PushStyleColor(ImGuiCol_Text, s.field_warnings.count(field) ? warning_text_color(s) : error_text_color(s));
  text_wrapped_at_spaces(it->second);
  ImGui::PopStyleColor();
}

std::string capacity_percent_text(double share) {
  // Just under capacity is not rounded to 100%, which reads as full (the same review: 99.6% shown
  // as "100%" in the warning colour for a layout that fits).
  char text[16];
  std::snprintf(text, sizeof text, share >= 0.995 && share < 1.0 ? "%.1f%%" : "%.0f%%", 100.0 * share);
  return text;
}

void apply_candidate(AppState& s, const LayoutCandidate& c) {
  s.config = apply(s.config, c);  // the whole layout, pipeline split included
  s.dirty = true;
}

void launch_flags_menu(AppState& s, const Config& config, const std::string& rect_prefix) {
  const std::pair<LaunchFormat, const char*> items[] = {{LaunchFormat::kMegatron, "Megatron-LM flags"},
                                                        {LaunchFormat::kTorchtitan, "torchtitan TOML"},
                                                        {LaunchFormat::kDeepSpeed, "DeepSpeed JSON"},
                                                        {LaunchFormat::kTorchtune, "torchtune recipe YAML"},
                                                        {LaunchFormat::kHfTrainer, "HF Trainer + PEFT (Python)"}};
  for (const auto& [format, label] : items) {
    const bool finetune_format = format == LaunchFormat::kTorchtune || format == LaunchFormat::kHfTrainer;
    if (finetune_format && !is_finetune(config.training)) continue;  // fine-tuning recipes only
    if (ImGui::MenuItem(label)) {
      const LaunchExport exported = export_launch_config(config, format);
      // An error: the format cannot express this layout (e.g. Megatron-LM and an uneven split over
      // vpp chunks); nothing is copied, the reason is shown.
      const auto error = std::find_if(exported.issues.begin(), exported.issues.end(),
                                      [](const Issue& issue) { return issue.severity == Severity::kError; });
      if (error != exported.issues.end()) {
        s.status = std::string(label) + " not copied: " + error->message;
      } else {
        s.outbox.clipboard = exported.text;
        s.status = std::string(label) + " copied";
        // Every note, not the first alone (an as-a-user review saw "3 notes:" followed by one, the
        // dropped tp and the LoRA the flags do not carry left unsaid).
        std::string notes;
        int count = 0;
        for (const Issue& issue : exported.issues) {
          if (issue.severity != Severity::kWarning) continue;
          ++count;  // apart from its use below: the two operands of + are unsequenced
          notes += (count > 1 ? " " : "") + std::to_string(count) + ". " + issue.message;
        }
        s.status += count > 0 ? " (" + std::to_string(count) + (count == 1 ? " note: " : " notes: ") + notes + ")" : ".";
      }
    }
    if (!rect_prefix.empty()) record_rect(s, (rect_prefix + to_string(format)).c_str());
  }
}

}  // namespace meshfit::ui
