// The checks' GPU helpers (device_compare.hpp) against the host functions they stand in
// for: the generator gives the same bits, the comparison the same verdict and the same
// first and worst failing elements.
#include "catch.hpp"
#include "device_compare.hpp"
#include "tut/buffer.hpp"
#include "tut/compare.hpp"
#include "tut/random.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace {

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Both comparisons of the same arrays; the relative L2 error is summed in another order on
// the GPU, so it agrees to rounding, not to the bit.
void require_same(const std::vector<float>& got, const std::vector<float>& ref, const std::vector<float>& scale,
                  double tolerance) {
    const tut::Comparison host = tut::compare(got.data(), ref.data(), got.size(), tolerance, scale.data());
    tut::DeviceBuffer<float> d_got(got), d_ref(ref), d_scale(scale);
    const tut::Comparison device =
        tut_checks::compare_on_device(d_got.get(), d_ref.get(), got.size(), tolerance, d_scale.get());
    INFO("host: " << host.describe() << "\ndevice: " << device.describe());
    CHECK(device.count == host.count);
    CHECK(device.bad == host.bad);
    CHECK(device.nonfinite == host.nonfinite);
    CHECK(device.first_bad == host.first_bad);
    CHECK(device.worst == host.worst);
    CHECK(same(device.first_got, host.first_got));
    CHECK(same(device.worst_got, host.worst_got));
    CHECK(device.worst_allowed == host.worst_allowed);
    CHECK(device.max_abs_error == host.max_abs_error);
    CHECK(std::fabs(device.rel_l2_error - host.rel_l2_error) <= 1e-12 + 1e-9 * host.rel_l2_error);
}

}  // namespace

TEST_CASE("fill_uniform_on_device gives tut::fill_uniform's values, bit for bit", "[baseline]") {
    for (const size_t count : {size_t(1), size_t(1000), size_t(1) << 20}) {
        for (const uint64_t seed : {uint64_t(0), uint64_t(1513), ~uint64_t(0)}) {
            const std::vector<float> host = tut::random_vector<float>(count, seed, -3.0, 5.0);
            tut::DeviceBuffer<float> device(count);
            tut_checks::fill_uniform_on_device(device.get(), count, seed, -3.0, 5.0);
            const std::vector<float> got = device.download();
            CAPTURE(count, seed);
            REQUIRE(std::memcmp(got.data(), host.data(), count * sizeof(float)) == 0);
        }
    }
}

TEST_CASE("abs_on_device is fabs", "[baseline]") {
    const std::vector<float> in = tut::random_vector<float>(4099, 7);
    tut::DeviceBuffer<float> d(in);
    tut_checks::abs_on_device(d.get(), d.get(), in.size());
    const std::vector<float> out = d.download();
    for (size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == std::fabs(in[i]));
}

TEST_CASE("compare_on_device agrees with tut::compare", "[baseline]") {
    const size_t n = (size_t(1) << 20) + 3;
    const std::vector<float> ref = tut::random_vector<float>(n, 11);
    std::vector<float> scale(n);
    for (size_t i = 0; i < n; ++i) scale[i] = std::fabs(ref[i]) + 0.5f;
    const double tolerance = 1e-5;

    SECTION("all within tolerance") {
        std::vector<float> got = ref;
        for (size_t i = 0; i < n; i += 97) got[i] = ref[i] + 1e-6f * scale[i];
        require_same(got, ref, scale, tolerance);
    }
    SECTION("a NaN, an Inf, two elements far off and one just outside") {
        std::vector<float> got = ref;
        got[n - 1] = std::numeric_limits<float>::quiet_NaN();
        got[123457] = std::numeric_limits<float>::infinity();
        got[654321] = ref[654321] + 1.0f;
        got[999] = ref[999] + 2.0f;
        got[77] = ref[77] + float(2e-5 * scale[77]);
        require_same(got, ref, scale, tolerance);
    }
    SECTION("poisoned output: every element wrong") {
        std::vector<float> got(n, std::numeric_limits<float>::quiet_NaN());
        require_same(got, ref, scale, tolerance);
    }
}
