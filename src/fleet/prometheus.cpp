#include "fleet/prometheus.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <type_traits>

#include "util/error.h"
#include "util/parse.h"
#include "util/text.h"

namespace gpuclk::fleet {
namespace {

// libcurl, loaded on first use (as NVML is): linked into gpuclk it would load 32 more shared
// libraries (TLS, HTTP/2, LDAP, ...) at the start of every command, and the portable build would
// not start on a host without them. The declarations are curl.h's; only the calls go through
// dlsym.
struct Curl {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  char* (*easy_escape)(CURL*, const char*, int);
  void (*free)(void*);
  const char* (*easy_strerror)(CURLcode);
};

const Curl& curl_api() {
  static const Curl api = [] {
    void* lib = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      throw Error(ExitCode::other,
                  fmt::format("gpuclk fleet needs libcurl, which did not load: {}", ::dlerror()),
                  "install it (Debian: apt-get install libcurl4)");
    }
    Curl c{};
    const auto bind = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
      if (!fn)
        throw Error(ExitCode::other, fmt::format("libcurl.so.4 lacks {}", name),
                    "install libcurl 7.x or later");
    };
    bind(c.global_init, "curl_global_init");
    bind(c.easy_init, "curl_easy_init");
    bind(c.easy_setopt, "curl_easy_setopt");
    bind(c.easy_perform, "curl_easy_perform");
    bind(c.easy_getinfo, "curl_easy_getinfo");
    bind(c.easy_cleanup, "curl_easy_cleanup");
    bind(c.easy_escape, "curl_easy_escape");
    bind(c.free, "curl_free");
    bind(c.easy_strerror, "curl_easy_strerror");
    c.global_init(CURL_GLOBAL_DEFAULT);
    return c;
  }();
  return api;
}

constexpr std::size_t kMaxAnswer = 64 << 20;  // a larger answer is not one gpuclk asked for

std::size_t append(char* data, std::size_t size, std::size_t n, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() + size * n > kMaxAnswer) return 0;  // libcurl stops with a write error
  body->append(data, size * n);
  return size * n;
}

std::string hint(const std::string& url) {
  return fmt::format(
      "check that Prometheus answers at {} (curl {}/api/v1/query?query=up) and that the URL is "
      "the server's, not its UI's; --timeout gives a slow server longer",
      url, url);
}

}  // namespace

Prometheus::Prometheus(std::string url, std::chrono::milliseconds timeout)
    : url_(std::move(url)), timeout_(timeout) {
  while (!url_.empty() && url_.back() == '/') url_.pop_back();
  const bool scheme = url_.starts_with("http://") || url_.starts_with("https://");
  const bool host = scheme && url_.size() > url_.find("://") + 3;
  if (!host || url_.find_first_of(" \t\r\n?#") != std::string::npos) {
    throw bad_argument(fmt::format("bad --prometheus '{}'", parse::quote(url_)),
                       "give the server's base URL, e.g. http://prometheus:9090");
  }
  deadline_ = std::chrono::steady_clock::now() + timeout_;
}

std::string Prometheus::get(const std::string& promql, long& http_status) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline_ - std::chrono::steady_clock::now());
  const auto what = fmt::format("GET {}/api/v1/query?query={}{}", url_, promql,
                                time_ ? fmt::format("&time={:.3f}", *time_) : "");
  if (left.count() <= 0) {
    throw Error(ExitCode::other,
                fmt::format("Prometheus at {} did not answer {} queries within --timeout {} s "
                            "(next: {})",
                            url_, queries_.load() + 1,
                            std::chrono::duration<double>(timeout_).count(), what),
                hint(url_));
  }
  const auto& api = curl_api();
  std::unique_ptr<CURL, void (*)(CURL*)> curl(api.easy_init(), api.easy_cleanup);
  if (!curl) throw Error(ExitCode::other, "libcurl could not start a request");
  std::unique_ptr<char, void (*)(void*)> escaped(
      api.easy_escape(curl.get(), promql.data(), static_cast<int>(promql.size())), api.free);
  if (!escaped) throw Error(ExitCode::other, "libcurl could not escape a query");
  auto address = url_ + "/api/v1/query?query=" + escaped.get();
  if (time_) address += fmt::format("&time={:.3f}", *time_);
  std::string body;
  char error[CURL_ERROR_SIZE] = {};
  auto* h = curl.get();
  api.easy_setopt(h, CURLOPT_URL, address.c_str());
  api.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
  api.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(left.count()));
  api.easy_setopt(h, CURLOPT_WRITEFUNCTION, &append);
  api.easy_setopt(h, CURLOPT_WRITEDATA, &body);
  api.easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  api.easy_setopt(h, CURLOPT_USERAGENT, "gpuclk-fleet");
  api.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever this libcurl decodes
  ++queries_;
  const auto rc = api.easy_perform(h);
  if (rc != CURLE_OK) {
    const auto reason = error[0] ? std::string(error) : std::string(api.easy_strerror(rc));
    const auto message =
        rc == CURLE_OPERATION_TIMEDOUT
            ? fmt::format("Prometheus at {} did not answer within --timeout {} s ({}; tried {})",
                          url_, std::chrono::duration<double>(timeout_).count(), reason, what)
            : fmt::format("cannot reach Prometheus at {}: {} (tried {})", url_, reason, what);
    throw Error(ExitCode::other, message, hint(url_));
  }
  api.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http_status);
  return body;
}

std::vector<Sample> Prometheus::query(const std::string& promql) {
  long status = 0;
  const auto body = get(promql, status);
  const auto what = fmt::format("GET {}/api/v1/query?query={}{}", url_, promql,
                                time_ ? fmt::format("&time={:.3f}", *time_) : "");
  const auto answer = nlohmann::json::parse(body, nullptr, false);
  const auto bad = [&](const std::string& why) {
    return Error(ExitCode::other,
                 fmt::format("Prometheus at {} gave no usable answer (HTTP {}): {} (tried {})",
                             url_, status, why, what),
                 hint(url_));
  };
  if (answer.is_discarded() || !answer.is_object())
    throw bad(fmt::format("not JSON: '{}'", parse::quote(body, 60)));
  if (answer.value("status", "") != "success") {
    throw bad(fmt::format("{}: {}", answer.value("errorType", "error"),
                          parse::quote(answer.value("error", "no error text"), 200)));
  }
  const auto data = answer.find("data");
  if (data == answer.end() || !data->is_object() || data->value("resultType", "") != "vector" ||
      !data->contains("result") || !data->at("result").is_array())
    throw bad("not an instant vector");
  std::vector<Sample> out;
  for (const auto& r : data->at("result")) {
    if (!r.is_object() || !r.contains("value") || !r.at("value").is_array() ||
        r.at("value").size() != 2 || !r.at("value")[1].is_string())
      throw bad("a malformed sample");
    Sample s;
    if (r.contains("metric") && r.at("metric").is_object())
      for (const auto& [k, v] : r.at("metric").items())
        if (v.is_string()) s.labels[k] = v.get<std::string>();
    const auto text = r.at("value")[1].get<std::string>();
    char* end = nullptr;
    s.value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') throw bad("a sample value that is not a number");
    if (!std::isfinite(s.value)) continue;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::vector<Sample>> Prometheus::query_all(const std::vector<std::string>& promql) {
  std::vector<std::vector<Sample>> out(promql.size());
  std::vector<std::exception_ptr> errors(promql.size());
  curl_api();  // loaded (and libcurl's global state set up) before the threads start
  std::vector<std::thread> threads;
  threads.reserve(promql.size());
  for (std::size_t i = 0; i < promql.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        out[i] = query(promql[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

double Prometheus::parse_time(const std::string& text, const char* option) {
  const auto bad = [&] {
    return bad_argument(fmt::format("bad {} '{}'", option, parse::quote(text)),
                        "give Unix seconds (1717243200) or an RFC 3339 time "
                        "(2024-06-01T12:00:00Z, 2024-06-01T14:00:00+02:00)");
  };
  if (!text.empty() && text.find_first_not_of("0123456789.") == std::string::npos) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(v)) throw bad();
    return v;
  }
  std::tm tm{};
  const char* rest = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) throw bad();
  double seconds = static_cast<double>(::timegm(&tm));
  if (*rest == '.') {
    char* end = nullptr;
    seconds += std::strtod(rest, &end);
    rest = end;
  }
  if ((*rest == 'Z' || *rest == 'z') && *(rest + 1) == '\0') return seconds;
  int hours = 0, minutes = 0;
  char sign = 0;
  if (std::sscanf(rest, "%c%2d:%2d", &sign, &hours, &minutes) != 3 ||
      (sign != '+' && sign != '-') || std::strlen(rest) != 6 || hours > 23 || minutes > 59)
    throw bad();
  const double offset = (hours * 60 + minutes) * 60.0;
  return sign == '+' ? seconds - offset : seconds + offset;
}

std::string check_selector(const std::string& selector) {
  std::string s(text::trim(selector));
  if (s.empty()) return s;
  // The braces hold matchers; quoted values may contain anything but a raw newline.
  bool quoted = false, ok = s.size() >= 2 && s.front() == '{' && s.back() == '}';
  for (std::size_t i = 1; ok && i + 1 < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n' || c == '\r') ok = false;
    if (quoted && c == '\\') {
      ++i;
      continue;
    }
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '{' || c == '}')) ok = false;
  }
  if (!ok || quoted)
    throw bad_argument(fmt::format("bad --selector '{}'", parse::quote(selector)),
                       "give label matchers in braces, e.g. '{job=\"gpuclk\"}' or "
                       "'{cluster=\"a\",instance=~\"node1.*\"}'");
  return s;
}

std::string series(const std::string& metric, const std::string& selector) {
  return metric + selector;
}

std::string series_matching(const std::string& name_regex, const std::string& selector) {
  const auto inner = selector.size() >= 2 ? selector.substr(1, selector.size() - 2) : "";
  const bool any = inner.find_first_not_of(' ') != std::string::npos;
  return "{__name__=~\"" + name_regex + "\"" + (any ? "," + inner : "") + "}";
}

}  // namespace gpuclk::fleet
