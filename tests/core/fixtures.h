// fixtures.h — configurations shared by the core tests.
#pragma once

#include "spec/config.h"
#include "io/serialize.h"

namespace meshfit_test {

// A valid Megatron-LM config for a preset, before the test changes what it studies.
inline meshfit::Config preset_config(const char* model, long long gpus, long long tp = 1, long long pp = 1,
                                     long long cp = 1) {
  meshfit::Config config = meshfit::default_config();
  config.model = *meshfit::find_model_preset(model);
  config.cluster.gpus = gpus;
  config.layout.tp = tp;
  config.layout.pp = pp;
  config.layout.cp = cp;
  config.training.seq = 4096;
  config.training.global_batch = 1024;
  return config;
}

// Korthikanti et al. 2022's GPT block: LayerNorm, GeLU MLP of width 4h, dropout, MHA, eager attention.
inline meshfit::ModelSpec korthikanti_gpt(long long hidden, long long heads, long long layers) {
  meshfit::ModelSpec model;
  model.name = "gpt-korthikanti";
  model.hidden = hidden;
  model.heads = model.kv_heads = heads;
  model.layers = layers;
  model.ffn = 4 * hidden;
  model.vocab = 51200;
  model.norm = meshfit::NormKind::kLayerNorm;
  model.mlp = meshfit::MlpKind::kGelu;
  model.dropout = true;
  return model;
}

}  // namespace meshfit_test
