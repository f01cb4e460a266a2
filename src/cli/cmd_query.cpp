// `gpuclk query --fields F1,F2 --format csv|json|table`: for scripts, like nvidia-smi --query-gpu.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "serve/client.h"
#include "util/error.h"
#include "views/query_fields.h"

namespace gpuclk::cli {
namespace {

struct QueryOptions {
  std::string fields;
  bool help_fields = false;
};

int run_query(Context& ctx, const QueryOptions& q) {
  if (q.help_fields) {
    for (const auto& f : views::query_fields()) {
      std::cout << fmt::format(
          "{:<42} {}{}\n", f.name + (f.unit.empty() ? "" : " [" + f.unit + "]"), f.description,
          f.aliases.empty() ? "" : fmt::format(" (also: {})", fmt::join(f.aliases, ", ")));
    }
    return 0;
  }
  if (q.fields.empty()) {
    throw bad_argument("query needs --fields",
                       "e.g. --fields clocks.sm,power.draw; --help-fields lists them");
  }
  auto fields = views::parse_query_fields(q.fields);
  output::Table table;
  for (const auto* f : fields)
    table.columns.push_back({f->name, f->name, f->unit.empty(), f->unit});
  if (auto* service = ctx.service()) {
    const auto view = service->query_view();
    for (auto pos : ctx.select_from(view.gpus)) {
      std::vector<output::Value> row;
      row.reserve(fields.size());
      for (const auto* f : fields) row.push_back(view.value(pos, f->name));
      table.rows.push_back(std::move(row));
    }
  } else {
    auto& set = ctx.devices();
    for (const auto* d : ctx.selected()) {
      std::vector<output::Value> row;
      row.reserve(fields.size());
      for (const auto* f : fields) row.push_back(f->read(*d, set));
      table.rows.push_back(std::move(row));
    }
  }
  ctx.printer()->print_table(table);
  return 0;
}

}  // namespace

void add_query_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<QueryOptions>();
  auto* sub = app.add_subcommand(
      "query", "Selected fields per GPU, for scripts (as nvidia-smi --query-gpu)");
  sub->add_option("--fields,--query-gpu", opts->fields,
                  "comma-separated field names (see --help-fields)");
  sub->add_flag("--help-fields", opts->help_fields, "list every field with its unit and meaning");
  sub->callback([&ctx, opts] { ctx.run = [&ctx, opts] { return run_query(ctx, *opts); }; });
}

}  // namespace gpuclk::cli
