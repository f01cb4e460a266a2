#include "control/write_sequence.h"

namespace gpuclk::control {

std::vector<WriteSequence::Undone> WriteSequence::rollback() {
  armed_ = false;
  std::vector<Undone> out;
  for (auto it = writes_.rbegin(); it != writes_.rend(); ++it) {
    Undone u{*it, false, {}};
    try {
      write_setting(*it->gpu, it->setting, it->undo);
      u.ok = true;
    } catch (const std::exception& e) {
      u.error = e.what();
    }
    out.push_back(std::move(u));
  }
  return out;
}

WriteSequence::~WriteSequence() {
  // Reached only when an exception left the run between writes: undo what it did. Nothing can
  // be reported from here; the journal still lists the settings, so `gpuclk restore` can retry.
  if (armed_) rollback();
}

}  // namespace gpuclk::control
