#include "host/run/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace vigor::host {

namespace {

std::string eta_text(double seconds) {
  char buf[48];
  if (!std::isfinite(seconds)) return "ETA ?";
  const long s = long(std::llround(seconds));
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "ETA %ldh%02ldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "ETA %ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "ETA %lds", s);
  return buf;
}

double fraction(const ProgressState& s) {
  return s.steps_total > 0 ? double(s.steps_done) / double(s.steps_total) : 1.0;
}

}  // namespace

std::string progress_text(const ProgressState& s) {
  const double rate = s.elapsed > 0 ? double(s.steps_done) * double(s.trajectories) / s.elapsed : 0;
  // Time per step so far, times the steps left: segments are equal in length but the last.
  const double eta = s.steps_done > 0
                         ? s.elapsed * double(s.steps_total - s.steps_done) / double(s.steps_done)
                         : NAN;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "segment %lld/%lld, step %lld/%lld (%.0f%%), %.3g traj-steps/s, %lld crossings, %s",
                static_cast<long long>(s.segments_done), static_cast<long long>(s.segments_total),
                static_cast<long long>(s.steps_done), static_cast<long long>(s.steps_total),
                100.0 * fraction(s), rate, static_cast<long long>(s.crossings),
                s.steps_done >= s.steps_total ? "done" : eta_text(eta).c_str());
  return buf;
}

std::string progress_bar(const ProgressState& s, int width) {
  const int filled = int(std::floor(fraction(s) * width + 1e-9));
  std::string bar = "[";
  bar.append(std::size_t(std::clamp(filled, 0, width)), '#');
  bar.append(std::size_t(width - std::clamp(filled, 0, width)), '.');
  bar += "] ";
  return bar + progress_text(s);
}

Progress::Progress(bool enabled, std::FILE* out, bool terminal, double first_after,
                   double line_every)
    : enabled_(enabled && out != nullptr),
      out_(out),
      terminal_(terminal),
      first_after_(first_after),
      line_every_(line_every) {}

void Progress::update(const ProgressState& s) {
  if (!enabled_ || s.elapsed < first_after_) return;
  const double gap = terminal_ ? 0.1 : line_every_;
  if (last_ >= 0 && s.elapsed - last_ < gap) return;
  emit(s, false);
}

void Progress::finish(const ProgressState& s) {
  if (!enabled_ || reports_ == 0) return;
  emit(s, true);
}

void Progress::emit(const ProgressState& s, bool last) {
  if (terminal_) {
    // Carriage return and erase-to-end redraw the line in place.
    std::fprintf(out_, "\r\033[Kvigor: %s%s", progress_bar(s).c_str(), last ? "\n" : "");
  } else {
    std::fprintf(out_, "vigor: %s\n", progress_text(s).c_str());
  }
  std::fflush(out_);
  last_ = s.elapsed;
  ++reports_;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace vigor::host
