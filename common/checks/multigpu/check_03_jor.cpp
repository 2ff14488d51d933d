// Checks for multigpu/03_jor, on 2 GPUs (one process each): the distributed solve gives the
// single-GPU solve's x (rank 0 alone, the same lesson on a one-rank communicator) and
// its sweep count, for N that are no multiple of the split, smaller than the GPUs'
// blocks, up to N = 32768 (the largest the lesson measures), float and double, both ways
// of sharing, and with the sweep's rows split between 1, 2 and 4 warps; and x within the
// JOR track's error bound of x*.
#include "mg_checks.hpp"
#include "tut/jor.hpp"
#include "tut/multigpu_nccl.hpp"
#include "tut/multigpu_solvers.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

TUT_MG_CHECKS_NEED_GPUS(2);

namespace lesson {
tut::mg::SolveOutcome jor_solve_float(const tut::mg::JorCall& c);
tut::mg::SolveOutcome jor_solve_double(const tut::mg::JorCall& c);
}  // namespace lesson

namespace {

using mg_checks::world;

/// The job's communicator and stream, and rank 0's one-rank communicator for the one-GPU
/// solves. Made by the first call of job(), which makes a communicator over every rank: a
/// collective, so every rank must make that first call together, before anything that
/// only rank 0 does (each check below calls job() first, on every rank).
struct Job {
    tut::mg::Nccl nccl{world()};
    cudaStream_t stream = nullptr;
    std::unique_ptr<tut::mg::Nccl> alone;  // rank 0 only, made at its first one-GPU solve (not collective)
    Job() { TUT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
    void* alone_comm() {
        if (!alone) alone = std::make_unique<tut::mg::Nccl>(tut::mg::Nccl::single());
        return alone->comm;
    }
};
/// Made once and never destroyed: its communicators must not outlive MPI at exit.
Job& job() {
    // A failure to make it (on one rank, say) ends the job: the others wait in its collective.
    static Job* j = [] {
        Job* made = nullptr;
        mg_checks::run_or_abort([&] { made = new Job; });
        return made;
    }();
    return *j;
}

template <class T>
tut::mg::SolveOutcome solve(const tut::mg::JorCall& c) {
    tut::mg::SolveOutcome o;
    mg_checks::run_or_abort([&] {
        if constexpr (std::is_same_v<T, float>) {
            o = lesson::jor_solve_float(c);
        } else {
            o = lesson::jor_solve_double(c);
        }
    });
    return o;
}

/// The distributed solve against rank 0's one-GPU solve and against x*. `warps_per_row`
/// (1, 2, 4; 0: the lesson's choice) is the distributed solve's sweep; the one-GPU solve
/// keeps the lesson's choice.
template <class T>
void check_jor(long long n, tut::mg::JorSharing sharing, int warps_per_row = 0) {
    Job& j = job();  // every rank, before the part rank 0 does alone
    tut::mg::JorCall c;
    c.n = n;
    c.sharing = sharing;
    c.tolerance = tut::jor::default_tolerance<T>();
    c.want_x = true;
    const std::string what = std::string(tut::jor::type_name<T>()) + ", " + tut::mg::jor_sharing_name(sharing) +
                             ", N = " + std::to_string(n) +
                             (warps_per_row ? ", " + std::to_string(warps_per_row) + " warps per row" : "") + ": ";
    // One GPU: rank 0 alone, on its one-rank communicator; the others wait in the MPI_Bcast.
    std::vector<double> x1(size_t(n), 0.0);
    int iterations1 = -1;
    mg_checks::on_rank0("multigpu/03 " + what + "the one-GPU solve", [&] {
        tut::mg::JorCall one = c;
        one.ranks = {0, 1, j.alone_comm(), j.stream};
        const tut::mg::SolveOutcome o = solve<T>(one);
        if (o.x.size() == size_t(n)) {
            x1 = o.x;
            iterations1 = o.converged ? o.iterations : -1;
        }
    });
    mg_checks::step("multigpu/03 " + what + "MPI_Bcast of the one-GPU solution");
    TUT_MPI(MPI_Bcast(x1.data(), int(n), MPI_DOUBLE, 0, world().comm));
    TUT_MPI(MPI_Bcast(&iterations1, 1, MPI_INT, 0, world().comm));
    // Every GPU.
    mg_checks::step("multigpu/03 " + what + "the solve on " + std::to_string(world().size) + " GPUs");
    c.ranks = {world().rank, world().size, j.nccl.comm, j.stream};
    c.warps_per_row = warps_per_row;
    const tut::mg::SolveOutcome o = solve<T>(c);
    mg_checks::step("multigpu/03 " + what + "verdict");
    std::string bad;
    if (iterations1 < 0)
        bad = what + "the one-GPU solve (rank 0 alone: the lesson on a one-rank communicator) did not converge, or "
                     "returned no solution";
    else if (!o.converged) bad = what + "did not converge in " + std::to_string(o.iterations) + " sweeps";
    else if (std::abs(o.iterations - iterations1) > 1)
        bad = what + std::to_string(o.iterations) + " sweeps on " + std::to_string(world().size) + " GPUs, " +
              std::to_string(iterations1) + " on one";
    else if (o.x.size() != size_t(n))
        bad = what + "the solution has " + std::to_string(o.x.size()) + " entries";
    const double bound = tut::jor::error_bound(0.82, c.tolerance, n, tut::jor::kAlpha, tut::jor::unit_roundoff<T>(), 1.01);
    for (long long k = 0; bad.empty() && k < n; ++k) {
        const double xs = tut::jor::units_to_double(tut::jor::solution_units(c.seed, 0, uint64_t(k)));
        // Within the bound of x*, and (both runs stop by the same rule) within twice it of the one-GPU x.
        if (!(std::fabs(o.x[k] - xs) <= bound) || !(std::fabs(o.x[k] - x1[k]) <= 2 * bound))
            bad = what + "x[" + std::to_string(k) + "] = " + std::to_string(o.x[k]) + ", one GPU " +
                  std::to_string(x1[k]) + ", x* " + std::to_string(xs) + " (bound " + std::to_string(bound) + ")";
    }
    MG_REQUIRE(bad.empty(), bad);
}

/// `c` (on every rank's communicator and stream) must be refused with tut::Unsupported:
/// refused before any communication, so every rank gets to the verdict whatever happened.
void require_refused(tut::mg::JorCall c, const std::string& what) {
    Job& j = job();  // every rank
    mg_checks::step("multigpu/03: " + what + " refused?");
    c.ranks = {world().rank, world().size, j.nccl.comm, j.stream};
    std::string bad = what + " was not refused with tut::Unsupported";
    try {
        lesson::jor_solve_float(c);
    } catch (const tut::Unsupported&) {
        bad.clear();
    } catch (const std::exception& e) {
        bad += std::string(" (it threw: ") + e.what() + ")";
    }
    MG_REQUIRE(bad.empty(), bad);
}

}  // namespace

TEST_CASE("multigpu/03: float, one all-gather: the one-GPU solution, N = 1 .. 4099", "[exercise]") {
    for (long long n : {1ll, 2ll, 3ll, 7ll, 9ll, 1000ll, 4099ll}) check_jor<float>(n, tut::mg::JorSharing::one_collective);
}

TEST_CASE("multigpu/03: float, all-gather + all-reduce: the one-GPU solution", "[exercise]") {
    for (long long n : {1ll, 5ll, 1001ll, 4099ll}) check_jor<float>(n, tut::mg::JorSharing::two_collectives);
}

TEST_CASE("multigpu/03: double, both ways of sharing", "[exercise]") {
    for (long long n : {3ll, 2049ll}) {
        check_jor<double>(n, tut::mg::JorSharing::one_collective);
        check_jor<double>(n, tut::mg::JorSharing::two_collectives);
    }
}

TEST_CASE("multigpu/03: the largest N the lesson measures, 32768, float", "[exercise]") {
    check_jor<float>(32768, tut::mg::JorSharing::one_collective);
}

TEST_CASE("multigpu/03: the sweep with 1, 2 and 4 warps per row: the one-GPU solution", "[exercise]") {
    // N = 1000 and 4099: the lesson's own choice at these sizes is 4 warps per row; N = 7:
    // fewer rows than a block's warps; N = 4099 on 2 GPUs: rows that are no multiple of 8.
    for (int warps : {1, 2, 4}) {
        for (long long n : {7ll, 1000ll, 4099ll}) check_jor<float>(n, tut::mg::JorSharing::one_collective, warps);
        check_jor<double>(2049, tut::mg::JorSharing::two_collectives, warps);
    }
}

TEST_CASE("multigpu/03: N = 0 and N past the generator's limit are refused", "[baseline]") {
    for (long long n : {0ll, tut::jor::kMaxN + 1}) {
        tut::mg::JorCall c;
        c.n = n;
        require_refused(c, "N = " + std::to_string(n));
    }
}

TEST_CASE("multigpu/03: 3 warps per row is refused", "[baseline]") {
    tut::mg::JorCall c;
    c.n = 1000;
    c.warps_per_row = 3;
    require_refused(c, "3 warps per row");
}
