// Checks for multigpu/04_cg, on 2 GPUs (one process each): the distributed solve converges
// like the single-GPU solve (rank 0 alone, the same lesson on a one-rank communicator):
// the same iteration count within 5%, a true residual ||b - A x|| / ||b|| below 1e-5 (the
// stopping rule is 1e-6 on the residual the iteration carries), the same x; on grids whose
// rows split unevenly, a grid of 3 rows, and the 128^3 problem (2.1 M rows). The given
// variant "halo + one allreduce" (Chronopoulos-Gear, one sum per iteration) is held to the
// lesson's variant on one GPU: its iteration count within 3%, the same residual bound and x.
#include "mg_checks.hpp"
#include "tut/multigpu_nccl.hpp"
#include "tut/multigpu_solvers.hpp"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

TUT_MG_CHECKS_NEED_GPUS(2);

namespace lesson {
tut::mg::SolveOutcome cg_solve(const tut::mg::CgCall& c);
}

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

tut::mg::SolveOutcome solve(const tut::mg::CgCall& c) {
    tut::mg::SolveOutcome o;
    mg_checks::run_or_abort([&] { o = lesson::cg_solve(c); });
    return o;
}

/// The distributed solve of `variant` against the one-GPU solve of `reference` (the same
/// variant unless named): iterations within `percent`% (and 2), residual, x.
void check_cg(const tut::mg::CgProblem& grid, const std::string& variant, int percent = 5,
              const std::string& reference = "") {
    Job& j = job();  // every rank, before the part rank 0 does alone
    tut::mg::CgCall c;
    c.problem = grid;
    c.variant = variant;
    c.want_x = true;
    c.max_iterations = 20000;
    const std::string what = variant + ", grid " + grid.label() + " on " + std::to_string(world().size) + " GPUs: ";
    // One GPU: rank 0 alone, on its one-rank communicator; the others wait in the MPI_Bcast.
    std::vector<double> x1(size_t(grid.rows()), 0.0);
    int it1 = -1;
    mg_checks::on_rank0("multigpu/04 " + what + "the one-GPU solve", [&] {
        tut::mg::CgCall one = c;
        one.ranks = {0, 1, j.alone_comm(), j.stream};
        if (!reference.empty()) one.variant = reference;
        const tut::mg::SolveOutcome o = solve(one);
        if (o.x.size() == x1.size()) {
            x1 = o.x;
            it1 = o.converged ? o.iterations : -1;
        }
    });
    mg_checks::step("multigpu/04 " + what + "MPI_Bcast of the one-GPU solution");
    TUT_MPI(MPI_Bcast(x1.data(), int(x1.size()), MPI_DOUBLE, 0, world().comm));
    TUT_MPI(MPI_Bcast(&it1, 1, MPI_INT, 0, world().comm));
    mg_checks::step("multigpu/04 " + what + "the distributed solve");
    c.ranks = {world().rank, world().size, j.nccl.comm, j.stream};
    const tut::mg::SolveOutcome o = solve(c);
    mg_checks::step("multigpu/04 " + what + "verdict");
    std::string bad;
    if (it1 < 0) bad = what + "the one-GPU solve did not converge (the harness's own solve: report it)";
    else if (!o.converged) bad = what + "did not converge in " + std::to_string(o.iterations) + " iterations";
    else if (std::abs(o.iterations - it1) > 2 + it1 * percent / 100)
        bad = what + std::to_string(o.iterations) + " iterations, " + std::to_string(it1) + " on one GPU" +
              (reference.empty() ? "" : " (" + reference + ")");
    else if (!(o.residual <= 1e-5)) bad = what + "true residual " + std::to_string(o.residual) + " > 1e-5";
    else if (o.x.size() != x1.size())
        bad = what + "the solution has " + std::to_string(o.x.size()) + " entries, not " + std::to_string(x1.size());
    for (size_t k = 0; bad.empty() && k < x1.size(); ++k)
        if (!(std::fabs(o.x[k] - x1[k]) <= 1e-2))
            bad = what + "x[" + std::to_string(k) + "] = " + std::to_string(o.x[k]) + ", " + std::to_string(x1[k]) +
                  " on one GPU";
    MG_REQUIRE(bad.empty(), bad);
}

}  // namespace

TEST_CASE("multigpu/04: small grids, rows split unevenly, converge as on one GPU", "[exercise]") {
    for (auto g : {tut::mg::CgProblem{1, 1, 3}, tut::mg::CgProblem{6, 5, 7}, tut::mg::CgProblem{5, 9, 4},
                   tut::mg::CgProblem{24, 24, 48}})
        check_cg(g, "halo + allreduce");
}

TEST_CASE("multigpu/04: the 128^3 problem (2.1 M rows) converges as on one GPU", "[exercise]") {
    check_cg(tut::mg::CgProblem{128, 128, 128}, "halo + allreduce");
}

TEST_CASE("multigpu/04: one all-reduce per iteration, small grids, converges as the lesson's variant on one GPU",
          "[exercise]") {
    for (auto g : {tut::mg::CgProblem{1, 1, 3}, tut::mg::CgProblem{6, 5, 7}, tut::mg::CgProblem{5, 9, 4},
                   tut::mg::CgProblem{24, 24, 48}})
        check_cg(g, "halo + one allreduce", 3, "halo + allreduce");
}

TEST_CASE("multigpu/04: one all-reduce per iteration, the 128^3 problem converges as the lesson's variant on one GPU",
          "[exercise]") {
    check_cg(tut::mg::CgProblem{128, 128, 128}, "halo + one allreduce", 3, "halo + allreduce");
}

TEST_CASE("multigpu/04: an empty grid is refused", "[baseline]") {
    Job& j = job();  // every rank
    mg_checks::step("multigpu/04: an empty grid refused?");
    tut::mg::CgCall c;
    c.problem = tut::mg::CgProblem{0, 4, 4};
    c.ranks = {world().rank, world().size, j.nccl.comm, j.stream};
    bool refused = false;
    try {
        lesson::cg_solve(c);  // refused before any communication: every rank gets past it
    } catch (const std::exception&) {
        refused = true;
    }
    MG_REQUIRE(refused, "a 0 x 4 x 4 grid was not refused");
}
