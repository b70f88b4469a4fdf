// layout_search.cpp — see layout_search.h. Enumeration order: mesh (tp, pp, cp) -> vpp -> ZeRO ->
// micro-batch -> recompute -> SP. A subtree whose smallest-memory member (largest recompute, SP on,
// smallest micro-batch) does not fit is counted out of memory without evaluating the rest:
// activation memory never shrinks with more micro-batch, less recompute or SP off.
#include "layout_search.h"

#include <algorithm>
#include <string_view>

#include "structure.h"
#include "validate.h"

namespace meshfit {

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

SearchResult search_layouts(const Config& base, const SearchOptions& options) {
  SearchResult result;
  result.issues = validate_base(base);
  if (!result.valid()) return result;
  Collector collect(options, result);

  const ModelSpec& model = base.model;
  const TrainingSpec& training = base.training;
  const int64_t gpus = base.cluster.gpus;
  const double capacity = base.gpu.memory_bytes;

  const FrameworkProfile& profile = framework_profile(training.framework);
  std::vector<int64_t> zero_options;
  for (int64_t zero : zero_choices(training.framework))
    if (options.zero[size_t(zero)]) zero_options.push_back(zero);
  // Smallest-memory first, so that the first member of a subtree bounds the rest.
  std::vector<Recompute> recompute_options;
  for (Recompute recompute : {Recompute::kFull, Recompute::kSelective, Recompute::kNone})
    if (options.recompute[size_t(recompute)]) recompute_options.push_back(recompute);
  const std::vector<int64_t> micro_batches = divisors_in(training.global_batch, options.micro_batch);

  Config config = base;  // the one working config, mutated per candidate
  for (int64_t tp : divisors_in(gpus, options.tp)) {
    for (int64_t pp : divisors_in(gpus / tp, options.pp)) {
      for (int64_t cp : divisors_in(gpus / (tp * pp), options.cp)) {
        const int64_t dp = gpus / (tp * pp * cp);
        if (!options.dp.contains(dp)) continue;
        std::vector<int64_t> vpps;
        for (int64_t vpp = options.vpp.min; vpp <= std::min(options.vpp.max, model.layers); ++vpp)
          if (vpp == 1 || pp > 1) vpps.push_back(vpp);
        const std::vector<bool> sp_options =
            tp == 1 ? std::vector<bool>{false}
            : options.sp == SpChoice::kOn  ? std::vector<bool>{true}
            : options.sp == SpChoice::kOff ? std::vector<bool>{false}
                                           : std::vector<bool>{true, false};
        const int64_t per_mb = int64_t(recompute_options.size() * sp_options.size());
        const int64_t per_zero = int64_t(micro_batches.size()) * per_mb;
        const int64_t per_vpp = int64_t(zero_options.size()) * per_zero;
        const int64_t per_mesh = int64_t(vpps.size()) * per_vpp;
        if (per_mesh == 0) continue;

        // Structural rules of the mesh, in validate()'s order.
        if (!tp_divides_heads(model, tp)) { collect.reject(RejectReason::kTpNotDivideHeads, per_mesh); continue; }
        if (!tp_divides_kv_heads(model, tp)) { collect.reject(RejectReason::kTpNotDivideKvHeads, per_mesh); continue; }
        if (!tp_divides_ffn(model, tp)) { collect.reject(RejectReason::kTpNotDivideFfn, per_mesh); continue; }
        if (!cp_fits(training.seq, cp)) { collect.reject(RejectReason::kCpNotDivideSeq, per_mesh); continue; }

        for (int64_t vpp : vpps) {
          Layout& layout = config.layout;
          layout = Layout{dp, tp, pp, cp, vpp, 0, 0, 0};
          if (pp * vpp > model.layers) { collect.reject(RejectReason::kPpExceedsLayers, per_vpp); continue; }
          if (!choose_pipeline_split(model.layers, profile, layout)) {
            collect.reject(vpp > 1 ? RejectReason::kVppNotDivideLayers : RejectReason::kPpNotDivideLayers, per_vpp);
            continue;
          }
          for (int64_t zero : zero_options) {
            layout.zero = zero;
            bool subtree_out_of_memory = false;
            RejectReason subtree_reason = RejectReason::kOutOfMemoryOnlyStage;
            for (int64_t micro_batch : micro_batches) {
              if (!batch_divides(training.global_batch, dp, micro_batch)) { collect.reject(RejectReason::kBatchNotDivisible, per_mb); continue; }
              const int64_t microbatches = training.global_batch / (dp * micro_batch);
              if (!interleave_fits(profile, vpp, microbatches, pp)) {
                collect.reject(RejectReason::kVppMicrobatches, per_mb);
                continue;
              }
              if (subtree_out_of_memory) { collect.reject(subtree_reason, per_mb); continue; }
              config.training.micro_batch = micro_batch;
              for (size_t r = 0; r < recompute_options.size(); ++r) {
                config.training.recompute = recompute_options[r];
                for (size_t s = 0; s < sp_options.size(); ++s) {
                  config.training.sp = sp_options[s];
                  const MemoryPlan plan = plan_memory(config);
                  const RankMemory worst = worst_stage_memory(config, plan);
                  ++result.memory_evaluations;
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
                                            worst.device_bytes > options.memory_limit * capacity))
                    candidate.step = predict_step(config, plan);
                  if (candidate.verdict == Verdict::kOutOfMemory) {
                    const RejectReason reason = oom_reason(worst.role);
                    if (r == 0 && s == 0) {
                      // The smallest-memory member of this micro-batch: everything from here on
                      // (this micro-batch's other variants, larger micro-batches) is out of memory too.
                      subtree_out_of_memory = true;
                      subtree_reason = reason;
                      collect.reject(reason, per_mb);
                      collect.keep_rejected(candidate);
                      r = recompute_options.size();
                      break;
                    }
                    collect.reject(reason);
                    collect.keep_rejected(candidate);
                    continue;
                  }
                  if (worst.device_bytes > options.memory_limit * capacity) {
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
        }
      }
    }
  }
  return result;
}

}  // namespace meshfit
