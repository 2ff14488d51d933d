// CPU tests of the multigpu track's plain C++ pieces: how rows are split between GPUs, the
// halo of a row-partitioned sparse matrix, the ring all-reduce's schedule, the yardsticks,
// the lists of names an option takes, each process's progress report.
// No GPU, no MPI: every "rank" here is a loop index.
#include "catch.hpp"
#include "tut/cg_matrix.hpp"
#include "tut/multigpu.hpp"
#include "tut/multigpu_cg.hpp"
#include "tut/multigpu_halo.hpp"
#include "tut/multigpu_progress.hpp"
#include "tut/multigpu_ring.hpp"
#include "tut/multigpu_topology.hpp"

#include <cstdint>
#include <numeric>
#include <set>
#include <string>
#include <vector>

using tut::mg::AlignedChunks;
using tut::mg::HaloPlan;
using tut::mg::RowPartition;

TEST_CASE("multigpu: a row partition covers every row once, evenly", "[cpu][multigpu]") {
    for (long long n : {0ll, 1ll, 2ll, 3ll, 7ll, 16ll, 1000ll, 32768ll, 2097153ll}) {
        for (int parts : {1, 2, 3, 4, 5, 8}) {
            RowPartition p(n, parts);
            INFO("n = " << n << ", parts = " << parts);
            REQUIRE(p.begin(0) == 0);
            REQUIRE(p.end(parts - 1) == n);
            long long total = 0;
            for (int r = 0; r < parts; ++r) {
                REQUIRE(p.end(r) - p.begin(r) == p.rows(r));
                if (r > 0) REQUIRE(p.begin(r) == p.end(r - 1));
                REQUIRE(p.rows(r) <= p.max_rows());
                REQUIRE(p.max_rows() - p.rows(r) <= 1);  // as even as possible
                total += p.rows(r);
            }
            REQUIRE(total == n);
            // owner() agrees with the ranges, at every boundary and in between
            for (int r = 0; r < parts; ++r) {
                if (p.rows(r) == 0) continue;
                REQUIRE(p.owner(p.begin(r)) == r);
                REQUIRE(p.owner(p.end(r) - 1) == r);
                REQUIRE(p.owner(p.begin(r) + p.rows(r) / 2) == r);
            }
        }
    }
}

TEST_CASE("multigpu: a partition refuses a negative size and zero parts", "[cpu][multigpu]") {
    REQUIRE_THROWS(RowPartition(-1, 2));
    REQUIRE_THROWS(RowPartition(10, 0));
}

TEST_CASE("multigpu: aligned chunks cover the data with aligned boundaries", "[cpu][multigpu]") {
    for (size_t count : {size_t(0), size_t(1), size_t(3), size_t(4), size_t(5), size_t(1023), size_t(1) << 20,
                         (size_t(1) << 20) + 7}) {
        for (int parts : {1, 2, 3, 4, 8}) {
            for (size_t align : {size_t(1), size_t(4), size_t(32)}) {
                AlignedChunks c(count, parts, align);
                INFO("count = " << count << ", parts = " << parts << ", align = " << align);
                REQUIRE(c.begin(0) == 0);
                REQUIRE(c.end(parts - 1) == count);
                for (int k = 0; k < parts; ++k) {
                    REQUIRE(c.begin(k) <= c.end(k));
                    if (k > 0) REQUIRE(c.begin(k) == c.end(k - 1));
                    if (c.begin(k) < count) REQUIRE(c.begin(k) % align == 0);
                }
            }
        }
    }
}

TEST_CASE("multigpu: bus bandwidth and efficiency follow their definitions", "[cpu][multigpu]") {
    REQUIRE(tut::mg::allreduce_bus_factor(1) == 0.0);
    REQUIRE(tut::mg::allreduce_bus_factor(2) == Approx(1.0));
    REQUIRE(tut::mg::allreduce_bus_factor(4) == Approx(1.5));
    REQUIRE(tut::mg::allreduce_bus_factor(8) == Approx(1.75));
    REQUIRE(tut::mg::allgather_bus_factor(4) == Approx(0.75));
    // 1 GB in 4 ms on 4 GPUs: algbw 250 GB/s, busbw 375 GB/s
    REQUIRE(tut::mg::allreduce_busbw_gbs(1e9, 4.0, 4) == Approx(375.0));
    using tut::mg::Scaling;
    REQUIRE(tut::mg::parallel_efficiency(Scaling::strong, 100.0, 25.0, 4) == Approx(1.0));
    REQUIRE(tut::mg::parallel_efficiency(Scaling::strong, 100.0, 50.0, 4) == Approx(0.5));
    REQUIRE(tut::mg::parallel_efficiency(Scaling::weak, 100.0, 110.0, 4) == Approx(100.0 / 110.0));
    REQUIRE(tut::mg::speedup(Scaling::weak, 100.0, 100.0, 4) == Approx(4.0));
    REQUIRE(std::isnan(tut::mg::speedup(Scaling::strong, NAN, 1.0, 2)));
}

TEST_CASE("multigpu: NVML's NVLink version enum gives the generation and its line rate", "[cpu][multigpu]") {
    using tut::mg::nvlink_generation_of;
    using tut::mg::nvlink_rate_gbs;
    REQUIRE(nvlink_generation_of(1, 6) == 1);   // 1.0, P100
    REQUIRE(nvlink_generation_of(3, 7) == 2);   // 2.2, V100
    REQUIRE(nvlink_generation_of(4, 8) == 3);   // 3.0, A100
    REQUIRE(nvlink_generation_of(6, 9) == 4);   // 4.0, what an H100 reports
    REQUIRE(nvlink_generation_of(7, 9) == 4);   // 5.0 reported for a Hopper GPU: its links are NVLink 4
    REQUIRE(nvlink_generation_of(7, 10) == 5);  // 5.0, B200
    REQUIRE(nvlink_generation_of(0, 9) == 0);
    REQUIRE(nvlink_generation_of(99, 9) == 0);
    // an H100 SXM: 18 NVLink 4 links, 450 GB/s per direction
    REQUIRE(18 * nvlink_rate_gbs(nvlink_generation_of(6, 9)) == Approx(450.0));
    REQUIRE(18 * nvlink_rate_gbs(nvlink_generation_of(7, 10)) == Approx(900.0));
    REQUIRE(std::isnan(nvlink_rate_gbs(0)));
    REQUIRE(16 * tut::mg::pcie_lane_gbs(5) == Approx(63.0).epsilon(0.01));
}

namespace {

/// Rows [begin, end) of A as the arrays discover_halo() takes (global columns).
void slice(const tut::cg::Csr& A, long long begin, long long end, std::vector<int>& row_ptr, std::vector<int>& col,
           std::vector<float>& val) {
    row_ptr.assign(1, 0);
    col.clear();
    val.clear();
    for (long long i = begin; i < end; ++i) {
        for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
            col.push_back(A.col_idx[k]);
            val.push_back(A.values[k]);
        }
        row_ptr.push_back(static_cast<int>(col.size()));
    }
}

std::vector<HaloPlan> plans_for(const tut::cg::Csr& A, int parts) {
    RowPartition part(A.rows, parts);
    std::vector<HaloPlan> plans;
    for (int r = 0; r < parts; ++r) {
        std::vector<int> rp, col;
        std::vector<float> val;
        slice(A, part.begin(r), part.end(r), rp, col, val);
        plans.push_back(tut::mg::discover_halo(r, part, rp, col, val));
    }
    tut::mg::complete_send_lists(plans);
    return plans;
}

}  // namespace

TEST_CASE("multigpu: halo discovery lists exactly the columns each rank reads from the others", "[cpu][multigpu]") {
    const tut::cg::Csr A = tut::cg::diffusion_27pt(5, 4, 9, 7);
    for (int parts : {1, 2, 3, 4, 7}) {
        INFO("parts = " << parts);
        RowPartition part(A.rows, parts);
        const std::vector<HaloPlan> plans = plans_for(A, parts);
        for (int r = 0; r < parts; ++r) {
            const HaloPlan& p = plans[r];
            // The expected halo: every column of r's rows that r does not own.
            std::set<int> expected;
            for (long long i = part.begin(r); i < part.end(r); ++i)
                for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
                    if (A.col_idx[k] < part.begin(r) || A.col_idx[k] >= part.end(r)) expected.insert(A.col_idx[k]);
            REQUIRE(std::vector<int>(expected.begin(), expected.end()) == p.recv_cols);
            // Grouped by owner, lowest rank first, never r itself.
            REQUIRE(p.recv_offsets.size() == p.recv_ranks.size() + 1);
            for (size_t i = 0; i < p.recv_ranks.size(); ++i) {
                REQUIRE(p.recv_ranks[i] != r);
                if (i > 0) REQUIRE(p.recv_ranks[i] > p.recv_ranks[i - 1]);
                for (int j = p.recv_offsets[i]; j < p.recv_offsets[i + 1]; ++j)
                    REQUIRE(part.owner(p.recv_cols[j]) == p.recv_ranks[i]);
            }
            // What r sends to q is what q receives from r, as r's local rows.
            for (size_t i = 0; i < p.send_ranks.size(); ++i) {
                const int q = p.send_ranks[i];
                std::vector<int> sent;
                for (int j = p.send_offsets[i]; j < p.send_offsets[i + 1]; ++j)
                    sent.push_back(static_cast<int>(p.send_rows[j] + p.row_begin));
                REQUIRE(sent == tut::mg::recv_list_from(plans[q], r));
            }
            // Every rank that receives from r is among r's destinations.
            for (int q = 0; q < parts; ++q)
                if (q != r && !tut::mg::recv_list_from(plans[q], r).empty())
                    REQUIRE(std::find(p.send_ranks.begin(), p.send_ranks.end(), q) != p.send_ranks.end());
        }
    }
}

TEST_CASE("multigpu: the renumbered local matrix times the local vector is A x, row by row", "[cpu][multigpu]") {
    const tut::cg::Csr A = tut::cg::diffusion_27pt(6, 5, 7, 3);
    std::vector<double> x(A.rows);
    for (int i = 0; i < A.rows; ++i) x[i] = std::sin(0.37 * i) + 0.01 * i;
    std::vector<double> ax(A.rows);
    tut::cg::spmv_cpu(A, x.data(), ax.data());
    for (int parts : {1, 2, 4, 5}) {
        INFO("parts = " << parts);
        const std::vector<HaloPlan> plans = plans_for(A, parts);
        for (const HaloPlan& p : plans) {
            // The local vector: own rows, then the halo filled as an exchange would: each
            // source rank's send list, in the receiver's order.
            std::vector<double> local(static_cast<size_t>(p.local_size()));
            for (long long i = 0; i < p.rows; ++i) local[i] = x[p.row_begin + i];
            for (size_t i = 0; i < p.recv_ranks.size(); ++i) {
                const HaloPlan& src = plans[p.recv_ranks[i]];
                size_t at = static_cast<size_t>(p.recv_place(i));
                for (size_t j = 0; j < src.send_ranks.size(); ++j)
                    if (src.send_ranks[j] == p.rank)
                        for (int k = src.send_offsets[j]; k < src.send_offsets[j + 1]; ++k)
                            local[at++] = x[src.row_begin + src.send_rows[k]];
                REQUIRE(at == static_cast<size_t>(p.recv_place(i) + p.recv_offsets[i + 1] - p.recv_offsets[i]));
            }
            for (long long i = 0; i < p.rows; ++i) {
                double s = 0;
                for (int k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
                    REQUIRE(p.col_idx[k] >= 0);
                    REQUIRE(p.col_idx[k] < p.local_size());
                    s += double(p.values[k]) * local[p.col_idx[k]];
                }
                REQUIRE(s == Approx(ax[p.row_begin + i]).epsilon(1e-12));
            }
            // interior + boundary = all rows, and an interior row reads no halo entry
            REQUIRE(static_cast<long long>(p.interior_rows.size() + p.boundary_rows.size()) == p.rows);
            for (int i : p.interior_rows)
                for (int k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) REQUIRE(p.col_idx[k] < p.rows);
            for (int i : p.boundary_rows) {
                bool reads = false;
                for (int k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) reads = reads || p.col_idx[k] >= p.rows;
                REQUIRE(reads);
            }
        }
    }
}

TEST_CASE("multigpu: a slab partition of a 27-point grid has two neighbours and a plane of halo each", "[cpu][multigpu]") {
    // 8 x 8 x 16 nodes in 4 slabs of 4 planes: the middle slabs read one plane (64 nodes)
    // from each side, the end slabs one plane from their only neighbour.
    const tut::cg::Csr A = tut::cg::diffusion_27pt(8, 8, 16);
    const std::vector<HaloPlan> plans = plans_for(A, 4);
    REQUIRE(plans[0].recv_ranks == std::vector<int>{1});
    REQUIRE(plans[1].recv_ranks == std::vector<int>{0, 2});
    REQUIRE(plans[3].recv_ranks == std::vector<int>{2});
    REQUIRE(plans[0].halo() == 64);
    REQUIRE(plans[1].halo() == 128);
    REQUIRE(plans[1].send_ranks == std::vector<int>{0, 2});
    REQUIRE(plans[1].send_rows.size() == 128);
    // two planes of each middle slab touch a neighbour: 4 planes - 2 = 2 interior planes
    REQUIRE(plans[1].interior_rows.size() == 2 * 64);
}

TEST_CASE("multigpu: halo discovery refuses a column outside the matrix, naming the row", "[cpu][multigpu]") {
    RowPartition part(4, 2);
    std::vector<int> rp{0, 1, 2}, col{0, 9};
    std::vector<float> val{1, 1};
    try {
        tut::mg::discover_halo(0, part, rp, col, val);
        FAIL("no exception");
    } catch (const std::invalid_argument& e) {
        REQUIRE(std::string(e.what()).find("local row 1") != std::string::npos);
    }
}

TEST_CASE("multigpu: the ring schedule sums every chunk exactly, for any rank count and size", "[cpu][multigpu]") {
    for (int n : {1, 2, 3, 4, 5, 8}) {
        for (size_t count : {size_t(0), size_t(1), size_t(3), size_t(7), size_t(64), size_t(1001)}) {
            for (size_t align : {size_t(1), size_t(4)}) {
                INFO("ranks = " << n << ", count = " << count << ", align = " << align);
                std::vector<std::vector<int64_t>> in(n, std::vector<int64_t>(count));
                std::vector<int64_t> sum(count, 0);
                for (int r = 0; r < n; ++r)
                    for (size_t i = 0; i < count; ++i) {
                        in[r][i] = static_cast<int64_t>((r + 1) * 1000003 + i * 7919 % 1009);
                        sum[i] += in[r][i];
                    }
                const auto out = tut::mg::ring::simulate(in, align);
                for (int r = 0; r < n; ++r) REQUIRE(out[r] == sum);
            }
        }
    }
}

TEST_CASE("multigpu: after the reduce-scatter each rank owns one finished chunk, each chunk one rank", "[cpu][multigpu]") {
    for (int n : {2, 3, 4, 8}) {
        std::set<int> owned;
        for (int r = 0; r < n; ++r) {
            owned.insert(tut::mg::ring::owned_chunk(r, n));
            // the chunk a rank finishes is the one it added into at the last step
            REQUIRE(tut::mg::ring::reduce_chunk(r, n - 2, n) == tut::mg::ring::owned_chunk(r, n));
            // the first all-gather step copies the neighbour's finished chunk
            REQUIRE(tut::mg::ring::gather_chunk(r, 0, n) == tut::mg::ring::owned_chunk(tut::mg::ring::prev(r, n), n));
        }
        REQUIRE(static_cast<int>(owned.size()) == n);
    }
}

TEST_CASE("multigpu: within a ring step no rank writes a chunk its neighbour reads", "[cpu][multigpu]") {
    // Rank r writes its own chunk c_r at step s and reads chunk c_r of prev(r); next(r)
    // reads chunk c_next of r. A step is free of races when c_next != c_r for every r.
    using namespace tut::mg::ring;
    for (int n : {2, 3, 4, 5, 8}) {
        for (int s = 0; s < n - 1; ++s)
            for (int r = 0; r < n; ++r) {
                INFO("ranks = " << n << ", step = " << s << ", rank = " << r);
                REQUIRE(reduce_chunk(next(r, n), s, n) != reduce_chunk(r, s, n));
                REQUIRE(gather_chunk(next(r, n), s, n) != gather_chunk(r, s, n));
                // and what prev wrote at the step before is what r reads now
                if (s > 0) {
                    REQUIRE(reduce_chunk(prev(r, n), s - 1, n) == reduce_chunk(r, s, n));
                    REQUIRE(gather_chunk(prev(r, n), s - 1, n) == gather_chunk(r, s, n));
                }
            }
    }
}

TEST_CASE("multigpu: rows of the CG matrix generated alone are the generator's rows, bit for bit", "[cpu][multigpu]") {
    for (auto grid : {std::vector<int>{5, 4, 9}, std::vector<int>{3, 7, 2}, std::vector<int>{1, 1, 6}}) {
        const tut::cg::Csr A = tut::cg::diffusion_27pt(grid[0], grid[1], grid[2], 11);
        for (int parts : {1, 2, 3, 5}) {
            RowPartition part(A.rows, parts);
            for (int r = 0; r < parts; ++r) {
                INFO("grid " << A.label << ", part " << r << " of " << parts);
                const tut::mg::CsrRows rows = tut::mg::diffusion_27pt_rows(grid[0], grid[1], grid[2], part.begin(r),
                                                                           part.end(r), 11);
                REQUIRE(rows.row_ptr.size() == size_t(part.rows(r) + 1));
                for (long long i = part.begin(r); i < part.end(r); ++i) {
                    const int a0 = A.row_ptr[i], a1 = A.row_ptr[i + 1];
                    const int b0 = rows.row_ptr[i - part.begin(r)], b1 = rows.row_ptr[i - part.begin(r) + 1];
                    REQUIRE(a1 - a0 == b1 - b0);
                    for (int k = 0; k < a1 - a0; ++k) {
                        REQUIRE(A.col_idx[a0 + k] == rows.col_idx[b0 + k]);
                        REQUIRE(A.values[a0 + k] == rows.values[b0 + k]);  // the same float, exactly
                    }
                }
            }
        }
    }
}

TEST_CASE("multigpu: the 27-point grid's nonzero count is the generator's", "[cpu][multigpu]") {
    for (auto grid : {std::vector<int>{3, 4, 5}, std::vector<int>{1, 1, 1}, std::vector<int>{2, 1, 7},
                      std::vector<int>{24, 24, 48}}) {
        INFO("grid " << grid[0] << "x" << grid[1] << "x" << grid[2]);
        // In a few blocks of rows, as the GPUs generate them.
        RowPartition part(1ll * grid[0] * grid[1] * grid[2], 3);
        long long nonzeros = 0;
        for (int r = 0; r < 3; ++r)
            nonzeros += tut::mg::diffusion_27pt_rows(grid[0], grid[1], grid[2], part.begin(r), part.end(r)).row_ptr.back();
        REQUIRE(nonzeros == tut::mg::diffusion_27pt_nonzeros(grid[0], grid[1], grid[2]));
        REQUIRE(tut::cg::diffusion_27pt(grid[0], grid[1], grid[2]).nnz() == nonzeros);
    }
}

TEST_CASE("multigpu: b = A x* at a block of rows is the CG track's right-hand side there", "[cpu][multigpu]") {
    // The CG track's rhs: x* = random_vector<float>(n, seed ^ 0x5eedb0b, 0, 1), b = float(A x* in double).
    const tut::cg::Csr A = tut::cg::diffusion_27pt(6, 5, 8, 3);
    const uint64_t seed = 99;
    const std::vector<float> xs = tut::random_vector<float>(size_t(A.cols), seed ^ 0x5eedb0bull, 0.0, 1.0);
    std::vector<double> ax(size_t(A.rows));
    tut::cg::spmv_cpu(A, xs.data(), ax.data());
    for (long long j = 0; j < A.rows; ++j) REQUIRE(tut::mg::cg_solution_entry(seed, j) == xs[size_t(j)]);
    RowPartition part(A.rows, 3);
    for (int r = 0; r < 3; ++r) {
        const tut::mg::CsrRows rows = tut::mg::diffusion_27pt_rows(6, 5, 8, part.begin(r), part.end(r), 3);
        const std::vector<float> b = tut::mg::cg_rhs_rows(rows, seed);
        for (long long i = part.begin(r); i < part.end(r); ++i) REQUIRE(b[size_t(i - part.begin(r))] == float(ax[size_t(i)]));
        const std::vector<float> dinv = tut::mg::inverse_diagonal(rows);
        REQUIRE(dinv.size() == size_t(part.rows(r)));
        for (float d : dinv) REQUIRE(d > 0.0f);
    }
}

TEST_CASE("multigpu: an option's comma-separated names are checked against the choices", "[cpu][multigpu]") {
    const std::vector<std::string> choices{"weak", "128^3", "256^3"};
    REQUIRE(tut::mg::name_list("", choices, "problem").empty());
    REQUIRE(tut::mg::name_list("128^3", choices, "problem") == std::vector<std::string>{"128^3"});
    REQUIRE(tut::mg::name_list("weak,128^3,weak", choices, "problem") == std::vector<std::string>{"weak", "128^3"});
    REQUIRE_THROWS_AS(tut::mg::name_list("512^3", choices, "problem"), tut::UsageError);
    REQUIRE_THROWS_AS(tut::mg::name_list("weak,,128^3", choices, "problem"), tut::UsageError);
    REQUIRE_THROWS_AS(tut::mg::name_list("weak,", choices, "problem"), tut::UsageError);
    try {
        tut::mg::name_list("weak,512^3", choices, "problem");
    } catch (const tut::UsageError& e) {
        REQUIRE(std::string(e.what()) == "--problem: '512^3' is not one of: weak, 128^3, 256^3");
    }
    REQUIRE(tut::mg::chosen({}, "anything"));
    REQUIRE(tut::mg::chosen({"weak"}, "weak"));
    REQUIRE_FALSE(tut::mg::chosen({"weak"}, "128^3"));
}

TEST_CASE("multigpu: the progress report names the current step, where inside it, and the steps before",
          "[cpu][multigpu]") {
    tut::mg::progress("first step");
    tut::mg::progress("second step");
    tut::mg::progress_detail("sweep 3");
    const std::string r = tut::mg::progress_report();
    CAPTURE(r);
    REQUIRE(r.rfind("at: second step [sweep 3] (for ", 0) == 0);
    REQUIRE(r.find("before that: <- first step (") != std::string::npos);
    // A new step drops the detail; the history keeps the last five.
    for (int i = 0; i < 8; ++i) tut::mg::progress("step " + std::to_string(i));
    const std::string later = tut::mg::progress_report();
    CAPTURE(later);
    REQUIRE(later.rfind("at: step 7 (for ", 0) == 0);
    REQUIRE(later.find("step 6") != std::string::npos);
    REQUIRE(later.find("step 2") != std::string::npos);
    REQUIRE(later.find("step 1 (") == std::string::npos);
    REQUIRE(later.find("[") == std::string::npos);
    REQUIRE(tut::mg::watchdog_seconds_from_env("TUT_MG_NO_SUCH_VARIABLE") == 0);
}
