#include "output/dmon_printer.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>
#include <nlohmann/json.hpp>
#include <ostream>

#include "output/format.h"

namespace gpuclk::output {
namespace {

// nvidia-smi dmon prints '-' where a value is missing, in tables and in CSV.
std::string cell(const Value& v) { return v.missing() ? "-" : to_text(v, false); }

nlohmann::ordered_json json_value(const Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::ordered_json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return nullptr;
        else
          return x;
      },
      v.content);
}

std::tm local_time(std::chrono::system_clock::time_point when) {
  std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

}  // namespace

std::string DmonPrinter::time_text(std::chrono::system_clock::time_point when, bool date) const {
  const std::tm tm = local_time(when);
  if (date) return fmt::format("{:%Y%m%d}", tm);
  std::string text = fmt::format("{:%H:%M:%S}", tm);
  if (style_.milliseconds) {
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() %
        1000;
    text += fmt::format(".{:03}", ms);
  }
  return text;
}

// The leading cells: [date] [time] index, in nvidia-smi's widths (see the header comment).
std::string DmonPrinter::prefix_cells(std::string_view date, std::string_view time,
                                      std::string_view index) const {
  if (!style_.date && !style_.time) return fmt::format("{:>5}", index);
  const std::size_t time_width = style_.milliseconds ? 12 : 8;
  std::string line = " ";
  if (style_.date) line += fmt::format("{:<8}", date);
  if (style_.date && style_.time) line += "   ";
  if (style_.time) line += fmt::format("{:<{}}", time, time_width);
  return line + fmt::format("{:>7}", index);
}

void DmonPrinter::begin(const std::vector<DmonColumn>& columns) {
  columns_ = columns;
  if (style_.kind == DmonStyle::Kind::json) return;
  const char* time_unit = style_.milliseconds ? "HH:MM:SS.mmm" : "HH:MM:SS";
  auto header_line = [&](std::string_view date, std::string_view time, std::string_view index,
                         auto cell_of) {
    std::string line;
    if (style_.kind == DmonStyle::Kind::csv) {
      line = "#";
      if (style_.date) line += std::string(date) + ", ";
      if (style_.time) line += std::string(time) + ", ";
      line += index;
      for (const auto& c : columns_) {
        if (!c.json_only) line += ", " + csv_field(cell_of(c));
      }
    } else {
      line = prefix_cells(date, time, index) + " ";
      for (const auto& c : columns_) {
        if (!c.json_only) line += fmt::format("{:>6} ", cell_of(c));
      }
      line[0] = '#';
    }
    out_ << line << '\n';
  };
  if (style_.header) header_line("Date", "Time", "gpu", [](const DmonColumn& c) { return c.name; });
  if (style_.units) {
    header_line("YYYYMMDD", time_unit, "Idx",
                [](const DmonColumn& c) { return c.unit.empty() ? std::string("-") : c.unit; });
  }
  out_ << std::flush;
}

void DmonPrinter::note(std::string_view text) {
  if (style_.kind == DmonStyle::Kind::json) return;
  out_ << "# " << text << '\n' << std::flush;
}

void DmonPrinter::row(std::chrono::system_clock::time_point when, unsigned gpu,
                      const std::vector<Value>& values) {
  const std::string date = style_.date ? time_text(when, true) : "";
  const std::string time = style_.time ? time_text(when, false) : "";
  std::string line;
  switch (style_.kind) {
    case DmonStyle::Kind::json: {
      nlohmann::ordered_json obj;
      std::string stamp = fmt::format("{:%Y-%m-%dT%H:%M:%S}", local_time(when));
      auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() %
          1000;
      obj["timestamp"] = stamp + fmt::format(".{:03}", ms);
      obj["gpu"] = gpu;
      for (std::size_t c = 0; c < columns_.size() && c < values.size(); ++c) {
        if (!columns_[c].key.empty()) obj[columns_[c].key] = json_value(values[c]);
      }
      line = obj.dump();
      break;
    }
    case DmonStyle::Kind::csv:
      if (style_.date) line += date + ", ";
      if (style_.time) line += time + ", ";
      line += std::to_string(gpu);
      // Several active reasons are one field ("appclk,pwrcap"): quoted, as RFC 4180 says.
      for (std::size_t c = 0; c < values.size(); ++c) {
        if (c < columns_.size() && columns_[c].json_only) continue;
        line += ", " + csv_field(cell(values[c]));
      }
      break;
    case DmonStyle::Kind::table:
      line = prefix_cells(date, time, std::to_string(gpu)) + " ";
      for (std::size_t c = 0; c < values.size(); ++c) {
        if (c < columns_.size() && columns_[c].json_only) continue;
        line += fmt::format("{:>6} ", cell(values[c]));
      }
      break;
  }
  out_ << line << '\n' << std::flush;
}

}  // namespace gpuclk::output
