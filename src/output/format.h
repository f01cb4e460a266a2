// Output format selection: --format table | csv[,noheader][,nounits] | json (as nvidia-smi's
// --format, plus json).
#pragma once

#include <string>
#include <string_view>

namespace gpuclk::output {

struct Format {
  enum class Kind { table, csv, json } kind = Kind::table;
  bool header = true;  // csv: noheader turns it off
  bool units = true;   // csv: nounits drops units from headers and values
};

// Throws Error (exit 2) naming the bad part and the valid spellings.
Format parse_format(std::string_view text);

// One CSV field as RFC 4180 writes it: quoted ("" for a quote) when it holds a comma, a quote or
// a line break, as is otherwise. Every CSV gpuclk writes goes through it.
std::string csv_field(std::string_view text);

}  // namespace gpuclk::output
