#include "sweep/workload.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "host/child_process.h"
#include "sweep/repeat.h"
#include "util/error.h"

namespace gpuclk::sweep {
namespace {

using namespace std::chrono_literals;

// Waits `d` of Clock time in short steps; false when `stop` asked to end early.
bool wait_for(const Clock& clock, Clock::Duration d, const std::function<bool()>& stop) {
  const auto deadline = clock.now() + d;
  while (clock.now() < deadline) {
    if (stop && stop()) return false;
    clock.sleep_until(std::min(deadline, clock.now() + Clock::Duration(200ms)));
  }
  return !(stop && stop());
}

double seconds_of(Clock::Duration d) { return std::chrono::duration<double>(d).count(); }

class SimulatedWorkload final : public Workload {
 public:
  SimulatedWorkload(gpu::SimJobs jobs, std::string name, const Clock& clock, Timing timing)
      : jobs_(jobs), name_(std::move(name)), clock_(clock), timing_(timing) {}

  WorkUnit unit() const override { return {name_.rfind("mem-", 0) == 0 ? "GB" : "TFLOP"}; }
  std::string describe() const override { return name_ + " (simulated job)"; }
  // A job the simulator starts has no `input`: its phases move random data.
  std::string data() const override { return "random"; }

  std::vector<WorkDone> run(const std::vector<gpu::Device*>& gpus, const Window& window,
                            const std::function<bool()>& stop) override {
    const double scale = unit().name == "GB" ? 1e9 : 1e12;
    const unsigned windows = std::max(1U, timing_.windows);
    // The job ends by itself a while after the point, so a sweep killed with -9 leaves no GPU
    // busy for ever: 30 s of wall time after its windows. (30 simulated seconds were 0.75 s of
    // wall time at GPUCLK_SIM_SPEED=40: a loaded machine's stall ended jobs mid-window.)
    const double max_s =
        seconds_of(timing_.warmup + timing_.measure * windows) + 30 * jobs_.time_scale();
    std::vector<std::uint64_t> ids;
    ids.reserve(gpus.size());
    for (auto* g : gpus) ids.push_back(jobs_.start(g->index(), name_, 0, max_s));
    std::vector<WorkDone> out(gpus.size());
    const auto stop_all = [&] {
      for (std::size_t i = 0; i < gpus.size(); ++i) jobs_.stop(gpus[i]->index(), ids[i]);
    };
    const auto statuses = [&] {
      std::vector<gpu::SimJobStatus> now;
      for (std::size_t i = 0; i < gpus.size(); ++i)
        now.push_back(jobs_.status(gpus[i]->index(), ids[i]));
      return now;
    };
    try {
      bool full = wait_for(clock_, timing_.warmup, stop);
      // The jobs' progress at the window's start and at the end of each measured window.
      std::vector<std::vector<gpu::SimJobStatus>> marks{statuses()};
      window.begin();
      for (unsigned k = 0; k < windows && full; ++k) {
        full = wait_for(clock_, timing_.measure, stop);
        marks.push_back(statuses());
      }
      if (marks.size() == 1) marks.push_back(marks.front());
      window.end();
      stop_all();
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        const auto& first = marks.front()[i];
        const auto& last = marks.back()[i];
        out[i].work = (last.done - first.done) / scale;
        out[i].seconds = last.end_s - first.end_s;
        out[i].runs = static_cast<unsigned>(marks.size() - 1);
        for (std::size_t k = 1; k < marks.size(); ++k) {
          const double s = marks[k][i].end_s - marks[k - 1][i].end_s;
          if (s > 0)
            out[i].run_rates.push_back((marks[k][i].done - marks[k - 1][i].done) / scale / s);
        }
        if (windows > 1 && !out[i].run_rates.empty()) out[i].rate = median(out[i].run_rates);
        if (!full) out[i].error = "interrupted";
        if (!last.running && full) out[i].error = "the simulated job ended early";
      }
    } catch (...) {
      stop_all();
      throw;
    }
    return out;
  }

 private:
  gpu::SimJobs jobs_;
  std::string name_;
  const Clock& clock_;
  Timing timing_;
};

// A temporary file for the command's standard output, removed on destruction.
class CaptureFile {
 public:
  CaptureFile() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpuclk-sweep-XXXXXX").string();
    fd_ = ::mkstemp(pattern.data());
    if (fd_ < 0) throw Error(ExitCode::other, "cannot create a temporary file for the output");
    path_ = pattern;
  }
  ~CaptureFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  CaptureFile(const CaptureFile&) = delete;
  CaptureFile& operator=(const CaptureFile&) = delete;
  int fd() const { return fd_; }
  std::string read() const {
    std::ifstream in(path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  int fd_ = -1;
  std::string path_;
};

// The rate in the last line of `output` that `metric` matches; nullopt when none does.
std::optional<double> metric_rate(const std::string& output, const std::regex& metric) {
  std::optional<double> rate;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, metric)) continue;
    const std::string text = m.size() > 1 && m[1].matched ? m[1].str() : m[0].str();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() && std::isfinite(v)) rate = v;
  }
  return rate;
}

class CommandWorkload final : public Workload {
 public:
  CommandWorkload(CommandOptions options, const Clock& clock)
      : options_(std::move(options)), clock_(clock) {
    if (options_.metric) {
      try {
        metric_ = std::regex(*options_.metric, std::regex::extended);
      } catch (const std::regex_error& e) {
        throw bad_argument(fmt::format("--metric '{}' is not a valid regular expression: {}",
                                       *options_.metric, e.what()),
                           "e.g. --metric 'rate ([0-9.]+)' (POSIX extended syntax)");
      }
    }
  }

  WorkUnit unit() const override { return {options_.metric ? options_.metric_unit : "run"}; }
  std::string data() const override { return "the command's own"; }
  std::string describe() const override {
    std::string text;
    for (const auto& a : options_.argv) text += (text.empty() ? "" : " ") + a;
    return "command: " + text +
           (options_.repeat > 1 ? fmt::format(" ({} runs per point)", options_.repeat) : "");
  }

  std::vector<WorkDone> run(const std::vector<gpu::Device*>& gpus, const Window& window,
                            const std::function<bool()>& stop) override {
    std::string visible;
    for (auto* g : gpus) visible += (visible.empty() ? "" : ",") + g->uuid();
    ::setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
    if (!options_.nvml_library.empty())
      ::setenv("GPUCLK_NVML_LIB", options_.nvml_library.c_str(), 1);
    const unsigned repeat = std::max(1U, options_.repeat);
    WorkDone done;
    done.runs = 0;
    unsigned succeeded = 0;
    window.begin();
    const auto start = clock_.now();
    for (unsigned k = 1; k <= repeat; ++k) {
      if (k > 1 && stop && stop()) {
        done.error = fmt::format("interrupted after {} of {} runs", k - 1, repeat);
        break;
      }
      ++done.runs;
      // With several runs the error names the one that failed.
      const std::string which = repeat > 1 ? fmt::format("run {} of {}: ", k, repeat) : "";
      CaptureFile capture;
      const auto run_start = clock_.now();
      host::ChildExit exit;
      {
        host::ChildProcess child(options_.argv, capture.fd());
        exit = child.wait({}, 200ms);
      }
      const double seconds = seconds_of(clock_.now() - run_start);
      const std::string output = capture.read();
      std::cerr << output;
      if (exit.signal) {
        done.error = fmt::format("{}the command was killed by signal {} ({})", which, *exit.signal,
                                 strsignal(*exit.signal));
        // Ctrl-C or a TERM reached the command through us: the sweep stops too.
        if (*exit.signal == SIGINT || *exit.signal == SIGTERM || *exit.signal == SIGHUP)
          std::raise(*exit.signal);
        break;
      }
      if (exit.exit_code != 0) {
        done.error = fmt::format("{}the command exited with status {}", which, exit.exit_code);
        break;
      }
      if (!metric_) {
        ++succeeded;
        if (seconds > 0) done.run_rates.push_back(1 / seconds);
        continue;
      }
      const auto rate = metric_rate(output, *metric_);
      if (!rate) {
        done.error = fmt::format("{}no line of the command's output matched --metric '{}'", which,
                                 *options_.metric);
        break;
      }
      done.run_rates.push_back(*rate);
    }
    done.seconds = seconds_of(clock_.now() - start);
    window.end();
    if (metric_) {
      // The rate is the mean of the printed rates; the work what that rate did in the window.
      if (!done.run_rates.empty()) {
        double sum = 0;
        for (double r : done.run_rates) sum += r;
        done.rate = sum / static_cast<double>(done.run_rates.size());
        done.work = *done.rate * done.seconds;
      }
    } else {
      done.work = succeeded;  // runs / wall time of all the runs
    }
    return std::vector<WorkDone>(gpus.size(), done);
  }

 private:
  CommandOptions options_;
  std::optional<std::regex> metric_;
  const Clock& clock_;
};

}  // namespace

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names = {"gemm-bf16", "gemm-fp16", "gemm-tf32", "gemm-fp32",
                                                 "gemm-fp8",  "mem-copy",  "mem-triad", "fma"};
  return names;
}

std::unique_ptr<Workload> simulated_workload(gpu::SimJobs jobs, const std::string& name,
                                             const Clock& clock, Timing timing) {
  return std::make_unique<SimulatedWorkload>(jobs, name, clock, timing);
}

std::unique_ptr<Workload> command_workload(CommandOptions options, const Clock& clock) {
  return std::make_unique<CommandWorkload>(std::move(options), clock);
}

}  // namespace gpuclk::sweep
