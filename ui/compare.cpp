// compare.cpp — Compare without ImGui: a pinned configuration beside the edited one (per-rank
// peaks, step time, tokens/s, MFU, and the inputs that differ) as rows, and as the Markdown export's
// section. Both sides are core's estimate() of a Config; the inputs' diff is over config_to_json, the
// schema the CLI's --json and the link use, so a key here is a key there. The native property tests
// build this file with reports.cpp; panel_compare.cpp draws the rows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "app.h"
#include "io/serialize.h"
#include "reports.h"

namespace meshfit::ui {

namespace {

bool usable(const Estimate& e) { return e.valid() && !has_errors(e.memory.issues); }

// "+12.3%" between two positive figures; "" when either is not (no NaN or inf reaches the page).
std::string relative_change(double pinned, double current) {
  if (!(pinned > 0) || !(current >= 0) || !std::isfinite(pinned) || !std::isfinite(current)) return "";
  return signed_percent(current / pinned - 1.0);
}

std::string number(const char* format, double value) {
  if (!std::isfinite(value)) return "-";
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

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
      // Stage i against stage i only when both have as many stages: across pipeline degrees stage 3 is
      // the last of four on one side and a middle one of eight on the other, not the same rank (a
      // review saw "last 3 -> middle 3 (+113.7%)"); the worst ranks above are compared instead.
      const bool same_stages = a_ok && b_ok && a.memory.ranks.size() == b.memory.ranks.size();
      const bool both = same_stages && i < a.memory.ranks.size();
      const std::string change = both ? relative_change(a.memory.ranks[i].device_bytes, b.memory.ranks[i].device_bytes)
                                 : i == 0 && a_ok && b_ok ? "stages differ: not matched"
                                                          : "";
      // Named as the values are ("first 0", "middle 1"): pipeline stage i, counted from 0.
      rows.push_back({ranks == 1 ? std::string("each GPU's peak") : "stage " + std::to_string(i) + " peak", rank(a, a_ok), rank(b, b_ok),
                      change});
    }
    const auto predicted = [](const Estimate& e, bool ok) { return ok && e.step.step_time_s > 0; };
    const bool a_step = predicted(a, a_ok), b_step = predicted(b, b_ok);
    const auto or_dash = [](bool ok, const std::string& text) { return ok ? text : std::string("-"); };
    // The speed of a config that does not fit is that of a run that cannot start: said beside it (a
    // review read "+5.1% tokens/s" for an out-of-memory layout as a gain).
    const auto oom_mark = [](const Estimate& e) { return e.memory.verdict == Verdict::kOutOfMemory ? std::string(" (out of memory)") : ""; };
    rows.push_back({"step time", or_dash(a_step, number("%.2f s", a.step.step_time_s) + oom_mark(a)),
                    or_dash(b_step, number("%.2f s", b.step.step_time_s) + oom_mark(b)),
                    a_step && b_step ? relative_change(a.step.step_time_s, b.step.step_time_s) : ""});
    rows.push_back({"tokens/s/GPU", or_dash(a_step, number("%.0f", a.step.tokens_per_s_per_gpu) + oom_mark(a)),
                    or_dash(b_step, number("%.0f", b.step.tokens_per_s_per_gpu) + oom_mark(b)),
                    a_step && b_step ? relative_change(a.step.tokens_per_s_per_gpu, b.step.tokens_per_s_per_gpu) : ""});
    rows.push_back({"MFU", or_dash(a_step, number("%.1f%%", 100.0 * a.step.mfu)),
                    or_dash(b_step, number("%.1f%%", 100.0 * b.step.mfu)),
                    a_step && b_step ? number("%+.1f pt", 100.0 * (b.step.mfu - a.step.mfu)) : ""});
  }
  return rows;
}

namespace {

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

}  // namespace meshfit::ui
