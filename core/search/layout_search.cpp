// layout_search.cpp — see layout_search.h. Enumeration order: mesh (tp, pp, cp) -> vpp -> ZeRO ->
// micro-batch -> recompute -> SP. A subtree whose smallest-memory member (largest recompute, SP on,
// smallest micro-batch) does not fit is counted out of memory without evaluating the rest:
// activation memory never shrinks with more micro-batch, less recompute or SP off.
#include "search/layout_search.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "memory/finetune.h"
#include "spec/structure.h"
#include "spec/validate.h"

namespace meshfit {

namespace {

std::vector<int64_t> divisors_in(int64_t n, const Range& range) {
  std::vector<int64_t> out;
  for (int64_t d : divisors(n))
    if (range.contains(d)) out.push_back(d);
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
    if (candidate.spatial_temporal()) add_spatial_temporal(candidate);
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

  void add_spatial_temporal(const LayoutCandidate& candidate) {
    constexpr size_t kKept = 5;
    std::vector<LayoutCandidate>& best = result_.spatial_temporal_top;
    if (best.size() >= kKept && !better(candidate, best.back())) return;
    best.insert(std::upper_bound(best.begin(), best.end(), candidate, better), candidate);
    if (best.size() > kKept) best.pop_back();
  }

  // Front by ascending memory with strictly rising throughput, kept in a map: every feasible layout
  // of a crafted 10000-layer link was on the front, and a vector's scan and insert per candidate
  // made the search quadratic (120k candidates: 67 s for a 2 s search).
  void add_pareto(const LayoutCandidate& candidate) {
    const double tokens = candidate.step.tokens_per_s_per_gpu;
    const auto above = front_.upper_bound(candidate.device_bytes);  // the first with more memory
    // With throughput rising along the front, the fastest with no more memory is the one just below.
    if (above != front_.begin() && std::prev(above)->second.step.tokens_per_s_per_gpu >= tokens) return;  // dominated
    auto from = front_.lower_bound(candidate.device_bytes), to = from;
    while (to != front_.end() && to->second.step.tokens_per_s_per_gpu <= tokens) ++to;  // now dominated by it
    front_.erase(from, to);
    front_.emplace(candidate.device_bytes, candidate);
    front_changed_ = true;
  }

 public:
  // result.pareto as a vector, ascending memory (after each slice of the search and at its end).
  void publish() {
    if (!front_changed_) return;
    result_.pareto.clear();
    result_.pareto.reserve(front_.size());
    for (const auto& kept : front_) result_.pareto.push_back(kept.second);
    front_changed_ = false;
  }

 private:
  const SearchOptions& options_;
  SearchResult& result_;
  std::map<double, LayoutCandidate> front_;
  bool front_changed_ = false;
};

// Issues of the non-layout inputs: validate with a neutral layout and drop what depends on it.
std::vector<Issue> validate_base(const Config& base) {
  Config neutral = base;
  const FrameworkProfile& profile = framework_profile(base.training.framework);
  neutral.layout = Layout{};
  neutral.layout.zero = profile.default_zero;
  // The user's replicas are checked as a count, and against a framework that has none; whether they
  // hold depends on each layout's dp and stage (Search keeps them where they do).
  neutral.layout.dp_replicate = base.layout.dp_replicate;
  neutral.layout.hpz_partition_size = base.layout.hpz_partition_size;  // likewise DeepSpeed's hpZ
  std::vector<Issue> issues;
  for (const Issue& issue : validate(neutral)) {
    if (issue.code == IssueCode::kReplicasInvalid && profile.replicas_mechanism != nullptr) continue;
    if (issue.code == IssueCode::kHpzInvalid && base.training.framework == Framework::kDeepSpeed) continue;
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
// Resumable: step() does one unit (a mesh, a vpp node or one micro-batch's at most 6 candidates)
// and keeps its place in a cursor, so that LayoutSearch can run it in slices.
class Search {
 public:
  Search(const Config& base, const SearchOptions& options, SearchResult& result)
      : options_(options), result_(result), collect_(options, result), config_(base),
        profile_(framework_profile(base.training.framework)), capacity_(base.gpu.memory_bytes) {
    for (int64_t zero : zero_choices(base.training.framework))
      if (options.zero[size_t(zero)]) zero_options_.push_back(zero);
    base_zero_ = base.layout.zero;
    base_recompute_layers_ = base.training.recompute_layers;
    base_replicas_ = base.layout.dp_replicate;
    base_hpz_ = base.layout.hpz_partition_size;
    // Smallest-memory first, so that the first member of a subtree bounds the rest. A fine-tune's
    // stack (Hugging Face gradient_checkpointing, torchtune, litgpt, Axolotl) checkpoints whole
    // layers: no selective recompute, as the Methods view evaluates it (method_select.cpp).
    for (Recompute recompute : {Recompute::kFull, Recompute::kSelective, Recompute::kNone})
      if (options.recompute[size_t(recompute)] && !(recompute == Recompute::kSelective && is_finetune(base.training)))
        recompute_options_.push_back(recompute);
    micro_batches_ = divisors_in(base.training.global_batch, options.micro_batch);
    tps_ = divisors_in(base.cluster.gpus, options.tp);
  }

  void publish() { collect_.publish(); }
  int64_t dropped_steps() const { return dropped_steps_; }  // layouts whose step time was not finite

  // One unit of work (counted in result.work); false when the search is over.
  bool step() {
    ++result_.work;
    if (!in_mesh_) return next_mesh();
    if (vi_ >= vpps_.size()) {
      in_mesh_ = false;
      return true;
    }
    if (!in_vpp_) {
      in_vpp_ = enter_vpp();
      if (!in_vpp_) ++vi_;
      zi_ = mi_ = 0;
      subtree_out_of_memory_.reset();
      return true;
    }
    Layout& layout = config_.layout;
    layout.zero = mesh_zeros_[zi_];
    // The user's replicated shard groups wherever they hold (whole groups, a stage that shards), else
    // the most below them that do.
    layout.dp_replicate = most_replicas_holding(profile_, base_replicas_, layout.zero, layout.dp, layout.cp);
    replicas_held_ |= layout.dp_replicate == base_replicas_;
    // And DeepSpeed's hpZ group where it holds (ZeRO-3, tp 1, dividing dp x cp), else the largest below.
    layout.hpz_partition_size = most_hpz_holding(config_.training.framework, base_hpz_, layout, layout.dp);
    hpz_held_ |= layout.hpz_partition_size == base_hpz_;
    micro_batch(micro_batches_[mi_]);
    if (++mi_ >= micro_batches_.size()) {
      mi_ = 0;
      subtree_out_of_memory_.reset();
      if (++zi_ >= zero_count()) {
        in_vpp_ = false;
        ++vi_;
      }
    }
    return true;
  }

  // The user's replicas (dp_replicate > 1) held as given on none of the layouts searched.
  bool replicas_never_held() const { return base_replicas_ > 1 && !replicas_held_; }
  int64_t base_replicas() const { return base_replicas_; }
  // Likewise the user's hpZ group (hpz_partition_size > 1).
  bool hpz_never_held() const { return base_hpz_ > 1 && !hpz_held_; }
  int64_t base_hpz() const { return base_hpz_; }
  Framework framework() const { return config_.training.framework; }
  int64_t gpus() const { return config_.cluster.gpus; }
  bool finetune() const { return is_finetune(config_.training); }
  bool qlora() const { return config_.training.finetune == FinetuneMethod::kQlora; }

  // ZeRO stages searched in the current mesh.
  size_t zero_count() const { return mesh_zeros_.size(); }

  // Fraction of the (tp, pp, cp) meshes visited.
  double mesh_fraction() const {
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

 private:
  void load_pp() {
    pps_ = ti_ < tps_.size() ? divisors_in(config_.cluster.gpus / tps_[ti_], options_.pp) : std::vector<int64_t>{};
    pi_ = 0;
    load_cp();
  }
  void load_cp() {
    cps_ = pi_ < pps_.size() ? divisors_in(config_.cluster.gpus / (tps_[ti_] * pps_[pi_]), options_.cp)
                             : std::vector<int64_t>{};
    ci_ = 0;
  }

  // Moves the cursor (tp outer, then pp, then cp) to the next mesh and enters it; false at the end.
  bool next_mesh() {
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
    const int64_t tp = tps_[ti_], pp = pps_[pi_], cp = cps_[ci_];
    in_mesh_ = mesh(tp, pp, cp, config_.cluster.gpus / (tp * pp * cp));
    in_vpp_ = false;
    vi_ = 0;
    return true;
  }

  // The mesh's rules; true when its vpp nodes are to be searched.
  bool mesh(int64_t tp, int64_t pp, int64_t cp, int64_t dp) {
    const ModelSpec& model = config_.model;
    if (!options_.dp.contains(dp)) return false;
    vpps_.clear();
    for (int64_t vpp = options_.vpp.min; vpp <= std::min(options_.vpp.max, model.layers); ++vpp)
      if (vpp == 1 || (pp > 1 && profile_.interleaved_schedule)) vpps_.push_back(vpp);
    const std::vector<bool> sp_options = tp == 1                          ? std::vector<bool>{false}
                                         : options_.sp == SpChoice::kOn  ? std::vector<bool>{true}
                                         : options_.sp == SpChoice::kOff ? std::vector<bool>{false}
                                                                         : std::vector<bool>{true, false};
    variants_.clear();
    for (bool sp : sp_options) variants_.push_back({sp, 1});
    if (options_.spatial_temporal) {
      // Spatial-temporal squares after the standard variants (their activations are sharded as under SP).
      config_.layout.cp = cp;
      for (int64_t q : spatial_temporal_choices(config_, tp)) variants_.push_back({true, q});
    }
    // A square's buffers can outweigh what it saves, so the first variant no longer bounds the rest.
    prune_subtrees_ = variants_.size() == sp_options.size();
    per_mb_ = int64_t(recompute_options_.size() * variants_.size());
    // One data-parallel rank (dp x cp = 1) has nothing to shard: one ZeRO stage (the Methods view's
    // "one GPU: nothing to shard (same as DDP)"), the config's own when offered, else the lowest (a
    // suggestion then reads "tp 1 -> 8", not also "tp 1 -> 8, zero 1 -> 0" with the same figures).
    const auto offered = [&](int64_t zero) { return std::find(zero_options_.begin(), zero_options_.end(), zero) != zero_options_.end(); };
    mesh_zeros_ = zero_options_;
    if (dp * cp == 1 && !zero_options_.empty()) {
      mesh_zeros_ = {offered(base_zero_) ? base_zero_ : zero_options_.front()};
    } else if (pp > 1 && profile_.unsharded_under_pp && offered(2) && offered(3)) {
      // FSDP2 under PP keeps a stage's parameters unsharded from the first forward to the last
      // backward whatever the reshard policy (torchtitan reshard_after_forward = not pp_enabled), so
      // stages 2 and 3 are one layout: searched once, as the config's stage when it is one of them,
      // else torchtitan's default full sharding (a review saw every PP row listed twice).
      const int64_t kept = base_zero_ == 2 ? 2 : 3;
      mesh_zeros_.erase(std::find(mesh_zeros_.begin(), mesh_zeros_.end(), kept == 2 ? 3 : 2));
    }
    per_vpp_ = int64_t(zero_count()) * int64_t(micro_batches_.size()) * per_mb_;
    const int64_t per_mesh = int64_t(vpps_.size()) * per_vpp_;
    if (per_mesh == 0) return false;

    // Structural rules of the mesh (structure.h), in validate()'s order.
    const auto reject = [&](RejectReason reason) {
      collect_.reject(reason, per_mesh);
      return false;
    };
    if (!tp_divides_heads(model, tp)) return reject(RejectReason::kTpNotDivideHeads);
    if (!tp_divides_kv_heads(model, tp)) return reject(RejectReason::kTpNotDivideKvHeads);
    if (!tp_divides_ffn(model, tp)) return reject(RejectReason::kTpNotDivideFfn);
    if (!cp_fits(config_.training.seq, cp)) return reject(RejectReason::kCpNotDivideSeq);
    layout_ = Layout{dp, tp, pp, cp, 1, 0, 0, 0};
    return true;
  }

  // The current vpp's rules and pipeline split; true when its ZeRO x micro-batch nodes are to be searched.
  bool enter_vpp() {
    const ModelSpec& model = config_.model;
    Layout& layout = config_.layout;
    layout = layout_;
    layout.vpp = vpps_[vi_];
    if (layout.pp * layout.vpp > model.layers) {
      collect_.reject(RejectReason::kPpExceedsLayers, per_vpp_);
      return false;
    }
    if (!choose_pipeline_split(model.layers, profile_, layout)) {
      collect_.reject(layout.vpp > 1 ? RejectReason::kVppNotDivideLayers : RejectReason::kPpNotDivideLayers, per_vpp_);
      return false;
    }
    return true;
  }

  // One micro-batch of the current layout and ZeRO stage. Micro-batches go smallest first: once the
  // smallest-memory member of one is out of memory, every larger micro-batch is too and is counted
  // without memory math.
  void micro_batch(int64_t micro_batch) {
    const TrainingSpec& training = config_.training;
    const Layout& layout = config_.layout;
    if (layout.pp > 1 && layout.zero > profile_.pp_max_zero) {
      collect_.reject(RejectReason::kZeroWithPp, per_mb_);
      return;
    }
    if (!batch_divides(training.global_batch, layout.dp, micro_batch)) {
      collect_.reject(RejectReason::kBatchNotDivisible, per_mb_);
      return;
    }
    if (!interleave_fits(profile_, layout.vpp, training.global_batch / (layout.dp * micro_batch), layout.pp)) {
      collect_.reject(RejectReason::kVppMicrobatches, per_mb_);
      return;
    }
    if (subtree_out_of_memory_) {
      collect_.reject(*subtree_out_of_memory_, per_mb_);
      return;
    }
    config_.training.micro_batch = micro_batch;
    for (size_t r = 0; r < recompute_options_.size() && !subtree_out_of_memory_; ++r) {
      config_.training.recompute = recompute_options_[r];
      // recompute_layers belongs to full recompute (the user's block count); the others leave it 0.
      config_.training.recompute_layers = recompute_options_[r] == Recompute::kFull ? base_recompute_layers_ : 0;
      for (size_t s = 0; s < variants_.size(); ++s) {
        config_.training.sp = variants_[s].sp;
        config_.layout.st_q = variants_[s].st_q;
        const LayoutCandidate candidate = evaluate();
        if (candidate.verdict == Verdict::kOutOfMemory) {
          const RejectReason reason = oom_reason(candidate.worst_role);
          if (r == 0 && s == 0 && prune_subtrees_ && base_recompute_layers_ == 0) {
            // The smallest-memory member of this micro-batch: everything from here on (this
            // micro-batch's other variants, larger micro-batches) is out of memory too. Not so when
            // full recompute covers only some layers (selective may then be smaller).
            subtree_out_of_memory_ = reason;
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

  // The working config's worst stage, verdict and (when kept or feasible) step time.
  LayoutCandidate evaluate() {
    const MemoryPlan plan = plan_memory(config_);
    const RankMemory worst = worst_stage_memory(config_, plan);
    ++result_.memory_evaluations;
    ++result_.work;
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
    candidate.component_bytes = worst.component_bytes;
    candidate.verdict = verdict_for(worst.device_bytes, capacity_, config_.training.headroom, worst.bytes(Component::kPagedOptimizer));
    candidate.feasible = candidate.verdict != Verdict::kOutOfMemory && resident_bytes(worst) <= options_.memory_limit * capacity_;
    // Kept rejected candidates get a speed too, so a scatter can place them.
    if (candidate.feasible || collect_.keeping()) {
      candidate.step = predict_step(config_, plan);
      // As estimate() does: no infinite or NaN figure reaches a table (a crafted link's custom GPU
      // without a network figure made its comm infinite, and every row's tokens/s NaN).
      if (!step_is_finite(candidate.step)) {
        candidate.step = StepReport{};
        ++dropped_steps_;
      }
    }
    return candidate;
  }

  const SearchOptions& options_;
  SearchResult& result_;
  Collector collect_;
  Config config_;  // the one working config, mutated per candidate
  const FrameworkProfile& profile_;
  const double capacity_;
  std::vector<int64_t> zero_options_;
  int64_t base_zero_ = 0;     // the config's own stage
  int64_t dropped_steps_ = 0;
  std::vector<int64_t> mesh_zeros_;  // the stages searched in the current mesh (one where dp x cp = 1)
  std::vector<Recompute> recompute_options_;
  std::vector<int64_t> micro_batches_;
  // The cursor: tps_[ti_], pps_[pi_], cps_[ci_] (the mesh), vpps_[vi_], mesh_zeros_[zi_], micro_batches_[mi_].
  std::vector<int64_t> tps_, pps_, cps_, vpps_;
  size_t ti_ = 0, pi_ = 0, ci_ = 0, vi_ = 0, zi_ = 0, mi_ = 0;
  bool started_ = false, in_mesh_ = false, in_vpp_ = false;
  Layout layout_;                 // the current mesh's degrees
  struct Variant {
    bool sp;
    int64_t st_q;  // 1 = Megatron TP, else a spatial-temporal square side
  };
  std::vector<Variant> variants_;  // innermost level of the current mesh: SP choices, then squares
  bool prune_subtrees_ = true;     // the first variant is the smallest-memory one
  int64_t per_mb_ = 0;            // candidates under one micro-batch of the current mesh
  int64_t per_vpp_ = 0;           // candidates under one vpp of the current mesh
  int64_t base_replicas_ = 1;  // dp_replicate of the user's config, kept where it holds
  int64_t base_hpz_ = 1;       // hpz_partition_size of the user's config, likewise
  bool replicas_held_ = false;  // some searched layout kept them
  bool hpz_held_ = false;       // some searched layout kept the user's hpZ group
  int64_t base_recompute_layers_ = 0;  // recompute_layers of the user's config, for the full-recompute members
  std::optional<RejectReason> subtree_out_of_memory_;  // a smaller micro-batch of this (vpp, ZeRO) was out of memory
};

}  // namespace

// [SECTION] LayoutSearch: the engine run in slices against a budget

struct LayoutSearch::State {
  SearchOptions options;
  SearchResult result;
  std::optional<Search> engine;  // absent when the inputs had errors
  bool done = false;
};

LayoutSearch::LayoutSearch(const Config& base, const SearchOptions& options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = options;
  // A fine-tune runs on its stack (HF Trainer + PEFT, torchtune, litgpt, Axolotl): the search offers
  // only layouts the stack can launch (an as-a-user review saw it rank a QLoRA layout at tp 4 first).
  const DegreeLimits limits = finetune_degree_limits(base.training);
  const auto cap = [](Range& range, int64_t limit) {
    if (limit > 0) range.max = std::min<int64_t>(range.max, limit);
  };
  cap(s.options.tp, limits.tp);
  cap(s.options.pp, limits.pp);
  cap(s.options.cp, limits.cp);
  s.result.issues = validate_base(base);
  if (limits.tp > 0 && s.options.tp.min > limits.tp)  // QLoRA's, the only tp limit
    s.result.issues.push_back({IssueCode::kFinetuneUnsupported, Severity::kError, "tp",
                               "finetune=qlora with tp >= " + std::to_string(s.options.tp.min) +
                                   ": bitsandbytes 4-bit layers cannot be split by tensor parallelism; search tp=1 with FSDP or ZeRO-3."});
  if (!s.result.valid()) {
    s.done = true;
    return;
  }
  s.engine.emplace(base, s.options, s.result);
}

LayoutSearch::~LayoutSearch() = default;
LayoutSearch::LayoutSearch(LayoutSearch&&) noexcept = default;
LayoutSearch& LayoutSearch::operator=(LayoutSearch&&) noexcept = default;

bool LayoutSearch::advance(int64_t work) {
  State& s = *state_;
  const int64_t stop = s.result.work + std::max<int64_t>(work, 1);
  while (!s.done && s.result.work < stop) {
    if (s.result.work >= s.options.budget) {
      finish(false);
      break;
    }
    if (!s.engine->step()) finish(true);
  }
  if (s.engine) s.engine->publish();  // the front as it stands, for a page that draws it mid-search
  return s.done;
}

bool LayoutSearch::done() const { return state_->done; }

double LayoutSearch::progress() const {
  const State& s = *state_;
  if (s.done) return 1.0;
  // The budget bounds the work too: whichever end is nearer.
  const double spent = s.options.budget > 0 ? double(s.result.work) / double(s.options.budget) : 0.0;
  return std::min(std::max(s.engine->mesh_fraction(), spent), 1.0);
}

const SearchResult& LayoutSearch::result() const { return state_->result; }

SearchResult LayoutSearch::take_result() { return std::move(state_->result); }

void LayoutSearch::finish(bool complete) {
  State& s = *state_;
  s.engine->publish();
  if (s.engine->dropped_steps() > 0)
    s.result.issues.push_back({IssueCode::kOutOfRange, Severity::kWarning, "gpu",
                               "the step-time model gave no finite figure for " + std::to_string(s.engine->dropped_steps()) +
                                   " layouts (a GPU without a network figure, or inputs past its range): their tokens/s "
                                   "read 0 and they rank last."});
  char visited[16];
  std::snprintf(visited, sizeof visited, "%.1f", 100.0 * s.engine->mesh_fraction());
  s.done = true;
  s.result.complete = complete;
  if (s.engine->hpz_never_held())
    s.result.issues.push_back(
        {IssueCode::kHpzInvalid, Severity::kWarning, "hpz_partition_size",
         "hpz_partition_size=" + std::to_string(s.engine->base_hpz()) +
             " (DeepSpeed ZeRO++ hpZ) held on none of the layouts searched (it needs ZeRO-3, tp=1 and must divide a "
             "layout's dp x cp): each layout listed keeps the largest group below it that holds, or none."});
  if (s.engine->replicas_never_held()) {
    const FrameworkProfile& profile = framework_profile(s.engine->framework());
    s.result.issues.push_back(
        {IssueCode::kReplicasInvalid, Severity::kWarning, "dp_replicate",
         "dp_replicate=" + std::to_string(s.engine->base_replicas()) + " (" + profile.replicas_mechanism +
             ") held on none of the layouts searched (it must divide a layout's dp, leave shard groups of more "
             "than one rank, at zero " + std::to_string(profile.replicas_from_zero) +
             (profile.replicas_from_zero < 3 ? " or above" : "") +
             "): each layout listed keeps the most replicas below it that hold, or shards over all of its dp ranks."});
  }
  // Pins or bounds that leave no (dp, tp, pp, cp) with product gpus: said, naming them (an as-a-user
  // review saw "0 layouts evaluated" with no issue for tp=3 on 8 GPUs).
  if (complete && s.result.evaluated == 0) {
    std::string pins, first;
    const auto add = [&](const char* name, const Range& range, const Range& open) {
      if (range.min == open.min && range.max == open.max) return;
      if (first.empty()) first = name;
      pins += (pins.empty() ? "" : ", ") + std::string(name) +
              (range.min == range.max ? "=" + std::to_string(range.min)
               : range.max == open.max ? ">=" + std::to_string(range.min)
                                       : " " + std::to_string(range.min) + ".." + std::to_string(range.max));
    };
    const SearchOptions open;
    add("dp", s.options.dp, open.dp);
    add("tp", s.options.tp, open.tp);
    add("pp", s.options.pp, open.pp);
    add("cp", s.options.cp, open.cp);
    s.result.issues.push_back(
        {IssueCode::kLayoutProductMismatch, Severity::kError, first.empty() ? "gpus" : first,
         "no layout to search: with " + (pins.empty() ? std::string("these bounds") : pins) +
             ", no dp x tp x pp x cp equals gpus=" + std::to_string(s.engine->gpus()) +
             (!s.engine->finetune() ? ""
              : s.engine->qlora() ? " (a QLoRA fine-tune keeps tp = pp = cp = 1)"
                                  : " (a fine-tune keeps pp = cp = 1)") +
             ". Pin degrees whose product divides gpus."});
  }
  if (!complete)
    s.result.issues.push_back(
        {IssueCode::kSearchCutShort, Severity::kWarning, "budget",
         "the search stopped at its budget of " + std::to_string(s.options.budget) +
             " work units (layout meshes, vpp nodes and micro-batches visited plus memory evaluations) with " +
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
