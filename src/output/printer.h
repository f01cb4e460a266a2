// Printers: one per output format, all fed the same Table / Node / stream rows.
// Public non-virtual print_*() call the protected virtual do_print_*() (as nvbench's printers).
#pragma once

#include <iosfwd>
#include <memory>

#include "output/format.h"
#include "output/value.h"

namespace gpuclk::output {

class Printer {
 public:
  explicit Printer(std::ostream& out) : out_(out) {}
  virtual ~Printer() = default;

  void print_table(const Table& table) { do_print_table(table); }
  void print_tree(const Node& root) { do_print_tree(root); }
  // Streams (dmon): the header once, then one row at a time, flushed per row.
  void begin_stream(const std::vector<Column>& columns) { do_begin_stream(columns); }
  void stream_row(const std::vector<Column>& columns, const std::vector<Value>& row) {
    do_stream_row(columns, row);
  }
  // A table too long to hold (occupancy --batch with a million rows): the same output as
  // print_table, fed one row at a time. CSV and JSON write each row as it comes, so memory stays
  // bounded; the text table needs every row for its column widths and holds them until
  // end_table.
  void begin_table(std::vector<Column> columns) { do_begin_table(std::move(columns)); }
  void table_row(std::vector<Value> row) { do_table_row(std::move(row)); }
  void end_table() { do_end_table(); }

 protected:
  virtual void do_print_table(const Table& table) = 0;
  virtual void do_print_tree(const Node& root) = 0;
  virtual void do_begin_stream(const std::vector<Column>& columns) = 0;
  virtual void do_stream_row(const std::vector<Column>& columns, const std::vector<Value>& row) = 0;
  // Default: collect, then print_table.
  virtual void do_begin_table(std::vector<Column> columns) {
    pending_ = Table{};
    pending_.columns = std::move(columns);
  }
  virtual void do_table_row(std::vector<Value> row) { pending_.rows.push_back(std::move(row)); }
  virtual void do_end_table() { do_print_table(pending_); }
  std::ostream& out_;
  Table pending_;
};

std::unique_ptr<Printer> make_printer(const Format& format, std::ostream& out);

}  // namespace gpuclk::output
