// gpu_catalog.h — GPU hardware input, cluster shape and the GPU presets.
// Peak figures: vendor datasheets as collected in ../shared/reference/kernels/gpu_specs_check.csv
// (and gpus.csv); measured GEMM ceilings: kernels/gemm_rates.csv; every preset cites each figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace meshfit {

struct GpuSpec {
  std::string id = "custom";           // preset id ("h100-sxm") or "custom"
  std::string name = "Custom GPU";     // display name
  std::string family = "custom";       // generation for the validation error band: ampere, hopper, blackwell, ...
  double memory_bytes = 0;             // device memory capacity (what nvidia-smi shows as total)
  double bf16_flops = 0;               // dense BF16 (V100: FP16) tensor throughput, flop/s (datasheet)
  double fp8_flops = 0;                // dense FP8 tensor throughput, flop/s; 0 = no FP8 support
  double hbm_bytes_per_s = 0;          // memory bandwidth (datasheet)
  double nvlink_bytes_per_s = 0;       // per-GPU NVLink/xGMI bandwidth, both directions; 0 = none
  double internode_bytes_per_s = 0;    // per-GPU network bandwidth (NIC Gb/s divided by 8)
  int64_t nvlink_domain = 8;           // GPUs sharing one NVLink domain (72 on GB200/GB300 NVL72)
  int64_t sms = 0;                     // streaming multiprocessors (AMD: compute units) the GEMM tiles
                                       // spread over (perf_model.cpp wave quantization); 0 = unknown: not modelled
  // Measured ceilings (kernels/gemm_rates.csv, best shape of a sweep) as fractions of the peaks above;
  // the custom GPU defaults are the median of the NVIDIA datacenter parts (A100 0.87, H100 0.80, B200 0.78).
  double bf16_gemm_ceiling = 0.8;      // max achievable bf16 matmul / bf16_flops
  double fp8_gemm_ceiling = 0.72;      // max achievable fp8 matmul / fp8_flops
  double tdp_w = 0;                    // vendor board power (0 = unknown)
  double power_limit_w = 0;            // enforced power cap (0 = none): lowers sustained tensor clocks
};

struct ClusterSpec {
  int64_t gpus = 8;           // total GPUs in the job
  int64_t gpus_per_node = 8;  // GPUs per server
};

struct GpuPreset {
  const char* id;
  const char* source;  // the datasheet (and reference system) behind each figure
  GpuSpec spec;
};

// Volta and Turing have no BF16 tensor cores (V100 and T4 datasheets): their half-precision rate,
// bf16_flops, is FP16's, and their runs train in fp16 mixed precision.
inline bool half_precision_is_fp16(const std::string& family) { return family == "volta" || family == "turing"; }

const std::vector<GpuPreset>& gpu_presets();
std::optional<GpuSpec> find_gpu_preset(const std::string& id);
// GeForce and workstation/inference parts with GDDR memory (T4, L4, L40S, A10/A10G, RTX cards): their
// clocks, power and bandwidth are not those of the HBM parts of their family that the throughput
// validation measured, so their predictions take no error band from those runs (an as-a-user review saw
// an RTX 3090 quoted "±3% on 24 measured runs" of A100 clusters).
bool gddr_part(const std::string& id);

// Fraction of the datasheet tensor rate a power cap leaves: (cap / tdp)^kPowerCapClockExponent.
// Assumption, not measured here: dynamic power ~ f * V^2 with V ~ f near the top of the DVFS curve,
// so the sustained clock scales with the cube root of the power budget. 1 without a cap.
constexpr double kPowerCapClockExponent = 1.0 / 3.0;
double power_cap_clock_fraction(const GpuSpec& gpu);

}  // namespace meshfit
