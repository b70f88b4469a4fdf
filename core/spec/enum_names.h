// enum_names.h — one {value, key, label} table per enum and the generic lookups over it: the key is
// the stable snake_case name of the JSON/URL/JS schema, the label is for display. An entry with a
// null label is an alias: accepted when reading, never written (e.g. optimizer "adam" = adamw).
// Each enum declares its table by specialising EnumNames<E> beside the enum.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "meshfit_assert.h"

namespace meshfit {

template <typename Enum>
struct EnumName {
  Enum value;
  const char* key;    // schema name, stable
  const char* label;  // display label; nullptr = alias of an earlier entry
};

// Specialise with `static constexpr EnumName<E> table[] = {...};` listing every value in enum order,
// canonical entries first, aliases after them.
template <typename Enum>
struct EnumNames;

template <typename Enum>
constexpr std::size_t enum_count() {  // canonical values (aliases excluded)
  std::size_t count = 0;
  for (const EnumName<Enum>& entry : EnumNames<Enum>::table) count += entry.label != nullptr;
  return count;
}

template <typename Enum>
const EnumName<Enum>& enum_entry(Enum value) {
  const std::size_t index = static_cast<std::size_t>(value);
  MESHFIT_ASSERT(index < enum_count<Enum>(), "enum value outside its name table");
  const EnumName<Enum>& entry = EnumNames<Enum>::table[index];
  MESHFIT_ASSERT(entry.value == value, "enum name table out of enum order");
  return entry;
}

template <typename Enum>
const char* enum_key(Enum value) { return enum_entry(value).key; }
template <typename Enum>
const char* enum_label(Enum value) { return enum_entry(value).label; }

template <typename Enum>
std::optional<Enum> enum_from_key(std::string_view key) {
  for (const EnumName<Enum>& entry : EnumNames<Enum>::table)
    if (key == entry.key) return entry.value;
  return std::nullopt;
}

// "a, b, c": every accepted key (aliases included), for messages and help.
template <typename Enum>
std::string enum_keys_text(const char* separator = ", ") {
  std::string text;
  for (const EnumName<Enum>& canonical : EnumNames<Enum>::table) {
    if (canonical.label == nullptr) continue;
    for (const EnumName<Enum>& entry : EnumNames<Enum>::table)  // the value's key, then its aliases
      if (entry.value == canonical.value && (&entry == &canonical || entry.label == nullptr))
        text += (text.empty() ? "" : separator) + std::string(entry.key);
  }
  return text;
}

// to_string(value) for every enum with a name table.
template <typename Enum, typename = decltype(EnumNames<Enum>::table)>
const char* to_string(Enum value) { return enum_key(value); }

}  // namespace meshfit
