// The Prometheus text format 0.0.4, written straight as text: escaped label values and HELP,
// sample values, and families grouped in the order they are first used, each with its HELP and
// TYPE lines before its series. What /metrics (metrics.cpp) and its dcgm-exporter names
// (dcgm_compat.cpp) write with. Not thread-safe: one Families per build.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "gpu/reading.h"

namespace gpuclk::serve {

enum class MetricType { gauge, counter };

// `text` as the text format escapes it: backslash and newline always, a double quote in label
// values (`quotes`) but not in HELP.
void append_escaped(std::string& out, std::string_view text, bool quotes);

// A sample value as the text format writes it: integers without a fraction (1410000000), others
// in their shortest exact form, NaN and infinities by name.
void append_value(std::string& out, double v);

// Rendered labels, `gpu="0",uuid="GPU-…"` (values escaped as the text format asks), so that a
// GPU's labels are rendered once per build, not once per series.
class Labels {
 public:
  Labels() = default;
  Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs) {
    for (const auto& [name, value] : pairs) add(name, value);
  }
  void add(std::string_view name, std::string_view value);
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// `labels` with one more label.
Labels with(Labels labels, std::string_view name, std::string_view value);

// One label written after a series' Labels, without copying them (what `with` would build).
struct Label {
  std::string_view name, value;
};

// Families in the order they are first used, so the output is stable and grouped; each one's
// series lines are appended to its body as they come. A Families kept from one build to the next
// (clear()) keeps its families and their bodies' memory: the service's scrape builds the text
// without allocating it piece by piece.
class Families {
 public:
  void gauge(std::string_view name, std::string_view help, const Labels& labels, double v) {
    add(name, help, MetricType::gauge, labels, nullptr, v);
  }
  void counter(std::string_view name, std::string_view help, const Labels& labels, double v) {
    add(name, help, MetricType::counter, labels, nullptr, v);
  }
  // The same with one more label after `labels`.
  void gauge(std::string_view name, std::string_view help, const Labels& labels, Label extra,
             double v) {
    add(name, help, MetricType::gauge, labels, &extra, v);
  }
  void counter(std::string_view name, std::string_view help, const Labels& labels, Label extra,
               double v) {
    add(name, help, MetricType::counter, labels, &extra, v);
  }
  template <class Q>
  void gauge(std::string_view name, std::string_view help, const Labels& labels,
             const std::optional<Q>& q, double scale = 1.0) {
    if (q) gauge(name, help, labels, q->value() * scale);
  }
  template <class Q>
  void gauge(std::string_view name, std::string_view help, const Labels& labels,
             const gpu::Reading<Q>& q, double scale = 1.0) {
    if (q) gauge(name, help, labels, q->value() * scale);
  }
  // The exposition: each family with a series, its HELP and TYPE lines first.
  std::string take();
  // Every family's series gone, the families and their memory kept for the next build.
  void clear();

 private:
  struct Family {
    std::string name, help;
    MetricType type;
    std::string body;
  };
  Family& family(std::string_view name, std::string_view help, MetricType type);
  void add(std::string_view name, std::string_view help, MetricType type, const Labels& labels,
           const Label* extra, double v);
  static constexpr std::size_t kBodyReserve = 1024;
  std::deque<Family> families_;  // stable addresses: index_'s keys view their names
  std::unordered_map<std::string_view, std::size_t> index_;
  // Names mostly come from the same string constants: a family found by where its name is kept
  // (and checked by its text) skips hashing it. Slot: the name's address; value: index + 1.
  static constexpr std::size_t kRecentSlots = 256;
  std::array<std::size_t, kRecentSlots> recent_{};
};

}  // namespace gpuclk::serve
