#include "host/run/stop.hpp"

#include <csignal>
#include <cstring>

namespace vigor::host {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
  // A second signal means "now": the default action ends the process at once.
  if (g_signal != 0) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_signal = sig;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

}  // namespace

Interrupted::Interrupted(int signal, std::int64_t step, std::int64_t steps, const std::string& next)
    : std::runtime_error(
          std::string("interrupted by ") + signal_name(signal) + " at step " +
          std::to_string(step) + " of " + std::to_string(steps) + ": " +
          (next.empty() ? "no results written (the run must be started again)" : next)),
      signal_(signal),
      step_(step),
      steps_(steps) {}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int stop_requested() { return int(g_signal); }

}  // namespace vigor::host
