// csv.h — the reference data in tests/data read with core's CSV reader (core/io/csv_text.h), plus the
// helpers the tests share (data paths, numbers, the architecture columns).
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/csv_text.h"
#include "spec/model_spec.h"

namespace meshfit_test {

using CsvRow = meshfit::CsvRow;

inline std::vector<CsvRow> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return meshfit::parse_csv(text.str());
}

inline std::string data_path(const std::string& name) { return std::string(MESHFIT_TEST_DATA_DIR) + "/" + name; }

inline long long to_int(const std::string& text) { return text.empty() ? 0 : std::stoll(text); }
inline double to_double(const std::string& text) { return text.empty() ? 0.0 : std::stod(text); }

// The architecture columns every reference csv shares (model, hidden, layers, heads, kv_heads,
// ffn, vocab, and head_dim where a csv has it) over a default (Llama-style) ModelSpec.
inline meshfit::ModelSpec model_from_row(const CsvRow& row) {
  meshfit::ModelSpec m;
  m.name = row.at("model");
  m.hidden = to_int(row.at("hidden"));
  m.layers = to_int(row.at("layers"));
  m.heads = to_int(row.at("heads"));
  m.kv_heads = to_int(row.at("kv_heads"));
  if (const auto head_dim = row.find("head_dim"); head_dim != row.end()) m.head_dim = to_int(head_dim->second);
  m.ffn = to_int(row.at("ffn"));
  m.vocab = to_int(row.at("vocab"));
  return m;
}

}  // namespace meshfit_test
