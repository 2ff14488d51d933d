// Checks for sgemm/03_unrolling: the compile-time-N kernels exist for N = 256, 512, 1024,
// 2048, 4096, 8192 only and must refuse every other N; the runtime-n kernel takes any N.
#include "sgemm_checks.hpp"

#include <string>

namespace lesson {
// Defined in the lesson's unrolling.cu: the sizes compiled in.
std::vector<int> supported_sizes();
}  // namespace lesson

using namespace sgemm_checks;

namespace {

// N a template parameter, the k loop unrolled: the exercise.
const std::vector<std::string> kUnrolled{"unroll=1", "unroll=4", "unroll=16"};
// Lesson 01's kernel, N known at run time.
const std::vector<std::string> kRuntimeN{"runtime n"};

}  // namespace

TEST_CASE("sgemm/03_unrolling: compiles in exactly the sizes its README promises", "[baseline]") {
    REQUIRE(lesson::supported_sizes() == std::vector<int>{256, 512, 1024, 2048, 4096, 8192});
    REQUIRE(variants_named(kUnrolled).size() == 3);
    REQUIRE(variants_named(kRuntimeN).size() == 1);
}

TEST_CASE("sgemm/03_unrolling: compile-time kernels match the CPU reference at N = 256 and 512", "[exercise]") {
    check_correct(kUnrolled, {256, 512});
}

// Every kernel compiled in up to 4096 (one matrix of 4096^2 floats, 64 MB, exceeds the L2),
// and the N = 8192 kernel of the fastest variant.
TEST_CASE("sgemm/03_unrolling: compile-time kernels match cuBLAS at N = 1024, 2048, 4096 and 8192", "[exercise]") {
    check_correct(kUnrolled, {1024, 2048, 4096});
    check_correct({"unroll=16"}, {kLargestSize});
}

TEST_CASE("sgemm/03_unrolling: compile-time kernels refuse every size not compiled in, naming the sizes",
          "[baseline]") {
    const std::vector<int> sizes{1000, 100, 0, -1, 255, 257, tut::sgemm::kMaxN + 1};
    check_refuses(kUnrolled, sizes);
    for (const Variant& v : variants_named(kUnrolled))
        for (int n : sizes) {
            try {
                v.run(n, nullptr, nullptr, nullptr);
            } catch (const tut::Unsupported& e) {
                INFO("variant '" << v.name << "': the message should list the supported sizes: " << e.what());
                CHECK(std::string(e.what()).find("4096") != std::string::npos);
            }
        }
}

TEST_CASE("sgemm/03_unrolling: the runtime-n kernel (lesson 01's) still takes any N", "[baseline]") {
    check_correct(kRuntimeN, {1, 17, 100, 257, 1000});
    check_refuses(kRuntimeN, kRefusedSizes);
}
