// Checks for bandwidth/03_gather_divmod: exact gathers against src(:, indices) on the CPU.
#include "bandwidth_checks.hpp"

using namespace bandwidth_checks;

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants();  // gather_divmod.cu
}

namespace {

// The variants the lesson must have, by name: one removed or renamed fails the checks.
std::vector<GatherVariant> checked_variants() {
    return required(lesson::variants(), {"div and mod, 64x256 (classic launch)",
                                         "div and mod, full grid"});
}

}  // namespace

TEST_CASE("bandwidth/03_gather_divmod: small shapes, 0, 1 and many indices, repeated and out of order", "[exercise]") {
    check_small_gathers(checked_variants());
}

TEST_CASE("bandwidth/03_gather_divmod: the classic size and many indices", "[exercise]") {
    check_many_indices(checked_variants());
}

TEST_CASE("bandwidth/03_gather_divmod: huge columns and the largest size, 2^30 floats", "[exercise]") {
    check_largest(checked_variants());
}

TEST_CASE("bandwidth/03_gather_divmod: refuses an empty matrix, a bad index, too large a size", "[baseline]") {
    check_all_refusals(checked_variants());
}

TEST_CASE("bandwidth/03_gather_divmod: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}
