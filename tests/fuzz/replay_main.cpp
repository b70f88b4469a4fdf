// replay_main.cpp — runs the fuzz targets over files, without libFuzzer: ctest replays the seed
// corpus and every kept crash (tests/fuzz/crashes) in every native build, sanitizers or not.
// Usage: meshfit_fuzz_replay FUZZ_DIR  (reads FUZZ_DIR/corpus/<target>/* and FUZZ_DIR/crashes/<target>/*)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "targets.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FUZZ_DIR\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  size_t files = 0;
  for (const meshfit_fuzz::Target& target : meshfit_fuzz::kTargets) {
    for (const char* kind : {"corpus", "crashes"}) {
      const fs::path folder = fs::path(argv[1]) / kind / target.name;
      if (!fs::is_directory(folder)) continue;
      for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
        if (!entry.is_regular_file()) continue;
        std::ifstream file(entry.path(), std::ios::binary);
        const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        target.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
        ++files;
      }
    }
  }
  std::printf("replayed %zu inputs over %zu targets\n", files, std::size(meshfit_fuzz::kTargets));
  return files > 0 ? 0 : 1;
}
