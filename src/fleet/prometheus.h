// A Prometheus HTTP API client (libcurl): instant PromQL queries (/api/v1/query) under one
// deadline for the whole conversation, so `gpuclk fleet --timeout 10s` ends within 10 s whatever
// the server does (down, slow, a proxy answering HTML).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuclk::fleet {

// One element of an instant vector: its labels (with __name__ when the query kept it) and value.
struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;

  std::string label(const std::string& name) const {
    const auto it = labels.find(name);
    return it == labels.end() ? std::string() : it->second;
  }
};

class Prometheus {
 public:
  // `url`: http(s)://host:port[/prefix]; throws Error (exit 2) for anything else. `timeout`
  // bounds every query made through this client, together.
  Prometheus(std::string url, std::chrono::milliseconds timeout);

  // The instant vector of `promql` at the server's time; NaN and infinite values are left out.
  // Throws Error (exit 255) naming the URL, the query, what went wrong and what was tried.
  std::vector<Sample> query(const std::string& promql);
  // The answers to several queries, asked at once (one connection each): the server evaluates
  // them side by side, on as many cores as it has. Throws the first query's error, in order.
  std::vector<std::vector<Sample>> query_all(const std::vector<std::string>& promql);

  const std::string& url() const { return url_; }
  // Evaluate every query at this Unix time instead of the server's now (`time=`).
  void set_time(double unix_seconds) { time_ = unix_seconds; }

  // "1717243200", "1717243200.5" or RFC 3339 ("2024-06-01T12:00:00Z", "…+02:00"): Unix
  // seconds. Throws a bad argument (exit 2) naming `option` and the value otherwise.
  static double parse_time(const std::string& text, const char* option);

 private:
  std::string get(const std::string& promql, long& http_status);

  std::string url_;
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point deadline_;
  std::atomic<int> queries_ = 0;
  std::optional<double> time_;
};

// `{job="gpuclk"}` checked: a label matcher list in braces (or empty: every series). Throws
// Error (exit 2) naming the value otherwise.
std::string check_selector(const std::string& selector);
// metric + selector: `up{job="gpuclk"}`.
std::string series(const std::string& metric, const std::string& selector);
// A selector of every metric whose name matches `name_regex`, with the selector's matchers.
std::string series_matching(const std::string& name_regex, const std::string& selector);

}  // namespace gpuclk::fleet
