// preset_table.h — lookups shared by the model and GPU preset tables (each a vector of
// {id, source, spec}): find by id, and the ids as a list for messages.
#pragma once

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

template <typename Preset>
std::string preset_ids(const std::vector<Preset>& presets) {  // "a, b, c"
  std::string list;
  for (const Preset& preset : presets) list += (list.empty() ? "" : ", ") + std::string(preset.id);
  return list;
}

}  // namespace meshfit
