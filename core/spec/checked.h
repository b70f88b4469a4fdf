// checked.h — overflow-checked arithmetic on user-controlled integers (sizes, degrees, layer counts).
// Sums and products of inputs go through these before any rule compares them, so that a wrapped
// value can never pass validation (GCC/Clang __builtin_*_overflow; both compilers we build with).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace meshfit {

// a + b, or nullopt when the exact result does not fit in int64.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// a * b, or nullopt when the exact result does not fit in int64.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// The product of all factors, or nullopt on the first overflow.
inline std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t result = 1;
  for (int64_t factor : factors)
    if (__builtin_mul_overflow(result, factor, &result)) return std::nullopt;
  return result;
}

}  // namespace meshfit
