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

 protected:
  virtual void do_print_table(const Table& table) = 0;
  virtual void do_print_tree(const Node& root) = 0;
  virtual void do_begin_stream(const std::vector<Column>& columns) = 0;
  virtual void do_stream_row(const std::vector<Column>& columns, const std::vector<Value>& row) = 0;
  std::ostream& out_;
};

std::unique_ptr<Printer> make_printer(const Format& format, std::ostream& out);

}  // namespace gpuclk::output
