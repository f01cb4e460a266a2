#include "output/format.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/parse.h"

namespace gpuclk::output {

Format parse_format(std::string_view text) {
  Format f;
  bool first = true;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    auto part = text.substr(start, comma == text.npos ? text.npos : comma - start);
    start = comma == text.npos ? text.size() + 1 : comma + 1;
    if (first) {
      first = false;
      if (part == "table")
        f.kind = Format::Kind::table;
      else if (part == "csv")
        f.kind = Format::Kind::csv;
      else if (part == "json")
        f.kind = Format::Kind::json;
      else
        throw bad_argument(fmt::format("unknown format '{}'", parse::quote(part)),
                           "valid: table, csv[,noheader][,nounits], json");
      continue;
    }
    if (f.kind != Format::Kind::csv) {
      throw bad_argument(fmt::format("'{}' applies to csv only (got '{}')", parse::quote(part),
                                     parse::quote(text)),
                         "valid: table, csv[,noheader][,nounits], json");
    }
    if (part == "noheader")
      f.header = false;
    else if (part == "nounits")
      f.units = false;
    else
      throw bad_argument(
          fmt::format("unknown csv option '{}' in '{}'", parse::quote(part), parse::quote(text)),
          "valid: csv, csv,noheader, csv,nounits, csv,noheader,nounits");
  }
  return f;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace gpuclk::output
