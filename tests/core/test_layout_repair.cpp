// test_layout_repair.cpp — nearest_valid_layout: a broken layout moves to a valid one, the fewest
// dimensions move, pins hold, and a config that no layout can fix stays as typed.
#include <doctest/doctest.h>

#include "fixtures.h"
#include "search/layout_repair.h"
#include "spec/validate.h"

using namespace meshfit;
using namespace meshfit_test;

TEST_CASE("a valid config is left alone") {
  const Config config = preset_config("llama3-70b", 64, 8, 4);
  const LayoutRepair repair = nearest_valid_layout(config);
  CHECK_FALSE(repair.moved());
  CHECK(repair.summary().empty());
}

TEST_CASE("one GPU: tp and pp fall to 1 and the line says why") {
  Config config = preset_config("llama3-70b", 64, 8, 4);
  config.cluster.gpus = 1;
  const LayoutRepair repair = nearest_valid_layout(config);
  REQUIRE(repair.moved());
  CHECK_FALSE(has_errors(validate(repair.config)));
  CHECK(repair.config.layout.tp == 1);
  CHECK(repair.config.layout.pp == 1);
  CHECK(repair.summary().find("tp 8 \xE2\x86\x92 1") != std::string::npos);
  CHECK(repair.summary().find("exceeds gpus=1") != std::string::npos);
}

TEST_CASE("a model whose heads tp does not divide moves tp only, to the nearest divisor") {
  Config config = preset_config("llama1-30b", 64, 8, 4);  // 52 heads, 60 layers
  const LayoutRepair repair = nearest_valid_layout(config);
  REQUIRE(repair.moved());
  CHECK(repair.config.layout.tp == 4);
  CHECK(repair.config.layout.pp == 4);
  REQUIRE(repair.changes.size() == 1);
  CHECK(std::string(repair.changes[0].field) == "tp");
}

TEST_CASE("a pinned dimension stays when some valid layout keeps it") {
  Config config = preset_config("llama3-70b", 64, 8, 4);
  config.layout.pp = 16;  // tp*pp = 128 > 64 GPUs; the user just chose pp=16
  LayoutPins pins;
  pins.pp = true;
  const LayoutRepair repair = nearest_valid_layout(config, pins);
  REQUIRE(repair.moved());
  CHECK(repair.config.layout.pp == 16);
  CHECK(repair.config.layout.tp == 4);
  CHECK_FALSE(has_errors(validate(repair.config)));
}

TEST_CASE("a framework without the ZeRO stage moves only the stage") {
  Config config = preset_config("llama3-8b", 8);
  config.training.framework = Framework::kFsdp;
  config.layout.zero = 1;
  const LayoutRepair repair = nearest_valid_layout(config);
  if (framework_profile(Framework::kFsdp).offers_zero(1)) return;
  REQUIRE(repair.moved());
  REQUIRE(repair.changes.size() == 1);
  CHECK(std::string(repair.changes[0].field) == "zero");
}

TEST_CASE("an error outside the layout is not the layout's to fix") {
  Config config = preset_config("llama3-70b", 1, 8, 4);
  config.training.seq = 0;
  CHECK_FALSE(nearest_valid_layout(config).moved());
}

// bitsandbytes' 4-bit layers have no tensor-parallel form (validate.cpp): an as-a-user review chose
// QLoRA with tp 8 set and was left with no result; a layout with tp 1 is the way out, taken and said.
TEST_CASE("QLoRA with tp > 1 moves tp to 1 and says why") {
  Config config = preset_config("llama3.1-70b", 8, 8, 1);
  config.training.finetune = FinetuneMethod::kQlora;
  config.training.global_batch = 8;
  config.training.seq = 4096;
  REQUIRE(has_errors(validate(config)));
  const LayoutRepair repair = nearest_valid_layout(config);
  REQUIRE(repair.moved());
  CHECK(repair.config.layout.tp == 1);
  CHECK_FALSE(has_errors(validate(repair.config)));
  CHECK(repair.summary().find("tp 8 \xE2\x86\x92 1") != std::string::npos);
  CHECK(repair.summary().find("bitsandbytes") != std::string::npos);
}

// An as-a-user review: picking 405B (126 layers) on a pp=4 page left it INVALID, the message asking
// for pp_first/last_stage_layers the page does not show: the repair had split the stages unevenly,
// which is all it needed, but listed no change, so the page kept the broken layout. A re-split is a
// move; so is dropping a split the new model does not fit (405B's 7 + ... + 7 under 70B's 80 layers).
TEST_CASE("a repair that only re-splits the pipeline stages is a move, said") {
  Config config = preset_config("llama3.1-405b", 64, 8, 4);
  REQUIRE(has_errors(validate(config)));
  LayoutRepair repair = nearest_valid_layout(config);
  REQUIRE(repair.moved());
  CHECK_FALSE(has_errors(validate(repair.config)));
  CHECK(repair.config.layout.pp == 4);
  CHECK(repair.summary().find("pp_first_stage_layers") != std::string::npos);

  Config split = preset_config("llama3.1-70b", 256, 8, 8);
  split.layout.vpp = 2;
  split.layout.pp_first_stage_layers = 7;
  split.layout.pp_last_stage_layers = 7;
  REQUIRE(has_errors(validate(split)));
  repair = nearest_valid_layout(split);
  REQUIRE(repair.moved());
  CHECK_FALSE(has_errors(validate(repair.config)));
}

// An as-a-user review: switching a 70B pretraining page (64 GPUs, tp 8 pp 4) to LoRA set the stack's
// batch and the page moved the layout to cp 4, which its stack cannot run (and then warned so). A
// fine-tune's repair moves only to pp = cp = 1 (and tp = 1 for QLoRA), as the search offers.
TEST_CASE("a fine-tune's repair keeps pp = cp = 1, and QLoRA's tp = 1") {
  Config config = preset_config("llama3-70b", 64, 8, 1);
  config.training.finetune = FinetuneMethod::kLora;
  config.training.global_batch = 4;  // not divisible by dp 8: only cp or pp > 1 would keep tp 8 and this batch
  config.training.micro_batch = 1;
  // With pp = cp = 1 no tp the model takes leaves dp dividing 4 on 64 GPUs: nothing the stack runs,
  // so the layout stays as typed (its batch error shown) rather than moving to cp 4.
  CHECK_FALSE(nearest_valid_layout(config).moved());
  Config pretraining = config;
  pretraining.training.finetune = FinetuneMethod::kNone;
  const LayoutRepair moved = nearest_valid_layout(pretraining);  // pretraining may take pp or cp
  REQUIRE(moved.moved());
  CHECK(moved.config.layout.pp * moved.config.layout.cp > 1);
  Config qlora = preset_config("llama3-70b", 8, 8, 1);
  qlora.training.finetune = FinetuneMethod::kQlora;
  qlora.training.global_batch = 8;
  const LayoutRepair four_bit = nearest_valid_layout(qlora);
  REQUIRE(four_bit.moved());
  CHECK(four_bit.config.layout.tp == 1);
  CHECK(four_bit.config.layout.cp == 1);
  CHECK_FALSE(has_errors(validate(four_bit.config)));
}
