// What the simulator's physics costs: simulated seconds of a scenario's node stepped in the
// 10 ms ticks the model keeps, the way a process reading it every `--every` ms does (advance_to
// at each read), in this thread's CPU time. With --paced the reads come in real time (a sleep
// between them, as the service's sampler does: the model's code and data are cold at each
// read); without, back to back. The service on a simulated node runs this model in its own
// process, so its CPU includes this (docs/results/serve_cost_sim.md).
//   gpuclk_sim_step_cost [--scenario NAME] [--seconds S] [--every MS] [--paced]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "node_model.h"
#include "scenario.h"

namespace {

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuclk::sim;
  std::string name = "8xh100";
  double seconds = 60, every_ms = 10;
  bool paced = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--paced") {
      paced = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "gpuclk_sim_step_cost: %s needs a value\n", argv[i]);
      return 2;
    }
    if (flag == "--scenario") {
      name = argv[i + 1];
    } else if (flag == "--seconds") {
      seconds = std::atof(argv[i + 1]);
    } else if (flag == "--every") {
      every_ms = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr,
                   "gpuclk_sim_step_cost: unknown option %s (--scenario, --seconds, --every, "
                   "--paced)\n",
                   argv[i]);
      return 2;
    }
  }
  if (!(seconds > 0) || !(every_ms > 0)) {
    std::fprintf(stderr, "gpuclk_sim_step_cost: --seconds and --every must be > 0\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = GPUCLK_SIM_SCENARIOS;
    auto scenario = std::make_shared<const Scenario>(load_scenario(dir / (name + ".toml"), {dir}));
    NodeModel model(scenario);
    model.advance_to(5);  // past the start-up, into the scenario's steady loop
    const double start = model.now_s();
    const auto step = std::chrono::duration<double, std::milli>(every_ms);
    double cpu_s = 0;
    for (double t = start + every_ms / 1000; t <= start + seconds; t += every_ms / 1000) {
      const double c0 = thread_cpu_s();
      model.advance_to(t);
      cpu_s += thread_cpu_s() - c0;
      if (paced) std::this_thread::sleep_for(step);
    }
    const double gpu_seconds = seconds * static_cast<double>(model.gpu_count());
    std::printf(
        "%s: %zu GPUs, %.0f simulated s read every %.0f ms: %.1f ms of CPU, %.2f us per GPU-tick, "
        "%.3f %% of a core at 1x speed%s\n",
        name.c_str(), model.gpu_count(), seconds, every_ms, cpu_s * 1e3,
        cpu_s * 1e6 / (gpu_seconds / kTickSeconds), 100 * cpu_s / seconds, paced ? " (paced)" : "");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuclk_sim_step_cost: %s\n", e.what());
    return 1;
  }
  return 0;
}
