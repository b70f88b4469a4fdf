// test_hpz.cpp — DeepSpeed ZeRO++ hpZ (Layout::hpz_partition_size). ZeRO-3 keeps a second 16-bit
// partition of the weights over groups of hpz_partition_size consecutive ranks and the backward
// gathers from it (deepspeed/runtime/zero/partition_parameters.py _partition_param_sec,
// ds_secondary_tensor; utils/groups.py _create_zero_param_parallel_group). Memory, step, checks,
// the search, the repair and the DeepSpeed JSON both ways.
#include <doctest/doctest.h>

#include <cmath>

#include "fixtures.h"
#include "io/launch_config.h"
#include "memory/memory_model.h"
#include "memory/overheads.h"
#include "perf/perf_model.h"
#include "search/layout_repair.h"
#include "search/layout_search.h"
#include "spec/structure.h"
#include "spec/validate.h"

using namespace meshfit;
using namespace meshfit_test;

namespace {

Config zero3(int64_t gpus, int64_t hpz) {
  Config config = preset_config("llama3.1-8b", gpus);
  config.training.framework = Framework::kDeepSpeed;
  config.layout.zero = 3;
  config.layout.hpz_partition_size = hpz;
  config.training.global_batch = gpus;
  config.training.micro_batch = 1;
  config.training.seq = 4096;
  return config;
}

bool names(const std::vector<Issue>& issues, const char* text) {
  for (const Issue& issue : issues)
    if (issue.code == IssueCode::kHpzInvalid && issue.field == "hpz_partition_size" && issue.severity == Severity::kError &&
        issue.message.find(text) != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST_CASE("hpZ keeps a second 16-bit weight partition over its group, and one more communicator") {
  const MemoryReport off = estimate_memory(zero3(64, 1));
  const MemoryReport node = estimate_memory(zero3(64, 8));
  REQUIRE(off.valid());
  REQUIRE(node.valid());
  const RankMemory& a = off.worst();
  const RankMemory& b = node.worst();
  // The primary partition is 2 B x P / 64; the second one 2 B x P / 8, eight times the first.
  const double primary = a.bytes(Component::kWeights);
  CHECK(b.intermediates.hpz_secondary_bytes == doctest::Approx(8.0 * primary).epsilon(1e-9));
  CHECK(b.bytes(Component::kWeights) == doctest::Approx(9.0 * primary).epsilon(1e-9));
  CHECK(b.bytes(Component::kNccl) - a.bytes(Component::kNccl) == doctest::Approx(kNcclBytesPerCommunicator));
  for (Component component : {Component::kGradients, Component::kOptimizerStates, Component::kActivations})
    CHECK(b.bytes(component) == doctest::Approx(a.bytes(component)));
  // With offload_param the second partition lives where the parameters do (the host).
  Config offloaded = zero3(64, 8);
  offloaded.training.offload = Offload::kParams;
  const MemoryReport host = estimate_memory(offloaded);
  REQUIRE(host.valid());
  CHECK(host.worst().intermediates.hpz_secondary_bytes == 0);
  Config offloaded_off = offloaded;
  offloaded_off.layout.hpz_partition_size = 1;
  CHECK(host.worst().host_bytes - estimate_memory(offloaded_off).worst().host_bytes == doctest::Approx(8.0 * primary).epsilon(1e-9));
}

TEST_CASE("hpZ's backward gathers run inside its group: on NVLink they cost less than across nodes") {
  Config config = zero3(64, 8);
  config.training.seq = 1024;  // a short step leaves the gathers exposed
  const StepReport node = predict_step(config, plan_memory(config));
  config.layout.hpz_partition_size = 1;
  const StepReport all = predict_step(config, plan_memory(config));
  REQUIRE(std::isfinite(node.step_time_s));
  CHECK(node.breakdown.dp_comm_s < all.breakdown.dp_comm_s);
  CHECK(node.step_time_s < all.step_time_s);
}

TEST_CASE("hpz_partition_size is checked: DeepSpeed ZeRO-3 over data-parallel ranks, dividing them") {
  CHECK_FALSE(has_errors(validate(zero3(64, 8))));
  CHECK(names(validate(zero3(64, 3)), "does not divide dp x cp = 64"));
  Config stage2 = zero3(64, 8);
  stage2.layout.zero = 2;
  CHECK(names(validate(stage2), "needs zero=3"));
  Config fsdp = zero3(64, 8);
  fsdp.training.framework = Framework::kFsdp;
  CHECK(names(validate(fsdp), "DeepSpeed ZeRO++"));
  Config with_tp = zero3(64, 8);
  with_tp.layout.tp = 2;
  with_tp.training.global_batch = 32;
  CHECK(names(validate(with_tp), "tp=2"));
  Config with_mics = zero3(64, 8);
  with_mics.layout.dp_replicate = 4;
  CHECK(names(validate(with_mics), "dp_replicate=4"));
  Config zero_value = zero3(64, 0);
  bool refused = false;
  for (const Issue& issue : validate(zero_value)) refused |= issue.field == "hpz_partition_size" && issue.severity == Severity::kError;
  CHECK(refused);
}

TEST_CASE("the DeepSpeed JSON reads and writes zero_hpz_partition_size") {
  const LaunchImport read = import_deepspeed_json(
      R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, "zero_hpz_partition_size": 8}})");
  REQUIRE(read.ok());
  CHECK(read.fields["hpz_partition_size"] == 8);
  bool unmodelled = false;
  for (const Issue& issue : read.issues) unmodelled |= issue.field == "zero_optimization.zero_hpz_partition_size";
  CHECK_FALSE(unmodelled);
  // Below stage 3 DeepSpeed has no partitioned weights to copy: said, and not set.
  const LaunchImport stage2 = import_deepspeed_json(
      R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, "zero_hpz_partition_size": 8}})");
  CHECK_FALSE(stage2.fields.contains("hpz_partition_size"));
  bool said = false;
  for (const Issue& issue : stage2.issues) said |= issue.field == "zero_optimization.zero_hpz_partition_size";
  CHECK(said);

  const Config config = zero3(64, 8);
  const LaunchExport out = export_launch_config(config, LaunchFormat::kDeepSpeed);
  INFO(out.text);
  CHECK(out.text.find("\"zero_hpz_partition_size\": 8") != std::string::npos);
  for (const Issue& issue : out.issues) CHECK(issue.field != "export");
  std::vector<Issue> issues;
  const Config back = apply_import(config, import_launch_config(LaunchFormat::kDeepSpeed, out.text), issues);
  CHECK(back.layout.hpz_partition_size == 8);
}

TEST_CASE("the search and the repair keep hpZ where it holds, and the largest group below it where not") {
  Config base = zero3(64, 8);
  base.training.global_batch = 256;
  SearchOptions options;
  options.top_k = 1000;
  const SearchResult result = search_layouts(base, options);
  REQUIRE_FALSE(result.top.empty());
  bool some_kept = false;
  for (const LayoutCandidate& c : result.top) {
    const int64_t expected = most_hpz_holding(Framework::kDeepSpeed, 8, c.layout, c.layout.dp);
    CHECK(c.layout.hpz_partition_size == expected);
    some_kept |= c.layout.hpz_partition_size == 8;
  }
  CHECK(some_kept);
  // A group that holds on none of the layouts (16 on 8 GPUs) is said, as the replicas' are.
  Config small = zero3(8, 16);
  small.training.global_batch = 64;
  const SearchResult none_held = search_layouts(small, options);
  REQUIRE(none_held.valid());
  bool said = false;
  for (const Issue& issue : none_held.issues)
    said |= issue.field == "hpz_partition_size" && issue.severity == Severity::kWarning &&
            issue.message.find("held on none") != std::string::npos;
  CHECK(said);
  for (const LayoutCandidate& c : none_held.top) CHECK(c.layout.hpz_partition_size <= 8);
  CHECK(search_layouts(base, options).issues.empty());
  // On a layout with dp 4 (cp 1) 8 cannot divide the ranks: the largest group below it that does.
  Layout four;
  four.tp = 1;
  four.cp = 1;
  four.zero = 3;
  CHECK(most_hpz_holding(Framework::kDeepSpeed, 8, four, 4) == 4);
  four.zero = 2;
  CHECK(most_hpz_holding(Framework::kDeepSpeed, 8, four, 4) == 1);

  // The user moves to zero 2 with hpZ 8 set: the repair drops hpZ and says so.
  Config edited = zero3(64, 8);
  edited.layout.zero = 2;
  LayoutPins pins;
  pins.zero = true;
  const LayoutRepair repair = nearest_valid_layout(edited, pins);
  REQUIRE(repair.moved());
  CHECK(repair.config.layout.zero == 2);
  CHECK(repair.config.layout.hpz_partition_size == 1);
  CHECK(repair.summary().find("hpz_partition_size 8 \xE2\x86\x92 1") != std::string::npos);
}
