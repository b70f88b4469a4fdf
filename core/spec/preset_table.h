// preset_table.h — lookups shared by the model and GPU preset tables (each a vector of
// {id, source, spec}): find by id, and the ids as a list for messages.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace meshfit {

template <typename Preset>
auto find_preset(const std::vector<Preset>& presets, const std::string& id) -> std::optional<decltype(Preset::spec)> {
  for (const Preset& preset : presets)
    if (id == preset.id) return preset.spec;
  return std::nullopt;
}

// Edit distance (insertions, deletions, substitutions; case-insensitive) of two short ids.
inline size_t id_distance(const std::string& a, const std::string& b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The preset ids closest to a mistyped one (at most 2 edits or a prefix, the nearest first, up to three), for a
// "did you mean" beside the full list: an as-a-user review saw "gpt5" and "llama9-13b" answered
// with the whole list only.
template <typename Preset>
std::string nearest_preset_ids(const std::vector<Preset>& presets, const std::string& id) {
  if (id.size() > 64) return "";
  std::vector<std::pair<size_t, std::string>> near;
  for (const Preset& preset : presets) {
    const std::string candidate = preset.id;
    // A prefix ("h100" of h100-sxm) ranks with one edit; else at most two edits.
    const bool prefix = id.size() >= 3 && candidate.compare(0, id.size(), id) == 0;
    const size_t distance = prefix ? 1 : id_distance(id, candidate);
    if (distance <= 2 && distance < candidate.size()) near.emplace_back(distance, candidate);
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::string list;
  for (size_t i = 0; i < near.size() && i < 3; ++i) list += (list.empty() ? "" : ", ") + near[i].second;
  return list;
}

template <typename Preset>
std::string preset_ids(const std::vector<Preset>& presets) {  // "a, b, c"
  std::string list;
  for (const Preset& preset : presets) list += (list.empty() ? "" : ", ") + std::string(preset.id);
  return list;
}

}  // namespace meshfit
