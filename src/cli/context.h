// What every subcommand gets: the global options, and lazily opened NVML, devices, printer.
//
// A command file defines `void add_NAME_command(CLI::App& app, Context& ctx)`: it adds its
// subcommand and options, and a callback that stores the work in ctx.run. run_command_line()
// (command_line.h; main() calls it) parses, then calls ctx.run() and turns a thrown
// gpuclk::Error into its message and exit code.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/device.h"
#include "gpu/selection.h"
#include "host/cpu.h"
#include "output/format.h"
#include "output/printer.h"
#include "util/clock.h"

namespace gpuclk::nvml {
class Api;
}
namespace gpuclk::serve {
class Client;
struct Hello;
}  // namespace gpuclk::serve

namespace gpuclk::cli {

struct GlobalOptions {
  std::string devices;         // -i: indexes, UUIDs, PCI bus ids (read it through Context)
  bool devices_given = false;  // -i was on the command line (even as -i "")
  std::string format = "table";
  std::string nvml_lib;    // --nvml-lib
  std::string sim;         // --sim[=SCENARIO]; empty when not simulating
  bool read_only = false;  // --read-only (GPUCLK_READ_ONLY=1 also sets it)
  std::string state_dir;   // --state-dir (GPUCLK_STATE_DIR, else /var/lib/gpuclk)
  std::string socket;      // --socket: the service to ask (GPUCLK_SOCKET, else the default)
  bool direct = false;     // --direct: read the GPUs through NVML even when a service runs
};

// What Context::effect throws when a fuzz target's before_effect hook stops a command before it
// acts on the world. Not an Error (nor a std::exception): no command reports or swallows it.
struct EffectStopped {
  std::string what;  // "load NVML", "run gpuclk-serve", "write FILE", …
};

class Context {
 public:
  Context();
  ~Context();

  GlobalOptions options;
  std::function<int()> run;  // set by the chosen subcommand

  // Called (when set) at the first point a command would act on the world: load NVML or touch a
  // GPU, exec or spawn a process, connect to the service or a network address, write a file
  // other than stdout/stderr, sleep, wait or take the terminal. The fuzz target sets it to throw
  // EffectStopped, so every option of every command is parsed and validated for real and nothing
  // happens (docs/hardening.md lists the points). Commands call effect(), never the hook.
  std::function<void(std::string_view what)> before_effect;
  // Checks -i's syntax (an empty or malformed -i is exit 2 before anything happens), then calls
  // before_effect.
  void effect(std::string_view what);

  // NVML, loaded on first use (the simulator with --sim). Throws Error (exit 12/9) with a hint.
  nvml::Api& nvml();
  // The NVML library file actually loaded (the simulator's under --sim); loads it if needed.
  std::string nvml_library_path();
  // Every GPU; opened on first use.
  gpu::DeviceSet& devices();
  // The one home of "which GPUs": commands ask here and never read or rewrite -i themselves.
  // The GPUs -i selects (every GPU when -i is not given). Throws Error (exit 2/6) for a bad -i:
  // an empty -i is exit 2, never "all".
  std::vector<gpu::Device*> selected();
  // The GPUs `spec` selects (a command's own option in -i syntax, e.g. occupancy --device),
  // checked as -i is; `option` names it in errors.
  std::vector<gpu::Device*> selected(std::string_view spec, std::string_view option);
  // Whether -i was given (a command whose default is not "every GPU" asks this).
  bool selection_given() const { return options.devices_given; }
  // Output format from --format; throws Error (exit 2) when malformed.
  output::Format format() const;
  std::unique_ptr<output::Printer> printer(std::ostream& out) const;
  std::unique_ptr<output::Printer> printer() const;  // to stdout
  // Time in the GPU's time base (simulated time under --sim).
  const Clock& clock();
  bool read_only() const;
  bool simulated();
  // The simulated node as headings name it: the scenario, and what its time does when it is not
  // real time ("default, time frozen at 45 s (GPUCLK_SIM_SPEED=0, …)"); "" on a real driver.
  std::string simulated_node();
  // The host's CPUs and NUMA nodes for info and topo: on a simulated node the scenario's (its
  // GPUs' CPU affinity is the scenario's too), else this machine's (hwloc).
  host::CpuInfo host_cpu();
  std::string state_dir() const;
  // The service (gpuclk serve) when one answers on the socket and --direct is not given: its
  // typed client (serve/client.h), through which a command asks; nullptr means "read NVML
  // yourself". A service on another node kind (simulated or not, another scenario) than this
  // command asks for is not used. Its requests throw the service's errors.
  serve::Client* service();
  // The service's hello (interval, history, GPUs), asked once on connecting; nullptr as above.
  const serve::Hello* service_hello();
  // The socket of the service that answered (for a command's own further connections); empty
  // when none did.
  std::string service_socket() const;
  // Positions in a service answer's GPUs (their keys) that -i selects.
  std::vector<std::size_t> select_from(const std::vector<gpu::DeviceKey>& gpus) const;
  // The NVML indexes of the GPUs that -i selects of `gpus` (for a request that names GPUs).
  std::vector<unsigned> indexes_from(const std::vector<gpu::DeviceKey>& gpus) const;
  // The process ends after this Context: NVML need not be shut down (Api::skip_shutdown_at_exit).
  void exiting();
  // Where the gpuclk executable lives (the simulator library and scenarios sit beside it).
  static std::string executable_dir();

 private:
  std::unique_ptr<nvml::Api> api_;
  std::unique_ptr<gpu::DeviceSet> devices_;
  std::unique_ptr<ScaledClock> clock_;
  bool service_serves_this_node(const serve::Hello& hello);

  std::unique_ptr<serve::Client> service_;
  std::unique_ptr<serve::Hello> service_hello_;
  bool service_tried_ = false;
  bool selection_checked_ = false;
  std::optional<bool> service_simulated_;  // what the service that answered runs on
};

}  // namespace gpuclk::cli
