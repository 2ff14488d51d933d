/// @file multigpu_ring.hpp
/// @brief The ring all-reduce's schedule: which chunk each rank reads from its neighbour
/// at each step. Plain C++; the CPU tests run the schedule on host vectors, and the
/// all-reduce lesson's checks use it as the reference for what a rank holds after the
/// reduce-scatter.
///
/// n ranks in a ring, rank r reading from prev(r) = r - 1 (mod n). The data is cut into n
/// chunks (AlignedChunks). All steps are pulls: a rank reads its neighbour's memory and
/// writes only its own.
///
/// - Reduce-scatter, steps s = 0 .. n-2: rank r computes
///       out_r[c] = in_r[c] + (s == 0 ? in_prev[c] : out_prev[c]),   c = reduce_chunk(r, s)
///   so chunk c gathers one more rank's contribution per step. After n - 1 steps rank r
///   holds the whole sum of chunk owned_chunk(r) = r + 1 (mod n).
/// - All-gather, steps s = 0 .. n-2: rank r copies out_prev[c] into out_r[c],
///   c = gather_chunk(r, s): the finished chunks travel once around the ring.
///
/// Within one step no chunk is written by one rank while its neighbour reads it (the
/// CPU tests check this), so a step needs no synchronisation inside it; between steps a
/// rank must wait until prev has finished the step before (it reads what prev wrote) and
/// until next has finished it (next read what this rank is about to overwrite).
/// Each rank sends and receives 2 (n - 1) chunks of size/n: the traffic per link is
/// 2 (n-1)/n times the data, which is where nccl-tests' bus bandwidth factor comes from.
#pragma once

#include "multigpu.hpp"

#include <vector>

namespace tut::mg::ring {

inline int prev(int r, int n) { return (r - 1 + n) % n; }
inline int next(int r, int n) { return (r + 1) % n; }

/// Reduce-scatter step s: the chunk rank r adds its neighbour's partial sum into.
inline int reduce_chunk(int r, int s, int n) { return ((r - s - 1) % n + n) % n; }
/// The chunk whose complete sum rank r holds after the reduce-scatter.
inline int owned_chunk(int r, int n) { return (r + 1) % n; }
/// All-gather step s: the chunk rank r copies from its neighbour.
inline int gather_chunk(int r, int s, int n) { return ((r - s) % n + n) % n; }

/// Runs the schedule on host vectors (in[r] is rank r's input, all the same length) and
/// returns every rank's output, step by step as the GPUs would (each step reads the
/// state after the previous step). `align` as in AlignedChunks.
template <class T>
std::vector<std::vector<T>> simulate(const std::vector<std::vector<T>>& in, size_t align = 1) {
    const int n = static_cast<int>(in.size());
    const size_t count = n ? in[0].size() : 0;
    const AlignedChunks chunks(count, n > 0 ? n : 1, align);
    std::vector<std::vector<T>> out(in.size(), std::vector<T>(count));
    if (n == 1) {
        out[0] = in[0];
        return out;
    }
    for (int s = 0; s < n - 1; ++s) {
        const std::vector<std::vector<T>> before = out;
        for (int r = 0; r < n; ++r) {
            const int c = reduce_chunk(r, s, n), p = prev(r, n);
            for (size_t i = chunks.begin(c); i < chunks.end(c); ++i)
                out[r][i] = in[r][i] + (s == 0 ? in[p][i] : before[p][i]);
        }
    }
    for (int s = 0; s < n - 1; ++s) {
        const std::vector<std::vector<T>> before = out;
        for (int r = 0; r < n; ++r) {
            const int c = gather_chunk(r, s, n), p = prev(r, n);
            for (size_t i = chunks.begin(c); i < chunks.end(c); ++i) out[r][i] = before[p][i];
        }
    }
    return out;
}

}  // namespace tut::mg::ring
