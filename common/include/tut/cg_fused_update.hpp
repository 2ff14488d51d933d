/// @file cg_fused_update.hpp
/// @brief Lesson 05's fused update kernel, finished, for the lessons that build on it
/// (06 and 07). Lesson 05 has you write it; its solution file holds the same kernel, and a
/// CPU check (common/checks/cpu/check_cg.cpp) keeps the two texts identical.
///
/// Lesson 05's exercise includes only cg_fused.hpp, never this header. The kernel is
/// static: each translation unit that includes this header gets its own copy.
#pragma once

#include "cg_fused.hpp"

namespace tut::cg::fused {

// x += alpha p; r -= alpha q; z = D^-1 r; r.z and r.r. The last block tests convergence
// and computes beta (0 once the solve is over).
static __global__ void update_x_r_z(int n, const float* __restrict__ p, const float* __restrict__ q,
                             const float* __restrict__ dinv, float* __restrict__ x, float* __restrict__ r,
                             float* __restrict__ z, Scalars* s) {
    const float alpha = s->alpha;
    float rz = 0.0f, rr = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        x[i] += alpha * p[i];
        const float ri = r[i] - alpha * q[i];
        const float zi = dinv[i] * ri;
        r[i] = ri;
        z[i] = zi;
        rz += ri * zi;
        rr += ri * ri;
    }
    block_sum(rz, rr);
    if (threadIdx.x == 0) {
        atomicAdd(&s->rz_new, rz);
        atomicAdd(&s->rr, rr);
        if (last_block(&s->blocks_done)) {
            const float rz_new = __ldcg(&s->rz_new), rr_total = __ldcg(&s->rr);
            s->rz_new = s->rr = 0.0f;
            s->beta = 0.0f;
            if (s->status == kRunning) {
                s->rr_last = rr_total;
                if (rr_total <= s->threshold) {
                    s->status = kConverged;
                    s->converged_at = s->iteration;
                } else {
                    s->beta = rz_new / s->rz;
                    s->rz = rz_new;
                }
            }
        }
    }
}

}  // namespace tut::cg::fused
