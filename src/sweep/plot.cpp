#include "sweep/plot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>

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

// Each kind of best point: its marker (gnuplot point type and colour), the same in every panel
// and for every GPU, and named in the key below each panel with its setting. A marker names no
// text inside the plot, so nothing can overlap a curve, another label, the title or the border
// (in-plot labels did all four where the curve was flat and near the edges).
struct KindStyle {
  const char* kind;
  int point_type;
  const char* colour;
  double size;  // nested when one setting is best for several kinds
};
constexpr KindStyle kKinds[] = {{"max_throughput", 8, "#c00000", 2.6},
                                {"min_energy", 6, "#008000", 2.9},
                                {"min_edp", 4, "#0050c0", 2.2},
                                {"min_energy_within_slowdown", 12, "#d07000", 3.2},
                                {"knee", 10, "#000000", 1.8}};

// One best point of one GPU (gpu is nullopt for the node's, with one GPU).
struct Marked {
  std::optional<unsigned> gpu;
  const BestPoint* best;
};

// The key's text for a kind: its setting, the GPUs at another one, where the tie rule moved it.
std::string key_text(const Report& r, const char* kind, const std::vector<Marked>& marked) {
  const char* unit = r.axis == Axis::sm_clock ? "MHz" : "W";
  std::map<double, std::vector<unsigned>> gpus_at;
  const BestPoint* first = nullptr;
  for (const auto& m : marked) {
    if (!first) first = m.best;
    gpus_at[m.best->point.requested].push_back(m.gpu.value_or(0));
  }
  // The setting most GPUs share (the lowest among equals) leads; the others name their GPUs.
  double lead = gpus_at.begin()->first;
  for (const auto& [setting, gpus] : gpus_at) {
    if (gpus.size() > gpus_at[lead].size()) lead = setting;
  }
  std::string text = fmt::format("{}: {:g} {}", kind, lead, unit);
  std::string others;
  for (const auto& [setting, gpus] : gpus_at) {
    if (setting == lead) continue;
    for (unsigned g : gpus) {
      others += fmt::format("{}GPU {}: {:g}", others.empty() ? "" : ", ", g, setting);
    }
  }
  if (!others.empty()) text += " (" + others + ")";
  if (marked.size() == 1 && first->least_at) {
    text += fmt::format(" (least at {:g})", *first->least_at);
  }
  return text;
}

// The best points by kind, in kKinds' order; with several GPUs each GPU's own.
std::vector<std::pair<const KindStyle*, std::vector<Marked>>> marked_by_kind(const Report& r) {
  std::vector<std::pair<const KindStyle*, std::vector<Marked>>> out;
  for (const auto& style : kKinds) {
    std::vector<Marked> marked;
    if (r.best_per_gpu.empty()) {
      for (const auto& b : r.best) {
        if (b.kind == style.kind) marked.push_back({std::nullopt, &b});
      }
    } else {
      for (const auto& [gpu, list] : r.best_per_gpu) {
        for (const auto& b : list) {
          if (b.kind == style.kind) marked.push_back({gpu, &b});
        }
      }
    }
    if (!marked.empty()) out.emplace_back(&style, std::move(marked));
  }
  return out;
}

// The four panels, for one terminal. best.dat has one block (gnuplot `index`) per kind.
std::string panels(const Report& r, const std::vector<unsigned>& gpus,
                   const std::vector<std::string>& key_texts) {
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
  const auto styles = marked_by_kind(r);
  for (const auto& p : list) {
    out += fmt::format("set xlabel {}\nset ylabel {}\n", quoted(x_label), quoted(p.label));
    std::string plot = "plot ";
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      plot += fmt::format(
          "'sweep.dat' index {} using 2:{} with linespoints lw 2 pt 7 ps 0.8 title 'GPU {}', ", k,
          p.column, gpus[k]);
    }
    for (std::size_t k = 0; k < styles.size(); ++k) {
      const KindStyle& s = *styles[k].first;
      // best.dat's columns: 1 GPU, 2 setting, 3 rate, 4 power, 5 energy/work, 6 EDP.
      plot += fmt::format(
          "'best.dat' index {0} using 2:{1} with points pt {2} ps {3} lw 2 lc rgb '{4}' notitle, "
          "keyentry with points pt {2} ps 1.5 lw 2 lc rgb '{4}' title {5}, ",
          k, p.column, s.point_type, s.size, s.colour, quoted(key_texts[k]));
    }
    plot.resize(plot.size() - 2);
    out += plot + "\n";
  }
  return out + "unset multiplot\n";
}

}  // namespace

std::vector<fs::path> write_plots(const Report& r, const fs::path& dir) {
  // One data block per GPU (gnuplot `index`), sorted by setting; failed points left out.
  std::map<unsigned, std::map<double, const PointResult*>> by_gpu;
  for (const auto& p : r.points) {
    if (!p.baseline && p.ok()) by_gpu[p.gpu][p.requested] = &p;
  }
  std::string data =
      fmt::format("# gpu {} rate_{} power_w energy_per_work edp\n", key_of(r.axis), r.unit.name);
  std::vector<unsigned> gpus;
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
  // Best points: one block per kind (kKinds' order, kinds with no point left out), one row per
  // GPU (with one GPU, the node's), on that GPU's own curve; the key names each kind's setting.
  std::string best = "# gpu requested rate power_w energy_per_work edp\n";
  std::vector<std::string> key_texts;
  for (const auto& [style, marked] : marked_by_kind(r)) {
    best += fmt::format("# {}\n", style->kind);
    for (const auto& m : marked) {
      const CurvePoint& c = m.best->point;
      best += fmt::format("{} {:.9g} {:.9g} {:.6g} {:.9g} {:.9g}\n",
                          m.gpu ? fmt::format("{}", *m.gpu) : std::string("node"), c.requested,
                          c.rate, c.power_w, c.energy_per_work, c.edp());
    }
    best += "\n\n";
    key_texts.push_back(key_text(r, style->kind, marked));
  }
  // The key below each panel, outside the plot, one entry a row (gnuplot overestimates the
  // width of cairo's text, so columns it lays out run past the right edge): it names the curves
  // and each best point's marker and setting, so no text sits on the curves. A little room
  // around the curves keeps the markers at their ends inside the border.
  std::string script = fmt::format(
      "# gpuclk sweep plots; run: gnuplot sweep.gp (in this directory)\n"
      "set grid\nset datafile commentschars '#'\n"
      "set key outside below center vertical Left reverse maxrows {} font ',9' samplen 1.5 "
      "spacing 1.1\n"
      "set offsets graph 0.03, graph 0.03, graph 0.06, graph 0.06\n",
      gpus.size() + key_texts.size());
  script += fmt::format("set terminal pngcairo size {},{} noenhanced font 'sans,10'\n", kPlotWidth,
                        kPlotHeight);
  script += "set output 'sweep.png'\n" + panels(r, gpus, key_texts);
  script += fmt::format("set terminal svg size {},{} noenhanced font 'sans,10'\n", kPlotWidth,
                        kPlotHeight);
  script += "set output 'sweep.svg'\n" + panels(r, gpus, key_texts);
  script += "set output\n";

  fs::create_directories(dir);
  write_file(dir / "sweep.dat", data);
  write_file(dir / "best.dat", best);
  write_file(dir / "sweep.gp", script);
  if (gpus.empty()) {
    throw Error(ExitCode::other,
                "no point succeeded: nothing to plot (the data files are in " + dir.string() + ")");
  }

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
  return {dir / "sweep.png", dir / "sweep.svg", dir / "sweep.dat", dir / "best.dat",
          dir / "sweep.gp"};
}

}  // namespace gpuclk::sweep
