// structure.h — the structural rules of a layout, each stated once: validate() turns a broken rule
// into an Issue with a message, the layout search counts it as a rejection before any memory math,
// and the page's choosers offer only the degrees that keep every rule. Framework differences come
// from FrameworkProfile (Megatron-LM arguments.py, torchtitan parallel_dims.py).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "spec/config.h"
#include "spec/issue.h"
#include "memory/memory_model.h"

namespace meshfit {

constexpr int64_t kMaxVpp = 8;  // largest interleaving the search tries and the page offers

// Tensor parallelism splits heads, key/value heads and the MLP width.
bool tp_divides_heads(const ModelSpec& model, int64_t tp);
bool tp_divides_kv_heads(const ModelSpec& model, int64_t tp);
bool tp_divides_ffn(const ModelSpec& model, int64_t tp);
bool tp_fits(const ModelSpec& model, int64_t tp);  // all three
// Load-balanced context parallelism cuts the sequence into 2*cp chunks.
bool cp_fits(int64_t seq, int64_t cp);

// The first broken rule of the pipeline split (pp, vpp, first/last stage layers), or none:
// kStageLayersInvalid, kPpExceedsLayers, kPpNotDivideLayers, kVppNotDivideLayers, kVppWithoutPp.
std::optional<IssueCode> pipeline_problem(int64_t layers, const Layout& layout, const FrameworkProfile& profile);
// torchtitan (pipeline_edge_weight > 0) sets more than two virtual stages per rank only through
// pipeline_parallel_layers_per_stage = k: ceil((layers + embedding and head weights) / k) stages,
// which must be pp * vpp (pipeline_parallel.py). The k that gives `chunks` stages, or none (80
// layers on pp 4: vpp 3 and 7 have one, vpp 4 and 5 none; a review saw the export write a file
// torchtitan refuses). Two per rank need none: it is the interleaved schedules' default.
std::optional<int64_t> torchtitan_layers_per_stage(int64_t layers, const FrameworkProfile& profile, int64_t chunks);
// Sets layout.pp_first/last_stage_layers for its pp*vpp chunks: an even split, or (when the
// framework needs equal chunks) the first and last chunk take the remainder, as Llama 3 405B did
// (126 layers over 16 stages: 7 + 14 x 8 + 7). Returns false when no valid split exists.
bool choose_pipeline_split(int64_t layers, const FrameworkProfile& profile, Layout& layout);

// GPUs that share one NVLink domain in this cluster (1 without NVLink; NVL72-style domains span nodes).
int64_t nvlink_domain_gpus(const Config& config);
// Spatial-temporal model parallelism (PrimePar, Wang et al. ASPLOS'24 §3.1-3.3): the first broken rule
// for a square side q inside a tp group, or none: kStNotPowerOfTwo (q and tp powers of two: the
// primitive works on 2^n devices), kStSquareNotDivideTp, kStSquareOutsideNvlink (the square's ring
// shifts must stay on NVLink to hide under compute, PRIMEPAR_NOTES §5 overlap condition),
// kStSquareNotDivideSeq (M split q ways per step, q^2 blocks in the gradient phase),
// kStSquareNotDivideHidden (N and K split q^2 ways). The head dimension is never split because tp
// itself must divide the heads (tp_divides_heads), as for Megatron TP.
std::optional<IssueCode> spatial_temporal_problem(const Config& config, int64_t q, int64_t tp);
// The square sides q > 1 that keep every rule for this tp (the search's and the page's choices).
std::vector<int64_t> spatial_temporal_choices(const Config& config, int64_t tp);

// Replicated shard groups (Layout::dp_replicate): the first broken rule for `replicas` groups of
// dp x cp / replicas ranks, or kHolds: the framework offers them (kNotOffered) at this ZeRO stage
// (kBelowStage), the groups are whole (kNotDivideDp) and of more than one rank (kOneRankGroups).
enum class ReplicasRule { kHolds, kNotOffered, kBelowStage, kNotDivideDp, kOneRankGroups };
ReplicasRule replicas_rule(const FrameworkProfile& profile, int64_t replicas, int64_t zero, int64_t dp, int64_t cp);
// The ranks the replicas must divide: dp, or dp x cp where the framework's groups span cp
// (FrameworkProfile::replicas_span_cp, Megatron-LM).
inline int64_t replicas_span(const FrameworkProfile& profile, int64_t dp, int64_t cp) {
  return profile.replicas_span_cp ? dp * cp : dp;
}
inline bool replicas_hold(const FrameworkProfile& profile, int64_t replicas, int64_t zero, int64_t dp, int64_t cp) {
  return replicas_rule(profile, replicas, zero, dp, cp) == ReplicasRule::kHolds;
}
// The user's replicas where they hold, else the most below them that do (1 at the least): what the
// search and the layout repair keep when a layout changes dp or the stage.
int64_t most_replicas_holding(const FrameworkProfile& profile, int64_t replicas, int64_t zero, int64_t dp, int64_t cp);
// dp_replicate choices that hold at the config's degrees and stage (the page's chooser): 1 first.
std::vector<int64_t> replicas_choices(const Config& config);

// DeepSpeed ZeRO++ hpZ (Layout::hpz_partition_size): the first broken rule for a secondary
// partition over `hpz` ranks, or kHolds. It is DeepSpeed's (kNotDeepSpeed), for ZeRO-3
// (kBelowStage), over groups of consecutive ranks that meshfit models as data-parallel ranks only
// (kWithTp: tp = 1), dividing the dp x cp ranks ZeRO shards over (kNotDivide), and not with MiCS's
// groups as well (kWithReplicas).
enum class HpzRule { kHolds, kNotDeepSpeed, kBelowStage, kWithTp, kNotDivide, kWithReplicas };
HpzRule hpz_rule(Framework framework, int64_t hpz, const Layout& layout, int64_t dp);
// The user's hpZ size where it holds on `layout` (with its dp), else the largest divisor below it
// that does (1 at the least): what the search and the layout repair keep.
int64_t most_hpz_holding(Framework framework, int64_t hpz, const Layout& layout, int64_t dp);
// hpz_partition_size choices that hold at the config's degrees and stage (the page's chooser).
std::vector<int64_t> hpz_choices(const Config& config);

bool batch_divides(int64_t global_batch, int64_t dp, int64_t micro_batch);
// The interleaved schedule's micro-batch rule (Megatron-LM: micro-batches per step % pp == 0).
bool interleave_fits(const FrameworkProfile& profile, int64_t vpp, int64_t microbatches, int64_t pp);

// Every divisor of n in ascending order (none for n < 1), found in O(sqrt n) steps: the search's
// enumeration and the page's choosers walk them.
std::vector<int64_t> divisors(int64_t n);

// Degrees that keep every rule for the rest of the config (the page's choosers).
std::vector<int64_t> tp_choices(const Config& config);
std::vector<int64_t> pp_choices(const Config& config);   // at the config's tp
std::vector<int64_t> cp_choices(const Config& config);   // at the config's tp and pp
std::vector<int64_t> vpp_choices(const Config& config);  // at the config's pp
std::vector<int64_t> zero_choices(Framework framework);

}  // namespace meshfit
