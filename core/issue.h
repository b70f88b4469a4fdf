// issue.h — user-input problems as values: {code, severity, field, message}.
// Validation returns all of them; nothing in core throws (house style, ../shared/STYLE.md).
#pragma once

#include <string>
#include <vector>

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
  kVppMicrobatches,         // interleaved 1F1B needs micro-batches % pp == 0 (Megatron-LM)
  kStageLayersInvalid,      // explicit first/last stage layer counts do not add up
  kBatchNotDivisible,       // global_batch % (dp * micro_batch) != 0
  kCpNotDivideSeq,          // seq % (2 * cp) != 0 (load-balanced context parallelism)
  kZeroUnsupported,         // zero stage not offered by the framework profile
  kPrecisionUnsupported,    // fp8 on a GPU without FP8 tensor cores
  kThresholdOutOfRange,     // headroom threshold not in (0, 1]
  kGpusPerNodeMismatch,     // warning: gpus not a multiple of gpus_per_node
  kInvalidText,             // text that is not valid UTF-8 (or not a number where one is required)
  kInputTooLarge,           // text length, JSON nesting depth or key count over its limit (limits.h)
  kDuplicateKey,            // the same key twice in one JSON object or state
  kMalformedJson,           // a JSON text that does not parse (the parser's message quoted)
  kStateVersion,            // a state's v= is not exactly a supported version number
  kSearchCutShort,          // warning: the search stopped at its work budget before the end
};

enum class Severity { kError, kWarning };

struct Issue {
  IssueCode code;
  Severity severity = Severity::kError;
  std::string field;    // the input field, snake_case as in the JSON config ("tp", "seq", ...)
  std::string message;  // a sentence with the numbers in it
};

const char* to_string(IssueCode code);  // snake_case, stable: part of the JSON/JS schema
const char* to_string(Severity severity);

bool has_errors(const std::vector<Issue>& issues);

}  // namespace meshfit
