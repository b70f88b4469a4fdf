// issue.h — user-input problems as values: {code, severity, field, message}.
// Validation returns all of them; nothing in core throws. Programmer errors: meshfit_assert.h.
#pragma once

#include <string>
#include <vector>

#include "spec/enum_names.h"

namespace meshfit {

enum class IssueCode {
  kNotPositive,             // a count or size is zero or negative
  kNotInteger,              // a count was given as a fraction or a non-number
  kOutOfRange,              // absurdly large (would overflow) or outside a documented range
  kUnknownModelPreset,      // --model names no preset
  kUnknownGpuPreset,        // --gpu names no preset
  kUnknownValue,            // an enum field (recompute, framework, ...) got an unknown word
  kUnknownField,            // a config/state key that meshfit does not know
  kMissingModel,            // no preset and not every architecture field given
  kHeadsNotDivideHidden,    // hidden % heads != 0
  kKvHeadsNotDivideHeads,   // heads % kv_heads != 0 (GQA groups must be whole)
  kLayoutProductMismatch,   // dp * tp * pp * cp != gpus
  kTpNotDivideHeads,        // heads % tp != 0
  kTpNotDivideKvHeads,      // kv_heads % tp != 0
  kTpNotDivideFfn,          // ffn % tp != 0
  kPpExceedsLayers,         // more pipeline stages than layers
  kPpNotDivideLayers,       // layers % pp != 0 where the framework requires an even split
  kVppNotDivideLayers,      // layers % (pp * vpp) != 0 (interleaved schedule)
  kVppWithoutPp,            // vpp > 1 with pp == 1
  kVppUnsupported,          // vpp > 1 where the framework has no interleaved schedule (nanotron)
  kVppMicrobatches,         // interleaved 1F1B needs micro-batches % pp == 0 (Megatron-LM)
  kStageLayersInvalid,      // explicit first/last stage layer counts do not add up
  kBatchNotDivisible,       // global_batch % (dp * micro_batch) != 0
  kCpNotDivideSeq,          // seq % (2 * cp) != 0 (load-balanced context parallelism)
  kZeroUnsupported,         // zero stage not offered by the framework profile
  kReplicasInvalid,         // dp_replicate not dividing dp, leaving nothing to shard, or not offered
  kHpzInvalid,              // hpz_partition_size outside DeepSpeed ZeRO-3 or not dividing dp x cp
  kPrecisionUnsupported,    // fp8 on a GPU without FP8 tensor cores
  kThresholdOutOfRange,     // headroom threshold not in (0, 1]
  kGpusPerNodeMismatch,     // warning: gpus not a multiple of gpus_per_node
  kFinetuneUnsupported,     // a fine-tuning option the chosen layout or framework cannot run
  kMalformedInput,          // imported text that does not parse (truncated JSON/TOML, bad quoting, not UTF-8)
  kUnsupportedSetting,      // an imported flag or key that meshfit does not model (offload, MoE, ...)
  kConflictingSettings,     // imported flags or keys that disagree with each other
  kInvalidText,             // text that is not valid UTF-8 (or not a number where one is required)
  kInputTooLarge,           // text length, JSON nesting depth or key count over its limit (input_limits.h)
  kDuplicateKey,            // the same key twice in one JSON object or state
  kMalformedJson,           // a JSON text that does not parse (the parser's message quoted)
  kStateVersion,            // a state's v= is not exactly a supported version number
  kStNotPowerOfTwo,         // spatial-temporal: q or tp not a power of two (PrimePar works on 2^n devices)
  kStSquareNotDivideTp,     // spatial-temporal: q^2 does not divide tp
  kStSquareOutsideNvlink,   // spatial-temporal: the q x q square spans more GPUs than one NVLink domain
  kStSquareNotDivideSeq,    // spatial-temporal: q^2 does not divide the sequence per context-parallel rank
  kStSquareNotDivideHidden, // spatial-temporal: q^2 does not divide hidden or ffn (the N/K block split)
  kStNotExportable,         // spatial-temporal layouts have no launch config (no public implementation)
  kSearchCutShort,          // warning: the search stopped at its work budget before the end
  kFetchFailed,             // the page asked huggingface.co for a config.json and got none (gated, missing, offline)
  kInternalError,           // meshfit itself failed (a caught exception at the JS boundary): a bug
  kRenamedField,            // warning: an older key that is still read (config_schema.h LegacyField)
};

enum class Severity { kError, kWarning };

struct Issue {
  IssueCode code;
  Severity severity = Severity::kError;
  std::string field;    // the input field, snake_case as in the JSON config ("tp", "seq", ...)
  std::string message;  // a sentence with the numbers in it
};

// Names: snake_case, stable (part of the JSON/JS schema).
template <> struct EnumNames<IssueCode> {
  static constexpr EnumName<IssueCode> table[] = {
      {IssueCode::kNotPositive, "not_positive", "not_positive"},
      {IssueCode::kNotInteger, "not_integer", "not_integer"},
      {IssueCode::kOutOfRange, "out_of_range", "out_of_range"},
      {IssueCode::kUnknownModelPreset, "unknown_model_preset", "unknown_model_preset"},
      {IssueCode::kUnknownGpuPreset, "unknown_gpu_preset", "unknown_gpu_preset"},
      {IssueCode::kUnknownValue, "unknown_value", "unknown_value"},
      {IssueCode::kUnknownField, "unknown_field", "unknown_field"},
      {IssueCode::kMissingModel, "missing_model", "missing_model"},
      {IssueCode::kHeadsNotDivideHidden, "heads_not_divide_hidden", "heads_not_divide_hidden"},
      {IssueCode::kKvHeadsNotDivideHeads, "kv_heads_not_divide_heads", "kv_heads_not_divide_heads"},
      {IssueCode::kLayoutProductMismatch, "layout_product_mismatch", "layout_product_mismatch"},
      {IssueCode::kTpNotDivideHeads, "tp_not_divide_heads", "tp_not_divide_heads"},
      {IssueCode::kTpNotDivideKvHeads, "tp_not_divide_kv_heads", "tp_not_divide_kv_heads"},
      {IssueCode::kTpNotDivideFfn, "tp_not_divide_ffn", "tp_not_divide_ffn"},
      {IssueCode::kPpExceedsLayers, "pp_exceeds_layers", "pp_exceeds_layers"},
      {IssueCode::kPpNotDivideLayers, "pp_not_divide_layers", "pp_not_divide_layers"},
      {IssueCode::kVppNotDivideLayers, "vpp_not_divide_layers", "vpp_not_divide_layers"},
      {IssueCode::kVppWithoutPp, "vpp_without_pp", "vpp_without_pp"},
      {IssueCode::kVppUnsupported, "vpp_unsupported", "vpp_unsupported"},
      {IssueCode::kVppMicrobatches, "vpp_microbatches", "vpp_microbatches"},
      {IssueCode::kStageLayersInvalid, "stage_layers_invalid", "stage_layers_invalid"},
      {IssueCode::kBatchNotDivisible, "batch_not_divisible", "batch_not_divisible"},
      {IssueCode::kCpNotDivideSeq, "cp_not_divide_seq", "cp_not_divide_seq"},
      {IssueCode::kZeroUnsupported, "zero_unsupported", "zero_unsupported"},
      {IssueCode::kReplicasInvalid, "replicas_invalid", "replicas_invalid"},
      {IssueCode::kHpzInvalid, "hpz_invalid", "hpz_invalid"},
      {IssueCode::kPrecisionUnsupported, "precision_unsupported", "precision_unsupported"},
      {IssueCode::kThresholdOutOfRange, "threshold_out_of_range", "threshold_out_of_range"},
      {IssueCode::kGpusPerNodeMismatch, "gpus_per_node_mismatch", "gpus_per_node_mismatch"},
      {IssueCode::kFinetuneUnsupported, "finetune_unsupported", "finetune_unsupported"},
      {IssueCode::kMalformedInput, "malformed_input", "malformed_input"},
      {IssueCode::kUnsupportedSetting, "unsupported_setting", "unsupported_setting"},
      {IssueCode::kConflictingSettings, "conflicting_settings", "conflicting_settings"},
      {IssueCode::kInvalidText, "invalid_text", "invalid_text"},
      {IssueCode::kInputTooLarge, "input_too_large", "input_too_large"},
      {IssueCode::kDuplicateKey, "duplicate_key", "duplicate_key"},
      {IssueCode::kMalformedJson, "malformed_json", "malformed_json"},
      {IssueCode::kStateVersion, "state_version", "state_version"},
      {IssueCode::kStNotPowerOfTwo, "st_not_power_of_two", "st_not_power_of_two"},
      {IssueCode::kStSquareNotDivideTp, "st_square_not_divide_tp", "st_square_not_divide_tp"},
      {IssueCode::kStSquareOutsideNvlink, "st_square_outside_nvlink", "st_square_outside_nvlink"},
      {IssueCode::kStSquareNotDivideSeq, "st_square_not_divide_seq", "st_square_not_divide_seq"},
      {IssueCode::kStSquareNotDivideHidden, "st_square_not_divide_hidden", "st_square_not_divide_hidden"},
      {IssueCode::kStNotExportable, "st_not_exportable", "st_not_exportable"},
      {IssueCode::kSearchCutShort, "search_cut_short", "search_cut_short"},
      {IssueCode::kFetchFailed, "fetch_failed", "fetch_failed"},
      {IssueCode::kInternalError, "internal_error", "internal_error"},
      {IssueCode::kRenamedField, "renamed_field", "renamed_field"}};
};
template <> struct EnumNames<Severity> {
  static constexpr EnumName<Severity> table[] = {{Severity::kError, "error", "error"}, {Severity::kWarning, "warning", "warning"}};
};

bool has_errors(const std::vector<Issue>& issues);

// A number as a message quotes it back: up to 6 significant digits, no trailing zeros ("2", "0.95",
// "1e-300"), never std::to_string's "2.000000".
std::string format_decimal(double value);

}  // namespace meshfit
