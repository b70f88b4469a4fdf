// config.h — one training configuration: model x hardware x training x layout.
// Calculon's split (model, system, execution) as four plain structs; front ends only fill it in.
#pragma once

#include <string>

#include "spec/gpu_catalog.h"
#include "spec/layout.h"
#include "spec/model_spec.h"
#include "spec/training_spec.h"

namespace meshfit {

struct Config {
  ModelSpec model;
  GpuSpec gpu;
  ClusterSpec cluster;
  TrainingSpec training;
  Layout layout;
  std::string name;   // the run's name, e.g. "llama3-70b 64xH100 sweep": page header, Markdown, links, --json
  std::string notes;  // free text about the run, carried in links, exports and --json
};

// dp as used by every formula: layout.dp, or gpus / (tp * pp * cp) when layout.dp == 0.
int64_t effective_dp(const Config& config);
// The ranks one shard of the model state is split over: dp x cp / dp_replicate (dp_replicate
// replicas of each shard; Layout::dp_replicate). The whole dp x cp group when dp_replicate is 1.
int64_t shard_group_ranks(const Config& config);
// Micro-batches per DP rank per optimizer step: global_batch / (dp * micro_batch).
int64_t num_microbatches(const Config& config);

}  // namespace meshfit
