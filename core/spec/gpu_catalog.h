// gpu_catalog.h — GPU hardware input, cluster shape and the GPU presets.
// Specs from the vendor datasheets, cited per preset; memory capacities are the totals the driver
// reports (nvidia-smi "MiB" column) where a reading is known, see gpu_catalog.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace meshfit {

struct GpuSpec {
  std::string id = "custom";           // preset id ("h100-sxm") or "custom"
  std::string name = "Custom GPU";     // display name
  double memory_bytes = 0;             // device memory capacity (what nvidia-smi shows as total)
  double bf16_flops = 0;               // dense BF16 tensor throughput, flop/s
  double fp8_flops = 0;                // dense FP8 tensor throughput, flop/s; 0 = no FP8 support
  double hbm_bytes_per_s = 0;          // memory bandwidth
  double nvlink_bytes_per_s = 0;       // per-GPU NVLink/xGMI bandwidth, both directions; 0 = none
  double internode_bytes_per_s = 0;    // per-GPU network bandwidth (csv gives Gb/s: divided by 8)
  int64_t nvlink_domain = 8;           // GPUs sharing one NVLink domain (72 on GB200 NVL72)
};

struct ClusterSpec {
  int64_t gpus = 8;           // total GPUs in the job
  int64_t gpus_per_node = 8;  // GPUs per server
};

struct GpuPreset {
  const char* id;
  const char* source;  // the datasheet (and reference system) behind the numbers
  GpuSpec spec;
};

const std::vector<GpuPreset>& gpu_presets();
std::optional<GpuSpec> find_gpu_preset(const std::string& id);
// gpu = "custom": no memory until gpu_memory_gib gives it, and H100 SXM's compute and bandwidth, so
// that a step time exists (with zero flop/s every time and MFU was NaN: found by tests/fuzz).
GpuSpec custom_gpu();

}  // namespace meshfit
