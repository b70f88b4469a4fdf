// hagemann.h — Hagemann et al. 2023's sweep (tests/data/layouts_*.csv) read into configs with core's
// reader (io/throughput_runs.h), for the ranking test's groups and failed/OOM rows.
#pragma once

#include "csv.h"
#include "io/throughput_runs.h"

namespace meshfit_test {

inline bool is_hagemann(const CsvRow& row) { return meshfit::is_hagemann_row(row); }
using meshfit::hagemann_config;
using meshfit::hagemann_kernel;

}  // namespace meshfit_test
