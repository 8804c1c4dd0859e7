/// @file progress.hpp
/// @brief Progress of a long run on stderr: a redrawn bar when stderr is a terminal, plain
/// periodic lines otherwise (log files, batch jobs); `--quiet` turns both off.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace vigor::host {

/// What a progress report says, after `elapsed` seconds.
struct ProgressState {
  std::int64_t steps_done = 0, steps_total = 0;
  std::int64_t segments_done = 0, segments_total = 0;
  std::int64_t trajectories = 0;
  std::int64_t crossings = 0;
  double elapsed = 0.0;
};

/// "segment 3/10, step 3000/10000 (30%), 1.2e+09 traj-steps/s, 4521 crossings, ETA 12 s"
std::string progress_text(const ProgressState& s);
/// "[#########...........]  30% " followed by progress_text; `width` characters of bar.
std::string progress_bar(const ProgressState& s, int width = 24);

class Progress {
 public:
  /// Reports go to `out` when `enabled`; `terminal` selects the bar. Nothing is shown before
  /// `first_after` seconds (short runs stay silent); plain lines then come every `line_every`
  /// seconds, the bar is redrawn at most every 0.1 s.
  Progress(bool enabled, std::FILE* out, bool terminal, double first_after = 2.0,
           double line_every = 10.0);
  /// Called after every segment with the elapsed seconds of the run.
  void update(const ProgressState& s);
  /// Ends the display: the bar's final state and a newline, or a last plain line when earlier
  /// lines were printed.
  void finish(const ProgressState& s);
  int reports() const { return reports_; }

 private:
  void emit(const ProgressState& s, bool last);

  bool enabled_;
  std::FILE* out_;
  bool terminal_;
  double first_after_, line_every_;
  double last_ = -1.0;  ///< elapsed time of the last report (-1: none yet)
  int reports_ = 0;
};

/// Whether stderr is a terminal (a bar) or a file or pipe (plain lines).
bool stderr_is_terminal();

}  // namespace vigor::host
