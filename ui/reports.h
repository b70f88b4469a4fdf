// reports.h — the byte formats the panels and the exports share (reports.cpp; no ImGui, so the
// native tests use them too). The exports themselves are declared in app.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "app_state.h"
#include "io/number_text.h"  // format_count

namespace meshfit::ui {

std::string format_bytes(const AppState& s, double bytes, int decimals = 2);  // "12.34 GiB" / "13.25 GB" / "12636 MiB"
double unit_bytes(const AppState& s);    // bytes in the chosen unit (kGiB, kGB or kMiB)
double unit_value(const AppState& s, double bytes);
const char* unit_label(const AppState& s);  // "GiB", "GB" or "MiB"
// A signed share as the tables print it: "+1.2%", "-0.4%", and "0.0%" where it rounds to zero (the
// agreeing rows printed "-0.0%" by the dozen).
std::string signed_percent(double fraction);
// An axis step of 1, 2 or 5 x 10^n that cuts `span` into about `ticks` parts (span > 0).
double nice_step(double span, double ticks);
// The predicted tokens/s/GPU and MFU with their validation error band, and the time to train when
// tokens_to_train is set; "" when the step is not predicted.
std::string throughput_text(const AppState& s);
// How far to trust the worst rank's peak (memory_band.h), and, when the capacity lies within that
// error of it, that the verdict could go either way: "Peak memory ±3%, the median error on ...".
std::string memory_band_line(const AppState& s);
// The run's non-empty free-text fields (FieldGroup::kRun), one {key, text} each, newlines flattened.
std::vector<std::pair<std::string, std::string>> run_texts(const Config& config);
std::string rank_name(const RankMemory& rank, size_t ranks);                  // "first 0", or "only"
// A layout's replicated shard groups after its dp: " (r4)" = four replicas of each group; "" for none.
std::string replicas_mark(const Layout& layout);


// Compare (compare.cpp): a pinned configuration beside the edited one.
struct ConfigDifference {
  std::string key, pinned, current;    // a config_to_json key and its two values as text
};
std::vector<ConfigDifference> config_differences(const Config& pinned, const Config& current);
void pin_config(AppState& s, const Config& config);  // pins `config` for Compare (computes its estimate)
void unpin(AppState& s);
std::string compare_markdown(const AppState& s);  // the Compare section of the Markdown ("" when nothing is pinned)
struct CompareRow {
  std::string label, pinned, current, change;
};
std::vector<CompareRow> compare_rows(const AppState& s);  // the rows both the page and the Markdown show, in units of the view

}  // namespace meshfit::ui
