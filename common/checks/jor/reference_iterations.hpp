/// @file reference_iterations.hpp
/// @brief Iterations of the CPU `scalar` JOR version on matrix 0 of the default seed at
/// N = 8192 (a = 0.9; float tol 1e-6, double tol 1e-8), measured once: the GPU checks
/// compare with them instead of spending seconds per check on the CPU solve, and the CPU
/// test "[jor]" of check-cpu recomputes them, so they cannot go stale.
#pragma once

namespace jor_checks {
inline constexpr int kReferenceN = 8192;
inline constexpr int kScalarIterations8192Float = 8;
inline constexpr int kScalarIterations8192Double = 10;
inline constexpr int kScalarIterations8192FloatMin = 4;   // the report's min rule
inline constexpr int kScalarIterations8192DoubleMin = 5;
}  // namespace jor_checks
