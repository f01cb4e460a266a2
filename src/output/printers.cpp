// The three printers. Kept together: each is a few dozen lines over the same model.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "output/printer.h"

namespace gpuclk::output {
namespace {

// ---------------------------------------------------------------------------------------------
// Human tables and trees.
class TablePrinter final : public Printer {
 public:
  using Printer::Printer;

 protected:
  void do_print_table(const Table& t) override {
    std::vector<std::size_t> width(t.columns.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) width[c] = header(t.columns[c]).size();
    for (const auto& row : t.rows) {
      for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
        width[c] = std::max(width[c], to_text(row[c], false).size());
      }
    }
    write_row(t.columns, width, [&](std::size_t c) { return header(t.columns[c]); });
    for (const auto& row : t.rows) {
      write_row(t.columns, width, [&](std::size_t c) { return to_text(row[c], false); });
    }
  }

  void do_print_tree(const Node& root) override {
    for (const auto& child : root.children) write_node(child, 0);
  }

  void do_begin_stream(const std::vector<Column>& columns) override {
    std::string line = "#";
    for (const auto& c : columns) line += fmt::format(" {:>{}}", header(c), stream_width(c));
    out_ << line << '\n' << std::flush;
  }

  void do_stream_row(const std::vector<Column>& columns, const std::vector<Value>& row) override {
    std::string line = " ";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      line += fmt::format(" {:>{}}", c < row.size() ? to_text(row[c], false) : "-",
                          stream_width(columns[c]));
    }
    out_ << line << '\n' << std::flush;
  }

 private:
  static std::string header(const Column& c) { return c.header.empty() ? c.key : c.header; }
  static std::size_t stream_width(const Column& c) {
    return std::max<std::size_t>(header(c).size(), 5);
  }

  template <class Cell>
  void write_row(const std::vector<Column>& cols, const std::vector<std::size_t>& width,
                 Cell cell) {
    std::string line;
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (c) line += "  ";
      auto s = cell(c);
      line +=
          cols[c].left ? fmt::format("{:<{}}", s, width[c]) : fmt::format("{:>{}}", s, width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out_ << line << '\n';
  }

  void write_node(const Node& n, int depth) {
    const std::string indent(std::size_t(depth) * 4, ' ');
    const std::string& label = n.label.empty() ? n.key : n.label;
    if (n.children.empty()) {
      int pad = std::max(1, 40 - depth * 4);
      out_ << indent << fmt::format("{:<{}}: {}", label, pad, to_text(n.value)) << '\n';
      return;
    }
    out_ << indent << label;
    if (!n.value.missing()) out_ << ": " << to_text(n.value);
    out_ << '\n';
    for (const auto& c : n.children) write_node(c, depth + 1);
    if (depth == 0) out_ << '\n';
  }
};

// ---------------------------------------------------------------------------------------------
// CSV as nvidia-smi --format=csv writes it: "name [unit]" headers, ", " separators.
class CsvPrinter final : public Printer {
 public:
  CsvPrinter(std::ostream& out, Format f) : Printer(out), format_(f) {}

 protected:
  void do_print_table(const Table& t) override {
    if (format_.header) write_header(t.columns, t.rows.empty() ? nullptr : &t.rows.front());
    for (const auto& row : t.rows) write_values(row);
  }

  void do_print_tree(const Node& root) override {
    if (format_.header) out_ << "key, value\n";
    flatten(root, "");
  }

  void do_begin_stream(const std::vector<Column>& columns) override {
    if (format_.header) write_header(columns, nullptr);
    out_ << std::flush;
  }
  void do_stream_row(const std::vector<Column>&, const std::vector<Value>& row) override {
    write_values(row);
    out_ << std::flush;
  }

  // As print_table; the header waits for the first row (its units).
  void do_begin_table(std::vector<Column> columns) override {
    columns_ = std::move(columns);
    header_written_ = false;
  }
  void do_table_row(std::vector<Value> row) override {
    if (!header_written_ && format_.header) write_header(columns_, &row);
    header_written_ = true;
    write_values(row);
  }
  void do_end_table() override {
    if (!header_written_ && format_.header) write_header(columns_, nullptr);
    out_ << std::flush;
  }

 private:
  std::vector<Column> columns_;
  bool header_written_ = false;
  static std::string quote(const std::string& s) { return csv_field(s); }
  std::string cell(const Value& v) const {
    if (v.missing()) return "[N/A]";
    return quote(to_text(v, format_.units));
  }
  void write_header(const std::vector<Column>& cols, const std::vector<Value>* sample) {
    std::string line;
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (c) line += ", ";
      line += cols[c].key;
      std::string unit = !cols[c].unit.empty()          ? cols[c].unit
                         : sample && c < sample->size() ? (*sample)[c].unit
                                                        : "";
      if (format_.units && !unit.empty()) line += " [" + unit + "]";
    }
    out_ << line << '\n';
  }
  void write_values(const std::vector<Value>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c) line += ", ";
      line += cell(row[c]);
    }
    out_ << line << '\n';
  }
  void flatten(const Node& n, const std::string& prefix) {
    for (std::size_t i = 0; i < n.children.size(); ++i) {
      const auto& c = n.children[i];
      std::string key =
          prefix.empty() ? c.key : prefix + "." + (n.list ? std::to_string(i) : c.key);
      if (c.children.empty())
        out_ << quote(key) << ", " << cell(c.value) << '\n';
      else
        flatten(c, key);
    }
  }
  Format format_;
};

// ---------------------------------------------------------------------------------------------
// JSON: one document for tables and trees, one object per line (JSON Lines) for streams.
// Doubles carry the precision they are shown with in tables, so every format agrees.
nlohmann::ordered_json printed_json(const Value& v) {
  return std::visit(
      [&](const auto& x) -> nlohmann::ordered_json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, double>) {
          if (v.precision <= 0) return static_cast<long long>(std::llround(x));
          const double scale = std::pow(10.0, v.precision);
          return std::round(x * scale) / scale;
        } else {
          return x;
        }
      },
      v.content);
}

nlohmann::ordered_json printed_json(const Node& n) {
  if (n.list) {  // an array, also when empty (`"findings": []`, not null)
    auto arr = nlohmann::ordered_json::array();
    for (const auto& c : n.children) arr.push_back(printed_json(c));
    return arr;
  }
  if (n.children.empty()) return printed_json(n.value);
  nlohmann::ordered_json obj = nlohmann::ordered_json::object();
  for (const auto& c : n.children) obj[c.key] = printed_json(c);
  return obj;
}

class JsonPrinter final : public Printer {
 public:
  using Printer::Printer;

 protected:
  void do_print_table(const Table& t) override {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& row : t.rows) arr.push_back(row_object(t.columns, row));
    out_ << arr.dump(2) << '\n';
  }
  void do_print_tree(const Node& root) override { out_ << printed_json(root).dump(2) << '\n'; }

  // The same document as print_table (an array, indented by 2), written row by row.
  void do_begin_table(std::vector<Column> columns) override {
    columns_ = std::move(columns);
    rows_ = 0;
  }
  void do_table_row(std::vector<Value> row) override {
    auto text = row_object(columns_, row).dump(2);
    std::string indented = rows_ == 0 ? "[\n  " : ",\n  ";
    indented.reserve(text.size() * 2);
    for (char c : text) {
      indented += c;
      if (c == '\n') indented += "  ";
    }
    out_ << indented;
    ++rows_;
  }
  void do_end_table() override { out_ << (rows_ == 0 ? "[]\n" : "\n]\n") << std::flush; }
  void do_begin_stream(const std::vector<Column>&) override {}
  void do_stream_row(const std::vector<Column>& columns, const std::vector<Value>& row) override {
    out_ << row_object(columns, row).dump() << '\n' << std::flush;
  }

 private:
  std::vector<Column> columns_;
  std::size_t rows_ = 0;
  static nlohmann::ordered_json row_object(const std::vector<Column>& cols,
                                           const std::vector<Value>& row) {
    nlohmann::ordered_json obj = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < cols.size() && c < row.size(); ++c)
      obj[cols[c].key] = printed_json(row[c]);
    return obj;
  }
};

}  // namespace

std::unique_ptr<Printer> make_printer(const Format& format, std::ostream& out) {
  switch (format.kind) {
    case Format::Kind::csv:
      return std::make_unique<CsvPrinter>(out, format);
    case Format::Kind::json:
      return std::make_unique<JsonPrinter>(out);
    case Format::Kind::table:
      break;
  }
  return std::make_unique<TablePrinter>(out);
}

}  // namespace gpuclk::output
