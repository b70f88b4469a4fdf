// structure.cpp — see structure.h.
#include "spec/structure.h"

#include <algorithm>

#include "spec/checked.h"

namespace meshfit {

bool tp_divides_heads(const ModelSpec& model, int64_t tp) { return tp > 0 && model.heads % tp == 0; }
bool tp_divides_kv_heads(const ModelSpec& model, int64_t tp) { return tp > 0 && model.kv_heads % tp == 0; }
bool tp_divides_ffn(const ModelSpec& model, int64_t tp) { return tp > 0 && model.ffn % tp == 0; }
bool tp_fits(const ModelSpec& model, int64_t tp) {
  return tp_divides_heads(model, tp) && tp_divides_kv_heads(model, tp) && tp_divides_ffn(model, tp);
}
bool cp_fits(int64_t seq, int64_t cp) { return cp == 1 || (cp > 1 && seq % (2 * cp) == 0); }

std::optional<int64_t> torchtitan_layers_per_stage(int64_t layers, const FrameworkProfile& profile, int64_t chunks) {
  const int64_t effective = layers + 2 * profile.pipeline_edge_weight;
  if (chunks < 1) return std::nullopt;
  const int64_t k = (effective + chunks - 1) / chunks;  // the smallest k with ceil(effective / k) <= chunks
  if ((effective + k - 1) / k == chunks) return k;
  return std::nullopt;
}

std::optional<IssueCode> pipeline_problem(int64_t layers, const Layout& l, const FrameworkProfile& profile) {
  const int64_t chunks = l.pp * l.vpp;
  const bool explicit_split = l.pp_first_stage_layers > 0 || l.pp_last_stage_layers > 0;
  if (l.pp_first_stage_layers < 0 || l.pp_last_stage_layers < 0) return IssueCode::kStageLayersInvalid;
  // Checked: both counts are user input, and a wrapped sum must not pass as a valid split.
  const std::optional<int64_t> fixed_sum = checked_add(l.pp_first_stage_layers, l.pp_last_stage_layers);
  if (!fixed_sum || l.pp_first_stage_layers > layers || l.pp_last_stage_layers > layers)
    return IssueCode::kStageLayersInvalid;
  if (chunks > layers) return IssueCode::kPpExceedsLayers;
  if (explicit_split) {
    const int64_t fixed = *fixed_sum;
    const int64_t rest_chunks = chunks - (l.pp_first_stage_layers > 0) - (l.pp_last_stage_layers > 0);
    if (l.pp == 1) return IssueCode::kStageLayersInvalid;
    if (fixed > layers || (rest_chunks == 0 && fixed != layers) || (rest_chunks > 0 && layers - fixed < rest_chunks))
      return IssueCode::kStageLayersInvalid;
    if (profile.even_middle_split && rest_chunks > 0 && (layers - fixed) % rest_chunks != 0)
      return IssueCode::kPpNotDivideLayers;
    return std::nullopt;
  }
  if (profile.even_middle_split && l.vpp == 1 && layers % l.pp != 0) return IssueCode::kPpNotDivideLayers;
  if (l.vpp > 1 && !profile.interleaved_schedule) return IssueCode::kVppUnsupported;
  // torchtitan spreads E = L + 2 effective layers itself (uneven first/last), Megatron needs equal chunks.
  if (l.vpp > 1 && profile.pipeline_edge_weight == 0 && layers % chunks != 0) return IssueCode::kVppNotDivideLayers;
  if (l.vpp > 2 && profile.pipeline_edge_weight > 0 && !torchtitan_layers_per_stage(layers, profile, chunks))
    return IssueCode::kVppNotDivideLayers;
  if (l.vpp > 1 && l.pp == 1) return IssueCode::kVppWithoutPp;
  return std::nullopt;
}

bool choose_pipeline_split(int64_t layers, const FrameworkProfile& profile, Layout& layout) {
  layout.pp_first_stage_layers = layout.pp_last_stage_layers = 0;
  const int64_t chunks = layout.pp * layout.vpp;
  if (chunks > layers || (layout.vpp > 1 && (layout.pp == 1 || !profile.interleaved_schedule))) return false;
  // FSDP/DeepSpeed spread an uneven plain pipeline themselves.
  if (layout.vpp > 2 && profile.pipeline_edge_weight > 0 && !torchtitan_layers_per_stage(layers, profile, chunks)) return false;
  if (layers % chunks == 0 || profile.pipeline_edge_weight > 0 || !(layout.vpp > 1 || profile.even_middle_split))
    return true;
  if (chunks == 2) {
    layout.pp_first_stage_layers = layers / 2;
    layout.pp_last_stage_layers = layers - layers / 2;
    return true;
  }
  // Middle chunks at ceil(layers / chunks), or fewer when that leaves the ends empty (28 layers on
  // 16 stages: 7 + 14 x 1 + 7, which Megatron-LM accepts through its first/last-stage flags).
  for (int64_t per_chunk = (layers + chunks - 1) / chunks; per_chunk >= 1; --per_chunk) {
    const int64_t rest = layers - (chunks - 2) * per_chunk;
    if (rest < 2) continue;
    layout.pp_first_stage_layers = rest / 2;
    layout.pp_last_stage_layers = rest - rest / 2;
    return true;
  }
  return false;
}

constexpr int64_t kHgxNvlinkGpus = 8;  // the GPUs of one HGX/DGX board's NVSwitch fabric

int64_t nvlink_domain_gpus(const Config& config) {
  const GpuSpec& gpu = config.gpu;
  if (gpu.nvlink_bytes_per_s <= 0) return 1;
  // A domain of more than one HGX board (NVL72's 72 over 18 trays of 4) spans nodes; an HGX domain of
  // 8 ends at the node, so fewer GPUs per node cut it (an as-a-user review saw tp=4 over two 2-GPU
  // nodes priced as NVLink and not said to cross nodes).
  return gpu.nvlink_domain > kHgxNvlinkGpus ? gpu.nvlink_domain : std::min(gpu.nvlink_domain, config.cluster.gpus_per_node);
}

namespace {
bool power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }
}  // namespace

std::optional<IssueCode> spatial_temporal_problem(const Config& config, int64_t q, int64_t tp) {
  if (q == 1) return std::nullopt;
  if (!power_of_two(q) || !power_of_two(tp)) return IssueCode::kStNotPowerOfTwo;
  const int64_t square = q * q;  // q <= 2^22 (validated count), so q^2 fits int64
  if (tp % square != 0) return IssueCode::kStSquareNotDivideTp;
  if (square > nvlink_domain_gpus(config)) return IssueCode::kStSquareOutsideNvlink;
  const int64_t cp = std::max<int64_t>(1, config.layout.cp);
  if (config.training.seq % cp != 0 || (config.training.seq / cp) % square != 0) return IssueCode::kStSquareNotDivideSeq;
  if (config.model.hidden % square != 0 || config.model.ffn % square != 0) return IssueCode::kStSquareNotDivideHidden;
  return std::nullopt;
}

std::vector<int64_t> spatial_temporal_choices(const Config& config, int64_t tp) {
  std::vector<int64_t> out;
  for (int64_t q = 2; q * q <= tp; q *= 2)
    if (!spatial_temporal_problem(config, q, tp)) out.push_back(q);
  return out;
}

ReplicasRule replicas_rule(const FrameworkProfile& profile, int64_t replicas, int64_t zero, int64_t dp, int64_t cp) {
  if (replicas == 1) return ReplicasRule::kHolds;
  if (profile.replicas_mechanism == nullptr) return ReplicasRule::kNotOffered;
  if (zero < profile.replicas_from_zero) return ReplicasRule::kBelowStage;
  const int64_t span = replicas_span(profile, dp, cp);
  if (replicas < 1 || span % replicas != 0) return ReplicasRule::kNotDivideDp;
  if (dp * cp / replicas == 1) return ReplicasRule::kOneRankGroups;
  return ReplicasRule::kHolds;
}

namespace {

// The group sizes (dp_replicate, hpz_partition_size) are divisors of a rank count `span`. The
// value where it holds, else the largest divisor below it that does (1 at the least): what the
// search and the layout repair keep.
template <typename Holds>
int64_t largest_holding(int64_t value, int64_t span, Holds holds) {
  if (holds(value)) return value;
  const std::vector<int64_t> options = divisors(span);
  for (auto d = options.rbegin(); d != options.rend(); ++d)
    if (*d < value && holds(*d)) return *d;
  return 1;
}

// Every divisor of `span` that holds, ascending (the page's choosers); {1} when none does.
template <typename Holds>
std::vector<int64_t> holding_divisors(int64_t span, Holds holds) {
  std::vector<int64_t> out;
  for (int64_t d : divisors(span))
    if (holds(d)) out.push_back(d);
  if (out.empty()) out.push_back(1);
  return out;
}

}  // namespace

int64_t most_replicas_holding(const FrameworkProfile& profile, int64_t replicas, int64_t zero, int64_t dp, int64_t cp) {
  return largest_holding(replicas, replicas_span(profile, dp, cp),
                         [&](int64_t r) { return replicas_hold(profile, r, zero, dp, cp); });
}

std::vector<int64_t> replicas_choices(const Config& config) {
  const FrameworkProfile& profile = framework_profile(config.training.framework);
  const int64_t dp = effective_dp(config), cp = config.layout.cp, zero = config.layout.zero;
  return holding_divisors(replicas_span(profile, dp, cp), [&](int64_t r) { return replicas_hold(profile, r, zero, dp, cp); });
}

HpzRule hpz_rule(Framework framework, int64_t hpz, const Layout& layout, int64_t dp) {
  if (hpz == 1) return HpzRule::kHolds;
  if (framework != Framework::kDeepSpeed) return HpzRule::kNotDeepSpeed;
  if (layout.zero < 3) return HpzRule::kBelowStage;
  if (layout.tp > 1) return HpzRule::kWithTp;
  if (hpz < 1 || (dp * layout.cp) % hpz != 0) return HpzRule::kNotDivide;
  if (layout.dp_replicate > 1) return HpzRule::kWithReplicas;
  return HpzRule::kHolds;
}

int64_t most_hpz_holding(Framework framework, int64_t hpz, const Layout& layout, int64_t dp) {
  return largest_holding(hpz, dp * layout.cp, [&](int64_t h) { return hpz_rule(framework, h, layout, dp) == HpzRule::kHolds; });
}

std::vector<int64_t> hpz_choices(const Config& config) {
  const int64_t dp = effective_dp(config);
  return holding_divisors(dp * config.layout.cp, [&](int64_t h) {
    return hpz_rule(config.training.framework, h, config.layout, dp) == HpzRule::kHolds;
  });
}

bool batch_divides(int64_t global_batch, int64_t dp, int64_t micro_batch) {
  return dp > 0 && micro_batch > 0 && global_batch % (dp * micro_batch) == 0;
}

bool interleave_fits(const FrameworkProfile& profile, int64_t vpp, int64_t microbatches, int64_t pp) {
  return vpp == 1 || !profile.interleave_needs_pp_multiple || microbatches % pp == 0;
}

std::vector<int64_t> divisors(int64_t n) {
  // Pairs (d, n/d) with d <= sqrt(n): O(sqrt n) steps, ascending order.
  std::vector<int64_t> low, high;
  for (int64_t d = 1; d <= n / d; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

namespace {

bool split_exists(const Config& config, int64_t pp, int64_t vpp) {
  Layout layout = config.layout;
  layout.pp = pp;
  layout.vpp = vpp;
  return choose_pipeline_split(config.model.layers, framework_profile(config.training.framework), layout);
}

}  // namespace

std::vector<int64_t> tp_choices(const Config& config) {
  std::vector<int64_t> out;
  for (int64_t d : divisors(std::max<int64_t>(1, config.cluster.gpus)))
    if (tp_fits(config.model, d)) out.push_back(d);
  return out;
}

std::vector<int64_t> pp_choices(const Config& config) {
  std::vector<int64_t> out;
  const int64_t tp = config.layout.tp;
  if (tp > 0 && config.cluster.gpus % tp == 0)
    for (int64_t d : divisors(config.cluster.gpus / tp))
      if (split_exists(config, d, 1)) out.push_back(d);
  return out;
}

std::vector<int64_t> cp_choices(const Config& config) {
  std::vector<int64_t> out;
  const int64_t mesh = config.layout.tp * config.layout.pp;
  if (mesh > 0 && config.cluster.gpus % mesh == 0)
    for (int64_t d : divisors(config.cluster.gpus / mesh))
      if (cp_fits(config.training.seq, d)) out.push_back(d);
  return out;
}

std::vector<int64_t> vpp_choices(const Config& config) {
  std::vector<int64_t> out = {1};
  if (config.layout.pp > 1)
    for (int64_t v = 2; v <= kMaxVpp; ++v)
      if (split_exists(config, config.layout.pp, v)) out.push_back(v);
  return out;
}

std::vector<int64_t> zero_choices(Framework framework) {
  std::vector<int64_t> out;
  for (int64_t zero = 0; zero <= 3; ++zero)
    if (framework_profile(framework).offers_zero(zero)) out.push_back(zero);
  return out;
}

}  // namespace meshfit
