// gpu_catalog.cpp — the GPU presets.
// Throughput/bandwidth: ../shared/reference/gpus.csv (its `source` column cites the datasheets).
// Capacity: the driver-reported total. H100 SXM (81559 MiB) and H200 (143771 MiB) were read with
// nvidia-smi on this workplace's machines (.library/device/KINDS.md); A100 40960/81920 MiB, L40S
// 46068 MiB, RTX 4090 24564 MiB and B200 183359 MiB are the nvidia-smi totals those cards report;
// GB200 and MI300X use the datasheet figure as GiB (confidence: medium).
#include "gpu_catalog.h"

#include "units.h"

namespace meshfit {

namespace {

GpuSpec gpu(const char* id, const char* name, double memory_mib, double bf16_tflops,
            double fp8_tflops, double hbm_tbps, double nvlink_gbps, double internode_gbit,
            int64_t nvlink_domain) {
  GpuSpec spec;
  spec.id = id;
  spec.name = name;
  spec.memory_bytes = mib_to_bytes(memory_mib);
  spec.bf16_flops = bf16_tflops * kTFLOPS;
  spec.fp8_flops = fp8_tflops * kTFLOPS;
  spec.hbm_bytes_per_s = hbm_tbps * 1e12;
  spec.nvlink_bytes_per_s = gb_to_bytes(nvlink_gbps);
  spec.internode_bytes_per_s = internode_gbit * 1e9 / 8.0;  // Gb/s (bits) -> bytes/s
  spec.nvlink_domain = nvlink_domain;
  return spec;
}

std::vector<GpuPreset> make_presets() {
  const char* kCsv = "../shared/reference/gpus.csv";
  return {
      {"a100-40gb", kCsv, gpu("a100-40gb", "A100 SXM 40GB", 40960, 312, 0, 1.555, 600, 200, 8)},
      {"a100-80gb", kCsv, gpu("a100-80gb", "A100 SXM 80GB", 81920, 312, 0, 2.039, 600, 200, 8)},
      {"h100-sxm", kCsv, gpu("h100-sxm", "H100 SXM 80GB", 81559, 989, 1979, 3.35, 900, 400, 8)},
      {"h100-pcie", kCsv, gpu("h100-pcie", "H100 PCIe 80GB", 81559, 756, 1513, 2.0, 600, 200, 2)},
      {"h200", kCsv, gpu("h200", "H200 SXM 141GB", 143771, 989, 1979, 4.8, 900, 400, 8)},
      {"b200", kCsv, gpu("b200", "B200 180GB", 183359, 2250, 4500, 8.0, 1800, 400, 8)},
      {"gb200", kCsv, gpu("gb200", "GB200 NVL72", 186 * 1024.0, 2500, 5000, 8.0, 1800, 400, 72)},
      {"mi300x", kCsv, gpu("mi300x", "MI300X 192GB", 192 * 1024.0, 1307.4, 2614.9, 5.3, 896, 400, 8)},
      {"l40s", kCsv, gpu("l40s", "L40S 48GB", 46068, 362.05, 733, 0.864, 0, 100, 1)},
      {"rtx4090", kCsv, gpu("rtx4090", "RTX 4090 24GB", 24564, 165.2, 330.3, 1.008, 0, 25, 1)},
  };
}

}  // namespace

const std::vector<GpuPreset>& gpu_presets() {
  static const std::vector<GpuPreset> presets = make_presets();
  return presets;
}

std::optional<GpuSpec> find_gpu_preset(const std::string& id) {
  for (const GpuPreset& preset : gpu_presets())
    if (id == preset.id) return preset.spec;
  return std::nullopt;
}

GpuSpec custom_gpu() {
  GpuSpec spec = *find_gpu_preset("h100-sxm");
  spec.id = "custom";
  spec.name = "Custom GPU";
  spec.memory_bytes = 0;
  return spec;
}

}  // namespace meshfit
