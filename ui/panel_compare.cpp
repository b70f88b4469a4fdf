// panel_compare.cpp — Compare: a pinned configuration beside the edited one (per-rank peaks, step
// time, tokens/s, MFU, and the inputs that differ), on the page and in the Markdown export. Both
// sides are core's estimate() of a Config; the inputs' diff is over config_to_json, the schema the
// CLI's --json and the link use, so a key here is a key there.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "app.h"
#include "io/serialize.h"
#include "panels.h"

namespace meshfit::ui {

namespace {

struct CompareRow {
  std::string label, pinned, current, change;
};

bool usable(const Estimate& e) { return e.valid() && !has_errors(e.memory.issues); }

// "+12.3%" between two positive figures; "" when either is not (no NaN or inf reaches the page).
std::string relative_change(double pinned, double current) {
  if (!(pinned > 0) || !(current >= 0) || !std::isfinite(pinned) || !std::isfinite(current)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100.0 * (current / pinned - 1.0));
  return text;
}

std::string number(const char* format, double value) {
  if (!std::isfinite(value)) return "-";
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// The rows both the page and the Markdown show, in units of the view.
std::vector<CompareRow> compare_rows(const AppState& s) {
  std::vector<CompareRow> rows;
  const Estimate& a = s.pin_estimate;
  const Estimate& b = s.estimate;
  const bool a_ok = usable(a), b_ok = usable(b) && !has_errors(s.issues);
  const auto side = [](bool ok, const std::string& text) { return ok ? text : std::string("invalid inputs"); };
  rows.push_back({"verdict", side(a_ok, a_ok ? to_string(a.memory.verdict) : ""),
                  side(b_ok, b_ok ? to_string(b.memory.verdict) : ""), ""});
  if (a_ok || b_ok) {
    const auto worst = [&](const Estimate& e, bool ok) {
      if (!ok) return std::string("invalid inputs");
      char share[32];
      std::snprintf(share, sizeof share, " (%.0f%%)", 100.0 * e.worst().device_bytes / e.memory.capacity_bytes);
      return rank_name(e.worst(), e.memory.ranks.size()) + ": " + format_bytes(s, e.worst().device_bytes, 1) + share;
    };
    rows.push_back({"worst rank (device memory)", worst(a, a_ok), worst(b, b_ok),
                    a_ok && b_ok ? relative_change(a.worst().device_bytes, b.worst().device_bytes) : ""});
    const size_t ranks = std::max(a_ok ? a.memory.ranks.size() : 0, b_ok ? b.memory.ranks.size() : 0);
    for (size_t i = 0; i < ranks; ++i) {
      const auto rank = [&](const Estimate& e, bool ok) {
        if (!ok || i >= e.memory.ranks.size()) return std::string("-");
        const RankMemory& r = e.memory.ranks[i];
        return rank_name(r, e.memory.ranks.size()) + ": " + format_bytes(s, r.device_bytes, 1);
      };
      const bool both = a_ok && b_ok && i < a.memory.ranks.size() && i < b.memory.ranks.size();
      rows.push_back({"rank " + std::to_string(i + 1) + " peak", rank(a, a_ok), rank(b, b_ok),
                      both ? relative_change(a.memory.ranks[i].device_bytes, b.memory.ranks[i].device_bytes) : ""});
    }
    const auto predicted = [](const Estimate& e, bool ok) { return ok && e.step.step_time_s > 0; };
    const bool a_step = predicted(a, a_ok), b_step = predicted(b, b_ok);
    const auto or_dash = [](bool ok, const std::string& text) { return ok ? text : std::string("-"); };
    rows.push_back({"step time", or_dash(a_step, number("%.2f s", a.step.step_time_s)),
                    or_dash(b_step, number("%.2f s", b.step.step_time_s)),
                    a_step && b_step ? relative_change(a.step.step_time_s, b.step.step_time_s) : ""});
    rows.push_back({"tokens/s/GPU", or_dash(a_step, number("%.0f", a.step.tokens_per_s_per_gpu)),
                    or_dash(b_step, number("%.0f", b.step.tokens_per_s_per_gpu)),
                    a_step && b_step ? relative_change(a.step.tokens_per_s_per_gpu, b.step.tokens_per_s_per_gpu) : ""});
    rows.push_back({"MFU", or_dash(a_step, number("%.1f%%", 100.0 * a.step.mfu)),
                    or_dash(b_step, number("%.1f%%", 100.0 * b.step.mfu)),
                    a_step && b_step ? number("%+.1f pt", 100.0 * (b.step.mfu - a.step.mfu)) : ""});
  }
  return rows;
}

std::string value_text(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::vector<ConfigDifference> config_differences(const Config& pinned, const Config& current) {
  const nlohmann::json a = config_to_json(pinned), b = config_to_json(current);
  std::vector<ConfigDifference> out;
  for (const auto& item : a.items()) {
    const nlohmann::json other = b.contains(item.key()) ? b[item.key()] : nlohmann::json();
    if (item.value() != other) out.push_back({item.key(), value_text(item.value()), value_text(other)});
  }
  for (const auto& item : b.items())
    if (!a.contains(item.key())) out.push_back({item.key(), "-", value_text(item.value())});
  return out;
}

void pin_config(AppState& s, const Config& config) {
  s.pinned = true;
  s.pin_config = config;
  s.pin_estimate = estimate(config);
}

void unpin(AppState& s) {
  s.pinned = false;
  s.pin_config = Config{};
  s.pin_estimate = Estimate{};
}

std::string compare_markdown(const AppState& s) {
  if (!s.pinned) return "";
  std::string out = "\n**Compare**: pinned configuration vs this one.\n\n| | pinned | this | change |\n|---|---:|---:|---:|\n";
  for (const CompareRow& row : compare_rows(s))
    out += "| " + row.label + " | " + row.pinned + " | " + row.current + " | " + row.change + " |\n";
  const std::vector<ConfigDifference> diff = config_differences(s.pin_config, s.config);
  if (diff.empty()) {
    out += "\nThe inputs are the same.\n";
  } else {
    out += "\nInputs that differ:";
    for (size_t i = 0; i < diff.size(); ++i)
      out += std::string(i ? "," : "") + " `" + diff[i].key + "` " + diff[i].pinned + " \xE2\x86\x92 " + diff[i].current;  // →
    out += ".\n";
  }
  return out;
}

bool draw_compare_view(AppState& s) {
  const float em = s.em;
  if (!s.pinned) {
    ImGui::TextWrapped("Pin this configuration, then edit the inputs: the pinned one and the edited one are shown here "
                       "side by side (per-rank peaks, step time, tokens/s, and the inputs that differ), and in the "
                       "Markdown export. The pin is part of the link.");
    if (ImGui::Button("Pin this configuration")) pin_config(s, s.config);
    record_rect(s, "compare_pin");
    return false;
  }
  bool changed = false;
  if (ImGui::Button("Unpin")) unpin(s);
  record_rect(s, "compare_unpin");
  flow("Pin this one instead");
  if (s.pinned && ImGui::Button("Pin this one instead")) pin_config(s, s.config);
  record_rect(s, "compare_repin");
  flow("Go back to the pinned one");
  if (s.pinned && ImGui::Button("Go back to the pinned one")) {
    s.config = s.pin_config;
    changed = true;
  }
  record_rect(s, "compare_restore");
  if (!s.pinned) return changed;

  const std::vector<CompareRow> rows = compare_rows(s);
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  // A phone-width window has no room for four columns: each row's two values and the change go
  // under its label, wrapped.
  const bool narrow = ImGui::GetContentRegionAvail().x < 30.0f * em;
  if (narrow && ImGui::BeginTable("compare", 2, flags | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("pinned \xE2\x86\x92 this (change)", ImGuiTableColumnFlags_WidthStretch, 2.0f);
    ImGui::TableHeadersRow();
    for (const CompareRow& row : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", row.label.c_str());
      ImGui::TableNextColumn();
      const std::string text = row.pinned + " \xE2\x86\x92 " + row.current + (row.change.empty() ? "" : " (" + row.change + ")");
      ImGui::TextWrapped("%s", text.c_str());
    }
    ImGui::EndTable();
  } else if (!narrow && ImGui::BeginTable("compare", 4, flags)) {
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn("pinned");
    ImGui::TableSetupColumn("this configuration");
    ImGui::TableSetupColumn("change");
    ImGui::TableHeadersRow();
    for (const CompareRow& row : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.label.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.pinned.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.current.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.change.c_str());
    }
    ImGui::EndTable();
  }
  record_rect(s, "compare_table");

  ImGui::Dummy(ImVec2(0, 0.4f * em));
  const std::vector<ConfigDifference> diff = config_differences(s.pin_config, s.config);
  if (diff.empty()) {
    ImGui::TextDisabled("The inputs are the same as the pinned configuration's.");
  } else if (ImGui::BeginTable("compare_inputs", 3, flags)) {
    ImGui::TableSetupColumn("input that differs");
    ImGui::TableSetupColumn("pinned");
    ImGui::TableSetupColumn("this configuration");
    ImGui::TableHeadersRow();
    for (const ConfigDifference& d : diff) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(d.key.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(d.pinned.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(d.current.c_str());
    }
    ImGui::EndTable();
  }
  record_rect(s, "compare_diff");
  return changed;
}

}  // namespace meshfit::ui
