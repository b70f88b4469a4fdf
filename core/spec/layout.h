// layout.h — the parallel layout: degrees of data, tensor, pipeline and context parallelism.
// Flag correspondence (Megatron-LM / torchtitan): dp = data parallel size (derived in Megatron;
// torchtitan data_parallel_shard_degree), tp = --tensor-model-parallel-size / tensor_parallel_degree,
// pp = --pipeline-model-parallel-size / pipeline_parallel_degree, cp = --context-parallel-size /
// context_parallel_degree, vpp = --num-layers-per-virtual-pipeline-stage expressed as chunks per rank
// (Megatron --virtual-pipeline-model-parallel-size), zero = optimizer/gradient/weight sharding stage.
#pragma once

#include <cstdint>

namespace meshfit {

struct Layout {
  int64_t dp = 0;                     // data parallel; 0 = derive from gpus / (tp * pp * cp)
  int64_t tp = 1;                     // tensor parallel
  int64_t pp = 1;                     // pipeline stages
  int64_t cp = 1;                     // context parallel
  int64_t vpp = 1;                    // interleaved model chunks per pipeline rank (1 = plain 1F1B)
  int64_t zero = 1;                   // 0-3; Megatron: 0 = no / 1 = distributed optimizer
  int64_t pp_first_stage_layers = 0;  // uneven split: layers on the first stage (0 = even split)
  int64_t pp_last_stage_layers = 0;   // uneven split: layers on the last stage (0 = even split)
  // Spatial-temporal model parallelism (PrimePar, Wang et al. ASPLOS'24 §3.3): 1 = Megatron TP; q > 1 =
  // the tp group is t_c = tp/q^2 conventional splits times a q x q square running the P_{qxq}
  // primitive (Cannon-style block rotation over q time steps). Modelled only: no public framework
  // implements it, so no launch config is exported for it (launch_config.h).
  int64_t st_q = 1;
  // Replicas of the sharded model state among the dp ranks (1 = shard over all of dp x cp). With
  // R > 1 the states are sharded over dp x cp / R ranks and each shard is kept by R replicas:
  // torchtitan HSDP (data_parallel_replicate_degree; FRAMEWORK_NOTES §1.1 "Mesh"; R divides dp),
  // Megatron-LM --num-distributed-optimizer-instances (R divides dp x cp), DeepSpeed MiCS
  // (mics_shard_size = dp / R).
  int64_t dp_replicate = 1;
  // DeepSpeed ZeRO++ hpZ (zero_optimization.zero_hpz_partition_size; 1 = off): ZeRO-3 keeps a
  // second, 16-bit partition of the weights over groups of this many consecutive ranks and gathers
  // the backward's weights from it (deepspeed/runtime/zero/partition_parameters.py
  // _partition_param_sec, ds_secondary_tensor; utils/groups.py _create_zero_param_parallel_group).
  int64_t hpz_partition_size = 1;
};

// The model-parallel kind a layout uses.
inline bool spatial_temporal(const Layout& layout) { return layout.st_q > 1; }

}  // namespace meshfit
