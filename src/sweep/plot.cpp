#include "sweep/plot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "host/child_process.h"
#include "util/error.h"

namespace gpuclk::sweep {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path);
  out << content;
  out.close();
  if (!out) throw Error(ExitCode::other, fmt::format("cannot write {}", path.string()));
}

// gnuplot string literal: single quotes, a quote doubled.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// The four panels, for one terminal.
std::string panels(const Report& r, const std::vector<unsigned>& gpus, bool any_best) {
  const std::string x_label = r.axis == Axis::sm_clock ? "SM clock lock (MHz)" : "power limit (W)";
  struct Panel {
    int column;
    std::string label;
  };
  const std::vector<Panel> list = {
      {3, fmt::format("throughput ({})", r.unit.rate_unit())},
      {4, "power (W)"},
      {5, fmt::format("energy per unit of work ({})", energy_unit(r.unit))},
      {6, fmt::format("energy x delay (J s / {}²)", r.unit.name)}};
  std::string out = fmt::format(
      "set multiplot layout 2,2 title {}\n",
      quoted(fmt::format("gpuclk sweep: {} (best points marked{}; a best point is the lowest "
                         "setting within {:g} % of the least value)",
                         r.workload, r.best_per_gpu.empty() ? "" : ", each GPU's on its own curve",
                         kTieTolerance * 100)));
  for (const auto& p : list) {
    out += fmt::format("set xlabel {}\nset ylabel {}\n", quoted(x_label), quoted(p.label));
    std::string plot = "plot ";
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      plot += fmt::format(
          "'sweep.dat' index {} using 2:{} with linespoints lw 2 pt 7 ps 0.8 title "
          "'GPU {}', ",
          k, p.column, gpus[k]);
    }
    if (any_best) {
      // Four label rows (best.dat columns 7-10): near above, near below, far above, far below;
      // neighbouring best points alternate between near and far so their labels stay apart.
      plot += fmt::format(
          "'best.dat' using 1:{0} with points pt 6 ps 2.5 lw 2 lc rgb 'red' title 'best points', "
          "'best.dat' using 1:{0}:7 with labels offset 0,1.2 font ',8' notitle, "
          "'best.dat' using 1:{0}:8 with labels offset 0,-1.2 font ',8' notitle, "
          "'best.dat' using 1:{0}:9 with labels offset 0,2.4 font ',8' notitle, "
          "'best.dat' using 1:{0}:10 with labels offset 0,-2.4 font ',8' notitle",
          p.column - 1);
    } else {
      plot.resize(plot.size() - 2);
    }
    out += plot + "\n";
  }
  return out + "unset multiplot\n";
}

// sweep.dat: one data block per GPU (gnuplot `index`), sorted by setting; failed points left
// out. `gpus`: the GPUs with a block, in order.
std::string sweep_data(const Report& r, std::vector<unsigned>& gpus) {
  std::map<unsigned, std::map<double, const PointResult*>> by_gpu;
  for (const auto& p : r.points) {
    if (!p.baseline && p.ok()) by_gpu[p.gpu][p.requested] = &p;
  }
  std::string data =
      fmt::format("# gpu {} rate_{} power_w energy_per_work edp\n", key_of(r.axis), r.unit.name);
  for (const auto& [gpu, points] : by_gpu) {
    gpus.push_back(gpu);
    data += fmt::format("# GPU {}\n", gpu);
    for (const auto& [requested, p] : points) {
      data +=
          fmt::format("{} {} {:.9g} {:.6g} {:.9g} {:.9g}\n", gpu, requested, *p->rate,
                      p->power_w.value_or(0), p->energy_per_work.value_or(0), p->edp().value_or(0));
    }
    data += "\n\n";
  }
  return data;
}

// One GPU's (or the sweep's) rows of best.dat: one per setting, labelled with the kinds not
// labelled yet at that setting (`labelled`), each label after `prefix`. `single`: the sweep's
// own best points (one GPU's labels go round all four label columns).
std::string best_rows(const std::vector<BestPoint>& list, const std::string& prefix, bool single,
                      std::set<std::pair<double, std::string>>& labelled) {
  std::map<double, std::vector<std::string>> kinds_at;
  std::map<double, const BestPoint*> best_at;
  for (const auto& b : list) {
    kinds_at[b.point.requested].push_back(b.kind);
    best_at[b.point.requested] = &b;
  }
  std::string out;
  int slot = 0;  // alternates near/far between neighbouring labelled points
  for (const auto& [requested, kinds] : kinds_at) {
    const CurvePoint& c = best_at[requested]->point;
    std::string label;
    for (const auto& k : kinds) {
      if (!labelled.insert({requested, k}).second) continue;
      label += label.empty() ? prefix : "+";
      label += k;
      // The tie rule named this setting: say where the least value itself was.
      const double setting = requested;  // a structured binding: clang cannot capture it
      const auto it = std::find_if(list.begin(), list.end(), [&](const BestPoint& b) {
        return b.kind == k && b.point.requested == setting;
      });
      if (it != list.end() && it->least_at) label += fmt::format(" (ties {:g})", *it->least_at);
    }
    // Columns 7-10: near above, near below, far above, far below. One GPU's labels go round
    // all four, so neighbouring points' labels are on opposite sides of the curve and at
    // different heights (on a flat stretch, as EDP's near its least, two rows above overlapped);
    // with several GPUs the first GPU's go above and the others' below, near and far.
    static constexpr int kRound[4] = {0, 1, 2, 3};
    std::string cells[4];
    if (!label.empty()) {
      cells[single ? kRound[slot % 4] : (prefix.empty() ? 0 : 1) + (slot % 2) * 2] = label;
      ++slot;
    }
    out += fmt::format("{} {:.9g} {:.6g} {:.9g} {:.9g} 0 \"{}\" \"{}\" \"{}\" \"{}\"\n", requested,
                       c.rate, c.power_w, c.energy_per_work, c.edp(), cells[0], cells[1], cells[2],
                       cells[3]);
  }
  return out;
}

// best.dat: the best points, one row per setting, labelled with its kinds (one setting can be
// best for several). With several GPUs each GPU's own best points sit on its own curve (one block
// per GPU): the first GPU's labels go above the points (column 7); a later GPU labels below them
// (column 8, "GPU 2: …") only the kinds no earlier GPU labelled at the same setting, so
// identical GPUs are labelled once and the one that differs gets labels of its own.
std::string best_data(const Report& r) {
  std::set<std::pair<double, std::string>> labelled;  // (setting, kind)
  const bool single = r.best_per_gpu.empty();
  std::string best =
      "# requested rate power_w energy_per_work edp 0 label_above label_below label_above_far "
      "label_below_far\n";
  if (r.best_per_gpu.empty()) {
    best += best_rows(r.best, "", single, labelled);
  } else {
    bool first = true;
    for (const auto& [gpu, list] : r.best_per_gpu) {
      best += fmt::format("# GPU {}\n", gpu);
      best += best_rows(list, first ? "" : fmt::format("GPU {}: ", gpu), single, labelled);
      best += "\n\n";
      first = false;
    }
  }
  return best;
}

// sweep.gp: the PNG, then the SVG. best.dat columns: 1 requested, 2 rate, 3 power, 4
// energy/work, 5 edp, 6 unused, 7-10 labels (above, below, far above, far below the point);
// panels plot column p.column - 1 (rate is sweep.dat's 3rd column, best.dat's 2nd).
std::string gnuplot_script(const Report& r, const std::vector<unsigned>& gpus) {
  std::string script =
      "# gpuclk sweep plots; run: gnuplot sweep.gp (in this directory)\n"
      "set grid\nset key top left font ',9'\nset datafile commentschars '#'\n"
      // Room around the curves for the labels two rows above the highest point, below the
      // lowest and right of the last (they were cut by the title and the right edge).
      "set offsets graph 0.02, graph 0.1, graph 0.18, graph 0.12\n";
  script += fmt::format("set terminal pngcairo size {},{} noenhanced font 'sans,10'\n", kPlotWidth,
                        kPlotHeight);
  const bool any_best = !r.best.empty() || !r.best_per_gpu.empty();
  script += "set output 'sweep.png'\n" + panels(r, gpus, any_best);
  script += fmt::format("set terminal svg size {},{} noenhanced font 'sans,10'\n", kPlotWidth,
                        kPlotHeight);
  script += "set output 'sweep.svg'\n" + panels(r, gpus, any_best);
  script += "set output\n";
  return script;
}

// gnuplot on the script in `dir`, its output in gnuplot.log there.
void run_gnuplot(const fs::path& dir) {
  const fs::path log = dir / "gnuplot.log";
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  host::ChildExit exit;
  try {
    // The script names its files relative to the directory it lives in. gnuplot's stderr goes
    // to the log too: its warnings (a one-point sweep's "empty y range") are no news to the
    // user, and its errors are where the failure message points.
    host::ChildProcess gnuplot({"sh", "-c", "exec gnuplot -e \"$1\" sweep.gp 2>&1", "sh",
                                "cd " + quoted(fs::absolute(dir).string())},
                               fd);
    exit = gnuplot.wait({}, std::chrono::milliseconds(100));
  } catch (const Error& e) {
    if (fd >= 0) ::close(fd);
    throw Error(ExitCode::not_supported,
                fmt::format("cannot run gnuplot ({}); the data and script are in {}", e.what(),
                            dir.string()),
                "install gnuplot (Debian: apt-get install gnuplot-nox)");
  }
  if (fd >= 0) ::close(fd);
  if (exit.exit_code != 0) {
    throw Error(ExitCode::other,
                fmt::format("gnuplot failed (exit {}); see {}", exit.exit_code, log.string()));
  }
}

}  // namespace

std::vector<fs::path> write_plots(const Report& r, const fs::path& dir) {
  std::vector<unsigned> gpus;
  const auto data = sweep_data(r, gpus);
  const auto best = best_data(r);
  const auto script = gnuplot_script(r, gpus);
  fs::create_directories(dir);
  write_file(dir / "sweep.dat", data);
  write_file(dir / "best.dat", best);
  write_file(dir / "sweep.gp", script);
  if (gpus.empty()) {
    throw Error(ExitCode::other,
                "no point succeeded: nothing to plot (the data files are in " + dir.string() + ")");
  }
  run_gnuplot(dir);
  return {dir / "sweep.png", dir / "sweep.svg", dir / "sweep.dat", dir / "best.dat",
          dir / "sweep.gp"};
}

}  // namespace gpuclk::sweep
