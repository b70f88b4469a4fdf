// url_state.h — the shareable state: a versioned, readable query string carrying only what differs
// from the defaults, e.g. "v=1&model=llama3.1-70b&gpus=64&seq=8192&gbs=512&tp=8&pp=4". Used by the
// CLI (--state / --print-state), the JS API and the page's URL hash. Keys are the config's JSON
// names, except gbs (global_batch), mb (micro_batch) and kv (kv_heads). Decoding never fails hard:
// unknown keys and bad values become issues. A schema change bumps kStateVersion and keeps a
// decoder for every older version, so links pasted in issues keep working.
#pragma once

#include <cstddef>
#include <string>

#include "io/serialize.h"

namespace meshfit {

constexpr int kStateVersion = 1;

// [SECTION] The page's view, carried after the config's keys in the same key=value form
// ("...&tab=layouts&units=mib&sort=tokens_per_s_per_gpu&order=desc&filter=tp%3D8&pin=v%3D1%26..."),
// so a shared link opens the same view. The selected layouts row needs no key: it is the row whose
// layout is the config's (the layout fields carry it). Front ends without a view (the CLI, the JS
// API) check these keys' values and otherwise ignore them.
enum class ViewTab { kInputs, kMemory, kLayouts, kMethods, kCompare, kValidation };
template <> struct EnumNames<ViewTab> {
  static constexpr EnumName<ViewTab> table[] = {{ViewTab::kInputs, "inputs", "Inputs"},
                                                {ViewTab::kMemory, "memory", "Per-rank memory"},
                                                {ViewTab::kLayouts, "layouts", "Layouts"},
                                                {ViewTab::kMethods, "methods", "Methods"},
                                                {ViewTab::kCompare, "compare", "Compare"},
                                                {ViewTab::kValidation, "validation", "Validation"}};
};
enum class ViewUnits { kGibibytes, kGigabytes, kMebibytes };  // binary GiB, decimal GB, binary MiB (not kGiB: units.h has those constants)
template <> struct EnumNames<ViewUnits> {
  static constexpr EnumName<ViewUnits> table[] = {
      {ViewUnits::kGibibytes, "gib", "GiB"}, {ViewUnits::kGigabytes, "gb", "GB"}, {ViewUnits::kMebibytes, "mib", "MiB"}};
};
// The layouts table's columns, by what they show (the keys of layout_candidate_to_json where one exists).
enum class LayoutColumn {
  kRank, kDp, kTp, kPp, kCp, kVpp, kMicroBatch, kZero, kRecompute, kSp, kDeviceBytes, kCapacityShare,
  kTokensPerSPerGpu, kMfu, kBubble, kModelParallel
};
template <> struct EnumNames<LayoutColumn> {
  static constexpr EnumName<LayoutColumn> table[] = {
      {LayoutColumn::kRank, "rank", "#"},
      {LayoutColumn::kDp, "dp", "dp"},
      {LayoutColumn::kTp, "tp", "tp"},
      {LayoutColumn::kPp, "pp", "pp"},
      {LayoutColumn::kCp, "cp", "cp"},
      {LayoutColumn::kVpp, "vpp", "vpp"},
      {LayoutColumn::kMicroBatch, "micro_batch", "mb"},
      {LayoutColumn::kZero, "zero", "zero"},
      {LayoutColumn::kRecompute, "recompute", "recompute"},
      {LayoutColumn::kSp, "sp", "sp"},
      {LayoutColumn::kDeviceBytes, "device_bytes", "memory"},
      {LayoutColumn::kCapacityShare, "capacity_share", "% cap"},
      {LayoutColumn::kTokensPerSPerGpu, "tokens_per_s_per_gpu", "tokens/s/GPU"},
      {LayoutColumn::kMfu, "mfu", "MFU"},
      {LayoutColumn::kBubble, "bubble", "bubble / comm"},
      {LayoutColumn::kModelParallel, "model_parallel", "model parallel"}};
};
enum class SortOrder { kAscending, kDescending };
template <> struct EnumNames<SortOrder> {
  static constexpr EnumName<SortOrder> table[] = {{SortOrder::kAscending, "asc", "ascending"},
                                                  {SortOrder::kDescending, "desc", "descending"}};
};

constexpr size_t kMaxViewFilterBytes = 63;  // the layouts filter box holds 63 bytes

struct PageView {
  ViewTab tab = ViewTab::kMemory;
  ViewUnits units = ViewUnits::kGibibytes;
  LayoutColumn sort = LayoutColumn::kRank;  // the search's own ranking
  SortOrder order = SortOrder::kAscending;
  std::string filter;                       // the layouts filter text ("tp=8 recompute=none")
  std::string pin;                          // the pinned config's state for Compare ("" = none)
};
bool operator==(const PageView& a, const PageView& b);
inline bool operator!=(const PageView& a, const PageView& b) { return !(a == b); }

// "&tab=layouts&..." for the fields that differ from PageView{} ("" when none): append it to
// encode_state(config).
std::string encode_view(const PageView& view);
bool is_view_key(const std::string& key);  // tab, units, sort, order, filter, pin

std::string encode_state(const Config& config);
// Accepts a leading '#' or '?'. Issues for unknown keys, malformed pairs, newer versions, and
// everything parse_config reports; the view keys' values are checked and, given `view`, read into
// it (a bad value leaves that field at its default, with a warning naming the key).
ParsedConfig decode_state(const std::string& state, PageView* view = nullptr);
// The state's fields as a config object (short keys mapped to JSON names), for front ends that
// merge it with other inputs; issues for malformed pairs and versions, warnings for bad view values.
nlohmann::json state_to_object(const std::string& state, std::vector<Issue>& issues, PageView* view = nullptr);
// Each field's value as the state writes it (JSON name -> decoded text, the first of a repeated key),
// so that a front end can show a value it could not read as given ("seq=abc" keeps "abc").
std::map<std::string, std::string> state_texts(const std::string& state);
// The config the fine-tuning methods are ranked from: a fine-tuning config as it is; a pretraining
// one as its link with finetune=lora reads (the stack's defaults fill what the link leaves out: a
// global batch without accumulation, its checkpointing and loss), so the page's Methods view and
// `meshfit methods` rank the same configs.
Config methods_base_config(const Config& config);

}  // namespace meshfit
