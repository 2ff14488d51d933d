/// @file reduction_checks.hpp
/// @brief Checks shared by the reduction lessons: a sum at a size (and start offset),
/// refusals, run-to-run determinism.
///
/// Every check compares the GPU's sum with a compensated CPU sum of the same elements;
/// the tolerance is tut::reduction::allowed_error() for the variant's depth (see its
/// comment: |error| <= gamma_depth * sum|x_i|, Higham), and int sums must be exact.
/// The output is poisoned and the workspace filled with NaN bytes before every run,
/// so a result that was never written, or a partial sum read before it was written,
/// fails. The empty sum gets a null input pointer: it must not be read.
#pragma once

#include "catch.hpp"
#include "lesson_hint.hpp"
#include "tut/reduction.hpp"

#include <map>
#include <memory>
#include <utility>

namespace reduction_checks {

using tut::reduction::Reference;
using tut::reduction::Variant;

/// Empty, one, a warp +-1, a large size that is no multiple of anything, the headline 2^26.
inline const std::vector<size_t> kSizes{0, 1, 31, 32, 33, 1000003, size_t(1) << 26};
inline constexpr size_t kLargest = size_t(1) << 26;
inline constexpr size_t kSlack = 8;  ///< extra elements past kLargest, so offset starts still have data

/// One random array per type, shared by every size (a size-n problem is its first n
/// elements, or n elements from an offset), on the host and on the device.
template <class T>
struct Dataset {
    std::vector<T> host;
    tut::DeviceBuffer<T> device;
    std::map<std::pair<size_t, size_t>, Reference> references;  // (offset, n) -> reference

    Dataset() : host(tut::reduction::random_input<T>(kLargest + kSlack, 4242)), device(host) {}
    const Reference& reference(size_t offset, size_t n) {
        auto it = references.find({offset, n});
        if (it == references.end())
            it = references.emplace(std::make_pair(offset, n), tut::reduction::reference_sum(host.data() + offset, n)).first;
        return it->second;
    }
};

template <class T>
Dataset<T>& dataset() {
    static Dataset<T> data;
    return data;
}

/// Runs `v` on n elements starting `offset` elements into the dataset and returns the result.
template <class T>
T run_once(const Variant<T>& v, const T* in, size_t n, const Reference& ref) {
    tut::DeviceBuffer<T> out(1);
    const size_t ws_bytes = v.workspace_bytes ? v.workspace_bytes(n) : 0;
    tut::DeviceBuffer<unsigned char> workspace(ws_bytes);
    workspace.poison();
    tut::reduction::poison_output(out.get(), ref);
    REQUIRE_NOTHROW(v.run(in, n, out.get(), workspace.get()));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    T got{};
    TUT_CUDA(cudaMemcpy(&got, out.get(), sizeof(T), cudaMemcpyDeviceToHost));
    return got;
}

/// Requires `v` to sum n elements (from `offset`) within the error bound (exactly for int).
template <class T>
void check_sum(const Variant<T>& v, size_t n, size_t offset = 0) {
    Dataset<T>& data = dataset<T>();
    REQUIRE(offset + n <= data.host.size());
    const Reference& ref = data.reference(offset, n);
    const T* in = n == 0 ? nullptr : data.device.get() + offset;
    INFO("variant '" << v.name << "', n = " << n << (offset ? ", start offset " : "")
                     << (offset ? std::to_string(offset) + " elements" : std::string()));
    INFO(tut_checks::exercise_hint());
    const T got = run_once(v, in, n, ref);
    const tut::reduction::Verdict verdict = tut::reduction::judge(got, ref, v.depth ? v.depth(n) : n);
    INFO(verdict.text);
    REQUIRE(verdict.ok);
}

/// Every variant of type T in the lesson, at every size (and start offset).
template <class T>
void check_all_sums(const std::vector<size_t>& sizes = kSizes, const std::vector<size_t>& offsets = {0}) {
    const tut::reduction::Variants all = lesson::reduction_variants();  // keep it alive: of() returns a reference
    const auto& variants = all.of<T>();
    REQUIRE(!variants.empty());
    for (const Variant<T>& v : variants)
        for (size_t offset : offsets)
            for (size_t n : sizes) check_sum(v, n, offset);
}

/// Every variant of every type refuses n > 2^30 with tut::Unsupported, before touching memory.
inline void check_all_refuse_too_large() {
    const tut::reduction::Variants all = lesson::reduction_variants();
    auto refuse = [](const auto& list) {
        for (const auto& v : list) {
            INFO("variant '" << v.name << "' must refuse n = 2^30 + 1 with tut::Unsupported");
            REQUIRE_THROWS_AS(v.run(nullptr, tut::reduction::kMaxN + 1, nullptr, nullptr), tut::Unsupported);
            if (v.workspace_bytes) REQUIRE_THROWS_AS(v.workspace_bytes(tut::reduction::kMaxN + 1), tut::Unsupported);
        }
    };
    refuse(all.f64);
    refuse(all.f32);
    refuse(all.i32);
    refuse(all.c64);
}

/// Requires `runs` runs of every variant of type T on n elements to give the same, correct bits.
template <class T>
void check_run_to_run_identical(size_t n, int runs) {
    Dataset<T>& data = dataset<T>();
    const Reference& ref = data.reference(0, n);
    const tut::reduction::Variants all = lesson::reduction_variants();
    for (const Variant<T>& v : all.of<T>()) {
        INFO("variant '" << v.name << "', n = " << n << ": every run must give the same bits");
        INFO(tut_checks::exercise_hint());
        const T first = run_once(v, data.device.get(), n, ref);
        const tut::reduction::Verdict verdict = tut::reduction::judge(first, ref, v.depth ? v.depth(n) : n);
        INFO(verdict.text);
        REQUIRE(verdict.ok);
        for (int r = 1; r < runs; ++r) {
            const T again = run_once(v, data.device.get(), n, ref);
            REQUIRE(std::memcmp(&first, &again, sizeof(T)) == 0);
        }
    }
}

}  // namespace reduction_checks
