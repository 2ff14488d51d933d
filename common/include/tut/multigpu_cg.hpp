/// @file multigpu_cg.hpp
/// @brief The CG lessons' problem, one GPU's rows at a time: the CG track's matrix
/// (tut::cg::diffusion_27pt) and right-hand side (b = A x*, x* uniform in [0, 1)),
/// generated for rows [begin, end) only, with the same bits as the whole-matrix generator.
/// Plain C++ (the CPU tests compare it with the generator, entry by entry).
///
/// Why not generate the whole matrix on every process and keep its rows? The weak-scaling
/// problem on 4 GPUs has 8.4 M rows and 224 M nonzeros: about 2 GB of CSR and ten seconds
/// per process, every run. The track's generator is counter-based at heart: the node
/// coefficients k_i are the i-th outputs of a SplitMix64 sequence, and SplitMix64's i-th
/// output needs no earlier one (its state advances by a constant per output). So a
/// process computes the coefficients of its rows and of the planes next to them, and
/// walks its rows with the generator's own loops, in the generator's order: the same
/// doubles, rounded to the same floats. b = A x* likewise needs x* only at its rows'
/// columns, with x* the outputs of the CG track's seed ^ 0x5eedb0b sequence.
#pragma once

#include "cg_matrix.hpp"
#include "multigpu.hpp"
#include "random.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tut::mg {

/// The i-th output (0-based) of SplitMix64(seed), without the ones before it.
inline SplitMix64 splitmix_at_index(uint64_t seed, uint64_t i) {
    return SplitMix64(seed + i * 0x9E3779B97F4A7C15ull);
}

/// Rows [begin, end) of the CG track's diffusion_27pt(nx, ny, nz, seed, decades), as CSR
/// arrays with global column indices (row_ptr from 0), the same values bit for bit.
struct CsrRows {
    long long begin = 0, end = 0;
    std::vector<int> row_ptr{0};
    std::vector<int> col_idx;
    std::vector<float> values;
};

inline CsrRows diffusion_27pt_rows(int nx, int ny, int nz, long long begin, long long end, uint64_t seed = 2024,
                                   double decades = 2.0) {
    if (nx < 1 || ny < 1 || nz < 1) throw std::invalid_argument("diffusion_27pt_rows: grid dimensions must be >= 1");
    const long long n = 1ll * nx * ny * nz;
    const long long nnz = (3ll * nx - 2) * (3ll * ny - 2) * (3ll * nz - 2);
    if (n > INT_MAX || nnz > INT_MAX) throw std::invalid_argument("diffusion_27pt_rows: grid too large for 32-bit CSR indices");
    if (begin < 0 || end > n || begin > end) throw std::invalid_argument("diffusion_27pt_rows: rows out of range");
    CsrRows out;
    out.begin = begin;
    out.end = end;
    if (begin == end) return out;
    const long long plane = 1ll * nx * ny;
    // The coefficients of the planes this block touches: its own, and one on each side.
    const long long z_lo = std::max(0ll, begin / plane - 1), z_hi = std::min<long long>(nz - 1, (end - 1) / plane + 1);
    const long long k_first = z_lo * plane;
    std::vector<double> k(size_t((z_hi - z_lo + 1) * plane));
    for (size_t i = 0; i < k.size(); ++i) {
        SplitMix64 rng = splitmix_at_index(seed, uint64_t(k_first) + i);
        k[i] = std::pow(10.0, decades * rng.uniform());
    }
    auto coeff = [&](long long node) { return k[size_t(node - k_first)]; };
    out.row_ptr.reserve(size_t(end - begin) + 1);
    out.col_idx.reserve(size_t(end - begin) * 27);
    out.values.reserve(size_t(end - begin) * 27);
    for (long long i = begin; i < end; ++i) {
        const int z = static_cast<int>(i / plane), y = static_cast<int>((i % plane) / nx), x = static_cast<int>(i % nx);
        size_t diag_pos = 0;
        double diag = 0.0;
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    const int xx = x + dx, yy = y + dy, zz = z + dz;
                    const bool in_xy = xx >= 0 && xx < nx && yy >= 0 && yy < ny;
                    if (!in_xy || zz >= nz) continue;  // free faces: no flux
                    if (zz < 0) {                      // fixed face: ghost node held at 0
                        diag += coeff(i);
                        continue;
                    }
                    const long long j = xx + 1ll * nx * (yy + 1ll * ny * zz);
                    if (j == i) {
                        diag_pos = out.col_idx.size();
                        out.col_idx.push_back(static_cast<int>(i));
                        out.values.push_back(0.0f);
                        continue;
                    }
                    const double w = std::sqrt(coeff(i) * coeff(j));
                    diag += w;
                    out.col_idx.push_back(static_cast<int>(j));
                    out.values.push_back(static_cast<float>(-w));
                }
        out.values[diag_pos] = static_cast<float>(diag);
        out.row_ptr.push_back(static_cast<int>(out.col_idx.size()));
    }
    return out;
}

/// x*_j of the CG track's right-hand side: uniform in [0, 1) from seed ^ 0x5eedb0b, as float.
inline float cg_solution_entry(uint64_t seed, long long j) {
    SplitMix64 rng = splitmix_at_index(seed ^ 0x5eedb0bull, uint64_t(j));
    return static_cast<float>(rng.uniform(0.0, 1.0));
}

/// b = A x* at the rows of `rows` (the sum in double in the row's column order, as the
/// CG track's spmv_cpu, rounded once to float).
inline std::vector<float> cg_rhs_rows(const CsrRows& rows, uint64_t seed) {
    std::vector<float> b(size_t(rows.end - rows.begin));
    if (b.empty()) return b;
    // x* once for every column the rows read: the block and the planes next to it.
    const int lo = *std::min_element(rows.col_idx.begin(), rows.col_idx.end());
    const int hi = *std::max_element(rows.col_idx.begin(), rows.col_idx.end());
    std::vector<float> xs(size_t(hi - lo + 1));
    for (size_t j = 0; j < xs.size(); ++j) xs[j] = cg_solution_entry(seed, lo + static_cast<long long>(j));
    for (size_t i = 0; i < b.size(); ++i) {
        double s = 0.0;
        for (int k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
            s += double(rows.values[k]) * double(xs[size_t(rows.col_idx[k] - lo)]);
        b[i] = static_cast<float>(s);
    }
    return b;
}

/// 1 / A_ii of each row (Jacobi), throwing for a row without a positive diagonal.
inline std::vector<float> inverse_diagonal(const CsrRows& rows) {
    std::vector<float> d(size_t(rows.end - rows.begin));
    for (size_t i = 0; i < d.size(); ++i) {
        float a = 0.0f;
        for (int k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
            if (rows.col_idx[k] == rows.begin + static_cast<long long>(i)) a += rows.values[k];
        if (!(a > 0.0f))
            throw std::invalid_argument("row " + std::to_string(rows.begin + static_cast<long long>(i)) +
                                        " has no positive diagonal");
        d[i] = 1.0f / a;
    }
    return d;
}

/// Bytes one Jacobi PCG iteration of the CG track must move at least (its floor): the
/// matrix once and the vectors' compulsory traffic (tut::cg::floor_bytes_per_iteration).
inline double cg_floor_bytes(long long rows, long long nnz) { return tut::cg::floor_bytes_per_iteration(rows, nnz, true); }

}  // namespace tut::mg
