// Checks for cg/08_persistent: one persistent cooperative kernel (the TODO: the grid-wide barrier).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"

using namespace cg_checks;

namespace lesson {
std::vector<tut::cg::Variant> cg_path_variants();  // defined in persistent.cu
}

namespace {
const char* const kPaths[] = {"resident path", "streaming path", "streaming path, vectors in memory"};

// The path variant of this name (nullptr if persistent.cu defines none: the caller REQUIREs it).
const tut::cg::Variant* path_variant(const std::string& name) {
    static const std::vector<tut::cg::Variant> variants = lesson::cg_path_variants();
    for (const tut::cg::Variant& v : variants)
        if (v.name == name) return &v;
    return nullptr;
}
}  // namespace

TEST_CASE("cg/08_persistent solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(names);
}

TEST_CASE("cg/08_persistent: each path (resident; streaming with its vectors on chip, and in memory) solves the "
          "small problems and the default one",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    for (const char* path : kPaths) {
        INFO("path: " << path);
        const tut::cg::Variant* v = path_variant(path);
        REQUIRE(v != nullptr);
        for (const auto& name : names) check_solves(*v, name);
    }
}

TEST_CASE("cg/08_persistent solves the 2.1 M-row problem to tolerance", "[exercise]") { check_all_solve({"large"}); }

TEST_CASE("cg/08_persistent: the streaming path with its vectors in memory solves the 2.1 M-row problem", "[exercise]") {
    const tut::cg::Variant* v = path_variant("streaming path, vectors in memory");
    REQUIRE(v != nullptr);
    check_solves(*v, "large");
}

TEST_CASE("cg/08_persistent: the resident path refuses the 2.1 M-row problem (it does not fit on chip)", "[baseline]") {
    const tut::cg::Variant* v = path_variant("resident path");
    REQUIRE(v != nullptr);
    TestProblem& p = problem("large");
    SolveOptions opt;
    REQUIRE_THROWS_AS(v->make(p.A, *p.dA, opt), tut::Unsupported);
}

TEST_CASE("cg/08_persistent stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop();
}

TEST_CASE("cg/08_persistent refuses what it cannot solve before launching anything", "[baseline]") { check_all_refuse(); }
