// csv_text.cpp — see csv_text.h.
#include "io/csv_text.h"

#include <cstdlib>

namespace meshfit {

namespace {

// One record starting at `pos`; returns false at the end of the text.
bool next_record(const std::string& text, size_t& pos, std::vector<std::string>& fields) {
  fields.clear();
  if (pos >= text.size()) return false;
  std::string field;
  bool quoted = false;
  for (; pos < text.size(); ++pos) {
    const char ch = text[pos];
    if (quoted) {
      if (ch == '"' && pos + 1 < text.size() && text[pos + 1] == '"') {
        field += '"';
        ++pos;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.push_back(field);
      field.clear();
    } else if (ch == '\n') {
      ++pos;
      break;
    } else if (ch != '\r') {
      field += ch;
    }
  }
  fields.push_back(field);
  return true;
}

}  // namespace

std::vector<CsvRow> parse_csv(const std::string& text) {
  std::vector<CsvRow> rows;
  size_t pos = 0;
  std::vector<std::string> header, fields;
  if (!next_record(text, pos, header)) return rows;
  while (next_record(text, pos, fields)) {
    if (fields.size() == 1 && fields[0].empty()) continue;
    CsvRow row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

int64_t csv_int(const std::string& text) { return text.empty() ? 0 : std::strtoll(text.c_str(), nullptr, 10); }
double csv_number(const std::string& text) { return text.empty() ? 0.0 : std::strtod(text.c_str(), nullptr); }

const std::string& csv_field(const CsvRow& row, const std::string& column) {
  static const std::string empty;
  const auto found = row.find(column);
  return found == row.end() ? empty : found->second;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string write_csv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  const auto line = [&](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (i > 0) out += ',';
      if (i < fields.size()) out += csv_cell(fields[i]);
    }
    out += '\n';
  };
  line(header);
  for (const std::vector<std::string>& row : rows) line(row);
  return out;
}

std::string short_model_name(const std::string& model, size_t width) {
  const size_t slash = model.find('/');
  std::string name = slash == std::string::npos ? model : model.substr(slash + 1);
  const size_t note = name.find(" (");
  if (note != std::string::npos && note > 0) name = name.substr(0, note);
  if (name.empty()) return "(model not stated)";
  if (name.size() > width && width > 3) name = name.substr(0, width - 3) + "...";
  return name;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words)
    if (!word.empty()) out += (out.empty() ? "" : " ") + word;
  return out;
}

}  // namespace meshfit
