/// @file codegen.hpp
/// @brief C++ for a formula model: the model header a user would otherwise write to
/// docs/models.md (the traits of models/*.hpp), generated from the parsed trees.
///
/// Nothing of the job's text reaches the source but what the reader has checked: each node of a
/// tree becomes one line `const T tN = tA * tB;` (operators and function names from fixed tables,
/// numbers printed as exact hexadecimal literals, variables as q[i], parameters as c[k]), and the
/// only strings are the model's name, its state, parameter and momentum names, all checked to be
/// identifiers (model_spec.cpp). One node per line keeps the operations and their order exactly
/// those of the tree: vigor compiles with -ffp-contract=off, so the generated model computes what
/// the interpreter (evaluate.hpp) computes, bit for bit, in double.
///
/// The force of a potential is written out: `potential_gradient`, by reverse accumulation over the
/// tree, emitting only the partials that are not structurally zero — what a hand-written gradient
/// does, and what forward-mode duals cannot (under IEEE arithmetic the compiler must keep their
/// products with zero partials; that cost the formula Hénon–Heiles 20–30 % of the built-in model's
/// speed). The other derivatives (Hessians, constraint Jacobians, the Lagrangian's partials and
/// Legendre transform) are left to vigor's dual numbers, as for a hand-written model without
/// hand-written ones.
#pragma once

#include <string>

#include "host/job/formula/model_spec.hpp"

namespace vigor::host::formula {

/// The model header of `spec`: `template <class Real> struct <struct_name>` in namespace
/// vigor::formula_models, with the model's job name spec.name. Without `tangent_maps` the model
/// says `kTangentMaps = false`, and the engines compile no tangent-map code for it
/// (kernels::model_wants_tangent).
std::string model_header(const ModelSpec& spec, const std::string& struct_name = "FormulaModel",
                         bool tangent_maps = true);

}  // namespace vigor::host::formula
