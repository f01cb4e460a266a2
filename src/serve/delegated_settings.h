// The client side of delegated settings (docs/serve.md, "Delegated settings"): a
// control::SettingsWriter whose changes go as `set` and `restore` requests to a `gpuclk serve`
// that takes them, for a user who is not root. The service checks each against its policy, the
// holders and the requester's session, and writes it journaled.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "control/settings_writer.h"

namespace gpuclk::serve {

// `ask` sends one request to the service and returns its answer (nullopt: the service went away,
// which a change then throws as Error, exit 255).
std::unique_ptr<control::SettingsWriter> delegated_settings_writer(
    std::function<std::optional<nlohmann::json>(const nlohmann::json&)> ask,
    control::WriterOptions options = {});

}  // namespace gpuclk::serve
