// import_export.h — model fields from a pasted Hugging Face config.json. Llama-family decoders
// (llama, mistral, qwen2, ...) and GPT-2/NeoX/OPT-style ones map onto ModelSpec; architectures that
// meshfit does not model (mixture of experts, multi-head latent attention; sliding-window-only
// differences aside) come back as issues naming the config key. head_dim is read (Qwen3, Gemma 2).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/issue.h"
#include "spec/model_spec.h"

namespace meshfit {

struct HfImport {
  ModelSpec model;              // filled where the config says; name = "custom"
  std::string model_type;       // the config's model_type
  std::vector<Issue> issues;    // errors: not importable; warnings: approximations made
  bool ok() const { return !has_errors(issues); }
};

HfImport import_hf_config(const std::string& text);
// The imported fields as a config object (hidden, layers, heads, kv_heads, ffn, vocab, ...).
nlohmann::json hf_import_to_json(const HfImport& import);

}  // namespace meshfit
