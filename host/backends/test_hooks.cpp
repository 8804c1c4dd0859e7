#include "host/backends/test_hooks.hpp"

namespace vigor::host {

EngineTestHooks& engine_test_hooks() {
  static EngineTestHooks hooks;
  return hooks;
}

}  // namespace vigor::host
