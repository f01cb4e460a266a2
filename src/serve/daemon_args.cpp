#include "serve/daemon_args.h"

#include <cstdlib>

#include "util/error.h"

namespace gpuclk::serve {

using nlohmann::json;

json to_json(const DaemonArgs& a) {
  const auto& o = a.options;
  return {{"nvml_library", a.nvml_library},
          {"simulated", a.simulated},
          {"selected", a.selected},
          {"socket", a.socket},
          {"journal_dir", a.journal_dir},
          {"read_only", a.read_only},
          {"options",
           {{"listen", o.listen},
            {"interval", o.interval},
            {"history", o.history},
            {"counters_interval", o.counters_interval},
            {"govern", o.govern},
            {"govern_interval", o.govern_interval},
            {"govern_max_slowdown", o.govern_max_slowdown},
            {"govern_log", o.govern_log},
            {"govern_dry_run", o.govern_dry_run},
            {"profile", o.profile},
            {"profile_check", o.profile_check},
            {"policy", o.policy},
            {"metrics_compat", o.metrics_compat},
            {"metrics_detail", o.metrics_detail},
            {"kubelet_socket", o.kubelet_socket},
            {"nccl_inspector_dir", o.nccl_inspector_dir}}}};
}

DaemonArgs daemon_args_from_json(const json& j) {
  try {
    DaemonArgs a;
    a.nvml_library = j.at("nvml_library").get<std::string>();
    a.simulated = j.at("simulated").get<std::string>();
    a.selected = j.at("selected").get<std::vector<unsigned>>();
    a.socket = j.at("socket").get<std::string>();
    a.journal_dir = j.at("journal_dir").get<std::string>();
    a.read_only = j.at("read_only").get<bool>();
    const auto& o = j.at("options");
    auto& t = a.options;
    t.listen = o.at("listen").get<std::string>();
    t.interval = o.at("interval").get<std::string>();
    t.history = o.at("history").get<std::string>();
    t.counters_interval = o.at("counters_interval").get<std::string>();
    t.govern = o.at("govern").get<std::string>();
    t.govern_interval = o.at("govern_interval").get<std::string>();
    t.govern_max_slowdown = o.at("govern_max_slowdown").get<std::string>();
    t.govern_log = o.at("govern_log").get<std::string>();
    t.govern_dry_run = o.at("govern_dry_run").get<bool>();
    t.profile = o.at("profile").get<std::string>();
    t.profile_check = o.at("profile_check").get<std::string>();
    t.policy = o.at("policy").get<std::string>();
    t.metrics_compat = o.at("metrics_compat").get<std::string>();
    t.metrics_detail = o.at("metrics_detail").get<std::string>();
    t.kubelet_socket = o.at("kubelet_socket").get<std::string>();
    t.nccl_inspector_dir = o.value("nccl_inspector_dir", std::string());
    return a;
  } catch (const json::exception& e) {
    throw bad_argument(std::string("bad ") + kDaemonArgsVariable + ": " + e.what(),
                       "gpuclk-serve is started by `gpuclk serve`, which sets it");
  }
}

DaemonArgs daemon_args_from_environment() {
  const char* text = std::getenv(kDaemonArgsVariable);
  if (text == nullptr || *text == '\0')
    throw bad_argument(std::string(kDaemonArgsVariable) + " is not set",
                       "gpuclk-serve is run by `gpuclk serve`: run that");
  const auto j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw bad_argument(std::string(kDaemonArgsVariable) + " is not JSON",
                       "gpuclk-serve is run by `gpuclk serve`: run that");
  auto args = daemon_args_from_json(j);
  ::unsetenv(kDaemonArgsVariable);
  return args;
}

}  // namespace gpuclk::serve
