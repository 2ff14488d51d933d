/// @file jor_record.cuh
/// @brief Lesson 04's block reduction into a sweep's slot (record_sweep) and the end of a
/// solve whose sweeps alternate between two x arrays, for lessons 05-08. Lesson 04's
/// exercise is that reduction, so it does not include this header.
#pragma once

#include "jor_slot.cuh"

#include <cuda_runtime.h>

namespace tut::jor {

/// Folds this thread's (dx, x) into the block's maxima and adds them to `slot` with one
/// atomicMax each, from thread 0. Every thread of the block must call it. fmax would drop
/// a NaN, so a thread whose dx or x is NaN reports dx = infinity instead: the slot is then
/// not finite, and the solve does not stop on it.
__device__ inline void record_sweep(double dx, double x, SweepSlot* slot) {
    __shared__ double dx_part[32], x_part[32];
    const bool bad = !(dx == dx) || !(x == x);
    if (bad) dx = INFINITY;
    dx = warp_max(dx);
    x = warp_max(x);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    if (lane == 0) {
        dx_part[warp] = dx;
        x_part[warp] = x;
    }
    __syncthreads();
    if (warp == 0) {
        dx = lane < warps ? dx_part[lane] : 0.0;
        x = lane < warps ? x_part[lane] : 0.0;
        dx = warp_max(dx);
        x = warp_max(x);
        if (lane == 0) {
            atomicMax(&slot->dx_max_bits, static_cast<unsigned long long>(__double_as_longlong(dx)));
            atomicMax(&slot->x_max_bits, static_cast<unsigned long long>(__double_as_longlong(x)));
        }
    }
    __syncthreads();  // dx_part and x_part are reused by the next call
}

/// The end of a solve whose sweeps alternate between x and x_work (sweep 0 reads x and
/// writes x_work) and record one SweepSlot each (lessons 05-08): reads the last sweep's
/// slot and leaves the result in x. `iterations` is the sweeps the device counted; a count
/// outside 1 ... max_iterations means the solve never said, and it is reported as not
/// converged with 0 iterations, reading nothing. Converged means the last slot passes the
/// stopping rule.
template <class T>
SolveResult finish_alternating_solve(int iterations, int max_iterations, double tolerance, const SweepSlot* slots,
                                     T* x, const T* x_work, int n) {
    SolveResult result;
    if (iterations < 1 || iterations > max_iterations) return result;
    result.iterations = iterations;
    SweepSlot last;
    TUT_CUDA(cudaMemcpy(&last, slots + (iterations - 1), sizeof last, cudaMemcpyDeviceToHost));
    result.last = to_host(last);
    result.converged = slot_says_stop(last, tolerance);
    // After an odd number of sweeps the result is in x_work.
    if (iterations % 2) TUT_CUDA(cudaMemcpy(x, x_work, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice));
    return result;
}

}  // namespace tut::jor
