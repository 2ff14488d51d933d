// CPU tests of the multigpu track's MPI side, on 2 processes and no GPU (mpirun -np 2, through
// mpi_launch.py --no-gpu): what keeps a job from hanging when its ranks stop agreeing.
// - verdicts agreed across ranks (a failure on one rank fails every rank, with its message);
// - agree_on_stop(): ranks that disagree whether to stop all throw the same AgreedError;
// - a collective started inside work that rank 0 does alone (the hang of the checks of
//   lessons 3-5 in their first run: a communicator made lazily by rank 0 alone, while
//   rank 1 waited in an MPI_Bcast) is refused at once, naming itself, instead of waiting;
// - every rank runs the test cases in the same order, with the same random seed;
// - the halo lists exchanged over MPI are those one process computes for every rank.
// Hidden cases ("[.watchdog]", "[.abort]", "[.disagree]") make a rank hang, throw or fail
// alone; test_mpi_launch.py runs them and looks at what the job prints and how it ends.
#include "mg_checks.hpp"
#if TUT_CATCH_MAJOR >= 3
#include <catch2/catch_get_random_seed.hpp>  // Catch::getSeed()
#endif
#include "tut/multigpu_cg.hpp"
#include "tut/multigpu_halo.hpp"
#include "tut/multigpu_mpi.hpp"
#include "tut/multigpu_solvers.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

TUT_MG_CHECKS_NEED_GPUS(2);  // processes: no GPU is used

namespace {

using mg_checks::world;

/// What a lazily made job did in check_03/04/05 before the fix: a collective at its first use.
struct LazyJob {
    LazyJob() { tut::mg::barrier(world()); }
};

}  // namespace

TEST_CASE("multigpu mpi: the lowest failing rank's message reaches every rank", "[cpu][multigpu]") {
    REQUIRE(mg_checks::agreed("") == "");
    const std::string mine = world().rank == world().size - 1 ? "bad on the last rank" : "";
    const std::string got = mg_checks::agreed(mine);
    REQUIRE(got == "rank " + std::to_string(world().size - 1) + ": bad on the last rank");
    // Two ranks with a message: the lower one's.
    const std::string both = mg_checks::agreed("rank " + std::to_string(world().rank) + " says no");
    REQUIRE(both == "rank 0: rank 0 says no");
}

TEST_CASE("multigpu mpi: ranks that agree whether to stop get their decision back", "[cpu][multigpu]") {
    REQUIRE(tut::mg::agree_on_stop(world(), true, 3, "test") == true);
    REQUIRE(tut::mg::agree_on_stop(world(), false, 4, "test") == false);
}

TEST_CASE("multigpu mpi: ranks that disagree whether to stop all throw, naming one of each", "[cpu][multigpu]") {
    std::string message;
    try {
        tut::mg::agree_on_stop(world(), world().rank == 1, 17, "CG, a test grid");
    } catch (const tut::mg::AgreedError& e) {
        message = e.what();
    }
    // Every rank threw, at the same point: the next collective still matches.
    REQUIRE(tut::mg::all_ranks(world(), !message.empty()));
    CAPTURE(message);
    REQUIRE(message.find("CG, a test grid") != std::string::npos);
    REQUIRE(message.find("after step 17") != std::string::npos);
    REQUIRE(message.find("rank 1 stops, rank 0 goes on") != std::string::npos);
    // An AgreedError passes through run_or_abort (it does not end the job).
    bool passed_through = false;
    try {
        mg_checks::run_or_abort([] { throw tut::mg::AgreedError("every rank"); });
    } catch (const tut::mg::AgreedError&) {
        passed_through = true;
    }
    REQUIRE(passed_through);
}

TEST_CASE("multigpu mpi: a collective started inside rank 0's own work is refused, not waited for",
          "[cpu][multigpu]") {
    // The shape of the first run's hang: rank 0 makes the job lazily (a collective) inside
    // its one-GPU section, while rank 1 has gone on to wait for rank 0's result.
    std::string refused;
    if (world().rank == 0) {
        tut::mg::RankLocal alone("the one-GPU solve");
        try {
            static LazyJob* job = new LazyJob;  // the collective at the first use
            (void)job;
        } catch (const tut::mg::CollectiveMisuse& e) {
            refused = e.what();
        }
    }
    // Every rank reaches this broadcast: nobody was left in a barrier.
    refused = tut::mg::broadcast_string(world(), refused, 0);
    CAPTURE(refused);
    REQUIRE(refused.find("barrier is collective") != std::string::npos);
    REQUIRE(refused.find("'the one-GPU solve'") != std::string::npos);
    // Outside the section the same collective works, on every rank.
    REQUIRE_NOTHROW(tut::mg::barrier(world()));
    // And the sections nest and end: after one, collectives work again on rank 0.
    if (world().rank == 0) {
        tut::mg::RankLocal outer("outer");
        { tut::mg::RankLocal inner("inner"); }
        REQUIRE_THROWS_AS(tut::mg::all_ranks(world(), true), tut::mg::CollectiveMisuse);
    }
    REQUIRE(tut::mg::all_ranks(world(), true));
}

TEST_CASE("multigpu mpi: on_rank0 runs on rank 0 alone, and the others wait for its result", "[cpu][multigpu]") {
    int value = -1;
    mg_checks::on_rank0("a value made by rank 0", [&] { value = 42; });
    REQUIRE(value == (world().rank == 0 ? 42 : -1));
    TUT_MPI(MPI_Bcast(&value, 1, MPI_INT, 0, world().comm));
    REQUIRE(value == 42);
}

TEST_CASE("multigpu mpi: every rank runs the test cases with rank 0's random seed", "[cpu][multigpu]") {
#if TUT_CATCH_MAJOR >= 3
    const double seed = double(Catch::getSeed());
#else
    const double seed = double(Catch::rngSeed());
#endif
    REQUIRE(tut::mg::min_over_ranks(world(), seed) == tut::mg::max_over_ranks(world(), seed));
}

TEST_CASE("multigpu mpi: the halo lists exchanged over MPI are the ones computed for every rank at once",
          "[cpu][multigpu]") {
    for (auto g : {tut::mg::CgProblem{1, 1, 3}, tut::mg::CgProblem{6, 5, 7}, tut::mg::CgProblem{5, 9, 4}}) {
        CAPTURE(g.label());
        const tut::mg::RowPartition part(g.rows(), world().size);
        std::vector<tut::mg::HaloPlan> all;
        for (int q = 0; q < world().size; ++q) {
            const tut::mg::CsrRows rows = tut::mg::diffusion_27pt_rows(g.nx, g.ny, g.nz, part.begin(q), part.end(q), g.seed);
            all.push_back(tut::mg::discover_halo(q, part, rows.row_ptr, rows.col_idx, rows.values));
        }
        tut::mg::complete_send_lists(all);
        tut::mg::HaloPlan mine = all[size_t(world().rank)];
        mine.send_ranks.clear();
        mine.send_offsets.assign(1, 0);
        mine.send_rows.clear();
        tut::mg::exchange_halo_lists(world(), mine);
        const tut::mg::HaloPlan& want = all[size_t(world().rank)];
        REQUIRE(mine.send_ranks == want.send_ranks);
        REQUIRE(mine.send_offsets == want.send_offsets);
        REQUIRE(mine.send_rows == want.send_rows);
    }
}

TEST_CASE("multigpu mpi: a failed verdict on one rank fails every rank (MG_REQUIRE)", "[.disagree]") {
    mg_checks::step("the verdict of a check that fails on rank 1 only");
    MG_REQUIRE(world().rank != 1, "rank 1 saw a wrong value");
}

TEST_CASE("multigpu mpi: a rank that throws alone ends the job with its message", "[.abort]") {
    mg_checks::step("rank 1 throws while rank 0 waits in a barrier");
    if (world().rank == 1) mg_checks::run_or_abort([] { throw std::runtime_error("a made-up lesson failure"); });
    tut::mg::barrier(world());
}

TEST_CASE("multigpu mpi: the watchdog says where every rank waits", "[.watchdog]") {
    if (world().rank == 0) {
        mg_checks::step("rank 0 sleeps, as if its GPU never finished");
        std::this_thread::sleep_for(std::chrono::seconds(120));
    }
    mg_checks::step("waiting in MPI_Barrier for rank 0");
    tut::mg::barrier(world());
}
