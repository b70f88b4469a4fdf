// published_runs.h — every measured run of tests/data/layouts_measured.csv as a config plus its
// measured tokens/s per GPU, read from the test's copy of the file with core's conversion
// (io/throughput_runs.cpp states it per source), so a test can check the compiled-in data too.
#pragma once

#include <optional>
#include <vector>

#include "csv.h"
#include "io/throughput_runs.h"

namespace meshfit_test {

inline std::vector<meshfit::ThroughputRun> published_runs_from_file() {
  std::vector<meshfit::ThroughputRun> runs;
  for (const CsvRow& row : read_csv(data_path("layouts_measured.csv")))
    if (std::optional<meshfit::ThroughputRun> run = meshfit::throughput_run_from_row(row)) runs.push_back(*run);
  return runs;
}

}  // namespace meshfit_test
