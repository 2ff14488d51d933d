// Checks for sgemm/03_unrolling: the compile-time-N kernels exist for N = 256, 512, 1024,
// 2048, 4096, 8192 only and must refuse every other N; the runtime-n kernel takes any N.
#include "sgemm_checks.hpp"

#include <string>

namespace lesson {
// Defined in the lesson's unrolling.cu: the sizes compiled in.
std::vector<int> sgemm_supported_sizes();
}  // namespace lesson

using namespace sgemm_checks;

namespace {

// The compile-time-N variants ("unroll=U", the exercise) or the runtime-n one (lesson 01's kernel).
std::vector<Variant> variants(bool compile_time) {
    std::vector<Variant> out;
    for (const Variant& v : lesson_variants())
        if ((v.name.rfind("unroll=", 0) == 0) == compile_time) out.push_back(v);
    return out;
}

}  // namespace

TEST_CASE("sgemm/03_unrolling compiles in exactly the sizes its README promises", "[baseline]") {
    REQUIRE(lesson::sgemm_supported_sizes() == std::vector<int>{256, 512, 1024, 2048, 4096, 8192});
    REQUIRE(variants(true).size() == 3);
    REQUIRE(variants(false).size() == 1);
}

TEST_CASE("sgemm/03_unrolling compile-time kernels match the CPU reference at N = 256 and 512", "[exercise]") {
    for (const Variant& v : variants(true))
        for (int n : {256, 512}) check_correct(v, n);
}

// Every kernel compiled in up to 4096 (one matrix of 4096^2 floats, 64 MB, exceeds the L2),
// and the N = 8192 kernel of the fastest variant.
TEST_CASE("sgemm/03_unrolling compile-time kernels match cuBLAS at N = 1024, 2048, 4096 and 8192", "[exercise]") {
    for (const Variant& v : variants(true))
        for (int n : {1024, 2048, 4096}) check_correct(v, n);
    check_correct(variant_named("unroll=16"), kLargestSize);
}

TEST_CASE("sgemm/03_unrolling compile-time kernels refuse every size not compiled in, naming the sizes",
          "[baseline]") {
    for (const Variant& v : variants(true))
        for (int n : {1000, 100, 0, -1, 255, 257, tut::sgemm::kMaxN + 1}) {
            check_refuses(v, n);
            try {
                v.run(n, nullptr, nullptr, nullptr);
            } catch (const tut::Unsupported& e) {
                INFO("the message should list the supported sizes: " << e.what());
                CHECK(std::string(e.what()).find("4096") != std::string::npos);
            }
        }
}

TEST_CASE("sgemm/03_unrolling runtime-n kernel (lesson 01's) still takes any N", "[baseline]") {
    for (const Variant& v : variants(false)) {
        for (int n : {1, 17, 100, 257}) check_correct(v, n);
        check_correct(v, 1000);
        for (int n : {0, -1, tut::sgemm::kMaxN + 1}) check_refuses(v, n);
    }
}
