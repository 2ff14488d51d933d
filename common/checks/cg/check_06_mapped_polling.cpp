// Checks for cg/06_mapped_polling: residual polled in mapped host memory, three polling policies (the TODO: publish()).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"

using namespace cg_checks;

TEST_CASE("cg/06_mapped_polling solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(names);
}

// The largest problem once (poll=every-k, the policy lesson 05 used); the other two
// policies on a problem that is still larger than L2, to keep the check fast.
TEST_CASE("cg/06_mapped_polling solves the 2.1 M-row problem to tolerance (the other policies: a problem beyond L2)",
          "[exercise]") {
    const auto variants = lesson::cg_variants();
    REQUIRE(variants.size() == 3);
    for (const tut::cg::Variant& v : variants) check_solves(v, v.name == "poll=every-k" ? "large" : "diffusion 64x64x96");
}

TEST_CASE("cg/06_mapped_polling stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop();
}

TEST_CASE("cg/06_mapped_polling refuses what it cannot solve before launching anything", "[baseline]") { check_all_refuse(); }
