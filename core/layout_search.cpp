// layout_search.cpp — see layout_search.h. Enumeration order: mesh (tp, pp, cp) -> vpp -> ZeRO ->
// micro-batch -> recompute -> SP. A subtree whose smallest-memory member (largest recompute, SP on,
// smallest micro-batch) does not fit is counted out of memory without evaluating the rest:
// activation memory never shrinks with more micro-batch, less recompute or SP off.
#include "layout_search.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "structure.h"
#include "validate.h"

namespace meshfit {

const char* to_string(RejectReason reason) {
  switch (reason) {
    case RejectReason::kTpNotDivideHeads: return "tp_not_divide_heads";
    case RejectReason::kTpNotDivideKvHeads: return "tp_not_divide_kv_heads";
    case RejectReason::kTpNotDivideFfn: return "tp_not_divide_ffn";
    case RejectReason::kPpExceedsLayers: return "pp_exceeds_layers";
    case RejectReason::kPpNotDivideLayers: return "pp_not_divide_layers";
    case RejectReason::kVppNotDivideLayers: return "vpp_not_divide_layers";
    case RejectReason::kVppMicrobatches: return "vpp_microbatches";
    case RejectReason::kCpNotDivideSeq: return "cp_not_divide_seq";
    case RejectReason::kBatchNotDivisible: return "batch_not_divisible";
    case RejectReason::kOutOfMemoryFirstStage: return "oom_first_stage";
    case RejectReason::kOutOfMemoryMiddleStage: return "oom_middle_stage";
    case RejectReason::kOutOfMemoryLastStage: return "oom_last_stage";
    case RejectReason::kOutOfMemoryOnlyStage: return "oom_only_stage";
    case RejectReason::kOverMemoryLimit: return "over_memory_limit";
  }
  return "?";
}

namespace {

std::vector<int64_t> divisors_in(int64_t n, const Range& range) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    if (range.contains(d)) out.push_back(d);
    if (d != n / d && range.contains(n / d)) out.push_back(n / d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

RejectReason oom_reason(const char* role) {
  const std::string_view r(role);
  if (r == "first") return RejectReason::kOutOfMemoryFirstStage;
  if (r == "last") return RejectReason::kOutOfMemoryLastStage;
  if (r == "middle") return RejectReason::kOutOfMemoryMiddleStage;
  return RejectReason::kOutOfMemoryOnlyStage;
}

class Collector {
 public:
  explicit Collector(const SearchOptions& options, SearchResult& result) : options_(options), result_(result) {}

  void reject(RejectReason reason, int64_t count = 1) {
    result_.rejected[size_t(reason)] += count;
    result_.evaluated += count;
  }

  void add(const LayoutCandidate& candidate) {
    ++result_.evaluated;
    if (options_.keep_all_max > int64_t(result_.all.size())) result_.all.push_back(candidate);
    if (!candidate.feasible) return;
    ++result_.feasible;
    add_top(candidate);
    add_pareto(candidate);
  }

  bool keeping() const { return options_.keep_all_max > int64_t(result_.all.size()); }

  void keep_rejected(const LayoutCandidate& candidate) {
    if (keeping()) result_.all.push_back(candidate);
  }

 private:
  static bool better(const LayoutCandidate& a, const LayoutCandidate& b) {
    if (a.step.tokens_per_s_per_gpu != b.step.tokens_per_s_per_gpu)
      return a.step.tokens_per_s_per_gpu > b.step.tokens_per_s_per_gpu;
    return a.device_bytes < b.device_bytes;
  }

  void add_top(const LayoutCandidate& candidate) {
    std::vector<LayoutCandidate>& top = result_.top;
    if (int64_t(top.size()) >= options_.top_k && !better(candidate, top.back())) return;
    top.insert(std::upper_bound(top.begin(), top.end(), candidate, better), candidate);
    if (int64_t(top.size()) > options_.top_k) top.pop_back();
  }

  // Front sorted by ascending memory with strictly rising throughput.
  void add_pareto(const LayoutCandidate& candidate) {
    std::vector<LayoutCandidate>& front = result_.pareto;
    for (const LayoutCandidate& kept : front)
      if (kept.device_bytes <= candidate.device_bytes &&
          kept.step.tokens_per_s_per_gpu >= candidate.step.tokens_per_s_per_gpu)
        return;  // dominated
    front.erase(std::remove_if(front.begin(), front.end(),
                               [&](const LayoutCandidate& kept) {
                                 return candidate.device_bytes <= kept.device_bytes &&
                                        candidate.step.tokens_per_s_per_gpu >= kept.step.tokens_per_s_per_gpu;
                               }),
                front.end());
    const auto position = std::lower_bound(front.begin(), front.end(), candidate,
                                           [](const LayoutCandidate& a, const LayoutCandidate& b) {
                                             return a.device_bytes < b.device_bytes;
                                           });
    front.insert(position, candidate);
  }

  const SearchOptions& options_;
  SearchResult& result_;
};

// Issues of the non-layout inputs: validate with a neutral layout and drop what depends on it.
std::vector<Issue> validate_base(const Config& base) {
  Config neutral = base;
  neutral.layout = Layout{};
  neutral.layout.zero = framework_profile(base.training.framework).default_zero;
  std::vector<Issue> issues;
  for (const Issue& issue : validate(neutral)) {
    switch (issue.code) {
      case IssueCode::kBatchNotDivisible:
      case IssueCode::kVppMicrobatches:
      case IssueCode::kPpNotDivideLayers:
        continue;
      default:
        issues.push_back(issue);
    }
  }
  return issues;
}

}  // namespace

LayoutSearch::LayoutSearch(const Config& base, const SearchOptions& options) : config_(base), options_(options) {
  result_.issues = validate_base(base);
  if (!result_.valid()) {
    done_ = true;
    return;
  }
  const TrainingSpec& training = base.training;
  for (int64_t zero : zero_choices(training.framework))
    if (options.zero[size_t(zero)]) zero_options_.push_back(zero);
  // Smallest-memory first, so that the first member of a subtree bounds the rest.
  for (Recompute recompute : {Recompute::kFull, Recompute::kSelective, Recompute::kNone})
    if (options.recompute[size_t(recompute)]) recompute_options_.push_back(recompute);
  micro_batches_ = divisors_in(training.global_batch, options.micro_batch);
  tps_ = divisors_in(base.cluster.gpus, options.tp);
}

double LayoutSearch::progress() const {
  if (done_) return 1.0;
  const double fraction = mesh_fraction();
  // The budget bounds the work too: whichever end is nearer.
  const double spent = options_.budget > 0 ? double(result_.work) / double(options_.budget) : 0.0;
  return std::min(std::max(fraction, spent), 1.0);
}

double LayoutSearch::mesh_fraction() const {
  if (tps_.empty() || !started_) return 0.0;
  double fraction = 0.0, scale = 1.0 / double(tps_.size());
  fraction += double(ti_) * scale;
  if (!pps_.empty()) {
    scale /= double(pps_.size());
    fraction += double(pi_) * scale;
    if (!cps_.empty()) fraction += double(ci_) * scale / double(cps_.size());
  }
  return std::min(fraction, 1.0);
}

void LayoutSearch::load_pp() {
  pps_ = ti_ < tps_.size() ? divisors_in(config_.cluster.gpus / tps_[ti_], options_.pp) : std::vector<int64_t>{};
  pi_ = 0;
  load_cp();
}

void LayoutSearch::load_cp() {
  cps_ = pi_ < pps_.size() ? divisors_in(config_.cluster.gpus / (tps_[ti_] * pps_[pi_]), options_.cp)
                           : std::vector<int64_t>{};
  ci_ = 0;
}

bool LayoutSearch::next_mesh() {
  const ModelSpec& model = config_.model;
  const TrainingSpec& training = config_.training;
  // Advance the cursor (tp outer, then pp, then cp) to the next triple.
  if (!started_) {
    started_ = true;
    ti_ = 0;
    load_pp();
  } else {
    ++ci_;
  }
  for (;;) {
    if (ti_ >= tps_.size()) return false;
    if (pi_ < pps_.size() && ci_ < cps_.size()) break;
    if (pi_ < pps_.size()) {
      ++pi_;
      load_cp();
    } else {
      ++ti_;
      load_pp();
    }
  }
  ++result_.work;
  const int64_t gpus = config_.cluster.gpus;
  const int64_t tp = tps_[ti_], pp = pps_[pi_], cp = cps_[ci_];
  const int64_t dp = gpus / (tp * pp * cp);
  in_mesh_ = false;
  if (!options_.dp.contains(dp)) return true;
  vpps_.clear();
  for (int64_t vpp = options_.vpp.min; vpp <= std::min(options_.vpp.max, model.layers); ++vpp)
    if (vpp == 1 || pp > 1) vpps_.push_back(vpp);
  sp_options_ = tp == 1 ? std::vector<bool>{false}
                : options_.sp == SpChoice::kOn  ? std::vector<bool>{true}
                : options_.sp == SpChoice::kOff ? std::vector<bool>{false}
                                                : std::vector<bool>{true, false};
  per_mb_ = int64_t(recompute_options_.size() * sp_options_.size());
  const int64_t per_zero = int64_t(micro_batches_.size()) * per_mb_;
  per_vpp_ = int64_t(zero_options_.size()) * per_zero;
  const int64_t per_mesh = int64_t(vpps_.size()) * per_vpp_;
  if (per_mesh == 0) return true;

  // Structural rules of the mesh, in validate()'s order.
  Collector collect(options_, result_);
  if (!tp_divides_heads(model, tp)) { collect.reject(RejectReason::kTpNotDivideHeads, per_mesh); return true; }
  if (!tp_divides_kv_heads(model, tp)) { collect.reject(RejectReason::kTpNotDivideKvHeads, per_mesh); return true; }
  if (!tp_divides_ffn(model, tp)) { collect.reject(RejectReason::kTpNotDivideFfn, per_mesh); return true; }
  if (!cp_fits(training.seq, cp)) { collect.reject(RejectReason::kCpNotDivideSeq, per_mesh); return true; }
  in_mesh_ = true;
  in_vpp_ = false;
  vi_ = zi_ = 0;
  return true;
}

bool LayoutSearch::enter_vpp() {
  const ModelSpec& model = config_.model;
  const int64_t gpus = config_.cluster.gpus;
  const int64_t tp = tps_[ti_], pp = pps_[pi_], cp = cps_[ci_], vpp = vpps_[vi_];
  ++result_.work;
  Collector collect(options_, result_);
  Layout& layout = config_.layout;
  layout = Layout{gpus / (tp * pp * cp), tp, pp, cp, vpp, 0, 0, 0};
  if (pp * vpp > model.layers) { collect.reject(RejectReason::kPpExceedsLayers, per_vpp_); return false; }
  if (!choose_pipeline_split(model.layers, framework_profile(config_.training.framework), layout)) {
    collect.reject(vpp > 1 ? RejectReason::kVppNotDivideLayers : RejectReason::kPpNotDivideLayers, per_vpp_);
    return false;
  }
  return true;
}

void LayoutSearch::run_micro_batch() {
  Collector collect(options_, result_);
  Config& config = config_;
  const TrainingSpec& training = config.training;
  Layout& layout = config.layout;
  const int64_t dp = layout.dp, pp = layout.pp, vpp = layout.vpp;
  const double capacity = config.gpu.memory_bytes;
  const FrameworkProfile& profile = framework_profile(training.framework);
  const int64_t per_mb = per_mb_;
  const std::vector<Recompute>& recompute_options = recompute_options_;
  const std::vector<bool>& sp_options = sp_options_;
  layout.zero = zero_options_[zi_];
  if (mi_ == 0) subtree_out_of_memory_ = false;
  const int64_t micro_batch = micro_batches_[mi_];
  ++result_.work;
  {
    if (!batch_divides(training.global_batch, dp, micro_batch)) { collect.reject(RejectReason::kBatchNotDivisible, per_mb); return; }
    const int64_t microbatches = training.global_batch / (dp * micro_batch);
    if (!interleave_fits(profile, vpp, microbatches, pp)) {
      collect.reject(RejectReason::kVppMicrobatches, per_mb);
      return;
    }
    if (subtree_out_of_memory_) { collect.reject(subtree_reason_, per_mb); return; }
    config.training.micro_batch = micro_batch;
    for (size_t r = 0; r < recompute_options.size(); ++r) {
      config.training.recompute = recompute_options[r];
      for (size_t s = 0; s < sp_options.size(); ++s) {
        config.training.sp = sp_options[s];
        const MemoryPlan plan = plan_memory(config);
        const RankMemory worst = worst_stage_memory(config, plan);
        ++result_.memory_evaluations;
        ++result_.work;
        LayoutCandidate candidate;
        candidate.layout = layout;
        candidate.micro_batch = micro_batch;
        candidate.recompute = recompute_options[r];
        candidate.sp = sp_options[s];
        candidate.peak_allocated_bytes = worst.peak_allocated_bytes;
        candidate.peak_reserved_bytes = worst.peak_reserved_bytes;
        candidate.device_bytes = worst.device_bytes;
        candidate.worst_role = worst.role;
        candidate.worst_stage = worst.pp_stage;
        candidate.verdict = verdict_for(worst.device_bytes, capacity, training.headroom);
        // Kept rejected candidates get a speed too, so a scatter can place them.
        if (collect.keeping() && (candidate.verdict == Verdict::kOutOfMemory ||
                                  worst.device_bytes > options_.memory_limit * capacity))
          candidate.step = predict_step(config, plan);
        if (candidate.verdict == Verdict::kOutOfMemory) {
          const RejectReason reason = oom_reason(worst.role);
          if (r == 0 && s == 0) {
            // The smallest-memory member of this micro-batch: everything from here on
            // (this micro-batch's other variants, larger micro-batches) is out of memory too.
            subtree_out_of_memory_ = true;
            subtree_reason_ = reason;
            collect.reject(reason, per_mb);
            collect.keep_rejected(candidate);
            r = recompute_options.size();
            break;
          }
          collect.reject(reason);
          collect.keep_rejected(candidate);
          continue;
        }
        if (worst.device_bytes > options_.memory_limit * capacity) {
          collect.reject(RejectReason::kOverMemoryLimit);
          collect.keep_rejected(candidate);
          continue;
        }
        candidate.feasible = true;
        candidate.step = predict_step(config, plan);
        collect.add(candidate);
      }
    }
  }
}

bool LayoutSearch::advance(int64_t work) {
  const int64_t stop = result_.work + std::max<int64_t>(work, 1);
  while (!done_ && result_.work < stop) {
    if (result_.work >= options_.budget) {
      finish(false);
      break;
    }
    if (!in_mesh_) {
      if (!next_mesh()) finish(true);
      continue;
    }
    if (vi_ >= vpps_.size()) {
      in_mesh_ = false;
      continue;
    }
    if (!in_vpp_) {
      if (!enter_vpp()) {
        ++vi_;
        continue;
      }
      in_vpp_ = true;
      zi_ = mi_ = 0;
    }
    // One micro-batch (at most recompute x SP = 6 memory evaluations) per step.
    if (zi_ < zero_options_.size() && mi_ < micro_batches_.size()) run_micro_batch();
    if (++mi_ >= micro_batches_.size()) {
      mi_ = 0;
      if (++zi_ >= zero_options_.size()) {
        in_vpp_ = false;
        ++vi_;
      }
    }
  }
  return done_;
}

void LayoutSearch::finish(bool complete) {
  char visited[16];
  std::snprintf(visited, sizeof visited, "%.1f", 100.0 * mesh_fraction());
  done_ = true;
  result_.complete = complete;
  if (!complete)
    result_.issues.push_back(
        {IssueCode::kSearchCutShort, Severity::kWarning, "budget",
         "the search stopped at its budget of " + std::to_string(options_.budget) +
             " work units (layout meshes visited plus memory evaluations) with " +
             visited +
             "% of the layout meshes visited: the layouts listed are the best found so far. Pin or bound "
             "dimensions (tp, pp, max_vpp, ...) or raise the budget for a complete search."});
}

SearchResult search_layouts(const Config& base, const SearchOptions& options) {
  LayoutSearch search(base, options);
  while (!search.advance(kMaxSearchBudget)) {
  }
  return search.take_result();
}

}  // namespace meshfit
