// layout_repair.cpp — see layout_repair.h. Enumerates the degrees the choosers offer (structure.h)
// around the current layout, scores each by how far it moves, and returns the closest that
// validate() accepts.
#include "search/layout_repair.h"

#include <algorithm>
#include <cmath>

#include "memory/finetune.h"
#include "spec/structure.h"
#include "spec/validate.h"

namespace meshfit {

bool is_layout_issue(const Issue& issue) {
  // QLoRA's 4-bit layers refuse tp > 1 (validate.cpp, named on tp): a layout with tp 1 helps.
  if (issue.code == IssueCode::kFinetuneUnsupported && issue.field == "tp") return true;
  switch (issue.code) {
    case IssueCode::kLayoutProductMismatch:
    case IssueCode::kTpNotDivideHeads:
    case IssueCode::kTpNotDivideKvHeads:
    case IssueCode::kTpNotDivideFfn:
    case IssueCode::kPpExceedsLayers:
    case IssueCode::kPpNotDivideLayers:
    case IssueCode::kVppNotDivideLayers:
    case IssueCode::kVppWithoutPp:
    case IssueCode::kVppUnsupported:
    case IssueCode::kVppMicrobatches:
    case IssueCode::kStageLayersInvalid:
    case IssueCode::kBatchNotDivisible:
    case IssueCode::kCpNotDivideSeq:
    case IssueCode::kZeroUnsupported:
    case IssueCode::kReplicasInvalid:
    case IssueCode::kHpzInvalid:
      return true;
    default:
      return false;
  }
}

std::string LayoutRepair::summary() const {
  std::string out;
  for (const LayoutChange& change : changes) {
    if (!out.empty()) out += ", ";
    out += std::string(change.field) + " " + std::to_string(change.from) + " \xE2\x86\x92 " +  // U+2192 →
           (std::string(change.field) == "dp" && change.to == 0 ? std::string("derived") : std::to_string(change.to));
  }
  if (!out.empty() && !reason.empty()) out += ": " + reason;
  return out;
}

namespace {

struct Scored {
  double cost = 0;
  Layout layout;
  int64_t micro_batch = 1;
};

double move_cost(int64_t from, int64_t to, bool pinned) {
  if (from == to) return 0;
  const double size = from > 0 && to > 0 ? std::fabs(std::log2(double(to) / double(from))) : 4.0;
  return (pinned ? 1000.0 : 10.0) + size;  // each moved dimension first, then how far it moved
}

}  // namespace

LayoutRepair nearest_valid_layout(const Config& config, const LayoutPins& pins) {
  LayoutRepair repair;
  repair.config = config;
  const std::vector<Issue> issues = validate(config);
  const Issue* first_layout_error = nullptr;
  for (const Issue& issue : issues) {
    if (issue.severity != Severity::kError) continue;
    if (!is_layout_issue(issue)) return repair;  // a non-layout error: no layout can help
    if (first_layout_error == nullptr) first_layout_error = &issue;
  }
  if (first_layout_error == nullptr) return repair;

  const Layout& from = config.layout;
  const TrainingSpec& t = config.training;
  const FrameworkProfile& profile = framework_profile(t.framework);
  std::vector<Scored> candidates;
  Config probe = config;
  probe.layout.dp = 0;  // the repaired layout derives dp from the GPU count
  // A fine-tune's repair moves only to layouts its stack can launch, as the search does (an as-a-user
  // review saw the page move a LoRA run to cp 4 and then warn that its stack cannot run it).
  const DegreeLimits limits = finetune_degree_limits(t);
  const auto allowed = [](int64_t limit, int64_t degree) { return limit == 0 || degree <= limit; };
  for (int64_t tp : tp_choices(probe)) {
    if (!allowed(limits.tp, tp)) continue;
    probe.layout.tp = tp;
    for (int64_t pp : pp_choices(probe)) {
      if (!allowed(limits.pp, pp)) continue;
      probe.layout.pp = pp;
      for (int64_t cp : cp_choices(probe)) {
        if (!allowed(limits.cp, cp)) continue;
        probe.layout.cp = cp;
        const int64_t dp = config.cluster.gpus / (tp * pp * cp);
        if (dp <= 0 || t.global_batch % dp != 0) continue;
        for (int64_t vpp : vpp_choices(probe)) {
          Layout layout = probe.layout;
          layout.vpp = vpp;
          // Keep the user's split when it still holds; otherwise the split the search would use.
          if (pp != from.pp || vpp != from.vpp || pipeline_problem(config.model.layers, layout, profile)) {
            if (!choose_pipeline_split(config.model.layers, profile, layout)) continue;
          }
          const double mesh_cost = move_cost(from.tp, tp, pins.tp) + move_cost(from.pp, pp, pins.pp) +
                                   move_cost(from.cp, cp, pins.cp) + move_cost(from.vpp, vpp, pins.vpp) +
                                   (from.dp != 0 && from.dp != dp ? 10.0 : 0.0);
          for (int64_t zero : zero_choices(t.framework)) {
            layout.zero = zero;
            // The user's replicas where they still hold, else the most below them that do (structure.h).
            layout.dp_replicate = most_replicas_holding(profile, from.dp_replicate, zero, dp, cp);
            layout.hpz_partition_size = most_hpz_holding(t.framework, from.hpz_partition_size, layout, dp);
            // A smaller group size moves no degree of the mesh: cheaper than moving one (half a dimension).
            const auto group_cost = [](int64_t was, int64_t now) { return was == now ? 0.0 : 0.5 * move_cost(was, now, false); };
            const double replicas_cost = group_cost(from.dp_replicate, layout.dp_replicate) +
                                         group_cost(from.hpz_partition_size, layout.hpz_partition_size);
            const double zero_cost =
                (from.zero == zero ? 0 : (pins.zero ? 1000.0 : 10.0) + double(std::llabs(zero - from.zero))) + replicas_cost;
            // The micro-batch: the current one when it divides, else the nearest that does.
            const int64_t per_dp = t.global_batch / dp;
            for (int64_t mb = 1; mb <= per_dp && mb <= std::max<int64_t>(64, t.micro_batch); ++mb) {
              if (per_dp % mb != 0 || !interleave_fits(profile, vpp, per_dp / mb, pp)) continue;
              candidates.push_back({mesh_cost + zero_cost + move_cost(t.micro_batch, mb, pins.micro_batch), layout, mb});
            }
          }
        }
      }
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Scored& a, const Scored& b) { return a.cost < b.cost; });
  for (size_t i = 0; i < candidates.size() && i < 64; ++i) {
    Config moved = config;
    moved.layout = candidates[i].layout;
    moved.training.micro_batch = candidates[i].micro_batch;
    if (has_errors(validate(moved))) continue;
    repair.config = moved;
    repair.reason = first_layout_error->message;
    const Layout& to = moved.layout;
    const std::pair<const char*, std::pair<int64_t, int64_t>> fields[] = {
        {"tp", {from.tp, to.tp}}, {"pp", {from.pp, to.pp}}, {"cp", {from.cp, to.cp}}, {"vpp", {from.vpp, to.vpp}},
        {"zero", {from.zero, to.zero}}, {"micro_batch", {t.micro_batch, moved.training.micro_batch}},
        {"dp", {from.dp, to.dp}}, {"dp_replicate", {from.dp_replicate, to.dp_replicate}},
        {"hpz_partition_size", {from.hpz_partition_size, to.hpz_partition_size}},
        // The uneven split too: a repair that only re-split the stages was no move, so the page kept the
        // broken one (an as-a-user review saw 405B's pp=4 left INVALID, asking for fields it lacks).
        {"pp_first_stage_layers", {from.pp_first_stage_layers, to.pp_first_stage_layers}},
        {"pp_last_stage_layers", {from.pp_last_stage_layers, to.pp_last_stage_layers}}};
    for (const auto& [field, values] : fields)
      if (values.first != values.second) repair.changes.push_back({field, values.first, values.second});
    break;
  }
  return repair;
}

}  // namespace meshfit
