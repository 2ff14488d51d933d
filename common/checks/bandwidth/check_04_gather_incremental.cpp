// Checks for bandwidth/04_gather_incremental: exact gathers against src(:, indices) on the CPU.
#include "bandwidth_checks.hpp"

using namespace bandwidth_checks;

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants();  // gather_incremental.cu
}

namespace {

// The variants the lesson must have, by name: one removed or renamed fails the checks.
std::vector<GatherVariant> checked_variants() {
    return required(lesson::variants(), {"incremental, 64x256 (classic launch)",
                                         "incremental, full grid"});
}

}  // namespace

TEST_CASE("bandwidth/04_gather_incremental: small shapes, 0, 1 and many indices, repeated and out of order",
          "[exercise]") {
    check_small_gathers(checked_variants());
}

TEST_CASE("bandwidth/04_gather_incremental: the classic size and many indices", "[exercise]") {
    check_many_indices(checked_variants());
}

TEST_CASE("bandwidth/04_gather_incremental: huge columns and the largest size, 2^30 floats", "[exercise]") {
    check_largest(checked_variants());
}

TEST_CASE("bandwidth/04_gather_incremental: refuses an empty matrix, a bad index, too large a size", "[baseline]") {
    check_all_refusals(checked_variants());
}

TEST_CASE("bandwidth/04_gather_incremental: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}
