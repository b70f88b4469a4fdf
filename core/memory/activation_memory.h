// activation_memory.h — activation bytes saved for backward, per layer and per pipeline stage.
// Per-layer terms: Korthikanti et al. 2022 (arXiv 2205.05198) §4, generalised to SwiGLU and GQA as
// Fujii et al. 2024 (arXiv 2411.06465): sbh*(12 + 4k/a + 8f/h) with FlashAttention. In-flight
// micro-batches follow Megatron-LM's 1F1B / interleaved schedules (schedules.py warm-up counts).
#pragma once

#include <cstdint>

#include "spec/config.h"
#include "memory/parameter_count.h"

namespace meshfit {

// What "selective" recompute saves. Megatron-LM --recompute-granularity selective recomputes the
// attention core (Korthikanti §5). torchtitan's op-level selective AC (parallelize.py _save_list /
// _custom_policy) saves the outputs of every other matmul (wq, wv, w1, w2 of the 7 in a block),
// the SDPA outputs and the block input, and recomputes everything else.
enum class SelectiveKind { kAttentionCore, kAlternateMatmuls };

struct ActivationSettings {
  int64_t seq = 0;
  int64_t micro_batch = 0;
  int64_t tp = 1;
  int64_t cp = 1;
  bool sp = true;              // only effective at tp > 1
  bool flash = true;
  Recompute recompute = Recompute::kNone;
  int64_t recompute_layers = 0;  // full: layers per virtual chunk recomputed, the rest saved whole (0 = all)
  SelectiveKind selective = SelectiveKind::kAttentionCore;  // what "selective" means (per framework)
  // torchtitan's eager attention saves K and V after repeat_kv (full-head size) and, without a
  // fused kernel, a contiguous copy of the SDPA output (FRAMEWORK_NOTES §1.7, TT25 model/model.py
  // Attention.forward). The flash/cuDNN/efficient kernels return the output already laid out as
  // (b, s, heads, d), so .transpose(1, 2).contiguous() is a view there: no copy (measured by
  // tests/gpu on H100: 8B-shaped layers at 2/4/8 layers differ by 44 sbh per layer, not 46).
  bool eager_attention_copies = false;
  // PyTorch >= 2.5 SDPA math backend (no flash) upcasts bf16 q/k/v to fp32 unless
  // torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True): the saved softmax output is fp32,
  // 4 B per score (measured by tests/gpu on H100: 8b-l4-s4096-math, +2.09 GiB per layer = 4.17 B x a*s^2).
  bool fp32_math_attention = false;
  // fp32 weights under torch.autocast (a plain or DDP loop in mixed precision): the embedding's
  // output is fp32, so the residual stream and both norms' saved inputs are fp32 (4 B, not 2), and
  // so is the block input full recompute keeps.
  bool fp32_residual = false;
  // DTensor sequence parallelism (torchtitan apply_tp: SequenceParallel norms, then the norm output
  // all-gathered to Replicate before wq/wk/wv and w1/w3): F.linear saves the gathered full-sequence
  // input, so those two 2h inputs are not divided by tp (FRAMEWORK_NOTES §1.7 "TP+SP in
  // torchtitan"); Megatron's SP saves the sharded norm output and re-gathers in backward.
  bool sp_saves_gathered_inputs = false;
  // torch.compile: the min-cut partitioner (torch/_functorch/partitioners.py
  // min_cut_rematerialization_partition) recomputes cheap pointwise ops in backward instead of
  // saving their outputs: SwiGLU keeps the w1 and w3 outputs (silu and the product are
  // recomputed), GeLU keeps its input only, and the repeat_kv/contiguous copies are fused away.
  bool compiled = false;
  // Megatron-LM's fused SwiGLU (memory_model.h FrameworkProfile::fused_swiglu): 6sbf, not 8sbf.
  bool fused_swiglu = false;
  // Transformer Engine fp8 (FrameworkProfile::fp8_saves_gemm_inputs): the GEMMs' saved inputs are
  // fp8, 1 B: the QKV and fc1 inputs (the norms' outputs) and the fc2 input; the output projection's
  // fp8 input is a copy beside the bf16 attention output the attention kernel keeps.
  bool fp8_gemm_inputs = false;
  // LoRA/QLoRA: bytes per layer per micro-batch that a frozen base saves less (or adapters more)
  // than full training, without recompute (finetune.h lora_activation_delta_bytes).
  double frozen_base_delta_bytes = 0;
  // Saved activations offloaded to CPU memory (TrainingSpec::offload_activations).
  bool offload = false;
  // loss=fused_linear: the LM head's GEMM runs inside the loss, which saves its input's gradient
  // instead of the input (memory_model.h fused_linear_loss_bytes): only the final norm's input stays.
  bool head_in_loss = false;
};

// One layer, one micro-batch, one rank; every field in bytes (bf16 activations, 2 bytes/element).
struct LayerActivations {
  double sequence_terms = 0;   // norm inputs, block inputs, dropout masks: split by tp only with SP
  double tp_split_terms = 0;   // Q, K, V, projection input, MLP intermediates: always split by tp
  double attention_scores = 0; // eager: softmax (+ dropout) a*s^2 terms; flash: fp32 log-sum-exp
  double no_recompute = 0;     // sum of the three: what one layer saves with no recompute
  double stored = 0;           // what one layer keeps under the chosen recompute mode
};

LayerActivations layer_activations(const ModelSpec& model, const ActivationSettings& settings);

// Micro-batches (interleaved: chunk-micro-batches) whose activations are live on a stage at its
// peak. 1F1B: min(n_mb, pp - stage). Interleaved (Megatron schedules.py):
// min(n_mb*vpp, (pp - stage - 1)*2 + (vpp - 1)*pp + 1).
int64_t in_flight_microbatches(int64_t stage, int64_t pp, int64_t vpp, int64_t num_microbatches);

struct StageActivations {
  int64_t in_flight = 0;            // (chunk-)micro-batches live at the peak
  double layers_per_in_flight = 0;  // average layers per in-flight unit on this stage
  double layer_bytes = 0;           // LayerActivations::stored (averaged over the chunk's layers when only some recompute)
  double layers_bytes = 0;          // in_flight * layers_per_in_flight * layer_bytes (on the GPU)
  double offloaded_bytes = 0;       // offload_activations: the saved layers' bytes held in CPU memory instead
  double offload_backward_release = 0;  // of layers_bytes, what the backward no longer holds (its stash is 2, not 5)
  double recompute_working_bytes = 0;  // full recompute: one layer's activations rebuilt in backward
  double embedding_bytes = 0;       // first stage: token ids (int64) + embedding dropout mask
  double head_input_bytes = 0;      // last stage: final-norm input and LM-head input
  double autocast_weight_bytes = 0; // fp32 weights under autocast: the bf16 casts autograd saves (memory_model.cpp)
  double total = 0;
};

// offload_activations: layers' saved activations that stay on the GPU (the rest wait in CPU memory).
// torchtune OffloadActivations (training/_activation_offloading.py) copies every saved tensor of at
// least min_offload_size (1024 B) to pinned CPU memory on a side stream as the forward saves it, and
// keeps the last max_fwd_stash_size (5) alive on the GPU until their copies are done; backward brings
// each back just before its use, prefetching the next. Under full recompute a layer saves one tensor
// (its input), so five layer inputs stay; otherwise a layer saves many, and one layer's worth stays.
// At the first backward node the forward stash is dropped, and a tensor brought back is freed one
// node after its use: two layer inputs in a layer's backward (unpack_tensor_with_streams).
double offloaded_layers_on_gpu(bool all_layers_recomputed, bool in_backward = false);

// Layers of a stage (spread over vpp chunks) that recompute=full rebuilds in backward: all of them,
// or recompute_layers per chunk (Megatron block method). 0 without full recompute.
double recomputed_layers(Recompute recompute, int64_t recompute_layers, double stage_layers, int64_t vpp);

StageActivations stage_activations(const ModelSpec& model, const ActivationSettings& settings,
                                   const StagePlacement& stage, int64_t pp, int64_t vpp,
                                   int64_t num_microbatches);

}  // namespace meshfit
