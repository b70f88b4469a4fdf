// fit_advice.h — "how to make it fit": the cheapest changes to a config that is tight or out of
// memory, each found by the layout search (layout_search.h) with every other dimension pinned, so
// the answer is the search's own ranking over one changed dimension (more tp/pp/cp, vpp, recompute,
// a smaller micro-batch, a ZeRO stage; for a fine-tuning config also LoRA instead of full, QLoRA, a
// smaller LoRA rank, an 8-bit or paged optimizer, CPU offload) and pairs of them; each with its new
// peak and its predicted throughput against the current layout, in the order of fit_advice_before.
// Also the largest micro-batch and sequence
// length that fit the current layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/config.h"
#include "memory/memory_model.h"

namespace meshfit {

struct FitSuggestion {
  std::string change;                // "tp 8 → 16, recompute none → full"
  int changed_dimensions = 0;        // how many dimensions move (the cost the list is sorted by)
  Config config;                     // the config with the change applied (valid)
  double device_bytes = 0;           // worst rank's device memory after the change
  Verdict verdict = Verdict::kFits;
  double tokens_per_s_per_gpu = 0;   // predicted after the change
  double throughput_change = 0;      // relative to the current prediction (-0.12 = 12% slower)
  bool trains_less = false;          // stops training a module the config trains in full (PEFT
                                     //   modules_to_save): it changes the run, not only its cost
};

struct FitAdvice {
  std::vector<FitSuggestion> suggestions;  // in the order of fit_advice_before
  int64_t largest_micro_batch = 0;         // largest micro-batch that fits, micro-batches per step kept (0: none)
  int64_t largest_seq = 0;                 // largest sequence length that fits, a multiple of 512*cp (0: none)
};

// The list's order, by what the user cares about: first what still trains every module the config
// trains (a trained embedding or head dropped is faster, and would otherwise lead the list), then what fits (fits before tight), then the
// throughput it costs in whole percent of the current prediction (a faster change first; changes
// within the same percent count as equally fast, the step model does not tell them apart), then
// the size of the change (fewer changed dimensions), then the exact throughput and the text.
bool fit_advice_before(const FitSuggestion& x, const FitSuggestion& y);
int throughput_cost_percent(const FitSuggestion& s);  // -100 x throughput_change, rounded

// Empty advice for an invalid config. Suggestions are searched when the verdict is tight or out of
// memory and keep the worst rank under the tight threshold (headroom x capacity).
FitAdvice fit_advice(const Config& config, size_t max_suggestions = 6);

// Those two limits as the page and the CLI say them, each at the other input as it is: "largest
// micro-batch 22 at sequence length 8192 (a 22x larger global batch: as many micro-batches per step);
// longest sequence 7168 at micro-batch 1" (an as-a-user review read "no micro-batch runs; the longest
// sequence is 7168" and "22 (as many micro-batches per step)" without the batch it implies).
std::string fit_limits_text(const FitAdvice& advice, const Config& config);

// The fixes listed change one or two dimensions; when the cheapest costs this much throughput or
// more, the front ends point at the layout search, which changes any number (an as-a-user review
// saw 405B on 16,384 GPUs offered one fix at -34% where a three-dimension layout cost -17%).
constexpr int kCostlyFitPercent = 10;
bool fit_advice_costly(const FitAdvice& advice);

}  // namespace meshfit
