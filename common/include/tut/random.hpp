/// @file random.hpp
/// @brief Deterministic random fill: the same seed gives the same data on every machine.
///
/// splitmix64 (Steele, Lea, Flood 2014) is used instead of the `<random>` distributions,
/// whose output is implementation-defined and so differs between standard libraries.
#pragma once

#include <cstdint>
#include <vector>

namespace tut {

/// splitmix64: a tiny, well-mixed 64-bit generator.
struct SplitMix64 {
    uint64_t state;
    explicit SplitMix64(uint64_t seed) : state(seed) {}
    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, 1) with 53 random bits.
    double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
    /// Uniform in [lo, hi).
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    /// Uniform integer in [0, bound).
    uint64_t below(uint64_t bound) { return bound ? next() % bound : 0; }
};

/// Fills `data` with uniform values in [lo, hi) from `seed`.
template <class T>
void fill_uniform(T* data, size_t count, uint64_t seed, double lo = -1.0, double hi = 1.0) {
    SplitMix64 rng(seed);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<T>(rng.uniform(lo, hi));
}

template <class T>
std::vector<T> random_vector(size_t count, uint64_t seed, double lo = -1.0, double hi = 1.0) {
    std::vector<T> v(count);
    fill_uniform(v.data(), count, seed, lo, hi);
    return v;
}

}  // namespace tut
