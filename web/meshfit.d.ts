// meshfit.d.ts — types of the meshfit JavaScript API (web/meshfit.mjs). Field names are the CLI's
// JSON names; every byte quantity is a number of bytes.

export type Framework = 'megatron' | 'fsdp' | 'deepspeed' | 'nanotron' | 'megatron-lm' | 'megatron-bridge' | 'nemo' | 'torchtitan' | 'fsdp2' | 'megatron-deepspeed';
export type Recompute = 'none' | 'selective' | 'full';
export type Verdict = 'fits' | 'tight' | 'oom' | 'invalid';

/** Inputs: a preset or architecture fields, hardware, training and layout; all optional but a model. */
export interface Config {
  model?: string; hidden?: number; layers?: number; heads?: number; kv_heads?: number; ffn?: number; vocab?: number;
  /** Attention head dimension; 0 or absent = hidden / heads (HF config.json head_dim, Megatron --kv-channels). */
  head_dim?: number;
  tied_embeddings?: boolean; norm?: 'rmsnorm' | 'layernorm'; mlp?: 'swiglu' | 'gelu'; linear_bias?: boolean; dropout?: boolean; qk_norm?: boolean;
  gpu?: string; gpu_memory_gib?: number; gpus?: number; gpus_per_node?: number;
  gpu_bf16_tflops?: number; gpu_fp8_tflops?: number; gpu_hbm_tbps?: number; gpu_nvlink_gbps?: number; gpu_nic_gbps?: number;
  gpu_bf16_gemm_ceiling?: number; gpu_fp8_gemm_ceiling?: number; gpu_power_limit_w?: number; gpu_tdp_w?: number; gpu_nvlink_domain?: number;
  gpu_sms?: number;
  seq?: number; global_batch?: number; micro_batch?: number; precision?: 'bf16' | 'fp8' | 'pure_bf16' | 'bf16-true';
  optimizer?: 'adamw' | 'adam' | 'sgd' | 'adam8bit' | 'paged_adamw' | 'paged_adamw8bit' | 'adafactor' | 'adamw_8bit' |
    'paged_adamw_32bit' | 'paged_adamw_8bit'; recompute?: Recompute; recompute_layers?: number; flash?: boolean; sp?: boolean;
  framework?: Framework; fp32_grad_buffer?: boolean; headroom?: number;
  /** Tokens the run trains on, for the time to train (0 = not given). */
  tokens_to_train?: number;
  /** Fine-tuning: none = pretraining. */
  finetune?: 'none' | 'full' | 'lora' | 'qlora';
  /** The fine-tuning software whose defaults fill what the config leaves out. */
  stack?: 'hf_peft' | 'hf_peft_deepspeed' | 'hf_peft_fsdp' | 'torchtune' | 'litgpt' | 'axolotl';
  lora_rank?: number; lora_alpha?: number; lora_dropout?: number; lora_targets?: string;
  adapter_dtype?: 'fp32' | 'bf16'; dora?: boolean; embedding_trained?: boolean; lm_head_trained?: boolean; base_dtype?: 'fp32' | 'bf16'; kbit_upcast?: boolean; double_quant?: boolean; optimizer_in_backward?: boolean;
  /** CPU offload: optimizer = DeepSpeed offload_optimizer (zero >= 1), FSDP CPUOffload, Megatron-LM
   *  --optimizer-cpu-offload (zero 1); params = ZeRO-3 offload_param / FSDP CPUOffload(offload_params). */
  offload?: 'none' | 'optimizer' | 'params'; optimizer_impl?: 'auto' | 'fused' | 'foreach';
  /** Saved activations to CPU memory and back for backward (torchtune enable_activation_offloading). */
  offload_activations?: boolean;
  loss?: 'auto' | 'vocab_parallel' | 'eager' | 'eager_keep_logits' | 'compiled' | 'chunked' | 'fused_linear' | 'bf16_chunked'; async_tp?: boolean;
  /** FSDP2 with torchao float8 (precision 'fp8'): the Linear weights all-gathered in fp8, 1 B instead of 2
   *  (torchtitan [float8] enable_fsdp_float8_all_gather). Needs sharded weights (zero 2 or 3). */
  fp8_all_gather?: boolean;
  allocator?: 'auto' | 'caching' | 'expandable_segments';
  /** torch.compile is kernels: 'compiled' (read by both the memory and the step-time model). */
  kernels?: 'auto' | 'eager' | 'fused' | 'compiled'; tp_comm_overlap?: boolean;
  /** RMSNorm for the step time: the framework's, one fused kernel, or Hugging Face's eager fp32 chain. */
  norm_kernel?: 'auto' | 'fused' | 'eager';
  /** DP gradient reduce / parameter gather overlapped with compute; auto = the framework's default (Megatron on as in
   *  Megatron-Bridge/NeMo recipes, FSDP2 always, DeepSpeed only at ZeRO-3). Configs are written with the word; the
   *  boolean it once was is still read (true = 'on', false = 'off'). */
  dp_comm_overlap?: 'auto' | 'on' | 'off' | boolean;
  /** @deprecated Still read, with a renamed_field warning: write kernels: 'compiled' instead of compile: true. */
  compile?: boolean;
  dp?: number; tp?: number; pp?: number; cp?: number; vpp?: number; zero?: 0 | 1 | 2 | 3;
  /** Replicas of each shard group: model states sharded over dp x cp / dp_replicate ranks (1 = over all).
   *  torchtitan HSDP (data_parallel_replicate_degree, zero 2-3; divides dp), Megatron
   *  --num-distributed-optimizer-instances (zero 1; divides dp x cp), DeepSpeed ZeRO-3 MiCS
   *  (mics_shard_size = dp / dp_replicate; divides dp). */
  dp_replicate?: number;
  /** DeepSpeed ZeRO++ hpZ (zero_hpz_partition_size; ZeRO-3, tp 1): a second 16-bit partition of the weights over
   *  groups of this many ranks, which the backward gathers from (1 = off). */
  hpz_partition_size?: number;
  pp_first_stage_layers?: number; pp_last_stage_layers?: number;
  /** Spatial-temporal (PrimePar-style) square side q: tp = (tp/q^2 conventional) x (q x q square); 1 = Megatron TP.
   *  Modelled, not implemented by any public framework: exportLaunchConfig refuses it (st_not_exportable). */
  spatial_temporal_q?: number;
  name?: string; notes?: string;
  /** A URL state merged under the other fields. */
  state?: string;
}

export interface Issue { code: string; severity: 'error' | 'warning'; field: string; message: string; }
interface Result { ok: boolean; issues: Issue[]; }

export type ComponentName = 'weights' | 'gradients' | 'optimizer_states' | 'activations' | 'logits_loss' |
  'comm_buffers' | 'workspace' | 'fragmentation' | 'nccl' | 'cuda_context' | 'paged_optimizer';

export interface RankMemory {
  role: 'only' | 'first' | 'middle' | 'last'; pp_stage: number;
  chunks: { chunk: number; first_layer: number; layers: number }[];
  components: Record<ComponentName, number>;
  peak_allocated_bytes: number; peak_reserved_bytes: number; device_bytes: number;
  /** CPU memory of offloaded states and activations. */
  host_bytes: number;
  /** Paged optimizer states past the capacity, which the driver keeps in host memory (verdict: tight, not oom). */
  paged_spill_bytes: number;
  /** LLMem's split: the output section (LM head, its input, logits and loss) and the rest. */
  sections: { body_bytes: number; output_bytes: number };
  intermediates: Record<string, unknown>;
}

export interface StepBreakdown {
  compute_s: number; tp_comm_s: number; cp_comm_s: number; pp_bubble_s: number; pp_p2p_s: number;
  dp_comm_s: number; optimizer_s: number;
}

export interface StepFields {
  step_time_s: number; tokens_per_s_per_gpu: number; mfu: number; hfu: number; tflops_per_gpu: number;
  model_flops_per_token: number; bubble_fraction: number; breakdown: StepBreakdown;
  host_bound_fraction: number;
  host_bound_note: string;        // "" unless the host's op dispatch sets a quarter or more of the layer time
  /** tokens_to_train / (tokens/s/GPU * gpus); 0 when tokens_to_train is not given. */
  time_to_train_s: number; time_to_train_days: number; time_to_train_text: string;
  /** Validation error of tokens/s for this framework and GPU family; runs 0 = not validated. */
  error_band: { median_abs_error: number; runs: number; basis: string; min_gpus: number; max_gpus: number;
    /** the runs of this framework and GPU family; fewer than runs when the band is the framework's on every family */
    family_runs: number; text: string };
}

export interface EstimateResult extends Result, Partial<StepFields> {
  verdict: Verdict; fits: boolean; capacity_bytes: number; headroom: number;
  peak_allocated_bytes?: number; peak_reserved_bytes?: number; device_bytes?: number; worst_rank?: number;
  ranks?: RankMemory[]; total_parameters?: number; num_microbatches?: number; config?: Required<Config>; state?: string;
  /** How far to trust the peak: the median |error| of the predicted peak over the published configurations of
   * this training method and setup (widened to the method on any framework, then every run, when fewer than 3). */
  memory_error_band?: MemoryErrorBand;
}

export interface MemoryErrorBand {
  /** the headline: the median |error| of the peak over `runs` published configurations of `scope` (or, own_worse, of own_scope) */
  median_abs_error: number; runs: number;
  /** "LoRA on torchtune", "pretraining on any framework", "any setup"; published: its configurations */
  scope: string; published: MemoryBandRuns;
  /** the config's own method and setup; its published configurations and meshfit's own tests/gpu steps (in-sample) */
  own_scope: string; own_published: MemoryBandRuns; own_steps: MemoryBandRuns;
  /** own_published has fewer than 3: the band is a wider scope's, or, own_worse, its own few where they missed by more */
  widened: boolean; own_worse: boolean;
  /** the predicted device memory is within the band (as printed, one decimal) of the capacity: the fit / OOM verdict could go either way */
  capacity_within: boolean; basis: string; text: string;
}

export interface MemoryBandRuns { runs: number; median_abs_error: number; min_gpus: number; max_gpus: number }

export interface SearchOptions {
  dp?: number; tp?: number; pp?: number; cp?: number; vpp?: number; micro_batch?: number; zero?: number;
  recompute?: Recompute; sp?: boolean;
  max_dp?: number; max_tp?: number; max_pp?: number; max_cp?: number; max_vpp?: number; max_micro_batch?: number;
  /** Feasible if the worst rank uses at most this fraction of capacity (default 1). */
  memory_limit?: number;
  /** Layouts to list (1 to 10000, default 10). */
  top?: number;
  /** Work units (layout meshes visited + memory evaluations) after which the search stops (default 2000000). */
  budget?: number;
  /** Also return every evaluated candidate (up to 50000) in `all`, for scatter plots. */
  keep_all?: boolean;
  /** Also weigh spatial-temporal (PrimePar-style) model parallelism; such layouts are modelled only. */
  spatial_temporal?: boolean;
}

export interface LayoutCandidate extends Partial<StepFields> {
  dp: number; tp: number; pp: number; cp: number; vpp: number; micro_batch: number; zero: number;
  /** The config's dp_replicate and hpz_partition_size as kept on this layout (the most up to them that hold). */
  dp_replicate: number; hpz_partition_size: number;
  recompute: Recompute; sp: boolean; peak_allocated_bytes: number; peak_reserved_bytes: number; device_bytes: number;
  worst_rank_role: string; worst_rank: number; verdict: Verdict; fits: boolean; feasible: boolean;
  /** 1 for Megatron TP; q > 1 for a spatial-temporal square (then model_parallel is 'spatial_temporal'). */
  spatial_temporal_q: number; model_parallel: 'megatron_tp' | 'spatial_temporal';
  /** Present on spatial-temporal layouts: "modelled, not implemented by any public framework". */
  modelled_only?: string;
  /** The worst rank's memory by component. */
  components: Record<ComponentName, number>;
}

export interface SearchResult extends Result {
  evaluated?: number; feasible?: number; memory_evaluations?: number; rejected?: Record<string, number>;
  /** Work units spent; complete is false when the budget cut the search short (a search_cut_short warning). */
  work?: number; complete?: boolean;
  layouts?: LayoutCandidate[]; pareto?: LayoutCandidate[]; all?: LayoutCandidate[]; capacity_bytes?: number;
  /** With spatial_temporal: the fastest spatial-temporal layouts (up to 5), whether or not they made `layouts`. */
  spatial_temporal_layouts?: LayoutCandidate[];
  /** The memory error band every layout's memory shares (one method and framework): MemoryErrorBand's text. */
  memory_error_band?: { text: string };
}

export interface Presets extends Result {
  models: ({ id: string; source: string; total_parameters: number } & Config)[];
  gpus: { id: string; name: string; source: string; memory_bytes: number; memory_gib: number; bf16_flops: number;
          fp8_flops: number; hbm_bytes_per_s: number; nvlink_bytes_per_s: number; internode_bytes_per_s: number;
          nvlink_domain: number; sms: number; family: string; bf16_gemm_ceiling: number; fp8_gemm_ceiling: number; tdp_w: number;
          power_limit_w: number }[];
}

/** One measured run of tests/data/memory_measured.csv beside its prediction (`meshfit validate --json`). */
export interface ValidationRow {
  label: string; source: string; notes: string; expressible: boolean; why_not?: string;
  metric: 'max_reserved' | 'max_allocated' | 'device' | 'fit_label'; oom: boolean; first_iteration: boolean;
  config?: Config; predicted_bytes?: number; measured_bytes?: number; signed_error?: number;
  verdict?: 'fits' | 'tight' | 'oom'; label_agrees?: boolean;
}
export interface ValidationResult extends Result {
  /** Every named constant behind the memory predictions (core/memory/overheads.h) and how its value was obtained. */
  constants: { name: string; value: number; unit: string; meaning: string; source: string; basis: 'source' | 'measurement' | 'assumed' }[];
  rows: ValidationRow[]; measured_rows: number; median_abs_error: number; median_signed_error: number;
  label_rows: number; label_disagreements: number; false_fits: number;
  /** The memory error band of every method and setup: published configurations and tests/gpu's in-sample steps. */
  memory_bands: { scope: string; published_runs: number; published_median_abs_error: number; step_runs: number;
                  step_median_abs_error: number; basis: string }[];
  /** The fine-tuning runs of tests/data/finetune_measured.csv, the same way. */
  finetune: { rows: ValidationRow[]; measured_rows: number; median_abs_error: number; median_signed_error: number;
              label_rows: number; label_disagreements: number; false_fits: number };
  /** The step-time model against tests/data/layouts_measured.csv: tokens/s/GPU per run, the medians per
   *  source, and the error bands (framework + GPU family, e.g. "megatron ampere") predictions carry. */
  throughput: ThroughputValidation;
  /** meshfit's own ground truth: training steps measured on one H100 by tests/gpu
   *  (tests/data/gpu_memory_measured.csv), each figure measured and predicted, and the medians per figure. */
  gpu: GpuValidation;
}
export interface ThroughputSummary { key: string; runs: number; median_abs_error: number; median_signed_error: number }
export interface ThroughputValidation {
  /** in_band: false for runs whose codebase no profile models (Hagemann's): per source and overall, in no band. */
  rows: { label: string; source: string; citation: string; framework: Framework; gpu: string; gpus: number; in_band: boolean;
          measured_tokens_per_s_per_gpu: number; predicted_tokens_per_s_per_gpu: number; signed_error: number }[];
  sources: ThroughputSummary[]; bands: ThroughputSummary[]; runs: number; median_abs_error: number;
  /** What the bands are (in-sample) and what they leave out, as `meshfit validate` prints it. */
  bands_note: string;
}
/** What a GPU ground-truth row is compared on: bytes, except tokens_per_s. */
export type GpuMetric = 'peak_allocated' | 'peak_reserved' | 'device' | 'model_states' | 'step_transient' |
  'allocator_reserve' | 'outside_allocator' | 'tokens_per_s' | 'first_step_peak_allocated';
export interface GpuValidationRow {
  id: string; label: string; software: string; expressible: boolean; oom: boolean;
  /** Set when expressible is false: what the harness ran that no meshfit input states. */
  why_not?: string;
  config?: Config; verdict?: 'fits' | 'tight' | 'oom'; label_agrees?: boolean;
  /** Absent on rows that ran out of memory. */
  measured?: Record<GpuMetric, number>;
  predicted?: Record<GpuMetric, number>;
}
export interface GpuMetricSummary {
  metric: GpuMetric; label: string;
  /** true: errors are shares of the row's measured peak allocated, not of the figure itself. */
  error_over_peak_allocated: boolean;
  rows: number; median_abs_error: number; max_abs_error: number; median_signed_error: number;
}
export interface GpuValidation {
  rows: GpuValidationRow[]; metrics: GpuMetricSummary[]; label_rows: number; label_disagreements: number;
}

export interface MethodCandidate {
  strategy: string; finetune: 'full' | 'lora' | 'qlora'; framework: Framework; zero: number; tp: number;
  offload: 'none' | 'optimizer' | 'params'; recompute: Recompute; fits: boolean; verdict: Verdict; device_bytes: number;
  host_bytes: number; step_time_s: number; tokens_per_s_per_gpu: number; rejected?: string;
  /** How far to trust device_bytes: the method and setup's memory band (percent: "±2.8%"; see MemoryErrorBand). */
  memory_error_band: { median_abs_error: number; runs: number; percent: string; text: string };
}
export interface MethodsResult extends Result {
  ranked: MethodCandidate[]; rejected: MethodCandidate[]; capacity_bytes?: number; config?: Required<Config>;
}

/** One change of fitAdvice: what moves ("zero 0 → 3, recompute none → full"), the config it gives as a
 *  state, and its figures. */
export interface FitSuggestion {
  change: string; state: string; device_bytes: number; verdict: 'fits' | 'tight' | 'oom';
  tokens_per_s_per_gpu: number;
  /** Relative to the config as given: -0.12 = 12% slower. */
  throughput_change: number;
}
export interface FitAdviceResult extends Result {
  /** Empty when the config fits. */
  suggestions: FitSuggestion[];
  verdict?: 'fits' | 'tight' | 'oom'; device_bytes?: number; capacity_bytes?: number; tokens_per_s_per_gpu?: number;
  /** On the config's own layout: the largest micro-batch and sequence length that fit (0: none). */
  largest_micro_batch?: number; largest_seq?: number;
  /** Both limits as the CLI and the page say them: "largest micro-batch 22 at sequence length 8192 (...); longest sequence 7168 at micro-batch 1". */
  limits_text?: string;
  /** The cheapest fix costs 10% of throughput or more: the layout search (any number of changes) may do better. */
  costly?: boolean;
  config?: Required<Config>; state?: string;
}

/** torchtune and hf-trainer are export-only; meshfit is a config file, or an estimate's or search's result. */
export type LaunchFormat = 'hf' | 'megatron' | 'torchtitan' | 'deepspeed' | 'torchtune' | 'hf-trainer' | 'meshfit';

export interface ImportOptions {
  /** The text's format; 'auto' (the default) detects it. */
  format?: LaunchFormat | 'auto';
  /** Config fields (or a state string "v=1&gpus=16") over what the text sets, e.g. gpus for a command line without torchrun. */
  overrides?: Config | string;
  /** Leave out the fields the layout search chooses (dp, tp, pp, cp, vpp, micro_batch, zero, recompute, sp). */
  drop_layout?: boolean;
}

export interface ImportResult extends Result {
  format?: LaunchFormat;
  /** The fields the text (and the overrides) set: a config object for estimate/search. */
  fields?: Record<string, unknown>;
  config?: Required<Omit<Config, 'state'>>;
  state?: string;
}

export interface ExportResult extends Result {
  format?: LaunchFormat;
  /** What to paste: the shell command, the TOML sections or the JSON file. */
  text?: string;
  /** megatron: the command's words (torchrun, its flags, pretrain_gpt.py, the flags). */
  args?: string[];
  config?: Required<Omit<Config, 'state'>>;
}

export interface Meshfit {
  readonly version: string;
  estimate(config: Config): EstimateResult;
  search(config: Config, options?: SearchOptions): SearchResult;
  /** A pretraining config (finetune absent or 'none') is ranked as its link with finetune=lora reads: the
   *  stack's defaults fill what it leaves out (one micro-batch per GPU, its checkpointing and loss); the
   *  result's `config` is that base, as the page's Methods view ranks it. */
  methods(config: Config & { methods?: string }): MethodsResult;
  /** How to make it fit (the page's list; `meshfit fit`). */
  fitAdvice(config: Config): FitAdviceResult;
  presets(): Presets;
  validate(): ValidationResult;
  parseHfConfig(configJsonText: string): Result & { model?: Config; model_type: string };
  /** ok: the fields were read and written as a state. It does not validate them (gpus: -1 is encoded):
   *  estimate() answers whether the config is valid. */
  encodeState(config: Config): Result & { state?: string };
  /** ok: the state was read (keys, values, escapes). Like encodeState it does not validate the config. */
  decodeState(state: string): Result & { fields: Record<string, unknown>; config?: Required<Config> };
  importLaunchConfig(text: string, options?: ImportOptions): ImportResult;
  exportLaunchConfig(config: Config, format: LaunchFormat): ExportResult;
}

export function load(moduleOptions?: object): Promise<Meshfit>;
