// csv.h — a minimal RFC-4180 CSV reader for the reference data in tests/data (quoted fields,
// embedded commas). Test-only; rows are maps from the header's column names to text.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "spec/model_spec.h"

namespace meshfit_test {

using CsvRow = std::map<std::string, std::string>;

inline std::vector<std::string> split_csv_line(std::istream& in, bool& ok) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  char ch;
  ok = false;
  while (in.get(ch)) {
    ok = true;
    if (quoted) {
      if (ch == '"') {
        if (in.peek() == '"') {
          field += '"';
          in.get(ch);
        } else {
          quoted = false;
        }
      } else {
        field += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.push_back(field);
      field.clear();
    } else if (ch == '\n') {
      break;
    } else if (ch != '\r') {
      field += ch;
    }
  }
  fields.push_back(field);
  return fields;
}

inline std::vector<CsvRow> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::vector<CsvRow> rows;
  bool ok = false;
  const std::vector<std::string> header = split_csv_line(in, ok);
  while (true) {
    const std::vector<std::string> fields = split_csv_line(in, ok);
    if (!ok) break;
    if (fields.size() == 1 && fields[0].empty()) continue;
    CsvRow row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

inline std::string data_path(const std::string& name) { return std::string(MESHFIT_TEST_DATA_DIR) + "/" + name; }

inline long long to_int(const std::string& text) { return text.empty() ? 0 : std::stoll(text); }
inline double to_double(const std::string& text) { return text.empty() ? 0.0 : std::stod(text); }

// The architecture columns every reference csv shares (model, hidden, layers, heads, kv_heads,
// ffn, vocab) over a default (Llama-style) ModelSpec.
inline meshfit::ModelSpec model_from_row(const CsvRow& row) {
  meshfit::ModelSpec m;
  m.name = row.at("model");
  m.hidden = to_int(row.at("hidden"));
  m.layers = to_int(row.at("layers"));
  m.heads = to_int(row.at("heads"));
  m.kv_heads = to_int(row.at("kv_heads"));
  m.ffn = to_int(row.at("ffn"));
  m.vocab = to_int(row.at("vocab"));
  return m;
}

}  // namespace meshfit_test
