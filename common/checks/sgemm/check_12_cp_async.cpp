// Checks for sgemm/12_cp_async: 128 x 256 tile, cp.async pipelines of 2-4 stages and register staging; any N in
// 1..8192. The cp.async variants (the exercise) need compute capability 8.0: on an older GPU the whole program is
// skipped (exit 77, with the reason), since the checks name them (sgemm_check_inputs.hpp's named()).
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"cp.async 2 stages", "cp.async 3 stages", "cp.async 4 stages",
                                         "registers 2 buffers"};

}  // namespace

TEST_CASE("sgemm/12_cp_async: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    check_correct(kVariants, {4, 7, 127, 129, 255});  // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
}

TEST_CASE("sgemm/12_cp_async: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000});
    check_correct(kVariants, kTourSizes);
    check_correct({"cp.async 3 stages"}, {kLargestSize});
}

TEST_CASE("sgemm/12_cp_async: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
