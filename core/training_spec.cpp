// training_spec.cpp — enum names for the training inputs (stable: part of the JSON/URL schema).
#include "training_spec.h"

namespace meshfit {

const char* to_string(Precision value) { return value == Precision::kBf16 ? "bf16" : "fp8"; }

const char* to_string(Optimizer value) {
  switch (value) {
    case Optimizer::kAdamW: return "adamw";
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kAdam8bit: return "adam8bit";
  }
  return "?";
}

const char* to_string(Recompute value) {
  switch (value) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

const char* to_string(Framework value) {
  switch (value) {
    case Framework::kMegatron: return "megatron";
    case Framework::kFsdp: return "fsdp";
    case Framework::kDeepSpeed: return "deepspeed";
  }
  return "?";
}

std::optional<Precision> precision_from_string(const std::string& text) {
  if (text == "bf16") return Precision::kBf16;
  if (text == "fp8") return Precision::kFp8;
  return std::nullopt;
}

std::optional<Optimizer> optimizer_from_string(const std::string& text) {
  if (text == "adamw" || text == "adam") return Optimizer::kAdamW;
  if (text == "sgd") return Optimizer::kSgd;
  if (text == "adam8bit") return Optimizer::kAdam8bit;
  return std::nullopt;
}

std::optional<Recompute> recompute_from_string(const std::string& text) {
  if (text == "none") return Recompute::kNone;
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  return std::nullopt;
}

std::optional<Framework> framework_from_string(const std::string& text) {
  if (text == "megatron") return Framework::kMegatron;
  if (text == "fsdp") return Framework::kFsdp;
  if (text == "deepspeed") return Framework::kDeepSpeed;
  return std::nullopt;
}

}  // namespace meshfit
