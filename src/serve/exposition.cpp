#include "serve/exposition.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace gpuclk::serve {

void append_escaped(std::string& out, std::string_view text, bool quotes) {
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quotes)
      out += "\\\"";
    else
      out += c;
  }
}

void append_value(std::string& out, double v) {
  // Formatted into a stack buffer, the format compiled: a scrape of 8 GPUs writes ~1500 values,
  // and fmt's runtime format parsing and a back_inserter's appends were a quarter of its CPU.
  char buf[32];
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (v == 0 && std::signbit(v)) {
    out += "-0";
  } else if (v == std::trunc(v) && std::abs(v) < 1e15) {
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
    out.append(buf, end);
  } else {
    out.append(buf, fmt::format_to(buf, FMT_COMPILE("{}"), v));
  }
}

void Labels::add(std::string_view name, std::string_view value) {
  if (!text_.empty()) text_ += ',';
  text_ += name;
  text_ += "=\"";
  append_escaped(text_, value, true);
  text_ += '"';
}

Labels with(Labels labels, std::string_view name, std::string_view value) {
  labels.add(name, value);
  return labels;
}

std::string Families::take() {
  std::size_t size = 0;
  for (const auto& f : families_) size += f.body.size() + f.name.size() * 2 + f.help.size() + 32;
  std::string out;
  out.reserve(size);
  for (const auto& f : families_) {
    if (f.body.empty()) continue;
    out += "# HELP ";
    out += f.name;
    out += ' ';
    append_escaped(out, f.help, false);
    out += "\n# TYPE ";
    out += f.name;
    out += f.type == MetricType::counter ? " counter\n" : " gauge\n";
    out += f.body;
  }
  return out;
}

void Families::clear() {
  for (auto& f : families_) f.body.clear();
}

Families::Family& Families::family(std::string_view name, std::string_view help, MetricType type) {
  std::size_t& slot = recent_[(reinterpret_cast<std::uintptr_t>(name.data()) >> 3) % kRecentSlots];
  if (slot != 0 && families_[slot - 1].name == name) return families_[slot - 1];
  auto it = index_.find(name);
  if (it == index_.end()) {
    families_.push_back({std::string(name), std::string(help), type, {}});
    // Room for a series per GPU of an 8-GPU node, so the body rarely grows by copying.
    families_.back().body.reserve(kBodyReserve);
    it = index_.emplace(families_.back().name, families_.size() - 1).first;
  }
  slot = it->second + 1;
  return families_[it->second];
}

void Families::add(std::string_view name, std::string_view help, MetricType type,
                   const Labels& labels, const Label* extra, double v) {
  auto& body = family(name, help, type).body;
  body += name;
  if (!labels.text().empty() || extra) {
    body += '{';
    body += labels.text();
    if (extra) {
      if (!labels.text().empty()) body += ',';
      body += extra->name;
      body += "=\"";
      append_escaped(body, extra->value, true);
      body += '"';
    }
    body += '}';
  }
  body += ' ';
  append_value(body, v);
  body += '\n';
}

}  // namespace gpuclk::serve
