// wrong: cg/08_persistent: beta = r.z new / r.z old, but r.z old is never replaced by the new one
// caught by: cg/08_persistent: solves small problems to tolerance
// kind: other
// From the second iteration on alpha and beta divide by the first r.z: 'dense 200' (2
// iterations) and the diffusion grids stall or end with a wrong x.
// cg/08_persistent: one persistent cooperative kernel runs the whole solve, the matrix on chip.
// Starts from: lesson 05's fused iteration (beyond the story). Adds: grid-wide barriers
// (cooperative_groups::this_grid().sync()) where lessons 05-07 ended a kernel. A kernel
// boundary is a barrier plus a launch; with every block resident at once (a cooperative
// launch guarantees it, or refuses), a barrier inside one kernel does the first job
// without the second. Every thread computes alpha, beta and the stopping decision itself,
// from the same global sums read after the same barrier, so all blocks leave the loop at
// the same iteration: a block that left early would leave the others waiting at a barrier
// forever. And a kernel that never ends can keep its data where it is: each block holds
// its tile of the matrix, and its rows' vectors, in registers for the whole solve. The
// matrix must fit the grid for that (one block of 512 threads per SM, at most 512 rows and
// 8192 nonzeros per block: the default problem needs 116 SMs); a matrix that does not fit
// is refused, and lesson 09 streams it instead.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/08_persistent/persistent.cu -o persistent
// Run:  ./persistent               (--help for options)
//
// In this file:
//   resident_cg      the solve. Thread t of block b owns row b * tile_rows + t. Per iteration:
//                      A. q = A (z + beta p_old), gathered; p = z + beta p; p.q  -> barrier
//                      B. alpha; x, r, z in registers; z stored; r.z, r.r        -> barrier
//                      then: stop, or beta = r.z / r.z_old and go round
//                    (the exercise: phase B and the decision that ends the loop)
//   ResidentSolver   checks that the matrix fits on chip; one cooperative launch per solve
//   variant "resident"
// Shared with lesson 09 (tut/cg_persistent.hpp): State and its three slots of sums, Args,
// block_add, finish, the cooperative launch.
#include "tut/cg.hpp"
#include "tut/cg_persistent.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <string>

namespace coop = cooperative_groups;

namespace {

using namespace tut::cg::persistent;  // State, Sums, Args, block_add, finish, the launch
using tut::cg::SolveResult;

constexpr int kThreads = 512;                                 // threads per block (one block per SM)
constexpr int kNonzerosPerThread = 16;                        // the matrix's registers per thread
constexpr int kTileNonzeros = kThreads * kNonzerosPerThread;  // 8192 per block
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block_add adds whole warps, at most 32 of them");
static_assert(kTileNonzeros * sizeof(float) <= 48 * 1024, "a tile's products must fit static shared memory (48 KB)");

// The whole solve, with the matrix in registers. Forming p where the SpMV gathers it saves
// the barrier a separate "p = z + beta p" phase would need; p is double-buffered, since
// blocks gather p_old while others write p.
__global__ void __launch_bounds__(kThreads, 1) resident_cg(Args a) {
    __shared__ float products[kTileNonzeros];
    coop::grid_group grid = coop::this_grid();
    const tut::cg::DeviceCsr& A = a.A;
    const int t = threadIdx.x;
    State* st = a.state;

    // This block's tile: rows first_row .. first_row + rows - 1, nonzeros begin .. end - 1
    // (host-checked: end - begin <= kTileNonzeros). Blocks past the last row own nothing
    // but still take part in every barrier.
    const int first_row = blockIdx.x * a.tile_rows;
    const int rows = max(0, min(a.tile_rows, A.n - first_row));
    const int begin = rows ? __ldg(A.row_ptr + first_row) : 0, end = rows ? __ldg(A.row_ptr + first_row + rows) : 0;
    const bool owner = t < rows;
    const int row = first_row + t;
    const int row_begin = owner ? __ldg(A.row_ptr + row) - begin : 0;
    const int row_end = owner ? __ldg(A.row_ptr + row + 1) - begin : 0;

    // The tile's nonzeros, loaded once for the whole solve: slot j of thread t holds
    // nonzero begin + j * kThreads + t (coalesced, and the products land in shared memory in
    // CSR order, so a row's products are contiguous there).
    float value[kNonzerosPerThread];
    int column[kNonzerosPerThread];
#pragma unroll
    for (int j = 0; j < kNonzerosPerThread; ++j) {
        const int k = begin + j * kThreads + t;
        value[j] = k < end ? __ldg(A.values + k) : 0.0f;
        column[j] = k < end ? __ldg(A.col_idx + k) : 0;
    }

    // The row's state, in registers: x = 0, r = b, z = D^-1 r, p_old = 0 (with beta = 0,
    // phase A then forms p = z).
    const float dinv = owner ? a.dinv[row] : 0.0f;
    float r = owner ? a.b[row] : 0.0f, x = 0.0f, z = dinv * r, p = 0.0f;
    if (owner) {
        a.z[row] = z;
        a.p[row] = 0.0f;
    }
    block_add(r * z, r * r, &st->start.rz, &st->start.rr);
    grid.sync();

    const double bb = __ldcg(&st->start.rr), threshold = a.tol2 * bb;
    double rz_old = __ldcg(&st->start.rz), rr_last = bb;
    float beta = 0.0f;
    int status = bb <= threshold ? kConverged : kRunning;
    int it = 0, converged_at = status == kConverged ? 0 : -1;
    while (status == kRunning && it < a.max_iterations) {
        Sums* cur = &st->slot[it % 3];
        if (blockIdx.x == 0 && t == 0) st->slot[(it + 1) % 3] = Sums{0.0, 0.0, 0.0};
        // (a ? b : c, not an array indexed by it % 2: that would put the pointers in local memory.)
        const float* p_old = it % 2 ? a.p_next : a.p;
        float* p_new = it % 2 ? a.p : a.p_next;

        // A. Gather z + beta p_old where the matrix needs it; row sums from shared memory.
#pragma unroll
        for (int j = 0; j < kNonzerosPerThread; ++j)
            if (begin + j * kThreads + t < end) {
                const int c = column[j];
                products[j * kThreads + t] = value[j] * (a.z[c] + beta * p_old[c]);
            }
        __syncthreads();
        float q = 0.0f;
        for (int k = row_begin; k < row_end; ++k) q += products[k];
        p = z + beta * p;
        if (owner) p_new[row] = p;
        block_add(p * q, 0.0f, &cur->pq, nullptr);  // (its __syncthreads also frees `products`)
        grid.sync();

        // B. alpha; x, r, z in registers; z stored for the next gathers.
        const double pq_total = __ldcg(&cur->pq);
        ++it;
        if (!(pq_total > 0.0)) {  // every thread sees the same sum: all leave together
            status = kNotPositiveDefinite;
            break;
        }
        const float alpha = float(rz_old / pq_total);
        x += alpha * p;
        r -= alpha * q;
        z = dinv * r;
        if (owner) a.z[row] = z;
        block_add(r * z, r * r, &cur->rz, &cur->rr);
        grid.sync();

        // Stop, or beta for the next iteration's phase A.
        rr_last = __ldcg(&cur->rr);
        if (rr_last <= threshold) {
            status = kConverged;
            converged_at = it;
            break;
        }
        const double rz_new = __ldcg(&cur->rz);
        beta = float(rz_new / rz_old);
    }
    if (owner) a.x[row] = x;
    finish(st, it, status, converged_at, rr_last, bb);
}

// Largest number of nonzeros in any tile of `tile_rows` consecutive rows.
int largest_tile(const tut::cg::Csr& A, int tile_rows) {
    int largest = 0;
    for (int first = 0; first < A.rows; first += tile_rows) {
        const int last = std::min(A.rows, first + tile_rows);
        largest = std::max(largest, A.row_ptr[last] - A.row_ptr[first]);
    }
    return largest;
}

class ResidentSolver final : public tut::cg::Solver {
  public:
    // Throws tut::Unsupported, before any launch, for a matrix that does not fit on chip.
    ResidentSolver(const tut::cg::Csr& host_A, const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv,
                   const tut::cg::SolveOptions& opt)
        : A_(A.view()), opt_(opt), dinv_(dinv), r_(size_t(A_.n)), z_(size_t(A_.n)), p_(size_t(A_.n)),
          p_next_(size_t(A_.n)), state_(1) {
        refuse_without_cooperative_launch();
        // As many blocks as can be resident at once (one per SM), each one tile of at most
        // kThreads rows and kTileNonzeros nonzeros.
        blocks_ = resident_blocks_per_sm(resident_cg, kThreads, 0) * sm_count();
        tile_rows_ = (A_.n + blocks_ - 1) / blocks_;
        const int largest = largest_tile(host_A, tile_rows_);
        if (tile_rows_ > kThreads || largest > kTileNonzeros)
            throw tut::Unsupported("the matrix does not fit on chip: " + std::to_string(blocks_) + " blocks of " +
                                   std::to_string(tile_rows_) + " rows (at most " + std::to_string(kThreads) +
                                   "), the fullest with " + std::to_string(largest) + " nonzeros (at most " +
                                   std::to_string(kTileNonzeros) + "); lesson 09 (09_streaming) streams it");
    }

    SolveResult solve(const float* b, float* x) override {
        Args a;
        a.A = A_;
        a.b = b;
        a.dinv = dinv_.get();
        a.x = x;
        a.r = r_.get();
        a.z = z_.get();
        a.p = p_.get();
        a.p_next = p_next_.get();
        a.state = state_.get();
        a.tol2 = opt_.tolerance * opt_.tolerance;
        a.max_iterations = opt_.max_iterations;
        a.tile_rows = tile_rows_;
        return solve_cooperatively(resident_cg, blocks_, kThreads, 0, a, cudaAccessPolicyWindow{});
    }
    // No spmv_once(): the SpMV lives inside resident_cg and has no kernel of its own to time.

  private:
    tut::cg::DeviceCsr A_;
    tut::cg::SolveOptions opt_;
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, p_next_;
    tut::DeviceBuffer<State> state_;
    int blocks_ = 1, tile_rows_ = 1;
};

std::unique_ptr<tut::cg::Solver> make_resident(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                               const tut::cg::SolveOptions& opt) {
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<ResidentSolver>(A, dA, dinv, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::cg::Variant> variants() { return {{"resident", make_resident}}; }
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "08_persistent", "one persistent cooperative kernel, the matrix kept on chip"};
    const std::vector<tut::cg::Variant> variants = lesson::variants();
    tut::cg::Options options(lesson, tut::cg::Preconditioner::jacobi);  // --problem, --matrix, --tol, ...
    options.parse(argc, argv, tut::names_of(variants));
    tut::require_cooperative_launch(lesson.lesson);  // exits 77 without cooperative launches
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        const double d2d_gbs = tut::cg::measure_floor_bandwidth();
        tut::Table table = tut::cg::table();
        for (const std::string& name : tut::cg::problem_names(options)) {  // default; --problem both adds large
            tut::cg::Problem problem(bench, options, name, d2d_gbs);  // A, b = A x*, Eigen's time from --share
            for (const tut::cg::Variant& v : variants) {
                if (!bench.runs(v)) continue;
                const std::unique_ptr<tut::cg::Solver> solver = problem.solver(v);  // all set-up, untimed
                const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(*solver); });
                const tut::Timing timing = problem.time(v.name, *solver);  // wall clock: the host's part counts
                const tut::Verdict again = bench.check(v.name, [&] { return problem.check_last(); });  // no stale state
                const double spmv_gbs = problem.spmv_gbs(v.name, *solver);  // its SpMV alone
                table.add_row(bench.record(problem.result(v, timing, spmv_gbs, verdict, again)));
            }
        }
        tut::cg::print(table);
        return bench.exit_code();
    });
}
