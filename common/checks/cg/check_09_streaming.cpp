// Checks for cg/09_streaming: the persistent kernel streaming the matrix from memory, each
// block's vectors on chip or in memory (the TODO: phase B on the block's own rows).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"

using namespace cg_checks;

namespace {
// The variant of this name (the caller REQUIREs it exists).
const tut::cg::Variant* variant(const std::string& name) {
    static const std::vector<tut::cg::Variant> variants = lesson::cg_variants();
    for (const tut::cg::Variant& v : variants)
        if (v.name == name) return &v;
    return nullptr;
}
}  // namespace

TEST_CASE("cg/09_streaming solves the default problem and small ones to tolerance, vectors on chip and in memory",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(names);
}

TEST_CASE("cg/09_streaming solves the 2.1 M-row problem to tolerance (vectors on chip)", "[exercise]") {
    const tut::cg::Variant* v = variant("vectors=on-chip");
    REQUIRE(v != nullptr);
    check_solves(*v, "large");
}

TEST_CASE("cg/09_streaming solves a problem larger than L2 with its vectors in memory", "[exercise]") {
    const tut::cg::Variant* v = variant("vectors=memory");
    REQUIRE(v != nullptr);
    check_solves(*v, "diffusion 64x64x96");
}

TEST_CASE("cg/09_streaming stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop();
}

TEST_CASE("cg/09_streaming refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse();
}
