// CPU checks of the bandwidth track's helpers (common/include/tut/bandwidth.hpp): the
// gather reference, index validation, byte accounting, the PCIe peak, and the source
// pattern the GPU checks compare against (bandwidth/device_checks.hpp). No GPU needed.
#include "bandwidth/device_checks.hpp"
#include "catch.hpp"
#include "tut/bandwidth.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <string>
#include <vector>

namespace bw = tut::bandwidth;

namespace {
// A stand-in for a device pointer: never dereferenced by the validation.
const float* fake_src() {
    static float cell;
    return &cell;
}
const int* fake_indices() {
    static int cell;
    return &cell;
}
std::string refusal(const bw::GatherInput& in) {
    try {
        bw::require_gather(in, const_cast<float*>(fake_src()));
    } catch (const tut::Unsupported& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("bandwidth: the CPU gather is src(:, indices), column-major", "[bandwidth]") {
    // 3 x 4, column-major: column c holds 10c, 10c+1, 10c+2.
    const std::vector<float> src{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};
    CHECK(bw::gather_cpu(3, 4, src, {2}) == std::vector<float>{20, 21, 22});
    CHECK(bw::gather_cpu(3, 4, src, {3, 0, 3}) == std::vector<float>{30, 31, 32, 0, 1, 2, 30, 31, 32});
    CHECK(bw::gather_cpu(3, 4, src, {}).empty());
    CHECK(bw::gather_cpu(3, 4, src, {0, 1, 2, 3}) == src);
    // One row: the gather is a plain index lookup.
    CHECK(bw::gather_cpu(1, 5, {5, 6, 7, 8, 9}, {4, 4, 0}) == std::vector<float>{9, 9, 5});
    CHECK_THROWS_AS(bw::gather_cpu(3, 4, src, {4}), tut::Unsupported);
    CHECK_THROWS_AS(bw::gather_cpu(3, 4, std::vector<float>(5), {0}), std::invalid_argument);
}

TEST_CASE("bandwidth: the mismatch finder compares bitwise and names the first wrong element", "[bandwidth]") {
    const std::vector<float> src{0, 1, 2, 10, 11, 12};
    const std::vector<int> idx{1, 0};
    std::vector<float> got{10, 11, 12, 0, 1, 2};
    CHECK(bw::first_gather_mismatch(3, src.data(), idx, got.data()) == -1);
    got[4] = -1;
    CHECK(bw::first_gather_mismatch(3, src.data(), idx, got.data()) == 4);
    const float nan = std::nanf("");
    std::vector<float> a{1, nan}, b{1, nan};
    CHECK(bw::first_difference(a.data(), b.data(), 2) == -1);  // the same bits
    b[0] = -0.0f;
    a[0] = 0.0f;
    CHECK(bw::first_difference(a.data(), b.data(), 2) == 0);  // 0 == -0 as floats, not as bits
}

TEST_CASE("bandwidth: validation refuses empty matrices, bad indices and sizes, in O(1)", "[bandwidth]") {
    const std::vector<int> ok_idx{0, 4, 2, 2};
    CHECK(refusal(bw::make_gather_input(3, 5, fake_src(), ok_idx, fake_indices())).empty());
    CHECK(refusal(bw::make_gather_input(3, 5, fake_src(), {}, nullptr)).empty());  // nothing to gather is fine
    CHECK(refusal(bw::make_gather_input(0, 5, fake_src(), ok_idx, fake_indices())).find("empty") != std::string::npos);
    CHECK(refusal(bw::make_gather_input(3, 0, fake_src(), {}, nullptr)).find("empty") != std::string::npos);

    const bw::GatherInput bad = bw::make_gather_input(3, 5, fake_src(), {0, 1, 5, -1}, fake_indices());
    CHECK(bad.bad_position == 2);
    CHECK(bad.bad_value == 5);
    const std::string why = refusal(bad);
    CHECK(why.find("index 5 at position 2 is out of range") != std::string::npos);
    CHECK(why.find("0..4") != std::string::npos);
    CHECK(refusal(bw::make_gather_input(3, 5, fake_src(), {-1}, fake_indices())).find("out of range") !=
          std::string::npos);

    // 2^30 elements is the limit for the source and the target.
    CHECK(refusal(bw::make_gather_input(1 << 15, 1 << 15, fake_src(), {0}, fake_indices())).empty());
    CHECK(refusal(bw::make_gather_input(1 << 15, (1 << 15) + 1, fake_src(), {0}, fake_indices())).find("source") !=
          std::string::npos);
    CHECK(refusal(bw::make_gather_input(1 << 15, 2, fake_src(), std::vector<int>((1 << 15) + 1, 1), fake_indices()))
              .find("target") != std::string::npos);
    // Beyond int: refused, not wrapped around.
    CHECK(!refusal(bw::make_gather_input(1LL << 32, 1, fake_src(), {0}, fake_indices())).empty());
    // Missing pointers.
    CHECK(refusal(bw::make_gather_input(3, 5, nullptr, ok_idx, fake_indices())).find("null") != std::string::npos);
    CHECK(refusal(bw::make_gather_input(3, 5, fake_src(), ok_idx, nullptr)).find("null") != std::string::npos);
    // Copies: n = 0 is fine with no pointers; more than 2^30 floats is not.
    CHECK_NOTHROW(bw::require_copy(0, nullptr, nullptr));
    CHECK_THROWS_AS(bw::require_copy(bw::kMaxCopyElements + 1, fake_src(), fake_src()), tut::Unsupported);
    CHECK_THROWS_AS(bw::require_copy(4, nullptr, fake_src()), tut::Unsupported);
}

TEST_CASE("bandwidth: indices for the lesson runs: sequential, random sample, repeats", "[bandwidth]") {
    CHECK(bw::make_indices(4, 10, bw::IndexOrder::Sequential, 1) == std::vector<int>{0, 1, 2, 3});
    auto sample = bw::make_indices(1000, 1000, bw::IndexOrder::Random, 7);
    CHECK(sample == bw::make_indices(1000, 1000, bw::IndexOrder::Random, 7));  // deterministic
    std::vector<int> sorted = sample;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> all(1000);
    std::iota(all.begin(), all.end(), 0);
    CHECK(sorted == all);   // a permutation: distinct while count <= cols
    CHECK(sample != all);   // and not the identity
    auto repeats = bw::make_indices(50, 7, bw::IndexOrder::Random, 3);
    REQUIRE(repeats.size() == 50);
    for (int x : repeats) REQUIRE((x >= 0 && x < 7));
}

TEST_CASE("bandwidth: bytes are counted read + write", "[bandwidth]") {
    CHECK(bw::transfer_bytes_moved(bw::Direction::DeviceToDevice, 1000) == 2000);
    CHECK(bw::transfer_bytes_moved(bw::Direction::HostToDevice, 1000) == 1000);
    CHECK(bw::transfer_bytes_moved(bw::Direction::DeviceToHost, 1000) == 1000);
    CHECK(bw::copy_bytes_moved(1 << 20) == 8.0 * (1 << 20));
    // The classic question: 1000 rows x 10000 columns extracted = 80 MB moved.
    CHECK(bw::gather_bytes_moved(1000, 10000) == 80e6);
    CHECK(bw::gbs(80e6, 1.0) == Approx(80.0));
    CHECK(std::isnan(bw::gbs(1.0, 0.0)));
}

TEST_CASE("bandwidth: theoretical PCIe bandwidth from the sysfs texts", "[bandwidth]") {
    CHECK(bw::pcie_peak_gbs("32.0 GT/s PCIe", "16") == Approx(32.0 * 16 * 128 / 130 / 8));  // gen 5 x16: 63.0
    CHECK(bw::pcie_peak_gbs("16.0 GT/s PCIe", "16") == Approx(31.5).epsilon(0.01));         // gen 4
    CHECK(bw::pcie_peak_gbs("8.0 GT/s PCIe", "16") == Approx(15.75).epsilon(0.01));         // gen 3
    CHECK(bw::pcie_peak_gbs("5.0 GT/s", "16") == Approx(8.0));                              // gen 2: 8b/10b
    CHECK(std::isnan(bw::pcie_peak_gbs("Unknown", "16")));
    CHECK(std::isnan(bw::pcie_peak_gbs("", "")));
    CHECK(std::isnan(bw::pcie_peak_gbs("32.0 GT/s", "x")));
}

TEST_CASE("bandwidth: lesson 01's transfer kinds pair each pageable kind with its pinned one", "[bandwidth]") {
    const auto kinds = bw::transfer_kinds();
    REQUIRE(kinds.size() == 5);
    // The table's columns, in order: Transfers takes a pageable kind's yardstick from the kind
    // after it, and the H2D pinned/pageable gain from the first two.
    CHECK(tut::names_of(kinds) ==
          std::vector<std::string>{"h2d-pageable", "h2d-pinned", "d2h-pageable", "d2h-pinned", "d2d"});
    for (size_t k = 0; k + 1 < kinds.size(); ++k)
        if (kinds[k].direction != bw::Direction::DeviceToDevice && !kinds[k].pinned) {
            CHECK(kinds[k + 1].pinned);
            CHECK(kinds[k + 1].direction == kinds[k].direction);
        }
}

TEST_CASE("bandwidth: the checks' source pattern is exact in float and tells neighbours apart", "[bandwidth]") {
    // Whole numbers below 2^24: every one is exactly representable in float.
    for (uint64_t i : {uint64_t(0), uint64_t(1), uint64_t(16777212), uint64_t(1) << 30, (uint64_t(1) << 30) + 15}) {
        const float v = bandwidth_checks::pattern_value(i);
        CHECK(v >= 0.0f);
        CHECK(v < 16777216.0f);
        CHECK(v == std::floor(v));
    }
    // Distinct over a long window: a value copied from a nearby place (an off-by-one, a
    // wrong column) never matches by chance.
    const size_t window = size_t(1) << 20;
    std::vector<float> values(window);
    for (size_t i = 0; i < window; ++i) values[i] = bandwidth_checks::pattern_value((uint64_t(1) << 29) + i);
    std::sort(values.begin(), values.end());
    CHECK(std::adjacent_find(values.begin(), values.end()) == values.end());
    // Shifts by a whole column of the largest checked shapes change every value.
    for (uint64_t shift : {uint64_t(1), uint64_t(4093), uint64_t(1000), uint64_t(1) << 29})
        for (uint64_t i : {uint64_t(0), uint64_t(12345), uint64_t(999999937)})
            CHECK(bandwidth_checks::pattern_value(i) != bandwidth_checks::pattern_value(i + shift));
}
