// Checks for bandwidth/04_gather_incremental: exact gathers against src(:, indices) on the CPU.
#include "bandwidth_checks.hpp"

using namespace bandwidth_checks;

TEST_CASE("bandwidth/04_gather_incremental: small shapes, 0, 1 and many indices, repeated and out of order", "[exercise]") {
    check_small_gathers();
}

TEST_CASE("bandwidth/04_gather_incremental: the classic size and many indices", "[exercise]") { check_many_indices(); }

TEST_CASE("bandwidth/04_gather_incremental: huge columns and the largest size, 2^30 floats", "[exercise]") { check_largest(); }

TEST_CASE("bandwidth/04_gather_incremental: refuses an empty matrix, a bad index, too large a size", "[baseline]") {
    check_all_refusals();
}

TEST_CASE("bandwidth/04_gather_incremental: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}
