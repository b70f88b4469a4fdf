// hagemann.h — reading Hagemann et al. 2023's sweep (tests/data/layouts_*.csv) into configs.
// The sweep's codebase (Aleph Alpha's, Megatron-derived) is not one of meshfit's profiles; its
// memory matches ZeRO-1 with 16-bit gradients (the 13B pure-DP runs on 32 GPUs completed, which
// Megatron's 6 + 12/dp bytes per parameter cannot hold), so the DeepSpeed ZeRO-1 profile stands
// in for it. Global batch: 4.19M tokens, inferred in the csv notes (Llama-2 recipe).
#pragma once

#include <string>

#include "csv.h"
#include "io/serialize.h"

namespace meshfit_test {

inline std::string hagemann_kernel(const CsvRow& row) {
  const std::string& notes = row.at("notes");
  const size_t at = notes.find("attn_kernel=");
  if (at == std::string::npos) return "";
  const size_t end = notes.find(';', at);
  return notes.substr(at + 12, end - at - 12);
}

inline bool is_hagemann(const CsvRow& row) { return row.at("source").rfind("Hagemann", 0) == 0; }

inline meshfit::Config hagemann_config(const CsvRow& row) {
  using namespace meshfit;
  Config config = default_config();
  config.model = model_from_row(row);
  config.gpu = *find_gpu_preset("a100-80gb");
  config.cluster.gpus = to_int(row.at("num_gpus"));
  config.layout.tp = to_int(row.at("tp"));
  config.layout.pp = to_int(row.at("pp"));
  config.layout.zero = 1;
  config.training.framework = Framework::kDeepSpeed;
  config.training.seq = to_int(row.at("seq_len"));
  config.training.global_batch = 4194304 / config.training.seq;
  config.training.micro_batch = to_int(row.at("micro_batch"));
  config.training.recompute = row.at("recompute") == "full" ? Recompute::kFull : Recompute::kNone;
  config.training.sp = row.at("sp") == "1";
  const std::string kernel = hagemann_kernel(row);
  config.training.flash = kernel != "torch" && kernel != "fused";  // "fused" = Megatron fused softmax (eager)
  // A Megatron-derived codebase: fused kernels and gradient-accumulation fusion, DP sync not overlapped.
  config.training.kernels = Kernels::kFused;
  config.training.dp_comm_overlap = DpCommOverlap::kOff;
  return config;
}

}  // namespace meshfit_test
