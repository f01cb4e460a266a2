// DmonPrinter: `gpuclk dmon` rows in nvidia-smi dmon's layout, or as CSV, or as JSON Lines.
//
// Table (default), as docs/calibration.md shows it:
//   # gpu    pwr  gtemp  mtemp     sm …        two header lines, names then units, led by '#'
//   # Idx      W      C      C      % …
//       0     74     32     36      0 …        one row per GPU per interval; '-' = no value
// each value right-aligned in 6 characters plus a space; with -o D/T a date (YYYYMMDD) and/or a
// time (HH:MM:SS, or HH:MM:SS.mmm below 1 s intervals) column comes first and the index takes 7.
// CSV: the same two header lines with ", " between fields; rows "0, 74, 32, …".
// JSON Lines: {"timestamp": ISO 8601, "gpu": 0, "<key>": value, …} per row, no header.
// Every row is flushed (dmon output is line-buffered). Not thread-safe.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "output/value.h"

namespace gpuclk::output {

struct DmonColumn {
  std::string name;        // header ("pwr"), at most 6 characters except the last column
  std::string unit;        // units line ("W"); "" shows as "-"
  std::string key;         // JSON key ("power.draw"); "" leaves the column out of JSON Lines
  bool json_only = false;  // a JSON Lines key only: no column in the table and CSV
};

struct DmonStyle {
  enum class Kind { table, csv, json } kind = Kind::table;
  bool header = true;         // names line (noheader)
  bool units = true;          // units line (nounit)
  bool date = false;          // -o D
  bool time = false;          // -o T
  bool milliseconds = false;  // time as HH:MM:SS.mmm
};

class DmonPrinter {
 public:
  DmonPrinter(std::ostream& out, DmonStyle style) : out_(out), style_(style) {}

  // The header lines (table, csv). Call again to repeat them.
  void begin(const std::vector<DmonColumn>& columns);
  // A line of its own, led by "# " (table, csv); JSON Lines has no comments: nothing is written.
  void note(std::string_view text);
  // One GPU's row; values match the columns given to begin().
  void row(std::chrono::system_clock::time_point when, unsigned gpu,
           const std::vector<Value>& values);

 private:
  std::string prefix_cells(std::string_view date, std::string_view time,
                           std::string_view index) const;
  std::string time_text(std::chrono::system_clock::time_point when, bool date) const;

  std::ostream& out_;
  DmonStyle style_;
  std::vector<DmonColumn> columns_;
};

}  // namespace gpuclk::output
