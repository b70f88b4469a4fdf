// gpu_catalog.cpp — the GPU presets, each citing its vendor datasheet (the `source` string, also in
// `meshfit presets --json`). Throughput is dense (half the datasheets' sparsity figures).
// Capacity: the driver-reported total. H100 SXM (81559 MiB) and H200 (143771 MiB) were read with
// nvidia-smi on H100 and H200 machines; A100 40960/81920 MiB, L40S 46068 MiB, RTX 4090 24564 MiB and
// B200 183359 MiB are the nvidia-smi totals those cards report; GB200 and MI300X use the datasheet
// figure as GiB (confidence: medium). Internode bandwidth is the reference system's NIC per GPU.
#include "spec/gpu_catalog.h"

#include "spec/preset_table.h"
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
  return {
      {"a100-40gb", "NVIDIA A100 Tensor Core GPU datasheet (312 TF BF16 dense, 1555 GB/s HBM2, NVLink3 600 GB/s); "
                    "DGX A100 user guide (8x HDR 200 Gb/s)",
       gpu("a100-40gb", "A100 SXM 40GB", 40960, 312, 0, 1.555, 600, 200, 8)},
      {"a100-80gb", "NVIDIA A100 Tensor Core GPU datasheet (312 TF BF16 dense, 2039 GB/s HBM2e, NVLink3 600 GB/s); "
                    "DGX A100 user guide (8x HDR 200 Gb/s)",
       gpu("a100-80gb", "A100 SXM 80GB", 81920, 312, 0, 2.039, 600, 200, 8)},
      {"h100-sxm", "NVIDIA H100 Tensor Core GPU datasheet, SXM (989 TF BF16 / 1979 TF FP8 dense, 3.35 TB/s, NVLink4 "
                   "900 GB/s); DGX H100 datasheet (8x NDR 400 Gb/s)",
       gpu("h100-sxm", "H100 SXM 80GB", 81559, 989, 1979, 3.35, 900, 400, 8)},
      {"h100-pcie", "NVIDIA H100 Tensor Core GPU datasheet, PCIe (756 TF BF16 / 1513 TF FP8 dense, 2.0 TB/s, NVLink "
                    "bridge 600 GB/s between pairs); internode 200 Gb/s assumed",
       gpu("h100-pcie", "H100 PCIe 80GB", 81559, 756, 1513, 2.0, 600, 200, 2)},
      {"h200", "NVIDIA H200 Tensor Core GPU datasheet (141 GB HBM3e, 4.8 TB/s, Hopper compute as H100 SXM, NVLink4 "
               "900 GB/s); HGX H200 with 400 Gb/s NICs",
       gpu("h200", "H200 SXM 141GB", 143771, 989, 1979, 4.8, 900, 400, 8)},
      {"b200", "NVIDIA DGX B200 datasheet (1440 GB per 8 GPUs, 8 TB/s, 2.25 PF BF16 / 4.5 PF FP8 dense per GPU, "
               "NVLink5 1.8 TB/s, 8x ConnectX-7 400 Gb/s)",
       gpu("b200", "B200 180GB", 183359, 2250, 4500, 8.0, 1800, 400, 8)},
      {"gb200", "NVIDIA GB200 NVL72 datasheet (13.5 TB HBM3e per 72 GPUs, 2.5 PF BF16 / 5 PF FP8 dense per GPU, "
                "NVLink5 1.8 TB/s in a 72-GPU domain)",
       gpu("gb200", "GB200 NVL72", 186 * 1024.0, 2500, 5000, 8.0, 1800, 400, 72)},
      {"mi300x", "AMD Instinct MI300X accelerator datasheet (192 GB HBM3, 5.3 TB/s, 1307.4 TF BF16 / 2614.9 TF FP8 "
                 "dense, 7 Infinity Fabric links x 128 GB/s)",
       gpu("mi300x", "MI300X 192GB", 192 * 1024.0, 1307.4, 2614.9, 5.3, 896, 400, 8)},
      {"l40s", "NVIDIA L40S datasheet (48 GB GDDR6, 864 GB/s, 362.05 TF BF16 / 733 TF FP8 dense, no NVLink); "
               "internode 100 Gb/s assumed",
       gpu("l40s", "L40S 48GB", 46068, 362.05, 733, 0.864, 0, 100, 1)},
      {"rtx4090", "NVIDIA Ada Lovelace GPU architecture whitepaper, GeForce RTX 4090 (165.2 TF BF16 / 330.3 TF FP8 "
                  "dense with FP32 accumulate, 24 GB GDDR6X, 1008 GB/s, no NVLink); internode 25 Gb/s assumed",
       gpu("rtx4090", "RTX 4090 24GB", 24564, 165.2, 330.3, 1.008, 0, 25, 1)},
  };
}

}  // namespace

const std::vector<GpuPreset>& gpu_presets() {
  static const std::vector<GpuPreset> presets = make_presets();
  return presets;
}

std::optional<GpuSpec> find_gpu_preset(const std::string& id) { return find_preset(gpu_presets(), id); }

GpuSpec custom_gpu() {
  GpuSpec spec = *find_gpu_preset("h100-sxm");
  spec.id = "custom";
  spec.name = "Custom GPU";
  spec.memory_bytes = 0;
  return spec;
}

}  // namespace meshfit
