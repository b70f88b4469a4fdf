// test_suite.cpp — checks on the suite itself: ctest registers one test per doctest TEST_CASE
// (doctest_discover_tests), and a name with ';' becomes a CMake list, i.e. several filters that
// match nothing and report Passed without running anything (issue 10).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

TEST_CASE("no test case name contains a semicolon, so that ctest runs every case it lists") {
  const std::filesystem::path folder = std::filesystem::path(MESHFIT_SOURCE_DIR) / "tests" / "core";
  const std::regex test_case(R"re(TEST_CASE\("((?:[^"\\]|\\.)*)"\))re");
  int names = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream file(entry.path());
    std::stringstream text;
    text << file.rdbuf();
    const std::string source = text.str();
    for (auto it = std::sregex_iterator(source.begin(), source.end(), test_case); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1];
      CAPTURE(name);
      CHECK(name.find(';') == std::string::npos);
      ++names;
    }
  }
  CHECK(names > 100);  // the files were found and read
}
