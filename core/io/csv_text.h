// csv_text.h — a minimal RFC-4180 CSV reader (quoted fields, embedded commas and quotes) for the
// reference data meshfit carries (tests/data/*.csv), and the writer of the exports (the page's
// "Export CSV"), which the reader reads back. Rows are maps from header names to text.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace meshfit {

using CsvRow = std::map<std::string, std::string>;

// Every data row of a CSV text whose first line is the header; blank lines are skipped, and a
// column missing from a short row reads as absent (use csv_field for a default).
std::vector<CsvRow> parse_csv(const std::string& text);
// The row's value in `column`, or "" when the column is absent.
const std::string& csv_field(const CsvRow& row, const std::string& column);
// A cell as a number; an empty cell (a figure the source did not publish) reads as 0.
int64_t csv_int(const std::string& text);
double csv_number(const std::string& text);

// A measured run's model column as a table label: the part after an organisation ("meta-llama/"),
// before a parenthetical note ("Llama-style-7B-GQA (ALCF ...)"), at most `width` characters (cut
// with "..."), or "(model not stated)".
std::string short_model_name(const std::string& model, size_t width = 24);
// Words joined by single spaces, empty ones left out (a label's parts the source did not state).
std::string join_words(const std::vector<std::string>& words);

// One field as RFC 4180 writes it: quoted (inner quotes doubled) when it holds a comma, a quote or
// a line break, as is otherwise.
std::string csv_cell(const std::string& text);
// A header line and one line per row ("\n" line ends), each row as long as the header.
std::string write_csv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace meshfit
