// test_fit_advice.cpp — "how to make it fit": every suggestion, applied, is valid and under the
// tight threshold as the CLI's estimate computes it; fewest changes first; the largest micro-batch
// and sequence fit and one step more does not.
#include <doctest/doctest.h>

#include "api.h"
#include "io/serialize.h"
#include "search/fit_advice.h"
#include "fixtures.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {

Config oom_config() {
  Config config = preset_config("llama3-70b", 64, 8, 1);  // 80 layers on one stage at 8k: out of memory
  config.training.seq = 8192;
  config.training.global_batch = 512;
  return config;
}

}  // namespace

TEST_CASE("each suggestion for an out-of-memory config fits when applied, in the list's order") {
  const Config config = oom_config();
  REQUIRE(estimate(config).memory.verdict == Verdict::kOutOfMemory);
  const FitAdvice advice = fit_advice(config);
  REQUIRE_FALSE(advice.suggestions.empty());
  for (size_t i = 0; i < advice.suggestions.size(); ++i) {
    const FitSuggestion& s = advice.suggestions[i];
    CAPTURE(s.change);
    const Estimate applied = estimate(s.config);
    REQUIRE(applied.valid());
    CHECK(applied.memory.verdict == Verdict::kFits);
    CHECK(applied.worst().device_bytes == doctest::Approx(s.device_bytes).epsilon(1e-9));
    CHECK(s.change.find("\xE2\x86\x92") != std::string::npos);
    if (i > 0) CHECK_FALSE(fit_advice_before(s, advice.suggestions[i - 1]));
  }
  // The first suggestion is the fastest within a percent: no fitting change further down is faster.
  const FitSuggestion& first = advice.suggestions.front();
  for (const FitSuggestion& s : advice.suggestions) {
    CAPTURE(s.change);
    CHECK(throughput_cost_percent(s) >= throughput_cost_percent(first));
  }
}

TEST_CASE("fit advice order: fits first, then throughput cost, then the size of the change") {
  const auto make = [](const char* change, int dimensions, double throughput_change, Verdict verdict) {
    FitSuggestion s;
    s.change = change;
    s.changed_dimensions = dimensions;
    s.throughput_change = throughput_change;
    s.tokens_per_s_per_gpu = 1000.0 * (1.0 + throughput_change);
    s.verdict = verdict;
    return s;
  };
  // A two-dimension change 5% slower comes before a one-dimension change 30% slower.
  CHECK(fit_advice_before(make("tp, recompute", 2, -0.05, Verdict::kFits), make("pp", 1, -0.30, Verdict::kFits)));
  CHECK_FALSE(fit_advice_before(make("pp", 1, -0.30, Verdict::kFits), make("tp, recompute", 2, -0.05, Verdict::kFits)));
  // Within the same whole percent the smaller change comes first, even if a hair slower.
  CHECK(fit_advice_before(make("pp", 1, -0.104, Verdict::kFits), make("tp, pp", 2, -0.098, Verdict::kFits)));
  // Fits before tight, whatever the speed.
  CHECK(fit_advice_before(make("zero", 1, -0.50, Verdict::kFits), make("cp", 1, 0.0, Verdict::kTight)));
  // Same cost and size: the exact throughput, then the text (a strict order).
  CHECK(fit_advice_before(make("a", 1, -0.1001, Verdict::kFits), make("b", 1, -0.1002, Verdict::kFits)));
  CHECK(fit_advice_before(make("a", 1, -0.1, Verdict::kFits), make("b", 1, -0.1, Verdict::kFits)));
  CHECK_FALSE(fit_advice_before(make("a", 1, -0.1, Verdict::kFits), make("a", 1, -0.1, Verdict::kFits)));
  CHECK(throughput_cost_percent(make("x", 1, -0.125, Verdict::kFits)) == 13);
  // A change that stops training a module the config trains comes after every one that keeps it.
  FitSuggestion drops = make("train LM head fully on \xE2\x86\x92 off", 1, +0.05, Verdict::kFits);
  drops.trains_less = true;
  CHECK(fit_advice_before(make("recompute", 1, -0.30, Verdict::kTight), drops));
  CHECK_FALSE(fit_advice_before(drops, make("recompute", 1, -0.30, Verdict::kTight)));
}

// A LoRA that trains the LM head in full (PEFT modules_to_save) at 4k tokens, micro-batch 2, on one
// H100: out of memory. Dropping the head's copy is offered (fit never did), faster than every other
// fix, but listed after them all: it changes what the run trains.
TEST_CASE("fit advice offers to stop training a fully trained module, after every fix that keeps it") {
  // As the CLI reads it (the HF PEFT stack's defaults filled in).
  const ParsedConfig parsed = parse_config({{"model", "llama3.1-8b"}, {"gpu", "h100-sxm"}, {"gpus", 1}, {"finetune", "lora"},
                                            {"seq", 4096}, {"micro_batch", 2}, {"global_batch", 2},
                                            {"lm_head_trained", true}, {"embedding_trained", true}});
  REQUIRE_FALSE(has_errors(parsed.issues));
  const Config& config = parsed.config;
  REQUIRE(estimate(config).memory.verdict == Verdict::kOutOfMemory);
  const FitAdvice advice = fit_advice(config, 50);
  REQUIRE_FALSE(advice.suggestions.empty());
  bool seen_drop = false, drops_both = false;
  for (const FitSuggestion& s : advice.suggestions) {
    CAPTURE(s.change);
    const bool drops = !s.config.training.lm_head_trained || !s.config.training.embedding_trained;
    CHECK(s.trains_less == drops);
    CHECK(s.trains_less == (s.change.find("fully on \xE2\x86\x92 off") != std::string::npos));
    if (seen_drop) CHECK(s.trains_less);  // none that keeps them after one that drops
    seen_drop |= s.trains_less;
    drops_both |= !s.config.training.lm_head_trained && !s.config.training.embedding_trained;
    CHECK(estimate(s.config).memory.verdict != Verdict::kOutOfMemory);
  }
  CHECK(seen_drop);
  CHECK(drops_both);
  CHECK_FALSE(advice.suggestions.front().trains_less);
}

TEST_CASE("the largest sequence that fits fits, and one step more does not") {
  Config config = preset_config("llama3-8b", 8, 1, 1);
  config.training.seq = 2048;  // tight at 2k, out of memory at 4k
  const FitAdvice advice = fit_advice(config);
  REQUIRE(advice.largest_seq > 0);
  config.training.seq = advice.largest_seq;
  CHECK(estimate(config).memory.verdict != Verdict::kOutOfMemory);
  config.training.seq = advice.largest_seq + 512;
  CHECK(estimate(config).memory.verdict == Verdict::kOutOfMemory);
  REQUIRE(advice.largest_micro_batch >= 1);
  config.training.seq = 2048;
  const int64_t steps = config.training.global_batch / (effective_dp(config) * config.training.micro_batch);
  config.training.micro_batch = advice.largest_micro_batch;
  config.training.global_batch = advice.largest_micro_batch * effective_dp(config) * steps;  // micro-batches per step kept
  CHECK(estimate(config).memory.verdict != Verdict::kOutOfMemory);
  Config larger = config;
  larger.training.micro_batch += 1;
  larger.training.global_batch = larger.training.micro_batch * effective_dp(config) * steps;
  CHECK(estimate(larger).memory.verdict == Verdict::kOutOfMemory);
  CHECK_FALSE(fit_advice(config).suggestions.empty());  // tight: what brings it under the threshold
}

// An as-a-user review read "no micro-batch runs; the longest sequence is 7168" and "the largest
// micro-batch is 22 (as many micro-batches per step)" without the global batch that implies.
TEST_CASE("the limits short of out of memory are said at the other input, with the global batch they imply") {
  Config config = preset_config("llama3-8b", 8, 1, 1);
  config.training.seq = 2048;
  const FitAdvice advice = fit_advice(config);
  REQUIRE(advice.largest_micro_batch > 1);
  REQUIRE(advice.largest_seq > 0);
  const std::string text = fit_limits_text(advice, config);
  const std::string batch = "largest micro-batch " + std::to_string(advice.largest_micro_batch) + " at sequence length 2048 (a " +
                            std::to_string(advice.largest_micro_batch) + "x larger global batch: as many micro-batches per step)";
  CHECK(text == batch + "; longest sequence " + std::to_string(advice.largest_seq) + " at micro-batch 1");
  FitAdvice none = advice;
  none.largest_micro_batch = none.largest_seq = 0;
  CHECK(fit_limits_text(none, config) == "no micro-batch at sequence length 2048; no sequence length at micro-batch 1");
  FitAdvice same = advice;
  same.largest_micro_batch = config.training.micro_batch;  // no change of batch to speak of
  CHECK(fit_limits_text(same, config).find("global batch") == std::string::npos);
}

TEST_CASE("fit advice points at the layout search when its cheapest fix costs 10% or more") {
  FitAdvice advice;
  CHECK_FALSE(fit_advice_costly(advice));  // nothing listed: the front ends say more already
  FitSuggestion fix;
  fix.throughput_change = -0.095;  // 10% as printed, rounded: the threshold reads in whole percent
  advice.suggestions.push_back(fix);
  CHECK(fit_advice_costly(advice));
  advice.suggestions.front().throughput_change = -0.094;
  CHECK_FALSE(fit_advice_costly(advice));
  // 405B on 16,384 GPUs (every dimension at 1): the best one- or two-dimension fix costs about a fifth.
  Config huge = preset_config("llama3.1-405b", 16384);
  huge.training.global_batch = 16384;  // a sequence per GPU, as the CLI rounds its default up to
  const FitAdvice big = fit_advice(huge);
  REQUIRE_FALSE(big.suggestions.empty());
  CHECK(throughput_cost_percent(big.suggestions.front()) >= kCostlyFitPercent);
  CHECK(fit_advice_costly(big));
}

TEST_CASE("no suggestion repeats another's figures with a ZeRO change that does nothing (one data-parallel rank)") {
  // Llama 3.1 8B on 8 V100 32GB, Megatron-LM at ZeRO-1: "tp 1 -> 8" leaves dp = 1, where a ZeRO stage
  // has nothing to shard; the list also read "tp 1 -> 8, zero 1 -> 0" with the same memory and speed.
  Config config = preset_config("llama3.1-8b", 8);
  config.gpu = *find_gpu_preset("v100");
  REQUIRE(estimate(config).memory.verdict == Verdict::kOutOfMemory);
  const FitAdvice advice = fit_advice(config, 20);
  REQUIRE_FALSE(advice.suggestions.empty());
  for (size_t i = 0; i < advice.suggestions.size(); ++i)
    for (size_t j = i + 1; j < advice.suggestions.size(); ++j) {
      const FitSuggestion& a = advice.suggestions[i];
      const FitSuggestion& b = advice.suggestions[j];
      CAPTURE(a.change);
      CAPTURE(b.change);
      CHECK_FALSE((a.device_bytes == b.device_bytes && a.tokens_per_s_per_gpu == b.tokens_per_s_per_gpu));
    }
}

// An as-a-user review: an 8B full fine-tune on one 24 GB GPU (147 GiB) read "no change helps" while
// the Methods tab listed QLoRA with activation checkpointing at 73% of the GPU. A fine-tuning change
// that does not fit alone is tried with full recompute as well.
TEST_CASE("fit advice for an 8B full fine-tune on one 24 GB GPU: QLoRA with full recompute") {
  // On an RTX 4090 (23.5 GiB): QLoRA's fp32 residual stream under kbit upcast (memory_model.cpp
  // qlora_fp32_stream) puts it at 77% there, past the tight line on an A10's 22.5 GiB.
  const ParsedConfig parsed = parse_config({{"model", "llama3.1-8b"}, {"gpu", "rtx4090"}, {"gpus", 1}, {"finetune", "full"}});
  REQUIRE_FALSE(has_errors(parsed.issues));
  const Config& config = parsed.config;
  REQUIRE(estimate(config).memory.verdict == Verdict::kOutOfMemory);
  const FitAdvice advice = fit_advice(config);
  bool qlora_checkpointed = false;
  for (const FitSuggestion& s : advice.suggestions) {
    CAPTURE(s.change);
    CHECK(estimate(s.config).worst().device_bytes <= config.training.headroom * estimate(s.config).memory.capacity_bytes);
    qlora_checkpointed |= s.config.training.finetune == FinetuneMethod::kQlora && s.config.training.recompute == Recompute::kFull;
  }
  CHECK(qlora_checkpointed);
}

// The second review: the advice never sharded the parameters, which offload=params needs, so a full
// fine-tune on one 24 GB GPU was told only "switch to QLoRA" (FSDP + CPU offload keeps the full
// fine-tune at ~11.5 GiB), and 70B on 8 H100 only QLoRA (LoRA under FSDP fits). And no suggestion
// adds a dimension to another's for the same figures.
TEST_CASE("fit advice for fine-tunes shards the parameters where that is what fits, and repeats nothing") {
  const auto advice_for = [](const nlohmann::json& fields) {
    const ParsedConfig parsed = parse_config(fields);
    REQUIRE_FALSE(has_errors(parsed.issues));
    REQUIRE(estimate(parsed.config).memory.verdict == Verdict::kOutOfMemory);
    return fit_advice(parsed.config, 20);
  };
  const FitAdvice one_gpu = advice_for({{"model", "llama3.1-8b"}, {"gpu", "rtx4090"}, {"gpus", 1}, {"finetune", "full"}});
  bool full_kept = false;
  for (const FitSuggestion& s : one_gpu.suggestions) {
    CAPTURE(s.change);
    full_kept |= s.config.training.finetune == FinetuneMethod::kFull && s.config.training.offload == Offload::kParams;
  }
  CHECK(full_kept);
  const FitAdvice seventy = advice_for({{"model", "llama3.1-70b"}, {"gpu", "h100-sxm"}, {"gpus", 8}, {"finetune", "full"}});
  bool lora = false;
  for (const FitSuggestion& s : seventy.suggestions) lora |= s.config.training.finetune == FinetuneMethod::kLora;
  CHECK(lora);
  for (const FitAdvice* advice : {&one_gpu, &seventy})
    for (size_t i = 0; i < advice->suggestions.size(); ++i)
      for (size_t j = 0; j < i; ++j) {
        const FitSuggestion &a = advice->suggestions[j], &b = advice->suggestions[i];
        CAPTURE(a.change);
        CAPTURE(b.change);
        CHECK_FALSE((a.device_bytes == b.device_bytes && a.tokens_per_s_per_gpu == b.tokens_per_s_per_gpu &&
                     a.changed_dimensions != b.changed_dimensions));
      }
}

// An as-a-user review: a 7B full fine-tune on 2 RTX 4090 under ZeRO-3 + optimizer offload was offered
// six LoRA/QLoRA changes (each faster than any fix of the full fine-tune), while recompute=full alone
// fits and keeps it a full fine-tune. Fixes that keep the method hold up to half of the list.
TEST_CASE("fit advice keeps room for the fixes that keep the fine-tuning method asked about") {
  const ParsedConfig parsed =
      parse_config({{"model", "qwen2.5-7b"}, {"gpu", "rtx4090"}, {"gpus", 2}, {"finetune", "full"}, {"framework", "deepspeed"},
                    {"zero", 3}, {"offload", "optimizer"}, {"seq", 2048}, {"micro_batch", 1}, {"global_batch", 32}});
  REQUIRE_FALSE(has_errors(parsed.issues));
  const FitAdvice advice = fit_advice(parsed.config);
  REQUIRE(advice.suggestions.size() == 6);
  int keeping = 0, switching = 0;
  bool recompute_alone = false;
  for (const FitSuggestion& s : advice.suggestions) {
    CAPTURE(s.change);
    if (s.config.training.finetune == FinetuneMethod::kFull) ++keeping;
    else ++switching;
    recompute_alone |= s.change == "recompute none \xe2\x86\x92 full";
  }
  CHECK(keeping >= 3);
  CHECK(switching >= 1);  // the faster alternatives are still shown
  CHECK(recompute_alone);
  for (size_t i = 1; i < advice.suggestions.size(); ++i)
    CHECK_FALSE(fit_advice_before(advice.suggestions[i], advice.suggestions[i - 1]));  // still cheapest first
}

// The same review: QLoRA of a 14B model on one L4 at micro-batch 4 read "no change helps" and "the
// largest micro-batch that fits is 1" (at 93%, above the tight line); micro-batch 1 with a fused
// linear cross-entropy fits at 76%. A fine-tuning change is also tried at one sequence per micro-batch.
TEST_CASE("fit advice tries a fine-tuning change at micro-batch 1") {
  const ParsedConfig parsed = parse_config({{"model", "qwen2.5-14b"}, {"gpu", "l4"}, {"gpus", 1}, {"finetune", "qlora"},
                                            {"seq", 2048}, {"global_batch", 16}, {"micro_batch", 4}});
  REQUIRE_FALSE(has_errors(parsed.issues));
  const FitAdvice advice = fit_advice(parsed.config);
  bool smaller = false;
  for (const FitSuggestion& s : advice.suggestions) {
    CAPTURE(s.change);
    CHECK(estimate(s.config).worst().device_bytes <= parsed.config.training.headroom * estimate(s.config).memory.capacity_bytes);
    smaller |= s.config.training.micro_batch == 1 && s.config.training.global_batch == 16;
  }
  CHECK(smaller);
}

// A 3B LoRA at micro-batch 4 on a 16 GB T4 is out of memory at every multiple of 512 tokens but runs
// at 256: "no sequence length fits" was wrong. Below one 512-token unit the halves are tried.
TEST_CASE("the longest sequence that fits is found below 512 tokens too") {
  const ParsedConfig parsed = parse_config({{"model", "llama3.2-3b"}, {"gpu", "t4"}, {"gpus", 1}, {"finetune", "lora"},
                                            {"seq", 2048}, {"micro_batch", 4}});
  REQUIRE_FALSE(has_errors(parsed.issues));
  Config config = parsed.config;
  const FitAdvice advice = fit_advice(config);
  config.training.seq = 512;
  REQUIRE(estimate(config).memory.verdict == Verdict::kOutOfMemory);  // no 512-token unit fits
  CHECK(advice.largest_seq > 0);
  CHECK(advice.largest_seq < 512);
  config.training.seq = advice.largest_seq;
  CHECK(estimate(config).memory.verdict != Verdict::kOutOfMemory);
  config.training.seq = advice.largest_seq * 2;
  CHECK(estimate(config).memory.verdict == Verdict::kOutOfMemory);
}

// An as-a-user review: a LoRA fine-tune's default global batch is one sequence per GPU, and "the largest
// micro-batch that fits is 1" was read as a memory limit where micro-batch 4 fit at 80%. The search keeps
// the micro-batches per step and lets the global batch grow with the micro-batch.
TEST_CASE("the largest micro-batch is a memory limit, not the global batch's") {
  const ParsedConfig parsed = parse_config({{"model", "llama3.2-1b"}, {"gpu", "a100-80gb"}, {"gpus", 1}, {"finetune", "lora"}});
  REQUIRE_FALSE(has_errors(parsed.issues));
  REQUIRE(parsed.config.training.global_batch == parsed.config.training.micro_batch);  // one micro-batch per step
  const FitAdvice advice = fit_advice(parsed.config);
  CHECK(advice.largest_micro_batch > 1);
  Config at = parsed.config;
  at.training.micro_batch = at.training.global_batch = advice.largest_micro_batch;
  CHECK(estimate(at).memory.verdict != Verdict::kOutOfMemory);
  at.training.micro_batch = at.training.global_batch = advice.largest_micro_batch + 1;
  CHECK(estimate(at).memory.verdict == Verdict::kOutOfMemory);
}
