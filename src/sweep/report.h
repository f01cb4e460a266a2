// A finished sweep as printers take it: the points as a table (table, CSV) and the whole
// report as a tree (JSON: {"points": [...], "best": {...}, ...}). Builds values, never text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "output/value.h"
#include "sweep/best.h"
#include "sweep/plan.h"
#include "sweep/result.h"

namespace gpuclk::sweep {

struct Report {
  Axis axis = Axis::sm_clock;
  std::string workload;  // Workload::describe()
  std::string data;      // Workload::data(): what the figures assume the work moves
  WorkUnit unit;
  double max_slowdown = 0.05;
  std::vector<PointResult> points;
  std::vector<BestPoint> best;  // over the node's curve (curve_of)
  // With two GPUs or more: each GPU's own best points (best_points_per_gpu), by GPU index.
  std::map<unsigned, std::vector<BestPoint>> best_per_gpu;
  unsigned repeat = 1;  // --repeat: runs (or measured windows) asked for per point
  std::optional<CurvePoint> baseline;
  std::vector<std::string> notes;
  bool interrupted = false;
  bool failed_fast = false;
  bool restored = false;
};

// Computes the best points of `report.points` into `report.best` and `report.baseline`, and with
// two GPUs or more each GPU's into `report.best_per_gpu`, adding a note per kind whose setting
// differs between GPUs ("GPU 2's max_throughput point is 1260 MHz, the others' 1440 MHz").
void find_best(Report& report);

// A lock is a ceiling: one note per GPU whose clock ran below the lock at some points, saying
// where it really ran ("GPU 1: a clock lock is a ceiling: at 1980, 1905 MHz the clock ran at
// 1380–1395 MHz (median), held lower by the power cap or a thermal limit").
void add_held_below_notes(Report& report);

// What --apply-best KIND writes: each GPU's setting from the node's best points, or with
// `per_gpu` from its own; GPUs with no such point are listed in `missing` and left alone.
struct BestChoice {
  std::map<unsigned, double> value_of;  // GPU index → setting
  std::string applied;                  // "GPU 0 1380 MHz, GPU 1 1455 MHz"
  std::string missing;                  // "2, 3"
  bool per_gpu = false;                 // each GPU's own curve was used
};
BestChoice choose_best(const Report& report, const std::string& kind, bool per_gpu,
                       const std::vector<unsigned>& gpus);

output::Table points_table(const Report& report);
output::Table best_table(const Report& report);
// One row per GPU and kind (empty without best_per_gpu).
output::Table best_per_gpu_table(const Report& report);
output::Node report_tree(const Report& report);

// "rate TFLOP/s", "energy per work J/TFLOP": the units a report's columns carry.
std::string energy_unit(const WorkUnit& unit);

}  // namespace gpuclk::sweep
