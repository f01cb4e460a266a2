#include "serve/delegated_settings.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "control/request.h"
#include "serve/protocol.h"
#include "util/error.h"

namespace gpuclk::serve {
namespace {

// The delegated way: `set` and `restore` requests to the service, which checks each against
// its policy, the holders and the requester's session, and writes them journaled (its log has a
// line for each). GPUs are named by index, as `gpuclk set -i` names them to the service.
class DelegatedWriter : public control::SettingsWriter {
 public:
  DelegatedWriter(std::function<std::optional<nlohmann::json>(const nlohmann::json&)> ask,
                  control::WriterOptions options)
      : ask_(std::move(ask)), options_(options) {}

  control::ChangeReport apply(const std::vector<Target>& targets, const std::string&) override {
    // One request for each distinct set of values (a sweep point: one for all its GPUs), keyed
    // by the settings' text: the settings and the GPUs' indexes.
    std::map<std::string, std::pair<nlohmann::json, nlohmann::json>> requests;
    for (const auto& t : targets) {
      if (t.settings.empty()) continue;
      // The values in the journal's typed form (control::request_to_json).
      const auto settings = nlohmann::json::parse(control::settings_to_json(t.settings));
      auto& [text_settings, gpus] = requests[settings.dump()];
      text_settings = settings;
      if (gpus.is_null()) gpus = nlohmann::json::array();
      gpus.push_back(t.gpu->index());
    }
    control::ChangeReport all;
    for (const auto& [key, request] : requests) {
      nlohmann::json r = {
          {"request", "set"}, {"settings", request.first}, {"gpus", request.second}};
      if (!options_.settle) r["settle"] = false;
      all.append(ask(r));
      if (all.exit != ExitCode::ok) break;
    }
    return all;
  }

  control::ChangeReport restore(const std::vector<Previous>& gpus, const std::string&) override {
    nlohmann::json indexes = nlohmann::json::array();
    for (const auto& p : gpus) indexes.push_back(p.gpu->index());
    return ask({{"request", "restore"}, {"gpus", indexes}});
  }

 private:
  control::ChangeReport ask(const nlohmann::json& request) {
    const auto response = ask_(request);
    if (!response)
      throw Error(ExitCode::other, "the service that takes delegated settings went away",
                  "run `gpuclk restore` once it is back");
    return change_report_from_json(response->at("report"));
  }

  std::function<std::optional<nlohmann::json>(const nlohmann::json&)> ask_;
  control::WriterOptions options_;
};

}  // namespace

std::unique_ptr<control::SettingsWriter> delegated_settings_writer(
    std::function<std::optional<nlohmann::json>(const nlohmann::json&)> ask,
    control::WriterOptions options) {
  return std::make_unique<DelegatedWriter>(std::move(ask), options);
}

}  // namespace gpuclk::serve
