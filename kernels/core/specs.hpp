/// @file specs.hpp
/// @brief Plain descriptions of model parameters and integrator options.
///
/// Models and integrators list their tunables as constexpr arrays of these records; the host reads
/// them for `vigor list`, for defaults and for validation of job files. Nothing here is used on the
/// device.
#pragma once

namespace vigor::kernels {

/// What values a parameter or option accepts (beyond being a finite number).
enum class Rule {
  kFinite,       ///< any finite real number
  kPositive,     ///< > 0
  kNonNegative,  ///< >= 0
  kCount,        ///< an integer >= 1
  kStageCount    ///< an integer from 1 to 8 (the stages of a collocation method)
};

/// One named real parameter of a model or option of an integrator.
struct ParamSpec {
  const char* name;
  double default_value;
  Rule rule;
  const char* description;
};

}  // namespace vigor::kernels
