// Piecewise-linear curve y(x) through points sorted by x; flat beyond the first and last point.
#pragma once

#include <vector>

namespace gpuclk::sim {

struct CurvePoint {
  double x = 0;
  double y = 0;
};

class Curve {
 public:
  Curve() = default;
  explicit Curve(std::vector<CurvePoint> points) : points_(std::move(points)) {}

  double operator()(double x) const {
    if (points_.empty()) return 0;
    if (x <= points_.front().x) return points_.front().y;
    if (x >= points_.back().x) return points_.back().y;
    for (std::size_t i = 1; i < points_.size(); ++i) {
      if (x <= points_[i].x) {
        const CurvePoint& a = points_[i - 1];
        const CurvePoint& b = points_[i];
        return a.y + (b.y - a.y) * (x - a.x) / (b.x - a.x);
      }
    }
    return points_.back().y;
  }
  bool empty() const { return points_.empty(); }
  const std::vector<CurvePoint>& points() const { return points_; }

 private:
  std::vector<CurvePoint> points_;
};

}  // namespace gpuclk::sim
