// method_select.cpp — see method_select.h. Strategies are data; memory and time come from
// estimate_memory() and predict_step(), structural rules from validate().
#include "search/method_select.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "memory/finetune.h"
#include "memory/memory_model.h"
#include "perf/perf_model.h"
#include "spec/structure.h"
#include "units.h"
#include "spec/validate.h"

namespace meshfit {

namespace {

struct Strategy {
  const char* name;
  Framework framework;
  int64_t zero;
  Offload offload;
  bool tensor_parallel;  // tp = the largest valid degree inside a node
};

// HF Trainer + Accelerate back ends (DeepSpeed ZeRO, FSDP), plain DDP, and Megatron-style TP.
const Strategy kStrategies[] = {
    {"DDP", Framework::kFsdp, 0, Offload::kNone, false},
    {"ZeRO-1", Framework::kDeepSpeed, 1, Offload::kNone, false},
    {"ZeRO-2", Framework::kDeepSpeed, 2, Offload::kNone, false},
    {"ZeRO-2 + offload optimizer", Framework::kDeepSpeed, 2, Offload::kOptimizer, false},
    {"ZeRO-3", Framework::kDeepSpeed, 3, Offload::kNone, false},
    {"ZeRO-3 + offload optimizer", Framework::kDeepSpeed, 3, Offload::kOptimizer, false},
    {"ZeRO-3 + offload params (Infinity)", Framework::kDeepSpeed, 3, Offload::kParams, false},
    {"FSDP", Framework::kFsdp, 3, Offload::kNone, false},
    {"FSDP + CPU offload", Framework::kFsdp, 3, Offload::kParams, false},
    {"TP", Framework::kMegatron, 0, Offload::kNone, true},
    {"TP + DP (distributed optimizer)", Framework::kMegatron, 1, Offload::kNone, true},
};

int64_t largest_tp(const Config& config) {
  for (int64_t tp = std::min(config.cluster.gpus, config.cluster.gpus_per_node); tp > 1; --tp)
    if (config.cluster.gpus % tp == 0 && tp_divides_heads(config.model, tp) && tp_divides_kv_heads(config.model, tp) &&
        config.model.ffn % tp == 0)
      return tp;
  return 1;
}

std::string gib_text(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes_to_gib(bytes));
  return text;
}

}  // namespace

// Under the tight threshold before above it, then the faster: as fit's changes are listed
// (fit_advice_before). An as-a-user review saw QLoRA + ZeRO-2 offload at 98.6% of an RTX 4090 ranked
// first, one allocator spike from out of memory, while `fit` called that same run one to fix.
bool method_before(const MethodCandidate& a, const MethodCandidate& b) {
  const bool a_tight = a.verdict != Verdict::kFits, b_tight = b.verdict != Verdict::kFits;
  if (a_tight != b_tight) return !a_tight;
  // A custom GPU given only its memory has no step time (an as-a-user review saw every row "-nan s",
  // ranked as enumerated): the ranking falls back on the memory it leaves.
  if (!a.step_predicted || !b.step_predicted) return a.device_bytes < b.device_bytes;
  return a.step_time_s < b.step_time_s;
}

std::string rejected_reason(const MethodCandidate& candidate, const std::function<std::string(double)>& bytes_text) {
  if (candidate.capacity_bytes <= 0) return candidate.rejected;
  return "out of memory: " + bytes_text(candidate.device_bytes) + " of " + bytes_text(candidate.capacity_bytes) +
         " on the worst rank" + (candidate.checkpointed ? " with gradient checkpointing" : "");
}

MethodRanking rank_finetune_methods(const Config& base, const MethodOptions& options) {
  MethodRanking ranking;
  ranking.base = base;
  ranking.issues = validate(base);
  if (has_errors(ranking.issues)) return ranking;
  const std::optional<Issue> why_no_step = step_unpredictable(base);  // the GPU and nodes every method shares
  const bool no_step = why_no_step.has_value();
  if (no_step) ranking.issues.push_back(*why_no_step);
  const FinetuneMethod methods[] = {FinetuneMethod::kFull, FinetuneMethod::kLora, FinetuneMethod::kQlora};
  const int64_t tp_max = largest_tp(base);
  // Each method with its stack's optimizer (torchtune's full fine-tune on one GPU: paged 8-bit AdamW
  // stepped in the backward), unless the base runs another optimizer than its stack's for its own
  // method (one the user chose): an as-a-user review saw torchtune's full row at 60.5 GiB with AdamW
  // where estimate, with the stack's optimizer, read 32.7 GiB.
  const FinetuneDefaults base_defaults = finetune_defaults(base, true);
  const bool stack_optimizer = !options.keep_optimizer && is_finetune(base.training) && base.training.optimizer == base_defaults.optimizer &&
                               base.training.optimizer_in_backward == base_defaults.optimizer_in_backward;
  for (int mi = 0; mi < 3; ++mi) {
    if (!options.methods[size_t(mi)]) continue;
    for (const Strategy& strategy : kStrategies) {
      MethodCandidate best;
      best.strategy = std::string(strategy.name) + (strategy.tensor_parallel ? " (tp=" + std::to_string(tp_max) + ")" : "");
      Config config = base;
      config.training.finetune = methods[mi];
      config.training.framework = strategy.framework;
      config.layout.zero = strategy.zero;
      config.training.offload = strategy.offload;
      config.layout.tp = strategy.tensor_parallel ? tp_max : 1;
      config.layout.pp = config.layout.cp = config.layout.vpp = 1;
      config.layout.dp = 0;
      config.layout.dp_replicate = 1;  // each strategy shards over every rank it names
      config.layout.pp_first_stage_layers = config.layout.pp_last_stage_layers = 0;
      // Megatron computes the loss vocab-parallel; the HF stack keeps its logits (finetune.h).
      config.training.loss = strategy.framework == Framework::kMegatron ? LossKind::kAuto
                             : base.training.loss == LossKind::kAuto ? LossKind::kEagerKeepLogits
                                                                     : base.training.loss;
      if (stack_optimizer) {
        const FinetuneDefaults d = finetune_defaults(config, true);
        config.training.optimizer = d.optimizer;
        config.training.optimizer_in_backward = stack_optimizer_in_backward(config, d.optimizer_in_backward);
      }
      best.config = config;
      if (strategy.tensor_parallel && tp_max == 1) {
        best.rejected = base.cluster.gpus == 1            ? "one GPU: nothing to split"
                        : base.cluster.gpus_per_node == 1 ? "one GPU per node: nothing to split (tensor parallelism stays in a node)"
                                                          : "no tensor-parallel degree above 1 divides the heads, KV heads, FFN and GPUs in a node";
        ranking.rejected.push_back(best);
        continue;
      }
      // torchtune runs one GPU unsharded and several with FSDP2 only (recipes *_single_device and
      // *_distributed, which call fully_shard): an as-a-user review saw DeepSpeed ZeRO offered for it.
      if (base.training.stack == FinetuneStack::kTorchtune && is_finetune(base.training)) {
        const bool fsdp_or_single = strategy.framework == Framework::kFsdp && (strategy.zero == 3 || base.cluster.gpus == 1);
        if (!fsdp_or_single) {
          best.rejected = strategy.framework == Framework::kFsdp
                              ? "torchtune's distributed recipes shard with FSDP2 (no DDP)"
                              : std::string("torchtune has no ") + enum_label(strategy.framework) +
                                    ": its distributed recipes shard with FSDP2";
          ranking.rejected.push_back(best);
          continue;
        }
      }
      if (strategy.zero > 0 && !strategy.tensor_parallel && base.cluster.gpus == 1 && strategy.offload == Offload::kNone) {
        best.rejected = "one GPU: nothing to shard (same as DDP)";
        ranking.rejected.push_back(best);
        continue;
      }
      bool found = false, have_smallest = false;
      MethodCandidate smallest;
      for (Recompute recompute : {Recompute::kNone, Recompute::kFull}) {
        Config trial = config;
        trial.training.recompute = recompute;
        if (recompute != Recompute::kFull) trial.training.recompute_layers = 0;
        MethodCandidate candidate = best;
        candidate.config = trial;
        const MemoryReport memory = estimate_memory(trial);
        if (!memory.valid()) {
          for (const Issue& issue : memory.issues)
            if (issue.severity == Severity::kError) {
              candidate.rejected = issue.message;
              break;
            }
          smallest = candidate;
          have_smallest = true;
          break;  // structural: recompute does not change it
        }
        candidate.device_bytes = memory.worst().device_bytes;
        candidate.host_bytes = memory.worst().host_bytes;
        if (!no_step) {
          const StepReport step = predict_step(trial, plan_memory(trial));
          candidate.step_predicted = step_is_finite(step);
          if (candidate.step_predicted) {
            candidate.step_time_s = step.step_time_s;
            candidate.tokens_per_s_per_gpu = step.tokens_per_s_per_gpu;
          }
        }
        candidate.fits = memory.fits();
        candidate.verdict = memory.verdict;
        if (!candidate.fits) {
          candidate.capacity_bytes = memory.capacity_bytes;
          candidate.checkpointed = recompute == Recompute::kFull;
          candidate.rejected = rejected_reason(candidate, gib_text);
          if (!have_smallest || candidate.device_bytes < smallest.device_bytes) smallest = candidate;
          have_smallest = true;
          continue;
        }
        if (!found || method_before(candidate, best)) best = candidate;
        found = true;
      }
      MethodCandidate& shown = found ? best : smallest;
      shown.memory_band = memory_error_band(shown.config);
      (found ? ranking.ranked : ranking.rejected).push_back(shown);
    }
  }
  std::stable_sort(ranking.ranked.begin(), ranking.ranked.end(), method_before);
  return ranking;
}

}  // namespace meshfit
