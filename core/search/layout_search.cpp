// layout_search.cpp — see layout_search.h. Enumeration order: mesh (tp, pp, cp) -> vpp -> ZeRO ->
// micro-batch -> recompute -> SP. A subtree whose smallest-memory member (largest recompute, SP on,
// smallest micro-batch) does not fit is counted out of memory without evaluating the rest:
// activation memory never shrinks with more micro-batch, less recompute or SP off.
#include "search/layout_search.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "spec/structure.h"
#include "spec/validate.h"

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
  // The search ranks by step time: a GPU without compute or bandwidth figures (a custom GPU given
  // only its memory; estimate() still answers the memory question) cannot be ranked.
  if (!(base.gpu.bf16_flops > 0))
    issues.push_back({IssueCode::kNotPositive, Severity::kError, "gpu_bf16_tflops",
                      "the layout search ranks by step time: give the custom GPU its dense BF16 TFLOP/s (gpu_bf16_tflops)."});
  if (!(base.gpu.hbm_bytes_per_s > 0))
    issues.push_back({IssueCode::kNotPositive, Severity::kError, "gpu_hbm_tbps",
                      "the layout search ranks by step time: give the custom GPU its memory bandwidth in TB/s (gpu_hbm_tbps)."});
  return issues;
}

// One search: the options' choices resolved once, the working config mutated per candidate.
// Levels: mesh (tp, pp, cp) -> vpp -> ZeRO -> micro-batch subtree -> recompute x SP candidates.
class Search {
 public:
  Search(const Config& base, const SearchOptions& options, SearchResult& result)
      : options_(options), result_(result), collect_(options, result), config_(base),
        profile_(framework_profile(base.training.framework)), capacity_(base.gpu.memory_bytes) {
    for (int64_t zero : zero_choices(base.training.framework))
      if (options.zero[size_t(zero)]) zero_options_.push_back(zero);
    // Smallest-memory first, so that the first member of a subtree bounds the rest.
    for (Recompute recompute : {Recompute::kFull, Recompute::kSelective, Recompute::kNone})
      if (options.recompute[size_t(recompute)]) recompute_options_.push_back(recompute);
    micro_batches_ = divisors_in(base.training.global_batch, options.micro_batch);
  }

  void run() {
    const int64_t gpus = config_.cluster.gpus;
    for (int64_t tp : divisors_in(gpus, options_.tp))
      for (int64_t pp : divisors_in(gpus / tp, options_.pp))
        for (int64_t cp : divisors_in(gpus / (tp * pp), options_.cp)) mesh(tp, pp, cp, gpus / (tp * pp * cp));
  }

 private:
  void mesh(int64_t tp, int64_t pp, int64_t cp, int64_t dp) {
    const ModelSpec& model = config_.model;
    if (!options_.dp.contains(dp)) return;
    std::vector<int64_t> vpps;
    for (int64_t vpp = options_.vpp.min; vpp <= std::min(options_.vpp.max, model.layers); ++vpp)
      if (vpp == 1 || pp > 1) vpps.push_back(vpp);
    sp_options_ = tp == 1                          ? std::vector<bool>{false}
                  : options_.sp == SpChoice::kOn  ? std::vector<bool>{true}
                  : options_.sp == SpChoice::kOff ? std::vector<bool>{false}
                                                  : std::vector<bool>{true, false};
    per_mb_ = int64_t(recompute_options_.size() * sp_options_.size());
    const int64_t per_vpp = int64_t(zero_options_.size()) * int64_t(micro_batches_.size()) * per_mb_;
    const int64_t per_mesh = int64_t(vpps.size()) * per_vpp;
    if (per_mesh == 0) return;

    // Structural rules of the mesh (structure.h), in validate()'s order.
    if (!tp_divides_heads(model, tp)) return collect_.reject(RejectReason::kTpNotDivideHeads, per_mesh);
    if (!tp_divides_kv_heads(model, tp)) return collect_.reject(RejectReason::kTpNotDivideKvHeads, per_mesh);
    if (!tp_divides_ffn(model, tp)) return collect_.reject(RejectReason::kTpNotDivideFfn, per_mesh);
    if (!cp_fits(config_.training.seq, cp)) return collect_.reject(RejectReason::kCpNotDivideSeq, per_mesh);

    for (int64_t vpp : vpps) {
      Layout& layout = config_.layout;
      layout = Layout{dp, tp, pp, cp, vpp, 0, 0, 0};
      if (pp * vpp > model.layers) {
        collect_.reject(RejectReason::kPpExceedsLayers, per_vpp);
        continue;
      }
      if (!choose_pipeline_split(model.layers, profile_, layout)) {
        collect_.reject(vpp > 1 ? RejectReason::kVppNotDivideLayers : RejectReason::kPpNotDivideLayers, per_vpp);
        continue;
      }
      for (int64_t zero : zero_options_) {
        layout.zero = zero;
        micro_batch_subtree();
      }
    }
  }

  // Every micro-batch of the current layout and ZeRO stage, smallest first: once the smallest-memory
  // member of one is out of memory, every larger micro-batch is too and is counted without memory math.
  void micro_batch_subtree() {
    const TrainingSpec& training = config_.training;
    const Layout& layout = config_.layout;
    std::optional<RejectReason> subtree_out_of_memory;
    for (int64_t micro_batch : micro_batches_) {
      if (!batch_divides(training.global_batch, layout.dp, micro_batch)) {
        collect_.reject(RejectReason::kBatchNotDivisible, per_mb_);
        continue;
      }
      if (!interleave_fits(profile_, layout.vpp, training.global_batch / (layout.dp * micro_batch), layout.pp)) {
        collect_.reject(RejectReason::kVppMicrobatches, per_mb_);
        continue;
      }
      if (subtree_out_of_memory) {
        collect_.reject(*subtree_out_of_memory, per_mb_);
        continue;
      }
      config_.training.micro_batch = micro_batch;
      for (size_t r = 0; r < recompute_options_.size() && !subtree_out_of_memory; ++r) {
        config_.training.recompute = recompute_options_[r];
        for (size_t s = 0; s < sp_options_.size(); ++s) {
          config_.training.sp = sp_options_[s];
          const LayoutCandidate candidate = evaluate();
          if (candidate.verdict == Verdict::kOutOfMemory) {
            const RejectReason reason = oom_reason(candidate.worst_role);
            if (r == 0 && s == 0) {
              // The smallest-memory member of this micro-batch: everything from here on (this
              // micro-batch's other variants, larger micro-batches) is out of memory too.
              subtree_out_of_memory = reason;
              collect_.reject(reason, per_mb_);
              collect_.keep_rejected(candidate);
              break;
            }
            collect_.reject(reason);
            collect_.keep_rejected(candidate);
          } else if (!candidate.feasible) {
            collect_.reject(RejectReason::kOverMemoryLimit);
            collect_.keep_rejected(candidate);
          } else {
            collect_.add(candidate);
          }
        }
      }
    }
  }

  // The working config's worst stage, verdict and (when kept or feasible) step time.
  LayoutCandidate evaluate() {
    const MemoryPlan plan = plan_memory(config_);
    const RankMemory worst = worst_stage_memory(config_, plan);
    ++result_.memory_evaluations;
    LayoutCandidate candidate;
    candidate.layout = config_.layout;
    candidate.micro_batch = config_.training.micro_batch;
    candidate.recompute = config_.training.recompute;
    candidate.sp = config_.training.sp;
    candidate.peak_allocated_bytes = worst.peak_allocated_bytes;
    candidate.peak_reserved_bytes = worst.peak_reserved_bytes;
    candidate.device_bytes = worst.device_bytes;
    candidate.worst_role = worst.role;
    candidate.worst_stage = worst.pp_stage;
    candidate.verdict = verdict_for(worst.device_bytes, capacity_, config_.training.headroom);
    candidate.feasible = candidate.verdict != Verdict::kOutOfMemory && worst.device_bytes <= options_.memory_limit * capacity_;
    // Kept rejected candidates get a speed too, so a scatter can place them.
    if (candidate.feasible || collect_.keeping()) candidate.step = predict_step(config_, plan);
    return candidate;
  }

  const SearchOptions& options_;
  SearchResult& result_;
  Collector collect_;
  Config config_;  // the one working config, mutated per candidate
  const FrameworkProfile& profile_;
  const double capacity_;
  std::vector<int64_t> zero_options_;
  std::vector<Recompute> recompute_options_;
  std::vector<int64_t> micro_batches_;
  std::vector<bool> sp_options_;  // of the current mesh
  int64_t per_mb_ = 0;            // candidates under one micro-batch of the current mesh
};

}  // namespace

SearchResult search_layouts(const Config& base, const SearchOptions& options) {
  SearchResult result;
  result.issues = validate_base(base);
  if (!result.valid()) return result;
  Search(base, options, result).run();
  return result;
}

}  // namespace meshfit
