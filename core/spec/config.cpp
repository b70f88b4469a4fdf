// config.cpp — quantities derived from a Config that every model needs.
#include "spec/config.h"

#include <algorithm>

namespace meshfit {

int64_t effective_dp(const Config& config) {
  if (config.layout.dp > 0) return config.layout.dp;
  const int64_t model_parallel = config.layout.tp * config.layout.pp * config.layout.cp;
  return model_parallel > 0 ? config.cluster.gpus / model_parallel : 0;
}

int64_t shard_group_ranks(const Config& config) {
  const int64_t replicas = std::max<int64_t>(1, config.layout.dp_replicate);
  return effective_dp(config) * config.layout.cp / replicas;
}

int64_t num_microbatches(const Config& config) {
  const int64_t per_step = effective_dp(config) * config.training.micro_batch;
  return per_step > 0 ? config.training.global_batch / per_step : 0;
}

}  // namespace meshfit
