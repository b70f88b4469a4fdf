// issue.cpp — see issue.h; also the programmer-error tier's failure path (meshfit_assert.h).
#include "spec/issue.h"

#include <cstdio>
#include <cstdlib>

namespace meshfit {

bool has_errors(const std::vector<Issue>& issues) {
  for (const Issue& issue : issues)
    if (issue.severity == Severity::kError) return true;
  return false;
}

std::string format_decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace meshfit

namespace meshfit::detail {

void assert_failed(const char* condition, const char* message, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: meshfit assertion failed: %s (%s)\n", file, line, message, condition);
  std::abort();
}

}  // namespace meshfit::detail
