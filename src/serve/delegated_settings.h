// The client side of delegated settings (docs/serve.md, "Delegated settings"): a
// control::SettingsWriter whose changes go as `set` and `restore` requests to a `gpuclk serve`
// that takes them, for a user who is not root. The service checks each against its policy, the
// holders and the requester's session, and writes it journaled.
#pragma once

#include <memory>

#include "control/settings_writer.h"

namespace gpuclk::serve {

class Client;

// Asks through `client` (which outlives the writer); a service that went away throws Error
// (exit 255) from the change.
std::unique_ptr<control::SettingsWriter> delegated_settings_writer(
    Client& client, control::WriterOptions options = {});

}  // namespace gpuclk::serve
