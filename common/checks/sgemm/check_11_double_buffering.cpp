// Checks for sgemm/11_double_buffering: two shared-memory buffers, 128 x 128 tile; any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"2 buffers"};

}  // namespace

TEST_CASE("sgemm/11_double_buffering: matches the CPU reference at tiny sizes and sizes that are not multiples "
          "of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    check_correct(kVariants, {4, 7, 127, 129, 255});  // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
}

TEST_CASE("sgemm/11_double_buffering: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000});
    check_correct(kVariants, kTourSizes);
    check_correct({"2 buffers"}, {kLargestSize});
}

TEST_CASE("sgemm/11_double_buffering: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
