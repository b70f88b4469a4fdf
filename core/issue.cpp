// issue.cpp — stable snake_case names of issue codes (part of the JSON and JS schema).
#include "issue.h"

namespace meshfit {

const char* to_string(IssueCode code) {
  switch (code) {
    case IssueCode::kNotPositive: return "not_positive";
    case IssueCode::kNotInteger: return "not_integer";
    case IssueCode::kOutOfRange: return "out_of_range";
    case IssueCode::kUnknownModelPreset: return "unknown_model_preset";
    case IssueCode::kUnknownGpuPreset: return "unknown_gpu_preset";
    case IssueCode::kUnknownValue: return "unknown_value";
    case IssueCode::kUnknownField: return "unknown_field";
    case IssueCode::kMissingModel: return "missing_model";
    case IssueCode::kHeadsNotDivideHidden: return "heads_not_divide_hidden";
    case IssueCode::kKvHeadsNotDivideHeads: return "kv_heads_not_divide_heads";
    case IssueCode::kLayoutProductMismatch: return "layout_product_mismatch";
    case IssueCode::kTpNotDivideHeads: return "tp_not_divide_heads";
    case IssueCode::kTpNotDivideKvHeads: return "tp_not_divide_kv_heads";
    case IssueCode::kTpNotDivideFfn: return "tp_not_divide_ffn";
    case IssueCode::kPpExceedsLayers: return "pp_exceeds_layers";
    case IssueCode::kPpNotDivideLayers: return "pp_not_divide_layers";
    case IssueCode::kVppNotDivideLayers: return "vpp_not_divide_layers";
    case IssueCode::kVppWithoutPp: return "vpp_without_pp";
    case IssueCode::kVppMicrobatches: return "vpp_microbatches";
    case IssueCode::kStageLayersInvalid: return "stage_layers_invalid";
    case IssueCode::kBatchNotDivisible: return "batch_not_divisible";
    case IssueCode::kCpNotDivideSeq: return "cp_not_divide_seq";
    case IssueCode::kZeroUnsupported: return "zero_unsupported";
    case IssueCode::kPrecisionUnsupported: return "precision_unsupported";
    case IssueCode::kThresholdOutOfRange: return "threshold_out_of_range";
    case IssueCode::kGpusPerNodeMismatch: return "gpus_per_node_mismatch";
    case IssueCode::kInvalidText: return "invalid_text";
    case IssueCode::kInputTooLarge: return "input_too_large";
    case IssueCode::kDuplicateKey: return "duplicate_key";
    case IssueCode::kMalformedJson: return "malformed_json";
    case IssueCode::kStateVersion: return "state_version";
    case IssueCode::kSearchCutShort: return "search_cut_short";
  }
  return "?";
}

const char* to_string(Severity severity) { return severity == Severity::kError ? "error" : "warning"; }

bool has_errors(const std::vector<Issue>& issues) {
  for (const Issue& issue : issues)
    if (issue.severity == Severity::kError) return true;
  return false;
}

}  // namespace meshfit
