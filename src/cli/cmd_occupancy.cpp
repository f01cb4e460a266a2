// `gpuclk occupancy`: how many blocks of a kernel an SM holds, what limits it and what lifts
// it, for any architecture (--arch) or the GPUs of this host; --sweep over block sizes, --batch
// over a CSV of kernels, --binary/--ptxas-log for the kernels of a build, --list-archs for the
// limits table. The arithmetic lives in src/occupancy; this file parses and builds the output.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <utility>

#include "cli/commands.h"
#include "cli/context.h"
#include "occupancy/advice.h"
#include "occupancy/arch_limits.h"
#include "occupancy/batch.h"
#include "occupancy/calculator.h"
#include "occupancy/cuobjdump.h"
#include "occupancy/kernel_report.h"
#include "occupancy/sweep.h"
#include "util/error.h"
#include "util/file.h"
#include "util/glob.h"
#include "util/parse.h"

namespace gpuclk::cli {
namespace {

namespace out = output;
namespace occ = occupancy;

struct Options {
  std::string arch, device;
  int threads = 0, registers = 0, max_threads = 0, carveout = 0;
  std::string static_shared = "0", dynamic_shared = "0";
  bool sweep = false, list_archs = false;
  std::string batch, binary, ptxas_log, kernel_pattern;
  CLI::Option* device_option = nullptr;
  CLI::Option *threads_option = nullptr, *registers_option = nullptr, *max_threads_option = nullptr,
              *carveout_option = nullptr;
  CLI::Option* format_option = nullptr;  // the global --format, to tell an explicit choice
};

struct Target {
  const occ::ArchLimits* arch = nullptr;
  std::optional<unsigned> sm_count;  // known for a live GPU
  std::string gpu;                   // "GPU 0: NVIDIA H100 80GB HBM3"
};

std::int64_t bytes_option(const std::string& text, const char* name) {
  const auto bytes = occ::parse_bytes(text);
  if (!bytes) {
    throw bad_argument(
        fmt::format("{} {} is not a size: use bytes, or KiB with a K suffix "
                    "(48K)",
                    name, text));
  }
  return *bytes;
}

// --arch, else --device / -i, else (when `required`) every GPU of the host, which must share
// one architecture. Without a GPU or NVML the error says to use --arch.
Target resolve_target(Context& ctx, const Options& o, bool required) {
  Target target;
  if (!o.arch.empty()) {
    target.arch = occ::parse_architecture(o.arch);
    if (target.arch == nullptr) {
      throw bad_argument(
          fmt::format("unknown architecture {}: use one of {}", o.arch, occ::architecture_names()));
    }
    return target;
  }
  const bool device_given = o.device_option && o.device_option->count() > 0;
  if (!required && !device_given && !ctx.selection_given()) return target;
  std::vector<gpu::Device*> devices;
  try {
    devices = device_given ? ctx.selected(o.device, "--device") : ctx.selected();
  } catch (const Error& error) {
    throw Error(error.code(), error.what(),
                (error.hint().empty() ? "" : error.hint() + "; ") +
                    "or give --arch sm_XX to compute without a GPU");
  }
  if (devices.empty()) {
    throw Error(ExitCode::gpu_not_found, "no GPU found",
                "give --arch sm_XX to compute without one");
  }
  for (const gpu::Device* device : devices) {
    const auto& cc = device->identity().compute_capability;
    if (!cc) {
      throw Error(ExitCode::not_supported,
                  fmt::format("GPU {} does not report its compute capability", device->index()),
                  "give --arch sm_XX");
    }
    const occ::ArchLimits* arch = occ::find_architecture(cc->major, cc->minor);
    if (arch == nullptr) {
      throw Error(ExitCode::not_supported,
                  fmt::format("GPU {} has compute capability {}.{}, which the occupancy table "
                              "does not cover ({})",
                              device->index(), cc->major, cc->minor, occ::architecture_names()),
                  "give the nearest --arch sm_XX");
    }
    if (target.arch != nullptr && target.arch != arch) {
      throw bad_argument(
          fmt::format("the selected GPUs have different architectures ({} and "
                      "{}): pick one with --device N or give --arch",
                      target.arch->name, arch->name));
    }
    target.arch = arch;
    target.sm_count = device->identity().sm_count.optional();
  }
  std::string indexes;
  for (const gpu::Device* device : devices) {
    indexes += (indexes.empty() ? "" : ",") + std::to_string(device->index());
  }
  target.gpu =
      fmt::format("GPU{} {}: {}", devices.size() > 1 ? "s" : "", indexes, devices.front()->name());
  return target;
}

occ::KernelConfig kernel_from(const Options& o) {
  occ::KernelConfig kernel;
  kernel.threads_per_block = o.threads;
  kernel.registers_per_thread = o.registers;
  kernel.static_shared_bytes = bytes_option(o.static_shared, "--smem-static");
  kernel.dynamic_shared_bytes = bytes_option(o.dynamic_shared, "--smem-dynamic");
  if (o.max_threads_option->count()) kernel.launch_bounds_max_threads = o.max_threads;
  if (o.carveout_option->count()) kernel.carveout_percent = o.carveout;
  return kernel;
}

out::Value percent(double ratio, int precision = 1) {
  return out::number(ratio * 100, "%", precision);
}
out::Value bytes(std::int64_t value) { return out::integer(value, "B"); }
out::Value block_limit(const occ::BlockLimit& limit) {
  return limit ? out::integer(*limit) : out::na();  // N/A / null: the resource does not limit
}
std::string reasons(const occ::Occupancy& result) {
  std::string joined;
  for (occ::InvalidReason reason : result.invalid_reasons) {
    joined += (joined.empty() ? "" : "+") + std::string(occ::to_string(reason));
  }
  return joined;
}

// ---------------------------------------------------------------------------------------------
int run_single(Context& ctx, const Options& o) {
  const Target target = resolve_target(ctx, o, true);
  const occ::ArchLimits& arch = *target.arch;
  const occ::KernelConfig kernel = kernel_from(o);
  const occ::Occupancy result = occ::calculate(arch, kernel);
  const auto advice = occ::advise(arch, kernel, result);

  out::Node root;
  root.add("arch", "Architecture", out::text(std::string(arch.name)));
  root.add("family", "Family", out::text(fmt::format("{} ({})", arch.family, arch.examples)));
  if (!target.gpu.empty()) root.add("gpu", "GPU", out::text(target.gpu));
  auto& k = root.section("kernel", "Kernel");
  k.add("threads_per_block", "Threads per block", out::integer(kernel.threads_per_block));
  k.add("warps_per_block", "Warps per block", out::integer(result.warps_per_block));
  k.add("registers_per_thread", "Registers per thread", out::integer(kernel.registers_per_thread));
  k.add("registers_per_block", "Registers per block (allocated)",
        out::integer(result.allocated_registers_per_block));
  k.add("shared_static", "Shared memory, static", bytes(kernel.static_shared_bytes));
  k.add("shared_dynamic", "Shared memory, dynamic", bytes(kernel.dynamic_shared_bytes));
  k.add("shared_per_block", "Shared memory per block (allocated)",
        bytes(result.allocated_shared_bytes_per_block));
  k.add("shared_optin_needed", "Needs shared-memory opt-in", out::flag(result.needs_shared_optin));
  k.add("launch_bounds", "__launch_bounds__ max threads",
        kernel.launch_bounds_max_threads ? out::integer(*kernel.launch_bounds_max_threads)
                                         : out::na());
  auto& r = root.section("occupancy", "Occupancy");
  r.add("valid", "Launch possible", out::flag(result.valid()));
  if (!result.valid()) {
    r.add("invalid_reasons", "Invalid because", out::text(reasons(result)));
    r.add("invalid_detail", "Detail", out::text(result.invalid_detail));
  }
  // An invalid launch has no occupancy (not 0 %): N/A in tables, null in JSON.
  const auto if_valid = [&](out::Value value) {
    return result.valid() ? std::move(value) : out::na();
  };
  r.add("active_blocks", "Active blocks per SM", if_valid(out::integer(result.active_blocks)));
  r.add("active_warps", "Active warps per SM", if_valid(out::integer(result.active_warps)));
  r.add("max_warps", "Max warps per SM", out::integer(result.max_warps));
  r.add("occupancy", "Occupancy", if_valid(percent(result.occupancy())));
  r.add("limiter", "Limited by", if_valid(out::text(occ::join_limiters(result))));
  if (result.valid()) {
    auto& by = root.section("blocks_per_sm_by", "Blocks per SM allowed by");
    by.add("warps", "Warps", out::integer(result.blocks_by_warps));
    by.add("blocks", "Blocks", out::integer(result.blocks_by_blocks));
    by.add("registers", "Registers", block_limit(result.blocks_by_registers));
    by.add("shared_memory", "Shared memory", block_limit(result.blocks_by_shared_memory));
    by.add("shared_per_sm", "Shared memory per SM (carveout)", bytes(result.shared_bytes_per_sm));
  }
  const bool table = ctx.format().kind == out::Format::Kind::table;
  if (!table && !advice.empty()) {
    auto& list = root.section("advice", "Advice", true);
    for (const occ::Advice& item : advice) list.add("", "", out::text(item.text));
  }
  ctx.printer()->print_tree(root);
  if (table && !advice.empty()) {
    std::cout << "Advice\n";
    for (const occ::Advice& item : advice) std::cout << "    " << item.text << '\n';
  }
  // A configuration that cannot launch is bad input: a script that checks a kernel's launch
  // with this command must see it fail, not read "no" from a report that exits 0. The report
  // above still says why.
  if (!result.valid()) {
    throw bad_argument(fmt::format("the launch cannot run: {}", result.invalid_detail),
                       "change the limit named (threads per block, registers per thread, shared "
                       "memory per block); --sweep shows the block sizes that can launch");
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
int run_sweep(Context& ctx, const Options& o) {
  const Target target = resolve_target(ctx, o, true);
  const occ::Sweep all = occ::sweep(*target.arch, kernel_from(o));
  out::Table t;
  t.columns = {{"threads", "Threads"},         {"warps_per_block", "Warps/block"},
               {"active_blocks", "Blocks/SM"}, {"active_warps", "Warps/SM"},
               {"occupancy", "Occupancy %"},   {"limiter", "Limited by", true},
               {"best", "Best", true}};
  for (const occ::SweepPoint& point : all.points) {
    const occ::Occupancy& result = point.occupancy;
    t.rows.push_back(
        {out::integer(point.threads_per_block), out::integer(result.warps_per_block),
         out::integer(result.active_blocks), out::integer(result.active_warps),
         result.valid() ? percent(result.occupancy()) : out::na(),
         out::text(result.valid() ? occ::join_limiters(result) : "invalid: " + reasons(result)),
         out::flag(point.threads_per_block == all.best_threads_per_block)});
  }
  ctx.printer()->print_table(t);
  if (ctx.format().kind == out::Format::Kind::table) {
    if (const occ::SweepPoint* best = all.best()) {
      const int blocks = best->occupancy.active_blocks;
      std::cout << fmt::format(
          "\nBest block size on {}: {} threads, {} block{} per SM, {} "
          "(as cudaOccupancyMaxPotentialBlockSize picks it)\n",
          target.arch->name, best->threads_per_block, blocks, blocks == 1 ? "" : "s",
          occ::format_percent(best->occupancy.occupancy()));
      if (target.sm_count) {
        std::cout << fmt::format("Minimum grid for a full {}: {} blocks ({} SMs)\n", target.gpu,
                                 best->occupancy.active_blocks * *target.sm_count,
                                 *target.sm_count);
      }
    } else {
      std::cout
          << "\nNo block size can launch: registers or shared memory exceed a block's limit\n";
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Streams: a row is read, evaluated and printed before the next is read, so a batch of any
// length runs in bounded memory (CSV and JSON; the text table holds its rows for the widths).
int run_batch(Context& ctx, const Options& o) {
  if (o.batch == "-") ctx.effect("read stdin");
  file::LineReader lines(o.batch, "batch file", occ::kMaxBatchLine);
  occ::BatchParser parser;
  // Machine-readable CSV unless --format says otherwise: a tool reads plain numbers.
  out::Format format = ctx.format();
  if (o.format_option == nullptr || o.format_option->count() == 0) {
    format = {out::Format::Kind::csv, true, false};
  }
  const auto printer = out::make_printer(format, std::cout);
  bool begun = false;
  const auto begin = [&] {
    std::vector<out::Column> columns;
    for (const std::string& column : parser.columns()) columns.push_back({column, "", true});
    for (const char* column : {"active_blocks", "active_warps", "max_warps", "occupancy"}) {
      columns.push_back({column, ""});
    }
    for (const char* column : {"limiter", "valid", "reason"}) columns.push_back({column, "", true});
    printer->begin_table(std::move(columns));
    begun = true;
  };
  std::string line;
  while (lines.next(line)) {
    auto row = parser.feed(line, static_cast<int>(lines.line_number()));
    if (!row) continue;
    if (!begun) begin();
    std::vector<out::Value> values;
    // The row's own cells as given; a whole number is a number (JSON had "256" as a string),
    // the rest ("sm_90", "48K", an empty cell) text as written.
    for (const std::string& cell : row->cells) {
      const auto n = parse::try_integer(cell, std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::int64_t>::max());
      values.push_back(n ? out::integer(*n) : out::text(cell));
    }
    const occ::Occupancy& result = row->occupancy;
    values.push_back(out::integer(result.active_blocks));
    values.push_back(out::integer(result.active_warps));
    values.push_back(out::integer(result.max_warps));
    values.push_back(out::number(result.occupancy() * 100, "", 2));  // percent
    values.push_back(out::text(occ::join_limiters(result)));
    values.push_back(out::flag(result.valid()));
    values.push_back(out::text(result.invalid_detail));
    printer->table_row(std::move(values));
  }
  parser.finish();
  if (!begun) begin();
  printer->end_table();
  return 0;
}

// ---------------------------------------------------------------------------------------------
int run_kernels(Context& ctx, const Options& o) {
  const Target target = resolve_target(ctx, o, false);
  if (!o.binary.empty()) ctx.effect("run cuobjdump");
  const auto resources =
      o.binary.empty() ? occ::read_ptxas_log(o.ptxas_log) : occ::read_binary_kernels(o.binary);
  occ::KernelReportOptions options;
  options.target = target.arch;
  if (!o.kernel_pattern.empty()) {
    glob::check(o.kernel_pattern, "--kernel");
    options.name_filter = o.kernel_pattern;
  }
  if (o.threads_option->count()) options.threads_per_block = o.threads;
  if (o.max_threads_option->count()) options.launch_bounds_max_threads = o.max_threads;
  options.dynamic_shared_bytes = bytes_option(o.dynamic_shared, "--smem-dynamic");
  if (o.carveout_option->count()) options.carveout_percent = o.carveout;
  const occ::KernelReports reports = occ::report_kernels(resources, options);

  out::Table t;
  t.columns = {{"kernel", "Kernel", true},
               {"sass", "SASS", true},
               {"arch", "Runs on", true},
               {"registers", "Regs"},
               {"shared_static", "Shared"},
               {"stack", "Stack"},
               {"local", "Local"},
               {"constant0", "Const[0]"},
               {"threads", "Threads"},
               {"best_block_size", "Best size", true},
               {"active_blocks", "Blocks/SM"},
               {"occupancy", "Occupancy %"},
               {"limiter", "Limited by", true}};
  for (const occ::KernelReport& k : reports.kernels) {
    const occ::Occupancy& result = k.occupancy;
    t.rows.push_back(
        {out::text(k.display_name), out::text(std::string(k.sass_arch->name)),
         out::text(std::string(k.run_arch->name)), out::integer(k.resources.registers),
         bytes(k.resources.static_shared_bytes), bytes(k.resources.stack_bytes),
         bytes(k.resources.local_bytes),
         k.resources.constant0_bytes < 0 ? out::na() : bytes(k.resources.constant0_bytes),
         out::integer(k.kernel.threads_per_block), out::flag(k.best_block_size),
         out::integer(result.active_blocks),
         result.valid() ? percent(result.occupancy()) : out::na(),
         out::text(result.valid() ? occ::join_limiters(result) : "invalid: " + reasons(result))});
  }
  ctx.printer()->print_table(t);
  for (const std::string& note : reports.notes) std::cerr << "gpuclk: note: " << note << '\n';
  if (!o.threads_option->count() && !o.max_threads_option->count()) {
    std::cerr << "gpuclk: note: best block sizes assume no __launch_bounds__ (the resource "
                 "report does not record it); give --max-threads N for a bounded kernel\n";
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
int run_list_archs(Context& ctx) {
  out::Table t;
  t.columns = {{"arch", "Arch", true},
               {"family", "Family", true},
               {"max_warps", "Warps/SM"},
               {"max_blocks", "Blocks/SM"},
               {"registers_per_sm", "Regs/SM"},
               {"registers_per_block", "Regs/block"},
               {"shared_per_sm", "Shared/SM"},
               {"shared_per_block_optin", "Shared/block opt-in"},
               {"reserved_shared", "Reserved/block"},
               {"shared_unit", "Shared unit"},
               {"carveouts_kib", "Carveouts (KiB)", true},
               {"examples", "GPUs", true}};
  for (const occ::ArchLimits& arch : occ::all_architectures()) {
    std::string carveouts;
    for (int kib : arch.carveout_kib)
      carveouts += (carveouts.empty() ? "" : " ") + std::to_string(kib);
    t.rows.push_back(
        {out::text(std::string(arch.name)), out::text(std::string(arch.family)),
         out::integer(arch.max_warps_per_sm), out::integer(arch.max_blocks_per_sm),
         out::integer(arch.registers_per_sm), out::integer(arch.max_registers_per_block),
         bytes(arch.shared_memory_per_sm), bytes(arch.shared_memory_per_block_optin),
         bytes(arch.reserved_shared_memory_per_block), bytes(arch.shared_memory_allocation_unit),
         carveouts.empty() ? out::text("fixed") : out::text(carveouts),
         out::text(std::string(arch.examples))});
  }
  ctx.printer()->print_table(t);
  return 0;
}

int run_occupancy(Context& ctx, const Options& o) {
  const int modes = int(!o.batch.empty()) + int(!o.binary.empty()) + int(!o.ptxas_log.empty()) +
                    int(o.list_archs);
  if (modes > 1) {
    throw bad_argument(
        "--batch, --binary, --ptxas-log and --list-archs are separate modes: give one");
  }
  if (o.list_archs) return run_list_archs(ctx);
  if (!o.batch.empty()) return run_batch(ctx, o);
  if (!o.binary.empty() || !o.ptxas_log.empty()) return run_kernels(ctx, o);
  if (!o.registers_option->count()) {
    throw bad_argument(
        "occupancy needs --regs N (registers per thread, as ptxas -v reports), or "
        "one of --batch, --binary, --ptxas-log, --list-archs");
  }
  if (o.sweep) return run_sweep(ctx, o);
  if (!o.threads_option->count()) {
    throw bad_argument(
        "occupancy needs --threads N (threads per block), or --sweep to try them all");
  }
  return run_single(ctx, o);
}

}  // namespace

void add_occupancy_command(CLI::App& app, Context& ctx) {
  auto options = std::make_shared<Options>();
  Options& o = *options;
  auto* sub =
      app.add_subcommand("occupancy",
                         "CUDA occupancy: blocks and warps per SM, the limiter and what lifts it; "
                         "--sweep, --batch FILE.csv, --binary FILE, --list-archs");
  sub->add_option("--arch", o.arch,
                  "architecture: sm_50 … sm_121 (default: the GPUs of this host)");
  o.device_option = sub->add_option(
      "--device", o.device, "use this GPU's architecture (index, UUID or PCI bus id; as -i)");
  o.threads_option = sub->add_option("-t,--threads", o.threads, "threads per block");
  o.registers_option =
      sub->add_option("-r,--regs", o.registers, "registers per thread (ptxas -v, cuobjdump)");
  sub->add_option("--smem-static", o.static_shared,
                  "static shared memory per block: bytes or 48K (default 0)");
  sub->add_option("--smem-dynamic", o.dynamic_shared,
                  "dynamic shared memory per block: bytes or 48K (default 0)");
  o.max_threads_option = sub->add_option("--max-threads", o.max_threads,
                                         "__launch_bounds__ maximum threads per block");
  o.carveout_option =
      sub->add_option("--carveout", o.carveout, "preferred shared-memory carveout, percent 0..100");
  sub->add_flag("--sweep", o.sweep, "occupancy for every block size, and the best one");
  sub->add_option(
      "--batch", o.batch,
      "CSV of kernels (arch,threads,regs,smem_static,smem_dynamic[,max_threads]; - for stdin)");
  sub->add_option("--binary", o.binary,
                  "executable, shared library, cubin or fatbin: its kernels (needs cuobjdump)");
  sub->add_option("--ptxas-log", o.ptxas_log,
                  "log of nvcc -Xptxas -v: its kernels (no cuobjdump needed)");
  sub->add_option("--kernel", o.kernel_pattern,
                  "with --binary/--ptxas-log: kernels whose name matches this pattern (*, ?, "
                  "[a-z]; a plain word: names that contain it)");
  sub->add_flag("--list-archs", o.list_archs, "print the limits table of every architecture");
  o.format_option = app.get_option_no_throw("--format");
  sub->callback(
      [&ctx, options] { ctx.run = [&ctx, options] { return run_occupancy(ctx, *options); }; });
}

}  // namespace gpuclk::cli
