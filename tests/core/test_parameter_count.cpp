// test_parameter_count.cpp — parameter totals of the presets against their published sizes.
#include <doctest/doctest.h>

#include "spec/model_spec.h"
#include "memory/parameter_count.h"

using namespace meshfit;

TEST_CASE("preset parameter totals match the published model sizes") {
  // Published totals: Llama 2 paper (6.74 B / 13.0 B / 69.0 B), Llama 3 model cards (8.03 B,
  // 70.6 B, 405.9 B), Llama 3.2 cards (1.24 B, 3.21 B), Mistral 7B (7.24 B), GPT-3 (175 B; its 2048 learned position
  // embeddings, 25 M, are not modelled: the tolerance below covers them).
  const std::pair<const char*, double> expected[] = {
      {"llama2-7b", 6.738}, {"llama2-13b", 13.016}, {"llama2-70b", 68.977}, {"llama3-8b", 8.030},
      {"llama3.1-70b", 70.554}, {"llama3.1-405b", 405.853}, {"llama3.2-1b", 1.236}, {"llama3.2-3b", 3.213},
      {"mistral-7b", 7.242}, {"gpt3-175b", 175.0}};
  for (const auto& entry : expected) {
    const char* id = entry.first;  // (not a structured binding: CAPTURE captures it in a lambda)
    const double billions = entry.second;
    CAPTURE(id);
    CHECK(total_parameters(*find_model_preset(id)) / 1e9 == doctest::Approx(billions).epsilon(0.005));
  }
}

TEST_CASE("tp splits projections but replicates norms") {
  const ModelSpec model = *find_model_preset("llama3-8b");
  const LayerParameters full = layer_parameters(model);
  CHECK(layer_parameters_on_tp_rank(model, 1) == doctest::Approx(full.total()));
  CHECK(layer_parameters_on_tp_rank(model, 8) == doctest::Approx((full.attention + full.mlp) / 8 + full.norms));
}

TEST_CASE("vocabulary padding follows Megatron's multiple of 128 * tp") {
  CHECK(padded_vocab(128256, 128, 1) == 128256);
  CHECK(padded_vocab(128256, 128, 8) == 129024);
  CHECK(padded_vocab(50277, 128, 1) == 50304);
  CHECK(padded_vocab(50277, 1, 1) == 50277);
}
