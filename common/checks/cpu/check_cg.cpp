// CPU checks of the CG track's host side (tut/cg_matrix.hpp, tut/cg.hpp): the problem
// generator, the Matrix Market reader (good and malformed files), the double-precision
// reference CG, the Jacobi refusal, the solvers' size limit, the bandwidth floor, the
// shared-results file, the test matrix spd100.mtx, lesson 08's on-chip limit, the shared
// copy of lesson 05's kernel (kept out of what lesson 05's exercise includes) and the
// linkage of the headers' kernels. No GPU needed.
#include "catch.hpp"
#include "tut/cg.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

using namespace tut::cg;

namespace {

double entry(const Csr& A, int i, int j) {
    for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (A.col_idx[k] == j) return A.values[k];
    return 0.0;
}

// Structure checks every generated matrix must pass: sorted unique columns, exact
// symmetry, positive diagonal at least the sum of the off-diagonal magnitudes (weak
// diagonal dominance: with a positive diagonal and symmetry, a hint of SPD).
void require_well_formed_spd_hints(const Csr& A) {
    REQUIRE(A.rows == A.cols);
    REQUIRE(int(A.row_ptr.size()) == A.rows + 1);
    REQUIRE(A.row_ptr.front() == 0);
    REQUIRE(A.row_ptr.back() == A.nnz());
    for (int i = 0; i < A.rows; ++i) {
        double diag = 0.0, off = 0.0;
        for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
            if (k > A.row_ptr[i]) REQUIRE(A.col_idx[k] > A.col_idx[k - 1]);
            const int j = A.col_idx[k];
            if (j == i)
                diag = A.values[k];
            else {
                off += std::fabs(A.values[k]);
                REQUIRE(A.values[k] < 0.0f);
                REQUIRE(entry(A, j, i) == A.values[k]);  // bit-exact symmetry
            }
        }
        REQUIRE(diag > 0.0);
        REQUIRE(diag >= off * (1.0 - 1e-6));
    }
}

Csr read(const std::string& text, MatrixMarketOptions opt = {}) {
    std::istringstream in(text);
    return read_matrix_market(in, "t.mtx", opt);
}

// Requires the text to be refused with a message naming line `line`.
void require_refused(const std::string& text, int line, const std::string& words) {
    INFO("file:\n" << text);
    std::string message;
    try {
        read(text);
    } catch (const MatrixMarketError& e) {
        message = e.what();
    }
    INFO("message: " << message);
    REQUIRE(!message.empty());
    REQUIRE(message.find("t.mtx:" + std::to_string(line) + ":") == 0);
    REQUIRE(message.find(words) != std::string::npos);
}

}  // namespace

TEST_CASE("cg generator: the default problem has the documented shape and is SPD-like", "[cg]") {
    const Csr A = default_matrix();
    REQUIRE(A.rows == 40000);
    REQUIRE(A.nnz() == 939232);
    require_well_formed_spd_hints(A);
    // Rows on the fixed face (z = 0) are strictly diagonally dominant, the others exactly balanced.
    const double d0 = entry(A, 0, 0);
    double off0 = 0.0;
    for (int k = A.row_ptr[0]; k < A.row_ptr[1]; ++k)
        if (A.col_idx[k] != 0) off0 += std::fabs(A.values[k]);
    REQUIRE(d0 > off0 * 1.01);
    // x^T A x > 0 for a few random x (a hint, not a proof, of definiteness).
    for (uint64_t seed : {1u, 2u, 3u}) {
        const auto x = tut::random_vector<double>(size_t(A.rows), seed);
        std::vector<double> ax(size_t(A.rows));
        spmv_cpu(A, x.data(), ax.data());
        double xax = 0.0;
        for (int i = 0; i < A.rows; ++i) xax += x[i] * ax[i];
        REQUIRE(xax > 0.0);
    }
    // Deterministic: the same seed gives the same matrix; another seed another one.
    const Csr B = default_matrix();
    REQUIRE(A.values == B.values);
    REQUIRE(default_matrix(7).values != A.values);
}

TEST_CASE("cg generator: nonzero count (3nx-2)(3ny-2)(3nz-2) and small grids", "[cg]") {
    for (auto g : {std::array<int, 3>{1, 1, 1}, {1, 1, 64}, {3, 3, 3}, {5, 7, 11}, {2, 9, 4}}) {
        const Csr A = diffusion_27pt(g[0], g[1], g[2]);
        CAPTURE(g[0], g[1], g[2]);
        REQUIRE(A.rows == g[0] * g[1] * g[2]);
        REQUIRE(A.nnz() == (3ll * g[0] - 2) * (3ll * g[1] - 2) * (3ll * g[2] - 2));
        require_well_formed_spd_hints(A);
    }
    // The large problem's size, from the same formula, without building 450 MB here.
    REQUIRE((3ll * kLargeGrid[0] - 2) * (3ll * kLargeGrid[1] - 2) * (3ll * kLargeGrid[2] - 2) == 55742968);
    REQUIRE(1ll * kLargeGrid[0] * kLargeGrid[1] * kLargeGrid[2] >= 2000000);
    REQUIRE_THROWS_AS(diffusion_27pt(0, 1, 1), std::invalid_argument);
    REQUIRE_THROWS_AS(diffusion_27pt(2000, 2000, 2000), std::invalid_argument);
}

TEST_CASE("cg reference: the default problem needs hundreds of iterations; Jacobi cuts them ~1.7x", "[cg]") {
    const Csr A = default_matrix();
    const auto b = make_rhs(A, 2024);
    const auto plain = cg_cpu(A, b, 1e-6, 5000, false);
    const auto jacobi = cg_cpu(A, b, 1e-6, 5000, true);
    INFO("CG " << plain.iterations << ", Jacobi PCG " << jacobi.iterations);
    REQUIRE(plain.outcome == Outcome::converged);
    REQUIRE(jacobi.outcome == Outcome::converged);
    REQUIRE(plain.iterations > 600);
    REQUIRE(plain.iterations < 1000);
    const double ratio = double(plain.iterations) / jacobi.iterations;
    REQUIRE(ratio > 1.5);
    REQUIRE(ratio < 2.0);
    std::vector<float> x(jacobi.x.begin(), jacobi.x.end());
    REQUIRE(true_relative_residual(A, b, x) < 2e-6);
}

TEST_CASE("cg reference: tiny systems, not positive definite, iteration limit", "[cg]") {
    SECTION("1x1: one iteration, exact") {
        const Csr A = diagonal_matrix({4.0f});
        const auto r = cg_cpu(A, {2.0f}, 1e-6, 10, false);
        REQUIRE(r.outcome == Outcome::converged);
        REQUIRE(r.iterations == 1);
        REQUIRE(r.x[0] == Approx(0.5));
    }
    SECTION("diagonal: Jacobi PCG in one iteration; plain CG in one per distinct eigenvalue") {
        const Csr A = diagonal_matrix({1.0f, 2.0f, 3.0f, 2.0f, 1.0f});
        const std::vector<float> b{1, 1, 1, 1, 1};
        REQUIRE(cg_cpu(A, b, 1e-10, 10, true).iterations == 1);
        const auto r = cg_cpu(A, b, 1e-10, 10, false);
        REQUIRE(r.outcome == Outcome::converged);
        REQUIRE(r.iterations == 3);
        REQUIRE(r.x[2] == Approx(1.0 / 3.0));
    }
    SECTION("2x2 SPD: at most two iterations") {
        const Csr A = csr_from_triplets(2, 2, {{0, 0, 4}, {0, 1, 1}, {1, 0, 1}, {1, 1, 3}});
        const auto r = cg_cpu(A, {1.0f, 2.0f}, 1e-10, 10, false);
        REQUIRE(r.outcome == Outcome::converged);
        REQUIRE(r.iterations <= 2);
        REQUIRE(r.x[0] == Approx(1.0 / 11.0));
        REQUIRE(r.x[1] == Approx(7.0 / 11.0));
    }
    SECTION("indefinite: p.Ap <= 0 is reported at iteration 2, not looped on") {
        const Csr A = csr_from_triplets(2, 2, {{0, 0, 1}, {0, 1, 2}, {1, 0, 2}, {1, 1, 1}});
        for (bool jacobi : {false, true}) {
            const auto r = cg_cpu(A, {1.0f, 0.0f}, 1e-10, 100, jacobi);
            REQUIRE(r.outcome == Outcome::not_positive_definite);
            REQUIRE(r.iterations == 2);
        }
    }
    SECTION("the iteration limit is respected") {
        const Csr A = default_matrix();
        const auto r = cg_cpu(A, make_rhs(A, 1), 1e-6, 7, true);
        REQUIRE(r.outcome == Outcome::max_iterations);
        REQUIRE(r.iterations == 7);
    }
}

TEST_CASE("cg Jacobi: a zero, missing or negative diagonal is refused, naming the row", "[cg]") {
    const Csr zero = csr_from_triplets(2, 2, {{0, 0, 1}, {1, 1, 0}});
    const Csr missing = csr_from_triplets(3, 3, {{0, 0, 1}, {1, 2, 1}, {2, 1, 1}, {2, 2, 1}});
    const Csr negative = csr_from_triplets(2, 2, {{0, 0, -1}, {1, 1, 1}});
    for (const Csr* A : {&zero, &missing, &negative}) REQUIRE_THROWS_AS(inverse_diagonal(*A), tut::Unsupported);
    try {
        inverse_diagonal(missing);
    } catch (const tut::Unsupported& e) {
        REQUIRE(std::string(e.what()).find("row 1 has a zero (or missing) diagonal") != std::string::npos);
    }
    REQUIRE_THROWS_AS(inverse_diagonal(csr_from_triplets(2, 3, {{0, 0, 1}})), tut::Unsupported);
    const auto d = inverse_diagonal(diagonal_matrix({2.0f, 4.0f}));
    REQUIRE(d[0] == 0.5f);
    REQUIRE(d[1] == 0.25f);
}

TEST_CASE("cg solvers' size limit: more than 2^30 rows is refused before any work", "[cg]") {
    // The kernels' int indices step by a grid stride; kMaxRows keeps every step below INT_MAX.
    REQUIRE(kMaxRows == 1 << 30);
    REQUIRE(kMaxNonzeros == 1ll << 30);
    REQUIRE(int64_t(kMaxRows) * 2 - 1 <= INT_MAX);  // the last index plus a stride of up to n
    Csr A;  // only the shape: the check refuses it before it looks at the arrays
    A.rows = A.cols = kMaxRows + 1;
    std::string message;
    try {
        require_solvable(A);
    } catch (const tut::Unsupported& e) {
        message = e.what();
    }
    INFO("message: " << message);
    REQUIRE(message.find("1073741825 rows") != std::string::npos);
    REQUIRE(message.find("at most 1073741824") != std::string::npos);
    A.rows = A.cols = INT_MAX;
    REQUIRE_THROWS_AS(require_solvable(A), tut::Unsupported);
    // At the limit the size is accepted (this one then fails as malformed: no row_ptr).
    A.rows = A.cols = kMaxRows;
    message.clear();
    try {
        require_solvable(A);
    } catch (const tut::Unsupported& e) {
        message = e.what();
    }
    REQUIRE(message.find("malformed CSR") != std::string::npos);
    require_solvable(diagonal_matrix({1.0f, 2.0f}));
}

TEST_CASE("cg Matrix Market: good files", "[cg][mtx]") {
    SECTION("general, with comments, blank lines, any case, integer values") {
        const Csr A = read("%%MatrixMarket Matrix Coordinate Integer General\n% a comment\n\n2 2 4\n1 1 4\n1 2 -1\n2 1 -1\n2 2 3\n");
        REQUIRE(A.rows == 2);
        REQUIRE(A.nnz() == 4);
        REQUIRE(entry(A, 0, 1) == -1.0);
        REQUIRE(entry(A, 1, 1) == 3.0);
    }
    SECTION("symmetric: the stored triangle is mirrored, entries may come in any order") {
        const Csr A = read("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n3 1 -0.5\n1 1 2.0\n2 2 2.5e0\n3 3 1\n");
        REQUIRE(A.nnz() == 5);
        REQUIRE(entry(A, 0, 2) == -0.5);
        REQUIRE(entry(A, 2, 0) == -0.5);
        REQUIRE(entry(A, 1, 1) == 2.5);
        REQUIRE(A.col_idx[size_t(A.row_ptr[2])] == 0);  // columns sorted within a row
    }
    SECTION("a non-square general matrix when squareness is not required") {
        MatrixMarketOptions opt;
        opt.require_square = opt.require_symmetric = false;
        const Csr A = read("%%MatrixMarket matrix coordinate real general\n2 3 1\n2 3 7\n", opt);
        REQUIRE(A.rows == 2);
        REQUIRE(A.cols == 3);
        REQUIRE(entry(A, 1, 2) == 7.0);
    }
    SECTION("a generated matrix written out and read back is the same matrix") {
        const Csr G = diffusion_27pt(3, 4, 5);
        std::ostringstream out;
        out << "%%MatrixMarket matrix coordinate real symmetric\n" << G.rows << " " << G.cols << " ";
        std::ostringstream body;
        long count = 0;
        body.precision(9);
        for (int i = 0; i < G.rows; ++i)
            for (int k = G.row_ptr[i]; k < G.row_ptr[i + 1]; ++k)
                if (G.col_idx[k] <= i) {
                    body << i + 1 << " " << G.col_idx[k] + 1 << " " << G.values[k] << "\n";
                    ++count;
                }
        out << count << "\n" << body.str();
        const Csr A = read(out.str());
        REQUIRE(A.row_ptr == G.row_ptr);
        REQUIRE(A.col_idx == G.col_idx);
        REQUIRE(A.values == G.values);
    }
}

TEST_CASE("cg Matrix Market: malformed files are refused with the line named", "[cg][mtx]") {
    const std::string head = "%%MatrixMarket matrix coordinate real general\n";
    const std::string sym = "%%MatrixMarket matrix coordinate real symmetric\n";
    require_refused("", 1, "empty file");
    require_refused("hello\n2 2 1\n1 1 1\n", 1, "not a Matrix Market file");
    require_refused("%%MatrixMarket matrix coordinate real\n", 1, "malformed header");
    require_refused("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n", 1, "pattern");
    require_refused("%%MatrixMarket matrix coordinate complex general\n", 1, "complex");
    require_refused("%%MatrixMarket matrix array real general\n", 1, "array");
    require_refused("%%MatrixMarket matrix coordinate real hermitian\n", 1, "hermitian");
    require_refused("%%MatrixMarket matrix coordinate real skew-symmetric\n", 1, "skew-symmetric");
    require_refused(head + "% only comments\n", 3, "missing size line");
    require_refused(head + "2 two 1\n", 2, "malformed size line");
    require_refused(head + "2 2\n", 2, "malformed size line");
    require_refused(head + "0 0 0\n", 2, "must be >= 1");
    require_refused(head + "2 3 1\n1 1 1\n", 2, "square");
    require_refused(head + "2 2 3\n1 1 1\n2 2 1\n", 5, "promises 3 entries");
    // More entries than positions: refused on the size line, whatever the count (the
    // second would overflow a doubling for the mirrored triangle).
    require_refused(head + "2 2 5\n1 1 1\n", 2, "more than the 4 positions");
    require_refused(sym + "2 2 4\n1 1 1\n", 2, "more than the 3 positions");
    require_refused(sym + "3 3 4611686018427387904\n1 1 1\n", 2, "positions");
    require_refused(sym + "2147483647 2147483647 4611686018427387904\n1 1 1\n", 2, "positions");
    require_refused(head + "2147483647 2147483647 9223372036854775807\n1 1 1\n", 2, "positions");
    // Possible counts, too many for 32-bit CSR indices (the mirrored triangle counts twice).
    require_refused(head + "100000 100000 2147483648\n1 1 1\n", 2, "too large for 32-bit");
    require_refused(sym + "100000 100000 1073741824\n1 1 1\n", 2, "too large for 32-bit");
    // A short file that promises billions of entries: refused where it ends, not by the
    // allocator reserving room for them.
    require_refused(head + "50000 50000 2000000000\n1 1 1\n", 4, "promises 2000000000 entries");
    require_refused(sym + "50000 50000 1073741823\n1 1 1\n", 4, "promises 1073741823 entries");
    require_refused(head + "2 2 1\n1 1 1\n2 2 1\n", 4, "more entries");
    require_refused(head + "2 2 1\n3 1 1\n", 3, "outside the 2 x 2");
    require_refused(head + "2 2 1\n0 1 1\n", 3, "outside");
    require_refused(head + "2 2 1\n1 1 x\n", 3, "not a number");
    require_refused(head + "2 2 1\n1 1 1e99\n", 3, "finite float");
    require_refused(head + "2 2 1\n1 1\n", 3, "expected 'row column value'");
    require_refused(head + "2 2 1\n1.5 1 1\n", 3, "whole numbers");
    require_refused(head + "2 2 2\n1 1 1\n1 1 2\n", 4, "given twice");
    require_refused(sym + "2 2 3\n2 1 1\n1 2 1\n2 2 1\n", 4, "one triangle only");
    require_refused(sym + "2 3 1\n1 1 1\n", 2, "square");
    // Non-symmetric input for CG: the entry without an equal mirror is named.
    require_refused(head + "2 2 3\n1 1 1\n1 2 5\n2 2 1\n", 4, "has no mirror entry (2, 1)");
    require_refused(head + "2 2 4\n1 1 1\n1 2 5\n2 1 4\n2 2 1\n", 4, "differs from its mirror");
    // A missing file.
    REQUIRE_THROWS_AS(read_matrix_market_file("/nonexistent/dir/a.mtx"), MatrixMarketError);
}

TEST_CASE("cg bandwidth floor and SpMV bytes", "[cg]") {
    // 8 bytes per nonzero (value + column), 4 per row pointer, 4 per vector element moved.
    REQUIRE(floor_bytes_per_iteration(10, 100, false) == 800.0 + 44.0 + 4.0 * 10 * 6);
    REQUIRE(floor_bytes_per_iteration(10, 100, true) == 800.0 + 44.0 + 4.0 * 10 * 7);
    REQUIRE(spmv_bytes(10, 100) == 800.0 + 44.0 + 80.0);
    // The default problem: 7.5 MB of matrix, 1.1 MB of vectors per iteration.
    REQUIRE(floor_bytes_per_iteration(40000, 939232, true) == 8793860.0);
}

TEST_CASE("cg check_solution: ok within 2 tol, failed above, float limit explained", "[cg]") {
    const Csr A = diagonal_matrix({2.0f, 2.0f});
    const std::vector<float> b{2.0f, 2.0f};
    SolveResult r;
    r.outcome = Outcome::converged;
    REQUIRE(check_solution(A, b, {1.0f, 1.0f}, r, 1e-6).ok);
    REQUIRE(check_solution(A, b, {1.0f, 1.0f}, r, 1e-6).true_residual == 0.0);
    const auto off = check_solution(A, b, {1.001f, 1.0f}, r, 1e-6);
    REQUIRE_FALSE(off.ok);
    REQUIRE(off.verdict.rfind("FAILED", 0) == 0);
    r.outcome = Outcome::max_iterations;
    REQUIRE_FALSE(check_solution(A, b, {1.0f, 1.0f}, r, 1e-6).ok);
    // |A||x| >> |b| (x = (1e6, 1e6), b = A x = (0, 976.5625)): float cannot resolve b - A x
    // below ~u ||A|| ||x|| / ||b|| ~ 1e-4, so a 6.4e-5 residual is "the float limit", not a
    // failure; a residual of 1 (x = 0) still fails.
    const float c = 1.0f + 1.0f / 1024.0f;
    const Csr B = csr_from_triplets(2, 2, {{0, 0, 1.0f}, {0, 1, -1.0f}, {1, 0, -1.0f}, {1, 1, c}});
    const std::vector<float> bB{0.0f, 976.5625f};
    r.outcome = Outcome::converged;
    const auto limit = check_solution(B, bB, {1e6f + 64.0f, 1e6f + 64.0f}, r, 1e-6);
    INFO(limit.verdict << ", float limit " << limit.float_limit);
    REQUIRE(limit.float_limit > 1e-6);
    REQUIRE(limit.ok);
    REQUIRE(limit.verdict.rfind("float limit", 0) == 0);
    REQUIRE_FALSE(check_solution(B, bB, {0.0f, 0.0f}, r, 1e-6).ok);
}

TEST_CASE("cg problem key names the matrix, the tolerance and the seed", "[cg]") {
    const Csr A = default_matrix();
    REQUIRE(problem_key(A, 1e-6, 2024) == "diffusion27 10x10x400 tol=1e-06 seed=2024");
}

namespace {
// The repository's root, from this file's own path (__FILE__ is the absolute path the build
// gives the compiler): common/checks/cpu/check_cg.cpp.
std::string repo_root() {
    std::string path = __FILE__;
    for (int up = 0; up < 4; ++up) path = path.substr(0, path.find_last_of("/\\"));
    return path + "/";
}

std::string file_text(const std::string& path) {
    std::ifstream f(path);
    INFO("reading " << path);
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// The text of the kernel whose definition starts with `signature`, up to its closing brace
// in column 0.
std::string kernel_text(const std::string& text, const std::string& signature) {
    const size_t begin = text.find(signature);
    if (begin == std::string::npos) return "";
    const size_t end = text.find("\n}\n", begin);
    return end == std::string::npos ? "" : text.substr(begin, end + 3 - begin);
}
}  // namespace

TEST_CASE("cg test matrix spd100.mtx: 100 rows, 848 nonzeros, irregular rows, SPD (CG converges)", "[cg][mtx]") {
    const Csr A = read_matrix_market_file(repo_root() + "common/checks/cg/data/spd100.mtx");
    REQUIRE(A.rows == 100);
    REQUIRE(A.nnz() == 848);
    int shortest = A.rows, longest = 0;
    for (int i = 0; i < A.rows; ++i) {
        shortest = std::min(shortest, A.row_ptr[i + 1] - A.row_ptr[i]);
        longest = std::max(longest, A.row_ptr[i + 1] - A.row_ptr[i]);
    }
    REQUIRE(shortest == 1);  // a row with its diagonal only: fewer nonzeros than an 8-lane sub-warp
    REQUIRE(longest > 32);   // rows longer than 32 nonzeros: several passes of a sub-warp, > 8 quads
    REQUIRE(first_nonpositive_diagonal(A) == -1);
    for (uint64_t seed : {1u, 2u, 3u}) {  // x^T A x > 0: a hint of definiteness
        const auto x = tut::random_vector<double>(size_t(A.rows), seed);
        std::vector<double> ax(size_t(A.rows));
        spmv_cpu(A, x.data(), ax.data());
        double xax = 0.0;
        for (int i = 0; i < A.rows; ++i) xax += x[i] * ax[i];
        REQUIRE(xax > 0.0);
    }
    const auto b = make_rhs(A, 2024);
    for (bool jacobi : {false, true}) {
        const auto r = cg_cpu(A, b, 1e-6, 1000, jacobi);
        INFO((jacobi ? "Jacobi PCG " : "CG ") << r.iterations << " iterations");
        REQUIRE(r.outcome == Outcome::converged);
        std::vector<float> x(r.x.begin(), r.x.end());
        REQUIRE(true_relative_residual(A, b, x) < 2e-6);
    }
}

TEST_CASE("cg lesson 08: the default problem fits on chip from 116 SMs on (512 rows, 8192 nonzeros per block)", "[cg]") {
    // The rule of solutions/cg/08_persistent (one tile of ceil(n / SMs) rows per SM, at most
    // 512 rows and 8192 nonzeros each), and the kSmsForResidentDefault its check uses.
    const Csr A = default_matrix();
    auto fits = [&](int sms) {
        const int tile_rows = (A.rows + sms - 1) / sms;
        int largest = 0;
        for (int first = 0; first < A.rows; first += tile_rows)
            largest = std::max(largest, A.row_ptr[std::min(A.rows, first + tile_rows)] - A.row_ptr[first]);
        return tile_rows <= 512 && largest <= 8192;
    };
    REQUIRE_FALSE(fits(115));
    for (int sms = 116; sms <= 200; ++sms) REQUIRE(fits(sms));
}

TEST_CASE("cg lesson 05's update_x_r_z: tut/cg_fused_update.hpp holds the same kernel as the solution", "[cg]") {
    // Lessons 06 and 07 take the finished kernel from the header; lesson 05 has the student
    // write it. The two texts must not drift apart.
    const std::string signature = "__global__ void update_x_r_z(";
    const std::string header = kernel_text(file_text(repo_root() + "common/include/tut/cg_fused_update.hpp"), signature);
    const std::string lesson5 = kernel_text(file_text(repo_root() + "solutions/cg/05_fusion/fusion.cu"), signature);
    REQUIRE(!header.empty());
    REQUIRE(header == lesson5);
}

namespace {
// The tut/ headers `path` includes, directly or through other tut/ headers.
std::set<std::string> tut_headers_included_by(const std::string& path) {
    std::set<std::string> seen;
    std::vector<std::string> todo{path};
    while (!todo.empty()) {
        std::istringstream text(file_text(todo.back()));
        todo.pop_back();
        for (std::string line; std::getline(text, line);) {
            const std::string directive = "#include \"tut/";
            if (line.rfind(directive, 0) != 0) continue;
            const std::string name = line.substr(directive.size(), line.find('"', directive.size()) - directive.size());
            if (seen.insert(name).second) todo.push_back(repo_root() + "common/include/tut/" + name);
        }
    }
    return seen;
}
}  // namespace

TEST_CASE("cg lesson 05's exercise includes no header that holds its answer, update_x_r_z", "[cg]") {
    const std::set<std::string> headers = tut_headers_included_by(repo_root() + "lessons/cg/05_fusion/fusion.cu");
    REQUIRE(headers.count("cg_fused.hpp") == 1);  // the shared kernels it starts from
    for (const std::string& name : headers) {
        INFO("lessons/cg/05_fusion/fusion.cu includes tut/" << name);
        REQUIRE(file_text(repo_root() + "common/include/tut/" + name).find("void update_x_r_z(") == std::string::npos);
    }
}

TEST_CASE("cg headers: every kernel is static or a template, so that several translation units may include them", "[cg]") {
    for (const char* name : {"cg.hpp", "cg_fused.hpp", "cg_fused_update.hpp", "cg_persistent.hpp", "cooperative.hpp"}) {
        std::istringstream text(file_text(repo_root() + "common/include/tut/" + name));
        std::string previous;
        for (std::string line; std::getline(text, line); previous = line) {
            if (line.rfind("__global__", 0) != 0 && line.rfind("static __global__", 0) != 0) continue;
            INFO(name << ": " << line);
            REQUIRE((line.rfind("static ", 0) == 0 || previous.rfind("template", 0) == 0));
        }
    }
}
