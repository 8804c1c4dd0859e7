/// @file triple_jump.hpp
/// @brief Yoshida's triple jump: the weights that compose a symmetric step S_h of order 2 into a
/// symmetric step of order 4,
///
///     Phi_h = S_{c1 h} ∘ S_{c0 h} ∘ S_{c1 h},   c1 = 1 / (2 - 2^{1/3}),   c0 = 1 - 2 c1.
///
/// yoshida4 composes Störmer–Verlet with them, midpoint4 the implicit midpoint rule.
/// Reference: H. Yoshida, Phys. Lett. A 150 (1990) 262, sec. 4.
#pragma once

namespace vigor::kernels {

struct TripleJump {
  /// 1/(2 - 2^{1/3}) and 1 - 2 c1 (30 digits computed with mpmath).
  static constexpr double kOuter = 1.35120719195965763404768780897;
  static constexpr double kInner = -1.70241438391931526809537561794;
};

}  // namespace vigor::kernels
