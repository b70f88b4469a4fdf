// method_select.h — the fastest distributed fine-tuning method that fits: LLMem's "distributed
// fine-tuning method decision" (Kim et al. 2024, arXiv 2404.10933, Algorithm 1) generalised to
// DDP, ZeRO-1/2/3, FSDP, tensor parallelism and CPU offload, each with full/LoRA/QLoRA, with and
// without gradient checkpointing; every candidate that fits ranked by predicted step time, every
// other one with the reason it was rejected.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "memory/memory_model.h"
#include "spec/config.h"
#include "io/memory_band.h"
#include "spec/issue.h"

namespace meshfit {

struct MethodCandidate {
  std::string strategy;            // "DDP", "ZeRO-3 + offload optimizer", "TP=8", ...
  Config config;                   // the evaluated config (finetune, framework, zero, tp, offload, recompute)
  bool fits = false;
  Verdict verdict = Verdict::kOutOfMemory;  // estimate's verdict (paged states may spill: memory_model.h)
  std::string rejected;            // why not, when it does not fit or is not allowed
  double device_bytes = 0;         // worst rank
  double capacity_bytes = 0;       // out of memory: the worst rank's capacity (0 when rejected otherwise)
  bool checkpointed = false;       // out of memory even with gradient checkpointing
  double host_bytes = 0;           // per rank, offload only
  bool step_predicted = false;     // false: no step time for this GPU (perf_model.h step_unpredictable)
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  MemoryBand memory_band;          // how far to trust device_bytes: its method and setup's (memory_band.h)
};

struct MethodOptions {
  std::array<bool, 3> methods{true, true, true};  // full, lora, qlora
  bool keep_optimizer = false;  // the base's optimizer for every method (one the user named), not each stack default
};

struct MethodRanking {
  Config base;                             // the config the methods were ranked from
  std::vector<Issue> issues;               // problems with the base config (errors: nothing evaluated)
  std::vector<MethodCandidate> ranked;     // fits, fastest first
  std::vector<MethodCandidate> rejected;   // with reasons
};

// An out-of-memory reason with its byte figures written by `bytes_text` (the page's units; `rejected`
// holds it in GiB); any other reason as it is.
std::string rejected_reason(const MethodCandidate& candidate, const std::function<std::string(double)>& bytes_text);

// The base config gives model, GPU, cluster, sequence, micro- and global batch and LoRA settings;
// method, framework, ZeRO stage, tp, offload and recompute are chosen here.
// The ranking's order: under the tight threshold first, then the faster step (the smaller worst rank
// when there is no step time).
bool method_before(const MethodCandidate& a, const MethodCandidate& b);
MethodRanking rank_finetune_methods(const Config& base, const MethodOptions& options);

}  // namespace meshfit
