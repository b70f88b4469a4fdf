// fit_advice.cpp — see fit_advice.h. Every suggestion is a search_layouts call whose options pin all
// dimensions but one or two to the config's values; "largest that fits" walks the micro-batch
// divisors and bisects the sequence length with estimate().
#include "search/fit_advice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

#include "api.h"
#include "memory/finetune.h"
#include "memory/memory_model.h"
#include "spec/structure.h"

namespace meshfit {

namespace {

enum Dimension { kTp, kPp, kCp, kVpp, kMicroBatch, kZero, kRecompute, kDimensionCount };

SearchOptions pinned_options(const Config& config, int free_a, int free_b) {
  const Layout& l = config.layout;
  const TrainingSpec& t = config.training;
  const auto is_free = [&](int d) { return d == free_a || d == free_b; };
  SearchOptions options;
  if (!is_free(kTp)) options.tp = Range::pinned(l.tp);
  if (!is_free(kPp)) options.pp = Range::pinned(l.pp);
  if (!is_free(kCp)) options.cp = Range::pinned(l.cp);
  if (!is_free(kVpp)) options.vpp = Range::pinned(l.vpp);
  options.micro_batch = is_free(kMicroBatch) ? Range{1, std::max<int64_t>(16, t.micro_batch)} : Range::pinned(t.micro_batch);
  if (!is_free(kZero))
    for (int64_t z = 0; z < 4; ++z) options.zero[size_t(z)] = z == l.zero;
  if (!is_free(kRecompute))
    for (int r = 0; r < 3; ++r) options.recompute[size_t(r)] = r == int(t.recompute);
  options.sp = t.sp ? SpChoice::kOn : SpChoice::kOff;
  options.memory_limit = t.headroom;
  options.top_k = 1;
  return options;
}

std::string describe_change(const Config& from, const Config& to, int& count) {
  std::string out;
  count = 0;
  const auto add = [&](const char* name, const std::string& a, const std::string& b) {
    if (a == b) return;
    out += std::string(out.empty() ? "" : ", ") + name + " " + a + " \xE2\x86\x92 " + b;  // →
    ++count;
  };
  const auto n = [](int64_t v) { return std::to_string(v); };
  add("tp", n(from.layout.tp), n(to.layout.tp));
  add("pp", n(from.layout.pp), n(to.layout.pp));
  add("cp", n(from.layout.cp), n(to.layout.cp));
  add("vpp", n(from.layout.vpp), n(to.layout.vpp));
  add("micro-batch", n(from.training.micro_batch), n(to.training.micro_batch));
  add("zero", n(from.layout.zero), n(to.layout.zero));
  add("dp_replicate", n(from.layout.dp_replicate), n(to.layout.dp_replicate));
  add("recompute", to_string(from.training.recompute), to_string(to.training.recompute));
  add("finetune", to_string(from.training.finetune), to_string(to.training.finetune));
  add("LoRA rank", n(from.training.lora_rank), n(to.training.lora_rank));
  add("precision", to_string(from.training.precision), to_string(to.training.precision));
  add("optimizer", to_string(from.training.optimizer), to_string(to.training.optimizer));
  add("offload", to_string(from.training.offload), to_string(to.training.offload));
  const auto on_off = [](bool v) { return std::string(v ? "on" : "off"); };
  add("activation offload", on_off(from.training.offload_activations), on_off(to.training.offload_activations));
  add("optimizer in backward", on_off(from.training.optimizer_in_backward), on_off(to.training.optimizer_in_backward));
  add("loss", to_string(from.training.loss), to_string(to.training.loss));
  for (const ModuleToSave& module : kModulesToSave)
    add(module.label, on_off(from.training.*module.flag), on_off(to.training.*module.flag));
  return out;
}

// The fine-tuning changes worth trying on their own (FINETUNE_NOTES §1-4): a frozen base (LoRA,
// whose base has no gradients or optimizer state), a 4-bit base (QLoRA: 0.516 B per block weight),
// a smaller LoRA rank, 8-bit or paged optimizer states (bitsandbytes optim: ~2 B per trainable
// parameter; paged states live in CUDA managed memory that the driver can evict), and CPU offload
// of the optimizer (ZeRO-Offload) and then of the parameters (ZeRO-Infinity / FSDP CPUOffload).
// Changes that the rest of the config does not allow (QLoRA under tp > 1, offload under
// Megatron-LM) fail validation and are dropped by the caller.
std::vector<Config> finetune_changes(const Config& config) {
  std::vector<Config> out;
  const TrainingSpec& t = config.training;
  if (!is_finetune(t)) return out;
  const auto with = [&](auto edit) {
    Config changed = config;
    edit(changed.training);
    out.push_back(changed);
  };
  // A frozen base drops what only a full fine-tune has: the optimizer step inside backward (no LoRA
  // recipe has it: torchtune's lora recipes, HF Trainer) and the stack's full-fine-tune optimizer
  // (torchtune's one-GPU PagedAdamW8bit) for its adapter one (a page review saw both carried over).
  const FinetuneStackProfile& stack = finetune_stack_profile(t.stack);
  const auto to_adapters = [&](TrainingSpec& x, FinetuneMethod method) {
    x.finetune = method;
    x.optimizer_in_backward = false;
    if (t.finetune == FinetuneMethod::kFull && config.cluster.gpus <= 1 && t.optimizer == stack.full_one_gpu_optimizer)
      x.optimizer = stack.optimizer[method == FinetuneMethod::kQlora ? 2 : 1];
  };
  if (t.finetune == FinetuneMethod::kFull) with([&](TrainingSpec& x) { to_adapters(x, FinetuneMethod::kLora); });
  if (t.finetune != FinetuneMethod::kQlora) with([&](TrainingSpec& x) { to_adapters(x, FinetuneMethod::kQlora); });
  if (has_adapters(t) && t.lora_rank > 8) with([](TrainingSpec& x) { x.lora_rank = std::max<int64_t>(8, x.lora_rank / 4); });
  // The full copies PEFT's modules_to_save trains beside the adapters (8 B per parameter in bf16, 16
  // after QLoRA's fp32 upcast: 3.9 GiB for Llama 3.1 8B's head), each and both: a run that added
  // tokens needs them, which the suggestion's name leaves to the user (an as-a-user note: fit never
  // offered it).
  if (has_adapters(t)) {
    for (const ModuleToSave& module : kModulesToSave)
      if (t.*module.flag) with([&](TrainingSpec& x) { x.*module.flag = false; });
    if (t.embedding_trained && t.lm_head_trained)
      with([](TrainingSpec& x) { x.embedding_trained = x.lm_head_trained = false; });
  }
  if (t.optimizer == Optimizer::kAdamW || t.optimizer == Optimizer::kPagedAdamW)
    with([](TrainingSpec& x) { x.optimizer = Optimizer::kAdam8bit; });
  if (!pages_optimizer_states(t.optimizer))
    with([](TrainingSpec& x) { x.optimizer = Optimizer::kPagedAdam8bit; });
  // Pure bf16 (weights, gradients and moments in bf16, no fp32 master: HF with the model loaded in
  // bf16 and no autocast, torchtune's and LitGPT's bf16-true), alone and with 8-bit moments: 16 -> 8
  // -> 6 B per trained parameter, what a full fine-tune of 8B on one 80 GB GPU needs (an as-a-user
  // review saw only LoRA/QLoRA and ZeRO-3 + CPU offload at -95% offered there).
  if (t.precision == Precision::kBf16) {
    with([](TrainingSpec& x) { x.precision = Precision::kPureBf16; });
    if (t.optimizer == Optimizer::kAdamW)
      with([](TrainingSpec& x) {
        x.precision = Precision::kPureBf16;
        x.optimizer = Optimizer::kAdam8bit;
      });
  }
  // The stacks' own switches for what the activations and the logits hold: torchtune's
  // enable_activation_offloading (and axolotl's port, activation_offloading), and a fused linear cross-entropy where the loss
  // materialises the logits (HF TrainingArguments use_liger_kernel, axolotl liger plugin): on a
  // long-context fine-tune the logits can be a fifth of the peak.
  if (stack.offloads_activations && !t.offload_activations) with([](TrainingSpec& x) { x.offload_activations = true; });
  const LossKind loss = effective_loss(framework_profile(t.framework), t, config.layout.tp);
  if (stack.fused_linear_loss && (loss == LossKind::kEager || loss == LossKind::kEagerKeepLogits))
    with([](TrainingSpec& x) { x.loss = LossKind::kFusedLinear; });
  if (t.offload == Offload::kNone) with([](TrainingSpec& x) { x.offload = Offload::kOptimizer; });
  if (t.offload != Offload::kParams) with([](TrainingSpec& x) { x.offload = Offload::kParams; });
  return out;
}

// Two training changes of the same config applied together; none when they set one field differently.
std::optional<Config> combined_training_change(const Config& base, const Config& a, const Config& b) {
  Config out = a;
  bool conflict = false, added = false;
  const auto take = [&](auto member) {
    const auto& from = base.training.*member;
    const auto& wanted = b.training.*member;
    if (wanted == from || a.training.*member == wanted) return;
    if (a.training.*member != from) conflict = true;
    out.training.*member = wanted;
    added = true;
  };
  take(&TrainingSpec::finetune);
  take(&TrainingSpec::lora_rank);
  take(&TrainingSpec::optimizer);
  take(&TrainingSpec::precision);
  take(&TrainingSpec::offload);
  take(&TrainingSpec::offload_activations);
  take(&TrainingSpec::loss);
  for (const ModuleToSave& module : kModulesToSave) take(module.flag);
  if (conflict || !added) return std::nullopt;
  return out;
}

bool fits(const Config& config) {
  const Estimate e = estimate(config);
  return e.valid() && e.memory.verdict != Verdict::kOutOfMemory;
}

// The largest n in [0, high] for which fits_at(n) holds, where what fits at n fits below it (memory
// grows with the micro-batch and the sequence): bisection, 0 when nothing does.
template <typename FitsAt>
int64_t largest_fitting(int64_t high, const FitsAt& fits_at) {
  int64_t low = 0;
  while (low < high) {
    const int64_t mid = low + (high - low + 1) / 2;
    if (fits_at(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

}  // namespace

int throughput_cost_percent(const FitSuggestion& s) {
  return int(std::lround(-100.0 * s.throughput_change));
}

bool fit_advice_before(const FitSuggestion& x, const FitSuggestion& y) {
  if (x.trains_less != y.trains_less) return y.trains_less;
  const auto verdict_rank = [](Verdict v) { return v == Verdict::kFits ? 0 : v == Verdict::kTight ? 1 : 2; };
  if (verdict_rank(x.verdict) != verdict_rank(y.verdict)) return verdict_rank(x.verdict) < verdict_rank(y.verdict);
  if (throughput_cost_percent(x) != throughput_cost_percent(y)) return throughput_cost_percent(x) < throughput_cost_percent(y);
  if (x.changed_dimensions != y.changed_dimensions) return x.changed_dimensions < y.changed_dimensions;
  if (x.tokens_per_s_per_gpu != y.tokens_per_s_per_gpu) return x.tokens_per_s_per_gpu > y.tokens_per_s_per_gpu;
  return x.change < y.change;  // a total order: the list never depends on the search's visiting order
}

FitAdvice fit_advice(const Config& config, size_t max_suggestions) {
  FitAdvice advice;
  const Estimate current = estimate(config);
  if (!current.valid()) return advice;

  // Largest micro-batch and sequence length that fit. The micro-batch keeps the step's number of
  // micro-batches (what PP's in-flight count and accumulation depend on), so the global batch grows
  // with it: bounded by the batch asked, a LoRA fine-tune's default of one sequence per GPU read "the
  // largest micro-batch that fits is 1" where 4 fit (an as-a-user review).
  const int64_t dp = effective_dp(config);
  if (dp > 0 && config.training.micro_batch > 0 && config.training.global_batch % (dp * config.training.micro_batch) == 0) {
    const int64_t steps = config.training.global_batch / (dp * config.training.micro_batch);
    advice.largest_micro_batch = largest_fitting(1024, [&](int64_t mb) {  // 11 estimates, not 1024
      Config probe = config;
      probe.training.micro_batch = mb;
      probe.training.global_batch = mb * dp * steps;
      return fits(probe);
    });
  }
  const int64_t unit = 512 * config.layout.cp;
  advice.largest_seq = unit * largest_fitting(std::max<int64_t>(1, (int64_t(1) << 25) / unit), [&](int64_t k) {
                         Config probe = config;
                         probe.training.seq = k * unit;
                         return fits(probe);
                       });
  // Below one unit, the halves down to 64 tokens per CP rank: a 3B LoRA at micro-batch 4 on a 16 GB T4
  // runs at 256 and was told "no sequence length fits" (an as-a-user check).
  for (int64_t seq = unit / 2; advice.largest_seq == 0 && seq >= 64 * config.layout.cp; seq /= 2) {
    Config probe = config;
    probe.training.seq = seq;
    if (fits(probe)) advice.largest_seq = seq;
  }

  // Nothing to rank by without the GPU's compute figures (a custom GPU given only its memory).
  if (current.memory.verdict == Verdict::kFits || !(current.step.step_time_s > 0)) return advice;
  // Every single change and every pair, then one order for all of them (fit_advice_before).
  std::set<std::string> seen;
  std::vector<FitSuggestion> found;
  for (int pass = 1; pass <= 2; ++pass)
    for (int a = 0; a < kDimensionCount; ++a)
      for (int b = pass == 1 ? a : a + 1; b < (pass == 1 ? a + 1 : int(kDimensionCount)); ++b) {
        const SearchResult result = search_layouts(config, pinned_options(config, a, b));
        if (!result.valid() || result.top.empty()) continue;
        FitSuggestion suggestion;
        suggestion.config = apply(config, result.top.front());
        suggestion.change = describe_change(config, suggestion.config, suggestion.changed_dimensions);
        if (suggestion.changed_dimensions != pass || !seen.insert(suggestion.change).second) continue;
        const LayoutCandidate& c = result.top.front();
        if (c.device_bytes > config.gpu.memory_bytes) continue;  // paged states still spilling: no fix
        suggestion.device_bytes = c.device_bytes;
        suggestion.verdict = c.verdict;
        suggestion.tokens_per_s_per_gpu = c.step.tokens_per_s_per_gpu;
        const double before = current.step.tokens_per_s_per_gpu;
        suggestion.throughput_change = before > 0 ? c.step.tokens_per_s_per_gpu / before - 1.0 : 0.0;
        found.push_back(suggestion);
      }
  // Changes outside the search's dimensions are one dimension each: estimated directly, kept when the
  // worst rank ends under the tight threshold, as the searched ones are.
  const auto add_estimated = [&](const Config& changed) {
    const Estimate e = estimate(changed);
    // Paged optimizer states the driver can evict to host memory do not count against the line, but a
    // change that still spills them is no fix (a page review saw "activation offload off -> on,
    // 32.2 GiB (137%)" offered for a run at 32.7).
    if (!e.valid() || resident_bytes(e.memory.worst()) > config.training.headroom * e.memory.capacity_bytes ||
        paged_spill_bytes(e.memory.worst(), e.memory.capacity_bytes) > 0)
      return false;
    FitSuggestion suggestion;
    suggestion.config = changed;
    suggestion.change = describe_change(config, changed, suggestion.changed_dimensions);
    if (!seen.insert(suggestion.change).second) return false;
    suggestion.device_bytes = e.memory.worst().device_bytes;
    suggestion.verdict = e.memory.verdict;
    suggestion.tokens_per_s_per_gpu = e.step.tokens_per_s_per_gpu;
    const double before = current.step.tokens_per_s_per_gpu;
    suggestion.throughput_change = before > 0 ? e.step.tokens_per_s_per_gpu / before - 1.0 : 0.0;
    found.push_back(suggestion);
    return true;
  };
  // Each fine-tuning change alone, and when that is not enough, with full recompute too: a 4-bit base
  // frees the weights, checkpointing the activations, and on one 24 GB GPU an 8B model needs both (an
  // as-a-user review saw "no change helps" beside a Methods tab listing QLoRA + checkpointing at 73%).
  // And with the parameters sharded (ZeRO-3 / FSDP full sharding), which offload=params needs and a
  // replicated base misses (the same review: a full fine-tune on one 24 GB GPU fits with FSDP + CPU
  // offload, and 70B on 8 H100 with LoRA under FSDP, neither suggested). The first that fits is kept.
  const FrameworkProfile& profile = framework_profile(config.training.framework);
  const std::vector<Config> singles = finetune_changes(config);
  for (const Config& changed : singles) {
    std::vector<Config> tries = {changed};
    if (changed.layout.zero < 3 && profile.offers_zero(3)) {
      Config sharded = changed;
      sharded.layout.zero = 3;
      tries.push_back(sharded);
    }
    // One sequence per micro-batch, the batch kept by accumulation: the forum's first fix, and cheaper
    // than recomputing (a review saw QLoRA 14B on an L4 fit with micro-batch 1 and a fused loss, not offered).
    if (changed.training.micro_batch > 1)
      for (size_t i = 0, n = tries.size(); i < n; ++i) {
        Config smaller = tries[i];
        smaller.training.micro_batch = 1;
        tries.push_back(smaller);
      }
    if (changed.training.recompute != Recompute::kFull)
      for (size_t i = 0, n = tries.size(); i < n; ++i) {
        Config checkpointed = tries[i];
        checkpointed.training.recompute = Recompute::kFull;
        tries.push_back(checkpointed);
      }
    for (const Config& attempt : tries)
      if (add_estimated(attempt)) break;
  }
  // Two fine-tuning changes together, each pair once, with full recompute when it is not on: a 4-bit
  // base and activation offloading, or a 4-bit base and a fused loss, is what an 8B LoRA at 8-16k
  // tokens needs on a 24 GB GPU (an as-a-user review saw "no change helps" where QLoRA + offload fit
  // at 76%). A pair that only adds to a fitting single change is dropped below unless it is faster.
  for (size_t i = 0; i < singles.size(); ++i)
    for (size_t j = i + 1; j < singles.size(); ++j) {
      std::optional<Config> both = combined_training_change(config, singles[i], singles[j]);
      if (!both) continue;
      if (add_estimated(*both) || both->training.recompute == Recompute::kFull) continue;
      both->training.recompute = Recompute::kFull;
      add_estimated(*both);
    }
  // Fewer replicas of each shard group (larger groups, less state per rank): the most that fit.
  for (int64_t r = config.layout.dp_replicate; r > 1;) {
    r = most_replicas_holding(profile, r - 1, config.layout.zero, dp, config.layout.cp);
    Config changed = config;
    changed.layout.dp_replicate = r;
    if (add_estimated(changed)) break;
  }
  for (FitSuggestion& f : found)
    for (const ModuleToSave& module : kModulesToSave)
      f.trains_less |= config.training.*module.flag && !(f.config.training.*module.flag);
  std::sort(found.begin(), found.end(), fit_advice_before);
  // A change that adds a dimension to another's and gives the same figures says nothing more (the
  // same review: "zero 3 -> 2, recompute none -> selective" beside "recompute none -> selective").
  // Nor does one that adds changes to a fitting suggestion's own without being faster (a later
  // review: "zero 0 -> 3, recompute none -> full" followed by the same plus "lora_rank 16 -> 8",
  // "adamw -> adam8bit" or "paged_adamw8bit", each 0.2 GiB smaller at the same speed).
  const auto parts = [](const std::string& change) {
    std::set<std::string> out;
    for (size_t begin = 0; begin <= change.size();) {
      const size_t end = std::min(change.find(", ", begin), change.size());
      out.insert(change.substr(begin, end - begin));
      begin = end + 2;
    }
    return out;
  };
  std::vector<FitSuggestion> kept;
  for (const FitSuggestion& f : found) {
    const std::set<std::string> f_parts = parts(f.change);
    const bool repeats = std::any_of(kept.begin(), kept.end(), [&](const FitSuggestion& k) {
      if (k.changed_dimensions >= f.changed_dimensions) return false;
      const bool same_figures = std::fabs(k.device_bytes - f.device_bytes) <= 1e-9 * f.device_bytes &&
                                std::fabs(k.tokens_per_s_per_gpu - f.tokens_per_s_per_gpu) <= 1e-9 * f.tokens_per_s_per_gpu;
      const std::set<std::string> k_parts = parts(k.change);
      const bool adds_to_fitting = k.verdict == Verdict::kFits &&
                                   std::includes(f_parts.begin(), f_parts.end(), k_parts.begin(), k_parts.end()) &&
                                   f.tokens_per_s_per_gpu <= 1.01 * k.tokens_per_s_per_gpu;
      return same_figures || adds_to_fitting;
    });
    if (!repeats) kept.push_back(f);
  }
  found = std::move(kept);
  if (found.size() > max_suggestions) {
    // A change of fine-tuning method (full -> LoRA/QLoRA) is often faster than any fix of the run asked
    // about, and could fill the list: the best fixes that keep the method keep up to half of it (an
    // as-a-user review saw six LoRA/QLoRA rows for a full fine-tune that fit with recompute=full).
    const auto keeps_method = [&](const FitSuggestion& f) { return f.config.training.finetune == config.training.finetune; };
    const size_t keep_quota = std::min<size_t>(max_suggestions / 2, size_t(std::count_if(found.begin(), found.end(), keeps_method)));
    std::vector<FitSuggestion> shown;
    size_t kept_method = 0;
    for (const FitSuggestion& f : found)
      if (keeps_method(f) && kept_method < keep_quota) {
        shown.push_back(f);
        ++kept_method;
      }
    for (const FitSuggestion& f : found)
      if (!keeps_method(f) && shown.size() < max_suggestions) shown.push_back(f);
    for (const FitSuggestion& f : found)  // then the next fixes that keep it, when other rows ran short
      if (keeps_method(f) && shown.size() < max_suggestions &&
          std::none_of(shown.begin(), shown.end(), [&](const FitSuggestion& g) { return g.change == f.change; }))
        shown.push_back(f);
    std::sort(shown.begin(), shown.end(), fit_advice_before);
    found = std::move(shown);
  }
  advice.suggestions = std::move(found);
  return advice;
}

std::string fit_limits_text(const FitAdvice& advice, const Config& config) {
  const TrainingSpec& t = config.training;
  const std::string at_seq = " at sequence length " + std::to_string(t.seq);
  std::string batch = "no micro-batch" + at_seq;
  if (advice.largest_micro_batch > 0) {
    batch = "largest micro-batch " + std::to_string(advice.largest_micro_batch) + at_seq;
    if (t.micro_batch > 0 && advice.largest_micro_batch != t.micro_batch) {
      // As many micro-batches per step: the global batch scales with the micro-batch.
      char factor[32];
      std::snprintf(factor, sizeof factor, "%.3g", double(advice.largest_micro_batch) / double(t.micro_batch));
      batch += std::string(" (a ") + factor + "x " + (advice.largest_micro_batch > t.micro_batch ? "larger" : "smaller") +
               " global batch: as many micro-batches per step)";
    }
  }
  const std::string at_micro = " at micro-batch " + std::to_string(t.micro_batch);
  const std::string length = advice.largest_seq > 0 ? "longest sequence " + std::to_string(advice.largest_seq) + at_micro
                                                    : "no sequence length" + at_micro;
  return batch + "; " + length;
}

bool fit_advice_costly(const FitAdvice& advice) {
  return !advice.suggestions.empty() && throughput_cost_percent(advice.suggestions.front()) >= kCostlyFitPercent;
}

}  // namespace meshfit
