// url_state.h — the shareable state: a versioned, readable query string carrying only what differs
// from the defaults, e.g. "v=1&model=llama3.1-70b&gpus=64&seq=8192&gbs=512&tp=8&pp=4". Used by the
// CLI (--state / --print-state), the JS API and the page's URL hash. Keys are the config's JSON
// names, except gbs (global_batch), mb (micro_batch) and kv (kv_heads). Decoding never fails hard:
// unknown keys and bad values become issues. A schema change bumps kStateVersion and keeps a
// decoder for every older version, so links pasted in issues keep working.
#pragma once

#include <string>

#include "io/serialize.h"

namespace meshfit {

constexpr int kStateVersion = 1;

std::string encode_state(const Config& config);
// Accepts a leading '#' or '?'. Issues for unknown keys, malformed pairs, newer versions, and
// everything parse_config reports.
ParsedConfig decode_state(const std::string& state);
// The state's fields as a config object (short keys mapped to JSON names), for front ends that
// merge it with other inputs; issues for malformed pairs and versions.
nlohmann::json state_to_object(const std::string& state, std::vector<Issue>& issues);

}  // namespace meshfit
