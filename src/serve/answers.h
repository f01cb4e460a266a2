// The service's answers: a protocol request (protocol.h) to its response. The router (answer(),
// handle()), hello, and one method per request: status, view, history, summary, snapshot,
// processes; a `stream` request is opened by Streams (streams.h).
//
// Owns the serialized-answer cache: the answers that depend on the node state alone (status, a
// view) are built once a refresh, not once a request, and their text is shared by every client
// that asks the same thing of the same state (at 1000 requests/s from 10 clients, building each
// anew took half a core). Reads everything else where it lives: the node state, the 1 s history,
// the events and the attribution through the Service's accessors, the sampler's rings, the
// devices (the simulator's extras). No NVML call happens here but the simulator's.
//
// Thread-safety: answer() and handle() from any thread while the service runs (the socket's poll
// thread, tests); the cache is under its own mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gpu/device.h"
#include "serve/reply.h"
#include "serve/streams.h"
#include "telemetry/sampler.h"

namespace gpuclk::serve {

class Service;
struct NodeState;

class Answers {
 public:
  // `sampler`: the service's (read; read_slow_now() for stat's window edges); every part
  // outlives the answers.
  Answers(const Service& service, telemetry::Sampler& sampler, Streams& streams,
          const gpu::DeviceSet& devices);

  // As handle(), and the `stream` request: its lines come from the Reply's stream; the status
  // and view answers come serialized, from the cache.
  Reply answer(const nlohmann::json& request, const Peer& peer);
  // One protocol request to its response. Never throws: errors are responses.
  nlohmann::json handle(const nlohmann::json& request, const Peer& peer) const;

 private:
  nlohmann::json hello(const Peer& peer) const;
  nlohmann::json keys_json() const;
  // The positions of a request's "gpus" (indexes); every GPU when it names none.
  std::vector<std::size_t> positions(const nlohmann::json& request) const;
  nlohmann::json status_response(const NodeState& s) const;
  nlohmann::json view_response(const std::string& name, const NodeState& s) const;
  nlohmann::json history_response(const nlohmann::json& request) const;
  nlohmann::json summary_response(const nlohmann::json& request) const;
  nlohmann::json snapshot_response(const nlohmann::json& request) const;
  nlohmann::json processes_response(const nlohmann::json& request) const;
  // The `stream` request's stream, or a view's answer that waits for its refresh.
  std::unique_ptr<Stream> open_stream(const nlohmann::json& request);
  std::unique_ptr<Stream> wait_for_view(const std::string& name) const;
  // `build()` serialized, kept for the state's generation under `key`.
  std::shared_ptr<const std::string> serialized(const std::string& key, const NodeState& s,
                                                const std::function<nlohmann::json()>& build) const;

  const Service& service_;
  telemetry::Sampler& sampler_;
  Streams& streams_;
  const gpu::DeviceSet& devices_;
  // serialized()'s answers: the generation each was built for, and its text.
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::pair<std::uint64_t, std::shared_ptr<const std::string>>,
                   std::less<>>
      cache_;
};

}  // namespace gpuclk::serve
