/// @file bandwidth_checks.hpp
/// @brief Checks shared by the bandwidth lessons: exact copies and gathers, with guard zones.
///
/// Copies and gathers only move floats, so results must be bitwise equal to the source
/// (no tolerance). Every output buffer is poisoned (all bits set: NaN) with a few spare
/// elements before and after the region the kernel may write; those must still be
/// poison afterwards, which catches an off-by-one in a tail or a misaligned float4.
#pragma once

#include "catch.hpp"
#include "lesson_hint.hpp"
#include "tut/bandwidth.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>

namespace bandwidth_checks {

using namespace tut::bandwidth;

/// Spare poisoned floats after every output region.
inline constexpr size_t kGuard = 16;

inline bool is_poison(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits == 0xFFFFFFFFu;
}

/// Index of the first element of [begin, end) that is not poison, or -1.
inline long long first_unpoisoned(const std::vector<float>& v, size_t begin, size_t end) {
    for (size_t i = begin; i < end && i < v.size(); ++i)
        if (!is_poison(v[i])) return static_cast<long long>(i);
    return -1;
}

/// Source data: random for small arrays; for big ones a cheap pattern of distinct
/// whole numbers below 2^24 (exact in float), so filling 4 GiB takes a second, not ten.
inline std::vector<float> source_data(size_t count, uint64_t seed) {
    if (count <= (size_t(1) << 24)) return tut::random_vector<float>(count, seed);
    std::vector<float> v(count);
    const uint64_t shift = seed % 1000;
    for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>((i * 2654435761ull + shift) % 16777213ull);
    return v;
}

// ----------------------------------------------------------------------------------
// Copies (lesson 02)
// ----------------------------------------------------------------------------------

/// One device source and one device target, reused across checks (the largest is 4 GiB each).
struct CopyFixture {
    std::vector<float> host;
    tut::DeviceBuffer<float> src, dst;
    explicit CopyFixture(size_t capacity) : host(source_data(capacity, 77)), src(host), dst(capacity) {}
};

inline CopyFixture& copy_fixture(size_t capacity) {
    static std::unique_ptr<CopyFixture> fixture;
    if (!fixture || fixture->host.size() < capacity) {
        fixture.reset();  // free the old buffers first
        fixture = std::make_unique<CopyFixture>(capacity);
    }
    return *fixture;
}

/// Runs `v` on n floats from src + src_offset to dst + dst_offset and requires an exact
/// copy, with every float around the target region left untouched.
inline void check_copy(const CopyVariant& v, size_t n, size_t src_offset, size_t dst_offset) {
    CopyFixture& f = copy_fixture(std::max(src_offset, dst_offset) + n + kGuard);
    const size_t region = dst_offset + n + kGuard;
    f.dst.poison();
    INFO("variant '" << v.name << "', n = " << n << " floats, src offset " << src_offset << ", dst offset "
                     << dst_offset << " floats"
                     << (v.path ? ", path " + v.path(n, f.src.get() + src_offset, f.dst.get() + dst_offset) : ""));
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(v.run(n, f.src.get() + src_offset, f.dst.get() + dst_offset));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    std::vector<float> got(region);
    REQUIRE_NOTHROW(TUT_CUDA(cudaMemcpy(got.data(), f.dst.get(), region * sizeof(float), cudaMemcpyDeviceToHost)));
    const long long bad = first_difference(got.data() + dst_offset, f.host.data() + src_offset, n);
    INFO("first wrong element: " << bad << (bad >= 0 && is_poison(got[dst_offset + static_cast<size_t>(bad)])
                                                ? " (never written: still poison)"
                                                : ""));
    REQUIRE(bad < 0);
    INFO("an element before the target was written: " << first_unpoisoned(got, 0, dst_offset));
    REQUIRE(first_unpoisoned(got, 0, dst_offset) < 0);
    INFO("an element after the target was written: " << first_unpoisoned(got, dst_offset + n, region));
    REQUIRE(first_unpoisoned(got, dst_offset + n, region) < 0);
}

/// Sizes around every width that matters: warps, blocks of 256, float4 (4), tails.
inline const std::vector<size_t> kCopySizes{0,    1,    2,    3,    4,    5,     7,           8,
                                            31,   32,   33,   255,  256,  257,   1000,        1023,
                                            1025, 4099, 65541, size_t(1) << 20, (size_t(1) << 20) + 1,
                                            3 * (size_t(1) << 20) + 7};

/// (src, dst) offsets in floats: aligned, equally misaligned, and misaligned differently.
inline const std::vector<std::pair<size_t, size_t>> kCopyOffsets{{0, 0}, {1, 1}, {2, 2}, {3, 3},
                                                                 {1, 0}, {0, 3}, {2, 1}};

inline std::vector<CopyVariant> copy_variants_where(bool want_float4) {
    std::vector<CopyVariant> picked;
    for (auto& v : lesson::copy_variants())
        if ((v.name.find("float4") != std::string::npos) == want_float4) picked.push_back(v);
    return picked;
}

// ----------------------------------------------------------------------------------
// Gathers (lessons 03-06)
// ----------------------------------------------------------------------------------

/// A source matrix on host and device (at a float offset in its device buffer).
struct Matrix {
    int rows = 0, cols = 0;
    size_t offset = 0;
    std::vector<float> host;
    tut::DeviceBuffer<float> device;
    Matrix(int r, int c, size_t off, uint64_t seed)
        : rows(r), cols(c), offset(off), host(source_data(size_t(r) * size_t(c), seed)),
          device(off + size_t(r) * size_t(c)) {
        if (!host.empty())
            TUT_CUDA(cudaMemcpy(device.get() + off, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    const float* src() const { return device.get() + offset; }
};

/// The matrix of this shape (one at a time is kept: the largest is 4 GiB).
inline Matrix& matrix(int rows, int cols, size_t offset = 0) {
    static std::unique_ptr<Matrix> cached;
    if (!cached || cached->rows != rows || cached->cols != cols || cached->offset != offset) {
        cached.reset();
        cached = std::make_unique<Matrix>(rows, cols, offset, 1000u + unsigned(rows) * 7u + unsigned(cols));
    }
    return *cached;
}

/// Runs `v` on src(:, indices) and requires the exact result, guard zones untouched.
inline void check_gather(const GatherVariant& v, int rows, int cols, const std::vector<int>& indices,
                         const std::string& what, size_t src_offset = 0, size_t dst_offset = 0) {
    Matrix& m = matrix(rows, cols, src_offset);
    tut::DeviceBuffer<int> idx(indices);
    const size_t target = size_t(rows) * indices.size();
    const size_t region = dst_offset + target + kGuard;
    tut::DeviceBuffer<float> dst(region);
    dst.poison();
    const GatherInput in = make_gather_input(rows, cols, m.src(), indices, idx.get());
    float* out = dst.get() + dst_offset;
    INFO("variant '" << v.name << "': " << what << "; src " << rows << " x " << cols << ", " << indices.size()
                     << " indices, src offset " << src_offset << ", dst offset " << dst_offset
                     << (v.path ? ", path " + v.path(in, out) : ""));
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(v.run(in, out));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    const std::vector<float> got = dst.download();
    const long long bad = first_gather_mismatch(rows, m.host.data(), indices, got.data() + dst_offset);
    INFO("first wrong element: "
         << (bad < 0 ? std::string("none")
                     : "row " + std::to_string(bad % rows) + " of extracted column " + std::to_string(bad / rows) +
                           " (source column " + std::to_string(indices[size_t(bad / rows)]) + ")" +
                           (is_poison(got[dst_offset + size_t(bad)]) ? ", never written (still poison)" : "")));
    REQUIRE(bad < 0);
    REQUIRE(first_unpoisoned(got, 0, dst_offset) < 0);
    INFO("an element after the target was written: " << first_unpoisoned(got, dst_offset + target, region));
    REQUIRE(first_unpoisoned(got, dst_offset + target, region) < 0);
}

inline std::vector<int> sequential(int count, int first = 0) {
    std::vector<int> v(size_t(std::max(count, 0)));
    for (int k = 0; k < count; ++k) v[size_t(k)] = first + k;
    return v;
}

inline std::vector<int> reversed(int count, int cols) {
    std::vector<int> v = sequential(count, cols - count);
    std::reverse(v.begin(), v.end());
    return v;
}

/// The index sets every small shape is checked with: none, one (first and last
/// column), in order, reversed, repeated, random with repeats, a random sample.
inline std::vector<std::pair<std::string, std::vector<int>>> index_sets(int cols, uint64_t seed) {
    std::vector<std::pair<std::string, std::vector<int>>> sets{
        {"no indices", {}},
        {"one index: the first column", {0}},
        {"one index: the last column", {cols - 1}},
        {"all columns in order", sequential(cols)},
        {"all columns reversed", reversed(cols, cols)},
        {"repeated and out of order", {cols - 1, 0, cols - 1, cols / 2, 0, cols - 1}},
        {"random with repeats, 3 x cols", make_indices(3 * cols, cols, IndexOrder::Random, seed)},
        {"random sample of half the columns", make_indices(std::max(1, cols / 2), cols, IndexOrder::Random, seed + 1)}};
    return sets;
}

/// Shapes: a single row, warp-sized and odd row counts, multiples of 4 and not.
inline const std::vector<std::pair<int, int>> kSmallShapes{{1, 1},  {1, 7},   {2, 5},     {3, 10},   {4, 9},
                                                           {5, 6},  {31, 40}, {32, 33},   {33, 17},  {1000, 50},
                                                           {1001, 37}, {4097, 12}, {999, 3}};

/// Every variant of the lesson, every small shape, every index set.
inline void check_small_gathers() {
    const auto variants = lesson::gather_variants();
    REQUIRE(!variants.empty());
    for (const auto& v : variants)
        for (auto [rows, cols] : kSmallShapes)
            for (const auto& [what, indices] : index_sets(cols, uint64_t(rows) * 31 + uint64_t(cols)))
                check_gather(v, rows, cols, indices, what);
}

/// The classic size, many indices (more than __constant__ holds, more than gridDim.y
/// allows), and enough elements that every thread of a full grid loops several times.
inline void check_many_indices() {
    for (const auto& v : lesson::gather_variants()) {
        check_gather(v, 1000, 20000, sequential(10000), "the classic question: 1000 x 20000, columns 0..9999");
        check_gather(v, 1000, 20000, make_indices(10000, 20000, IndexOrder::Random, 5), "classic size, random sample");
        check_gather(v, 31, 20011, make_indices(20000, 20011, IndexOrder::Random, 6), "31 rows, 20000 random indices");
        check_gather(v, 1, 100000, make_indices(70000, 100000, IndexOrder::Random, 7), "1 row, 70000 indices");
        check_gather(v, 3, 100, make_indices(70001, 100, IndexOrder::Random, 8), "3 rows, 70001 indices with repeats");
        check_gather(v, 1024, 4000, make_indices(5000, 4000, IndexOrder::Random, 9),
                     "1024 rows, 5000 indices with repeats");
    }
}

/// Huge columns and the largest size the lessons claim (2^30 floats in and out).
inline void check_largest() {
    const int huge_rows = (1 << 22) + 1;
    const int max_rows = 1 << 29;
    for (const auto& v : lesson::gather_variants())
        check_gather(v, huge_rows, 3, {2, 0, 2, 1}, "huge odd row count");
    for (const auto& v : lesson::gather_variants())
        check_gather(v, max_rows, 2, {1, 0}, "2^29 rows x 2 columns: 2^30 floats in and out");
    // 4093 x 262144 < 2^30 elements, every column once in random order: odd rows, count > 65535.
    for (const auto& v : lesson::gather_variants())
        check_gather(v, 4093, 262144, make_indices(262144, 262144, IndexOrder::Random, 11),
                     "4093 x 262144, all columns in random order");
}

/// Requires `v` to refuse the input with tut::Unsupported whose message contains
/// `expected`, without writing the target or leaving a CUDA error behind.
inline void check_refuses(const GatherVariant& v, int rows, int cols, const std::vector<int>& indices,
                          const std::string& expected) {
    tut::DeviceBuffer<float> src(64), dst(64);  // deliberately tiny: a launch would read or write out of bounds
    tut::DeviceBuffer<int> idx(indices.empty() ? std::vector<int>{0} : indices);
    dst.poison();
    const GatherInput in = make_gather_input(rows, cols, src.get(), indices, idx.get());
    INFO("variant '" << v.name << "' must refuse src " << rows << " x " << cols << " with " << indices.size()
                     << " indices (" << expected << ") with tut::Unsupported before launching");
    std::string message;
    try {
        v.run(in, dst.get());
    } catch (const tut::Unsupported& e) {
        message = e.what();
    }
    INFO("message: '" << message << "'");
    REQUIRE(message.find(expected) != std::string::npos);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    const std::vector<float> after = dst.download();
    REQUIRE(first_unpoisoned(after, 0, after.size()) < 0);
}

inline void check_all_refusals() {
    for (const auto& v : lesson::gather_variants()) {
        check_refuses(v, 0, 5, {0}, "empty");
        check_refuses(v, 4, 0, {}, "empty");
        check_refuses(v, 0, 0, {}, "empty");
        check_refuses(v, 4, 5, {0, 1, -1}, "out of range");
        check_refuses(v, 4, 5, {5}, "out of range");
        check_refuses(v, 4, 5, {2, 3, 4, 0x7fffffff}, "out of range");
        check_refuses(v, 1 << 16, 1 << 15, {0}, "2^30");            // source of 2^31 elements
        check_refuses(v, 1 << 15, 2, std::vector<int>(1 << 16, 1), "2^30");  // target of 2^31 elements
    }
}

}  // namespace bandwidth_checks
