#include "serve/delegated_settings.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "control/request.h"
#include "serve/client.h"
#include "util/error.h"

namespace gpuclk::serve {
namespace {

// The delegated way: `set` and `restore` requests to the service, which checks each against
// its policy, the holders and the requester's session, and writes them journaled (its log has a
// line for each). GPUs are named by index, as `gpuclk set -i` names them to the service.
class DelegatedWriter : public control::SettingsWriter {
 public:
  DelegatedWriter(Client& client, control::WriterOptions options)
      : client_(client), options_(options) {}

  control::ChangeReport apply(const std::vector<Target>& targets, const std::string&) override {
    // One request for each distinct set of values (a sweep point: one for all its GPUs), keyed
    // by the settings' text: the settings and the GPUs' indexes.
    std::map<std::string, SetRequest> requests;
    for (const auto& t : targets) {
      if (t.settings.empty()) continue;
      // The values in the journal's typed form (control::request_to_json).
      const auto settings = nlohmann::json::parse(control::settings_to_json(t.settings));
      auto& request = requests[settings.dump()];
      request.settings = settings;
      request.settle = options_.settle;
      if (!request.gpus) request.gpus.emplace();
      request.gpus->push_back(t.gpu->index());
    }
    control::ChangeReport all;
    for (const auto& [key, request] : requests) {
      all.append(client_.set(request).report);
      if (all.exit != ExitCode::ok) break;
    }
    return all;
  }

  control::ChangeReport restore(const std::vector<Previous>& gpus, const std::string&) override {
    std::vector<unsigned> indexes;
    indexes.reserve(gpus.size());
    for (const auto& p : gpus) indexes.push_back(p.gpu->index());
    return client_.restore(indexes).report;
  }

 private:
  Client& client_;
  control::WriterOptions options_;
};

}  // namespace

std::unique_ptr<control::SettingsWriter> delegated_settings_writer(Client& client,
                                                                   control::WriterOptions options) {
  return std::make_unique<DelegatedWriter>(client, options);
}

}  // namespace gpuclk::serve
