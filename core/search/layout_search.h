// layout_search.h — enumerate every (dp, tp, pp, cp, vpp, micro-batch, ZeRO, recompute, SP) for a
// GPU count, reject the invalid and the out-of-memory with a counted reason, rank the rest by
// predicted tokens/s per GPU and keep the Pareto front of peak memory vs throughput.
// Shape: structural pruning (structure.h) before memory math, one
// working Config mutated in place, top-K and the front only (memory flat in the candidate count).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "spec/config.h"
#include "spec/input_limits.h"
#include "spec/issue.h"
#include "memory/memory_model.h"
#include "perf/perf_model.h"
#include "spec/structure.h"

namespace meshfit {

struct Range {
  int64_t min = 1;
  int64_t max = std::numeric_limits<int64_t>::max();
  bool contains(int64_t value) const { return value >= min && value <= max; }
  static Range pinned(int64_t value) { return {value, value}; }
};

enum class SpChoice { kAny, kOn, kOff };

struct SearchOptions {
  Range dp, tp, pp, cp;
  Range vpp{1, kMaxVpp};             // interleaved chunks per pipeline rank (structure.h)
  Range micro_batch{1, 16};          // only divisors of the global batch are tried
  std::array<bool, 4> zero{true, true, true, true};         // allowed stages (intersected with the framework's)
  std::array<bool, 3> recompute{true, true, true};          // indexed by Recompute
  SpChoice sp = SpChoice::kAny;      // at tp = 1 SP is off
  double memory_limit = 1.0;         // feasible if the worst rank's device bytes <= this * capacity
  int64_t top_k = 10;
  int64_t keep_all_max = 0;          // > 0: also return up to this many evaluated candidates (scatter plots)
  int64_t budget = kDefaultSearchBudget;  // work units (input_limits.h) after which the search stops, cut short
  // Opt-in: also weigh spatial-temporal (PrimePar-style) model parallelism, every square side q that
  // keeps structure.h's rules at each tp. Such candidates are modelled only: no public framework runs
  // them, and no launch config is exported for them.
  bool spatial_temporal = false;
};

enum class RejectReason {
  kTpNotDivideHeads,
  kTpNotDivideKvHeads,
  kTpNotDivideFfn,
  kPpExceedsLayers,
  kPpNotDivideLayers,
  kVppNotDivideLayers,
  kVppMicrobatches,
  kZeroWithPp,                     // a ZeRO stage the framework's pipeline engine refuses (DeepSpeed: 2, 3)
  kCpNotDivideSeq,
  kBatchNotDivisible,
  kOutOfMemoryFirstStage,
  kOutOfMemoryMiddleStage,
  kOutOfMemoryLastStage,
  kOutOfMemoryOnlyStage,
  kOverMemoryLimit,                // fits the GPU but above the chosen memory_limit
};
template <> struct EnumNames<RejectReason> {  // snake_case JSON keys, plain-words labels (the page)
  static constexpr EnumName<RejectReason> table[] = {
      {RejectReason::kTpNotDivideHeads, "tp_not_divide_heads", "tp does not divide the heads"},
      {RejectReason::kTpNotDivideKvHeads, "tp_not_divide_kv_heads", "tp does not divide the KV heads"},
      {RejectReason::kTpNotDivideFfn, "tp_not_divide_ffn", "tp does not divide the FFN width"},
      {RejectReason::kPpExceedsLayers, "pp_exceeds_layers", "more pipeline stages than layers"},
      {RejectReason::kPpNotDivideLayers, "pp_not_divide_layers", "pp does not divide the layers"},
      {RejectReason::kVppNotDivideLayers, "vpp_not_divide_layers", "pp x vpp does not divide the layers"},
      {RejectReason::kVppMicrobatches, "vpp_microbatches", "micro-batches not a multiple of pp (interleaved)"},
      {RejectReason::kZeroWithPp, "zero_with_pp", "ZeRO stage refused with pipeline parallelism"},
      {RejectReason::kCpNotDivideSeq, "cp_not_divide_seq", "2 x cp does not divide the sequence"},
      {RejectReason::kBatchNotDivisible, "batch_not_divisible", "dp x micro-batch does not divide the batch"},
      {RejectReason::kOutOfMemoryFirstStage, "oom_first_stage", "out of memory on the first stage"},
      {RejectReason::kOutOfMemoryMiddleStage, "oom_middle_stage", "out of memory on a middle stage"},
      {RejectReason::kOutOfMemoryLastStage, "oom_last_stage", "out of memory on the last stage"},
      {RejectReason::kOutOfMemoryOnlyStage, "oom_only_stage", "out of memory without pipelining (pp 1)"},
      {RejectReason::kOverMemoryLimit, "over_memory_limit", "over the memory limit"}};
};
constexpr int kRejectReasonCount = int(enum_count<RejectReason>());

struct LayoutCandidate {
  Layout layout;                    // dp filled in
  int64_t micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  bool sp = false;
  double peak_allocated_bytes = 0;  // worst rank
  double peak_reserved_bytes = 0;
  double device_bytes = 0;
  const char* worst_role = "only";
  int64_t worst_stage = 0;
  Verdict verdict = Verdict::kFits;
  bool feasible = false;            // within memory_limit
  StepReport step;                  // filled for feasible candidates (and kept rejected ones)
  std::array<double, kComponentCount> component_bytes{};  // the worst rank's memory breakdown
  bool spatial_temporal() const { return layout.st_q > 1; }
};

struct SearchResult {
  std::vector<Issue> issues;        // problems with the non-layout inputs; errors mean no search ran
  int64_t evaluated = 0;            // every candidate enumerated, rejected or not
  int64_t feasible = 0;
  int64_t memory_evaluations = 0;   // candidates whose memory was computed (the rest pruned in bulk)
  std::array<int64_t, kRejectReasonCount> rejected{};
  std::vector<LayoutCandidate> top;     // best first, at most top_k
  std::vector<LayoutCandidate> pareto;  // ascending memory, each faster than all with less memory
  // With SearchOptions::spatial_temporal: the fastest spatial-temporal layouts (at most 5), so the
  // answer "would it pay off here?" is shown even when none of them makes the top list.
  std::vector<LayoutCandidate> spatial_temporal_top;
  std::vector<LayoutCandidate> all;     // up to keep_all_max evaluated candidates, when asked
  int64_t work = 0;                 // work units spent (input_limits.h: steps taken + memory evaluations)
  bool complete = true;             // false: stopped at the budget (a search_cut_short warning says so)
  bool valid() const { return !has_errors(issues); }
};

// The search as a state machine that runs in slices, so that a page can spread it over frames:
//   LayoutSearch search(config, options);
//   while (!search.done()) search.advance(20000);  // one slice per frame; result() grows
// The base config supplies model, GPU, cluster and training inputs; its layout, micro-batch,
// recompute and SP are ignored (pin them through the options).
class LayoutSearch {
 public:
  LayoutSearch(const Config& base, const SearchOptions& options);
  ~LayoutSearch();
  LayoutSearch(LayoutSearch&&) noexcept;
  LayoutSearch& operator=(LayoutSearch&&) noexcept;
  // Spends about `work` more units, one step at a time (a mesh, a vpp node, or one micro-batch:
  // at most 6 memory evaluations), so it may overshoot by one step; stops for good at
  // options.budget. Returns done().
  bool advance(int64_t work);
  bool done() const;
  double progress() const;  // 0..1: the larger of the meshes visited and the budget spent
  const SearchResult& result() const;  // grows as the search advances; final once done()
  SearchResult take_result();

 private:
  void finish(bool complete);
  struct State;                  // options, result and the resumable engine (layout_search.cpp)
  std::unique_ptr<State> state_;
};

// Runs a LayoutSearch to its end or its budget.
SearchResult search_layouts(const Config& base, const SearchOptions& options);

}  // namespace meshfit
