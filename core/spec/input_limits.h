// input_limits.h — the documented bounds on what meshfit accepts from outside, so that no input can make
// it crash, hang or allocate without bound. Model and cluster sizes are bounded in validate.h
// (kMaxHidden ... kMaxGpus); these bound the text, its structure and the layout search.
#pragma once

#include <cstddef>
#include <cstdint>

namespace meshfit {

constexpr size_t kMaxStateBytes = 8 * 1024;        // a shareable state (URL hash, --state); real ones are < 1 KiB
constexpr size_t kMaxJsonBytes = 1024 * 1024;      // a JSON text: config file, JS API object, HF config.json
constexpr int kMaxJsonDepth = 32;                  // nesting of objects/arrays (HF configs nest 3-4 deep)
constexpr size_t kMaxJsonKeys = 10000;             // object keys in one JSON text
constexpr size_t kMaxStateKeys = 160;              // key=value pairs in one state: every schema field (70) plus the view keys,
                                                   // twice over (test_config_schema.cpp checks the headroom)
constexpr size_t kMaxFlagBytes = 1024;             // one command-line flag value
constexpr size_t kMaxTextFieldBytes = 1024;        // a free-text config field (notes, lora_targets): UTF-8, at most this

constexpr int64_t kMaxSearchVpp = 64;              // largest vpp a search pin or bound may ask (default range: kMaxVpp, structure.h)
constexpr int64_t kMaxGpuSms = 100000;            // SMs / compute units of a custom GPU (B300 has 160)
constexpr int64_t kMaxTop = 10000;                 // layouts listed by a search
// Work units of a search: one per step (a layout mesh (tp, pp, cp), a vpp node or a micro-batch
// visited) plus one per memory evaluation. The default bounds the worst link to a few seconds natively; --budget / budget raise it.
constexpr int64_t kDefaultSearchBudget = 2000000;
constexpr int64_t kMaxSearchBudget = int64_t(1) << 40;

}  // namespace meshfit
