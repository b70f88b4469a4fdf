// perf_model.h — predicted step time, tokens/s per GPU, MFU and HFU for one layout, with the time
// broken into compute, exposed TP/CP communication, pipeline bubble and P2P, DP/ZeRO communication
// and the optimizer step. Formulas: Narayanan et al. SC'21 (pipeline bubble (p-1)/(v*m), §2.2 and
// §3), Korthikanti et al. 2022 (TP/SP communication, recompute), Calculon (Isaev et al. SC'23:
// size-dependent GEMM efficiencies).
#pragma once

#include "spec/config.h"
#include "memory/memory_model.h"

namespace meshfit {

// Calibration constants, one set per framework profile and precision, never per layout.
struct PerfCalibration {
  double gemm_efficiency = 0.73;          // fraction of dense peak reached by large GEMMs
  double gemm_half_efficiency_flops = 1.5e9;  // a GEMM of this many flops runs at half of the above
  double attention_efficiency = 0.45;     // FlashAttention core, fraction of dense peak (fwd+bwd)
  double eager_attention_efficiency = 0.25;   // unfused attention (masked s^2 GEMMs + softmax)
  double hbm_efficiency = 0.7;            // memory-bound kernels: fraction of HBM bandwidth
  double nvlink_efficiency = 0.7;         // achieved / per-direction NVLink bandwidth (Calculon: 0.65)
  double network_efficiency = 0.8;        // achieved / per-GPU NIC bandwidth
  double intra_latency_s = 10e-6;         // per collective step inside an NVLink domain
  double inter_latency_s = 25e-6;         // per collective step across nodes
  double dp_overlap = 0.9;                // share of a micro-batch's backward that can hide DP traffic
  double zero3_overlap = 0.7;             // share of a micro-batch's compute that hides ZeRO-3 gathers
  double cp_overlap = 0.9;                // share of attention compute that hides the ring K/V exchange
};

PerfCalibration perf_calibration(Framework framework, Precision precision);

struct StepBreakdown {       // seconds per optimizer step; the parts add up to step_time_s
  double compute_s = 0;      // forward + backward (+ recompute) on the slowest stage, all micro-batches
  double tp_comm_s = 0;      // exposed tensor-parallel collectives
  double cp_comm_s = 0;      // exposed context-parallel ring exchange
  double pp_bubble_s = 0;    // (pp-1)/vpp idle micro-batch slots
  double pp_p2p_s = 0;       // stage-to-stage activation transfers
  double dp_comm_s = 0;      // exposed gradient reduce / parameter gather (incl. ZeRO-3 per micro-batch)
  double optimizer_s = 0;    // the optimizer step (memory-bound)
};

struct StepReport {
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;                       // model FLOPs (PaLM-style, no recompute) / (time * gpus * bf16 peak)
  double hfu = 0;                       // hardware FLOPs (with recompute) / (time * gpus * bf16 peak)
  double model_flops_per_token = 0;     // 6*N_matmul + 12*L*h*s (see perf_model.cpp)
  double tflops_per_gpu = 0;            // model TFLOP/s per GPU
  StepBreakdown breakdown;
  // Intermediates a front end can show.
  double microbatch_time_s = 0;         // slowest stage, one micro-batch, forward + backward + comm
  double bubble_fraction = 0;           // (pp-1)/(vpp*m)
  double gemm_efficiency = 0;           // achieved fraction for this layout's GEMM sizes
  bool tp_crosses_nodes = false;
  bool dp_crosses_nodes = false;
};

// Model FLOPs per token (training: forward + backward, no recompute), PaLM convention with the
// matmul-exact parameter count: 6 * (L * matmul params per layer + V * h for the LM head)
// + 12 * L * h * s for attention scores (full s x s, as PaLM counts it).
double model_flops_per_token(const ModelSpec& model, int64_t seq);

// Requires a valid config; plan from plan_memory(config).
StepReport predict_step(const Config& config, const MemoryPlan& plan);

}  // namespace meshfit
