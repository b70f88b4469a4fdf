// layout_repair.h — the nearest valid layout: when an input (GPU count, model, framework, an imported
// config) breaks the current layout, the page moves to the closest layout that keeps every
// structural rule (structure.h, the same rules validate() and the search apply) instead of showing
// an empty result. Pinned dimensions (what the user just chose) stay; the fewest others move.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/config.h"
#include "spec/issue.h"

namespace meshfit {

struct LayoutPins {          // dimensions the repair must not move (the user's own choice)
  bool tp = false, pp = false, cp = false, vpp = false, zero = false, micro_batch = false;
};

struct LayoutChange {
  const char* field;         // "tp", "pp", "cp", "vpp", "zero", "micro_batch", "dp" (0 = derived), "dp_replicate",
                             // "hpz_partition_size", "pp_first_stage_layers", "pp_last_stage_layers" (0 = even)
  int64_t from = 0, to = 0;
};

struct LayoutRepair {
  Config config;                      // the input, with the nearest valid layout when one exists
  std::vector<LayoutChange> changes;  // empty: nothing moved (already valid, or no valid layout)
  std::string reason;                 // the message of the first layout error that forced the move
  bool moved() const { return !changes.empty(); }
  // One line: "pp 4 → 6: pp=4 does not divide 126 layers ..." (empty when nothing moved).
  std::string summary() const;
};

// Whether an issue is about the layout (degrees, split, ZeRO stage, batch divisibility, the group
// sizes, QLoRA's refusal of tp > 1): one that a layout change can fix.
bool is_layout_issue(const Issue& issue);

// The config unchanged when it is valid, or when an error outside the layout remains (seq=0: no
// layout can help); otherwise the valid layout nearest to it: fewest changed dimensions, then the
// smallest moves (log2 of each ratio), pinned dimensions kept whenever any valid layout keeps them.
LayoutRepair nearest_valid_layout(const Config& config, const LayoutPins& pins = {});

}  // namespace meshfit
