/// @file compare.hpp
/// @brief The compares the driver's lane masks are made of, named so that a scalar and a SIMD
/// pack (kernels/simd/pack.hpp, compare_bits) evaluate the same predicate.
#pragma once

#include "kernels/core/config.hpp"

namespace vigor::kernels {

/// Ordered compares are false where either side is NaN (the _OQ predicates on x86).
enum class Cmp { kLt, kLe, kGt, kGe, kEq };

template <Cmp C, class Real>
VIGOR_HD VIGOR_INLINE bool compare(Real a, Real b) {
  if constexpr (C == Cmp::kLt)
    return a < b;
  else if constexpr (C == Cmp::kLe)
    return a <= b;
  else if constexpr (C == Cmp::kGt)
    return a > b;
  else if constexpr (C == Cmp::kGe)
    return a >= b;
  else
    return a == b;
}

}  // namespace vigor::kernels
