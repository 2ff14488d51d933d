/// @file multigpu_halo.hpp
/// @brief A sparse matrix split by rows between GPUs: which entries of a vector each GPU
/// needs from which other GPU (its halo), found from the CSR columns, and the local
/// numbering that puts those entries after the GPU's own. Plain C++ (the CPU tests use it
/// as it is); multigpu_mpi.hpp exchanges the lists between processes.
///
/// Rank r owns rows [row_begin, row_begin + rows) of A (a RowPartition) and the same
/// entries of every vector. Its rows read x at their columns: its own entries, and
/// others'. Discovery, from r's rows alone:
///   1. every column outside r's own range, sorted and without repeats: the halo;
///   2. split by owner (the partition is contiguous, so the sorted halo is already grouped
///      by owner, lowest rank first): from rank q, recv_cols[recv_offsets[i] ..
///      recv_offsets[i + 1]) where q = recv_ranks[i];
///   3. the local vector is [own rows | halo from recv_ranks[0] | halo from recv_ranks[1] ...],
///      and the local matrix's columns are renumbered into it: own column c becomes
///      c - row_begin, halo column c its position after the own rows.
/// What r must send is what the others receive from it: rank q's recv list for r,
/// turned into r's local rows (set_send_lists()). A halo exchange then packs those rows
/// of x per destination and receives each neighbour's block straight into its place
/// after the own rows: no unpacking.
/// Rows that read no halo entry (interior) can be computed before the halo arrives; the
/// others (boundary) after: interior_rows and boundary_rows list them.
#pragma once

#include "multigpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace tut::mg {

/// One rank's share of a row-partitioned CSR matrix and its halo (see the file comment).
struct HaloPlan {
    int rank = 0, parts = 1;
    long long n = 0;          ///< rows (and columns) of the whole matrix
    long long row_begin = 0;  ///< first global row of this rank
    long long rows = 0;       ///< rows of this rank

    std::vector<int> recv_ranks;        ///< ranks this one receives from, ascending
    std::vector<int> recv_offsets{0};   ///< into recv_cols, one more entry than recv_ranks
    std::vector<int> recv_cols;         ///< global columns of the halo, ascending

    std::vector<int> send_ranks;        ///< ranks this one sends to, ascending
    std::vector<int> send_offsets{0};   ///< into send_rows
    std::vector<int> send_rows;         ///< local rows to send, per destination, ascending

    std::vector<int> row_ptr;           ///< local CSR: rows + 1 offsets
    std::vector<int> col_idx;           ///< local columns: [0, rows) own, [rows, rows + halo) halo
    std::vector<float> values;

    std::vector<int> interior_rows;     ///< local rows with no halo column
    std::vector<int> boundary_rows;     ///< local rows with at least one

    long long halo() const { return static_cast<long long>(recv_cols.size()); }
    /// Length of a local vector with room for the halo after the own rows.
    long long local_size() const { return rows + halo(); }
    /// Position in the local vector of the halo entries from recv_ranks[i].
    long long recv_place(size_t i) const { return rows + recv_offsets[i]; }
    long long nnz() const { return static_cast<long long>(col_idx.size()); }
};

/// Builds rank `rank`'s plan (all but the send lists) from its own rows: `row_ptr`
/// (rows + 1 offsets from 0), `col_idx` (global columns) and `values`. Throws
/// std::invalid_argument for a malformed input (a column outside the matrix, offsets
/// that do not match the rows), naming the row.
inline HaloPlan discover_halo(int rank, const RowPartition& part, const std::vector<int>& row_ptr,
                              const std::vector<int>& col_idx, const std::vector<float>& values) {
    HaloPlan p;
    p.rank = rank;
    p.parts = part.parts;
    p.n = part.n;
    p.row_begin = part.begin(rank);
    p.rows = part.rows(rank);
    const long long row_end = p.row_begin + p.rows;
    if (static_cast<long long>(row_ptr.size()) != p.rows + 1 || row_ptr.front() != 0 ||
        row_ptr.back() != static_cast<int>(col_idx.size()) || col_idx.size() != values.size())
        throw std::invalid_argument("discover_halo: rank " + std::to_string(rank) + " has " + std::to_string(p.rows) +
                                    " rows, but row_ptr, col_idx and values do not describe them");

    // 1. The halo: every column outside the own range, sorted, once.
    std::vector<int> halo;
    for (long long i = 0; i < p.rows; ++i)
        for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            const long long c = col_idx[k];
            if (c < 0 || c >= p.n)
                throw std::invalid_argument("discover_halo: local row " + std::to_string(i) + " (global row " +
                                            std::to_string(p.row_begin + i) + ") has column " + std::to_string(c) +
                                            ", outside the " + std::to_string(p.n) + " columns");
            if (c < p.row_begin || c >= row_end) halo.push_back(static_cast<int>(c));
        }
    std::sort(halo.begin(), halo.end());
    halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
    p.recv_cols = halo;

    // 2. Grouped by owner: the sorted halo is already in owner order.
    for (size_t j = 0; j < halo.size(); ++j) {
        const int owner = part.owner(halo[j]);
        if (p.recv_ranks.empty() || p.recv_ranks.back() != owner) {
            if (!p.recv_ranks.empty()) p.recv_offsets.push_back(static_cast<int>(j));
            p.recv_ranks.push_back(owner);
        }
    }
    if (!p.recv_ranks.empty()) p.recv_offsets.push_back(static_cast<int>(halo.size()));

    // 3. Local numbering, and interior / boundary rows.
    p.row_ptr = row_ptr;
    p.values = values;
    p.col_idx.resize(col_idx.size());
    for (long long i = 0; i < p.rows; ++i) {
        bool reads_halo = false;
        for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            const long long c = col_idx[k];
            if (c >= p.row_begin && c < row_end) {
                p.col_idx[k] = static_cast<int>(c - p.row_begin);
            } else {
                const auto at = std::lower_bound(halo.begin(), halo.end(), static_cast<int>(c)) - halo.begin();
                p.col_idx[k] = static_cast<int>(p.rows + at);
                reads_halo = true;
            }
        }
        (reads_halo ? p.boundary_rows : p.interior_rows).push_back(static_cast<int>(i));
    }
    return p;
}

/// The global columns rank `plan.rank` receives from rank `from` (empty if none).
inline std::vector<int> recv_list_from(const HaloPlan& plan, int from) {
    for (size_t i = 0; i < plan.recv_ranks.size(); ++i)
        if (plan.recv_ranks[i] == from)
            return std::vector<int>(plan.recv_cols.begin() + plan.recv_offsets[i],
                                    plan.recv_cols.begin() + plan.recv_offsets[i + 1]);
    return {};
}

/// Fills the send lists of `plan` from what every rank asks of it: requests[q] is the list
/// of global columns rank q receives from this rank (recv_list_from(plan_q, this rank)).
/// Throws std::invalid_argument when a request names a row this rank does not own.
inline void set_send_lists(HaloPlan& plan, const std::vector<std::vector<int>>& requests) {
    plan.send_ranks.clear();
    plan.send_offsets.assign(1, 0);
    plan.send_rows.clear();
    for (size_t q = 0; q < requests.size(); ++q) {
        if (requests[q].empty()) continue;
        plan.send_ranks.push_back(static_cast<int>(q));
        for (int c : requests[q]) {
            if (c < plan.row_begin || c >= plan.row_begin + plan.rows)
                throw std::invalid_argument("set_send_lists: rank " + std::to_string(q) + " asks rank " +
                                            std::to_string(plan.rank) + " for row " + std::to_string(c) +
                                            ", which it does not own");
            plan.send_rows.push_back(static_cast<int>(c - plan.row_begin));
        }
        plan.send_offsets.push_back(static_cast<int>(plan.send_rows.size()));
    }
}

/// Every rank's send lists from every rank's receive lists, when all plans are at hand
/// (one process: the CPU tests, or a single-process program).
inline void complete_send_lists(std::vector<HaloPlan>& plans) {
    for (auto& p : plans) {
        std::vector<std::vector<int>> requests(plans.size());
        for (size_t q = 0; q < plans.size(); ++q)
            if (static_cast<int>(q) != p.rank) requests[q] = recv_list_from(plans[q], p.rank);
        set_send_lists(p, requests);
    }
}

}  // namespace tut::mg
