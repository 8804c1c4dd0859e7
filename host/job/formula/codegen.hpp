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
/// Derivatives (forces, Hessians, constraint Jacobians, Legendre transforms) are left to vigor's
/// dual numbers, as for a hand-written model without hand-written gradients.
#pragma once

#include <string>

#include "host/job/formula/model_spec.hpp"

namespace vigor::host::formula {

/// The model header of `spec`: `template <class Real> struct <struct_name>` in namespace
/// vigor::formula_models, with the model's job name spec.name.
std::string model_header(const ModelSpec& spec, const std::string& struct_name = "FormulaModel");

}  // namespace vigor::host::formula
