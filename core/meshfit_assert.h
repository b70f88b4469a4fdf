// meshfit_assert.h — the programmer-error tier (Dear ImGui's IM_ASSERT): a broken precondition
// (an unvalidated config reaching a model, an index out of range, an enum table out of step with
// its enum) stops the program with the message. User-input problems are Issues, never asserts.
// Active in debug builds and wherever MESHFIT_ENABLE_ASSERTS is defined (the test builds).
#pragma once

namespace meshfit::detail {
[[noreturn]] void assert_failed(const char* condition, const char* message, const char* file, int line);
}  // namespace meshfit::detail

#if !defined(NDEBUG) || defined(MESHFIT_ENABLE_ASSERTS)
#define MESHFIT_ASSERT(condition, message) \
  ((condition) ? static_cast<void>(0) : ::meshfit::detail::assert_failed(#condition, message, __FILE__, __LINE__))
#else
#define MESHFIT_ASSERT(condition, message) static_cast<void>(0)
#endif
