/// @file cg_matrix.hpp
/// @brief The CG track's matrices, on the host: the CSR type, the problem generators,
/// a Matrix Market reader, and the double-precision CPU reference (SpMV, residual, CG).
///
/// Everything here is plain C++ (no CUDA), so the CPU checks and the Eigen baseline use
/// it as it is. tut/cg.hpp adds the GPU side and the lesson driver.
///
/// Conventions for the whole track:
/// - Matrices are square CSR with 0-based, 32-bit indices, columns sorted within a row,
///   float values (what the GPU solves with). References compute in double.
/// - The solve is A x = b from x0 = 0, stopped when the residual the iteration carries
///   satisfies ||r|| <= tol ||b|| (the same test as Eigen's ConjugateGradient).
/// - "Iterations" means matrix-vector products performed in the loop: the number of
///   times the loop body ran. Eigen reports one fewer (it counts only completed passes
///   that did not exit early), and the Eigen baseline adds that one back.
#pragma once

#include <cstddef>  // before random.hpp, which uses size_t

#include "random.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tut::cg {

/// A square (or not: the reader can hold any shape) sparse matrix in CSR form.
struct Csr {
    int rows = 0, cols = 0;
    std::vector<int> row_ptr;    ///< rows + 1 offsets into col_idx / values
    std::vector<int> col_idx;    ///< column of each stored entry, sorted within a row
    std::vector<float> values;   ///< value of each stored entry
    std::string label;           ///< where it came from, for tables: "diffusion 10x10x400", "bcsstk36.mtx"

    long long nnz() const { return static_cast<long long>(col_idx.size()); }
};

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

/// The track's model problem: steady diffusion with a strongly varying coefficient on an
/// nx x ny x nz grid of nodes, discretised with all 26 neighbours (a 27-point stencil).
///
/// - Each node i gets a coefficient k_i = 10^(decades * u_i), u_i uniform in [0, 1) from
///   `seed` (log-uniform over `decades` decades: 1 to 100 by default).
/// - Every pair of neighbouring nodes (i, j) is joined by an edge of weight
///   w_ij = sqrt(k_i k_j): A_ij = -w_ij and both diagonals get +w_ij.
/// - The face z = 0 is held fixed (Dirichlet): each node on it is also joined to the 9
///   ghost nodes of the layer below (those inside the x-y extent), held at zero, with
///   weight k_i; that adds to the diagonal only. The other five faces are free (no flux).
///
/// A is then a weighted graph Laplacian plus a non-negative diagonal that is positive on
/// one face: symmetric positive definite, weakly diagonally dominant. The long thin
/// default grid (10 x 10 x 400) makes it ill-conditioned in the way the story's matrix
/// was: hundreds of CG iterations, and the variable coefficients make Jacobi scaling
/// worth about 1.7x in iterations. Node (x, y, z) is row x + nx (y + ny z); columns come
/// out sorted because the stencil is walked z-major.
inline Csr diffusion_27pt(int nx, int ny, int nz, uint64_t seed = 2024, double decades = 2.0) {
    if (nx < 1 || ny < 1 || nz < 1) throw std::invalid_argument("diffusion_27pt: grid dimensions must be >= 1");
    const long long n_ll = 1ll * nx * ny * nz;
    // Each dimension contributes 3n - 2 (node, offset) pairs that stay inside the grid.
    const long long nnz_ll = (3ll * nx - 2) * (3ll * ny - 2) * (3ll * nz - 2);
    if (n_ll > INT_MAX || nnz_ll > INT_MAX)
        throw std::invalid_argument("diffusion_27pt: grid too large for 32-bit CSR indices");
    const int n = static_cast<int>(n_ll);

    std::vector<double> k(n);
    SplitMix64 rng(seed);
    for (int i = 0; i < n; ++i) k[i] = std::pow(10.0, decades * rng.uniform());

    Csr A;
    A.rows = A.cols = n;
    A.label = "diffusion27 " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
    A.row_ptr.resize(size_t(n) + 1);
    A.col_idx.resize(size_t(nnz_ll));
    A.values.resize(size_t(nnz_ll));
    size_t pos = 0;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
            for (int x = 0; x < nx; ++x) {
                const int i = x + nx * (y + ny * z);
                A.row_ptr[i] = static_cast<int>(pos);
                size_t diag_pos = 0;
                double diag = 0.0;
                for (int dz = -1; dz <= 1; ++dz)
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) {
                            const int xx = x + dx, yy = y + dy, zz = z + dz;
                            const bool in_xy = xx >= 0 && xx < nx && yy >= 0 && yy < ny;
                            if (!in_xy || zz >= nz) continue;  // free faces: no flux
                            if (zz < 0) {                      // fixed face: ghost node held at 0
                                diag += k[i];
                                continue;
                            }
                            const int j = xx + nx * (yy + ny * zz);
                            if (j == i) {
                                diag_pos = pos;
                                A.col_idx[pos++] = i;
                                continue;
                            }
                            const double w = std::sqrt(k[i] * k[j]);  // same product both ways: A is exactly symmetric
                            diag += w;
                            A.col_idx[pos] = j;
                            A.values[pos++] = static_cast<float>(-w);
                        }
                A.values[diag_pos] = static_cast<float>(diag);
            }
    A.row_ptr[n] = static_cast<int>(pos);
    return A;
}

/// Grid of the default problem: 40 000 rows, 939 232 nonzeros (the story's shape).
inline constexpr int kDefaultGrid[3] = {10, 10, 400};
/// Grid of the large problem: 2 097 152 rows, 55 742 968 nonzeros (~450 MB of CSR),
/// far larger than L2, so an iteration is bound by DRAM bandwidth.
inline constexpr int kLargeGrid[3] = {128, 128, 128};

inline Csr default_matrix(uint64_t seed = 2024) {
    return diffusion_27pt(kDefaultGrid[0], kDefaultGrid[1], kDefaultGrid[2], seed);
}
inline Csr large_matrix(uint64_t seed = 2024) { return diffusion_27pt(kLargeGrid[0], kLargeGrid[1], kLargeGrid[2], seed); }

/// The right-hand side every lesson solves with: b = 1 (a uniform source).
inline std::vector<float> default_rhs(int n) { return std::vector<float>(size_t(n), 1.0f); }

/// A diagonal matrix with the given diagonal (tests: CG must finish in one iteration per
/// distinct eigenvalue, Jacobi PCG in one).
inline Csr diagonal_matrix(const std::vector<float>& d) {
    Csr A;
    A.rows = A.cols = static_cast<int>(d.size());
    A.label = "diagonal " + std::to_string(d.size());
    for (int i = 0; i < A.rows; ++i) {
        A.row_ptr.push_back(i);
        A.col_idx.push_back(i);
        A.values.push_back(d[i]);
    }
    A.row_ptr.push_back(A.rows);
    return A;
}

/// Builds a CSR matrix from (row, col, value) triplets; duplicates are summed.
struct Triplet {
    int row, col;
    float value;
};
inline Csr csr_from_triplets(int rows, int cols, std::vector<Triplet> t, std::string label = "triplets") {
    std::sort(t.begin(), t.end(), [](const Triplet& a, const Triplet& b) {
        return a.row != b.row ? a.row < b.row : a.col < b.col;
    });
    Csr A;
    A.rows = rows;
    A.cols = cols;
    A.label = std::move(label);
    A.row_ptr.assign(size_t(rows) + 1, 0);
    for (size_t i = 0; i < t.size(); ++i) {
        if (!A.col_idx.empty() && i > 0 && t[i].row == t[i - 1].row && t[i].col == t[i - 1].col) {
            A.values.back() += t[i].value;
            continue;
        }
        A.col_idx.push_back(t[i].col);
        A.values.push_back(t[i].value);
        A.row_ptr[size_t(t[i].row) + 1]++;
    }
    for (int r = 0; r < rows; ++r) A.row_ptr[size_t(r) + 1] += A.row_ptr[r];
    return A;
}

// ---------------------------------------------------------------------------------------
// Matrix Market
// ---------------------------------------------------------------------------------------

/// Thrown for a malformed or unusable Matrix Market file; the message names the file and line.
struct MatrixMarketError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

namespace detail {
inline std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
inline std::vector<std::string> split_ws(const std::string& line) {
    std::istringstream is(line);
    std::vector<std::string> out;
    std::string w;
    while (is >> w) out.push_back(w);
    return out;
}
inline bool blank(const std::string& line) {
    return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); });
}
}  // namespace detail

struct MatrixMarketOptions {
    bool require_square = true;     ///< CG needs a square matrix
    bool require_symmetric = true;  ///< CG needs A = A^T; checked for `general` files
};

/// Reads a Matrix Market `coordinate` matrix with `real` or `integer` values, `general` or
/// `symmetric` (the stored triangle is mirrored). `pattern`, `complex`, `array`,
/// `hermitian` and `skew-symmetric` are refused. Every problem is reported as
/// MatrixMarketError "NAME:LINE: what is wrong", never a crash: a bad or missing header,
/// a bad size line (one that promises more entries than the matrix has positions
/// included), a non-number, an index out of range, a duplicate entry, too few or too
/// many entries, a non-square matrix or (general files) an entry without an equal mirror.
inline Csr read_matrix_market(std::istream& in, const std::string& name, MatrixMarketOptions opt = {}) {
    auto fail = [&](long line, const std::string& what) -> MatrixMarketError {
        return MatrixMarketError(name + ":" + std::to_string(line) + ": " + what);
    };
    std::string line;
    long line_no = 0;
    if (!std::getline(in, line)) throw fail(1, "empty file: expected a '%%MatrixMarket matrix coordinate ...' header");
    line_no = 1;
    const auto head = detail::split_ws(line);
    if (head.empty() || detail::lower(head[0]) != "%%matrixmarket")
        throw fail(1, "not a Matrix Market file: the first line must start with %%MatrixMarket");
    if (head.size() != 5)
        throw fail(1, "malformed header: expected '%%MatrixMarket matrix coordinate real general|symmetric'");
    const std::string object = detail::lower(head[1]), format = detail::lower(head[2]), field = detail::lower(head[3]),
                      symmetry = detail::lower(head[4]);
    if (object != "matrix") throw fail(1, "object '" + head[1] + "' is not supported (only 'matrix')");
    if (format != "coordinate")
        throw fail(1, "format '" + head[2] + "' is not supported (only 'coordinate', i.e. sparse)");
    if (field == "pattern")
        throw fail(1, "'pattern' matrices store no values; CG needs the values (convert the file to 'real')");
    if (field != "real" && field != "integer" && field != "double")
        throw fail(1, "field '" + head[3] + "' is not supported (only 'real' or 'integer')");
    if (symmetry != "general" && symmetry != "symmetric")
        throw fail(1, "symmetry '" + head[4] + "' is not supported (only 'general' or 'symmetric')");
    const bool symmetric = symmetry == "symmetric";

    // Comments, then the size line "rows cols entries".
    long long rows = 0, cols = 0, entries = 0;
    for (;;) {
        if (!std::getline(in, line)) throw fail(line_no + 1, "missing size line 'rows columns entries'");
        ++line_no;
        if (!line.empty() && line[0] == '%') continue;
        if (detail::blank(line)) continue;
        const auto w = detail::split_ws(line);
        auto whole = [&](const std::string& s, long long& v) {
            errno = 0;
            char* end = nullptr;
            v = std::strtoll(s.c_str(), &end, 10);
            return *end == '\0' && end != s.c_str() && errno == 0;
        };
        if (w.size() != 3 || !whole(w[0], rows) || !whole(w[1], cols) || !whole(w[2], entries))
            throw fail(line_no, "malformed size line '" + line + "': expected three whole numbers 'rows columns entries'");
        if (rows < 1 || cols < 1 || entries < 0)
            throw fail(line_no, "size line: rows and columns must be >= 1 and entries >= 0");
        if (rows > INT_MAX || cols > INT_MAX) throw fail(line_no, "matrix too large for 32-bit CSR indices");
        if (opt.require_square && rows != cols)
            throw fail(line_no, "the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) +
                                    ": CG needs a square matrix");
        if (symmetric && rows != cols) throw fail(line_no, "a 'symmetric' matrix must be square");
        // A file can hold each position once (a symmetric one, one triangle): more entries
        // than that cannot be right. rows, cols <= INT_MAX, so these products fit.
        const long long positions = symmetric ? rows * (rows + 1) / 2 : rows * cols;
        if (entries > positions) {
            const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
            throw fail(line_no, "the size line promises " + std::to_string(entries) + " entries, more than the " +
                                    std::to_string(positions) + " positions of a " + shape +
                                    (symmetric ? " symmetric matrix's stored triangle" : " matrix"));
        }
        // The CSR holds a symmetric file's off-diagonal entries twice. The limit is halved
        // rather than the count doubled, so that nothing here can overflow.
        if (entries > (symmetric ? INT_MAX / 2 : INT_MAX))
            throw fail(line_no, "matrix too large for 32-bit CSR indices");
        break;
    }

    struct Entry {
        int row, col;
        float value;
        long line;
    };
    std::vector<Entry> e;
    // Reserve for what the size line promises, up to a bound: a short file may promise
    // far more entries than it holds, and it is refused at its end, not by the allocator.
    constexpr long long kMaxReserve = 1 << 20;
    e.reserve(size_t(std::min(symmetric ? 2 * entries : entries, kMaxReserve)));
    long long read = 0;
    while (read < entries) {
        if (!std::getline(in, line))
            throw fail(line_no + 1, "the size line promises " + std::to_string(entries) + " entries but the file ends after " +
                                        std::to_string(read));
        ++line_no;
        if (detail::blank(line) || line[0] == '%') continue;
        const auto w = detail::split_ws(line);
        if (w.size() != 3) throw fail(line_no, "expected 'row column value', got '" + line + "'");
        char* end = nullptr;
        errno = 0;
        const long long i = std::strtoll(w[0].c_str(), &end, 10);
        const bool i_ok = *end == '\0' && errno == 0;
        errno = 0;
        const long long j = std::strtoll(w[1].c_str(), &end, 10);
        const bool j_ok = *end == '\0' && errno == 0;
        if (!i_ok || !j_ok) throw fail(line_no, "row and column must be whole numbers, got '" + line + "'");
        errno = 0;
        const double v = std::strtod(w[2].c_str(), &end);
        if (*end != '\0' || w[2].empty()) throw fail(line_no, "value '" + w[2] + "' is not a number");
        if (!std::isfinite(v) || std::fabs(v) > 3.4e38) throw fail(line_no, "value '" + w[2] + "' is not a finite float");
        if (i < 1 || i > rows || j < 1 || j > cols)
            throw fail(line_no, "index (" + w[0] + ", " + w[1] + ") is outside the " + std::to_string(rows) + " x " +
                                    std::to_string(cols) + " matrix (indices are 1-based)");
        e.push_back({int(i - 1), int(j - 1), float(v), line_no});
        if (symmetric && i != j) e.push_back({int(j - 1), int(i - 1), float(v), line_no});
        ++read;
    }
    while (std::getline(in, line)) {
        ++line_no;
        if (!detail::blank(line) && line[0] != '%')
            throw fail(line_no, "more entries than the " + std::to_string(entries) + " the size line promises");
    }

    std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) {
        return a.row != b.row ? a.row < b.row : a.col < b.col;
    });
    for (size_t k = 1; k < e.size(); ++k)
        if (e[k].row == e[k - 1].row && e[k].col == e[k - 1].col)
            throw fail(std::max(e[k].line, e[k - 1].line),
                       "entry (" + std::to_string(e[k].row + 1) + ", " + std::to_string(e[k].col + 1) +
                           ") is given twice (lines " + std::to_string(std::min(e[k].line, e[k - 1].line)) + " and " +
                           std::to_string(std::max(e[k].line, e[k - 1].line)) +
                           (symmetric ? "; a symmetric file stores one triangle only)" : ")"));

    Csr A;
    A.rows = int(rows);
    A.cols = int(cols);
    A.label = name;
    A.row_ptr.assign(size_t(rows) + 1, 0);
    A.col_idx.reserve(e.size());
    A.values.reserve(e.size());
    for (const Entry& x : e) {
        A.row_ptr[size_t(x.row) + 1]++;
        A.col_idx.push_back(x.col);
        A.values.push_back(x.value);
    }
    for (long long r = 0; r < rows; ++r) A.row_ptr[size_t(r) + 1] += A.row_ptr[size_t(r)];

    if (opt.require_symmetric && !symmetric) {
        // Every (i, j, v) needs a (j, i, v): binary search in row j (columns are sorted).
        for (const Entry& x : e) {
            if (x.row == x.col) continue;
            const int* b = A.col_idx.data() + A.row_ptr[x.col];
            const int* f = A.col_idx.data() + A.row_ptr[x.col + 1];
            const int* p = std::lower_bound(b, f, x.row);
            const std::string where = "(" + std::to_string(x.row + 1) + ", " + std::to_string(x.col + 1) + ")";
            const std::string mirror = "(" + std::to_string(x.col + 1) + ", " + std::to_string(x.row + 1) + ")";
            if (p == f || *p != x.row)
                throw fail(x.line, "entry " + where + " has no mirror entry " + mirror +
                                       ": CG needs a symmetric matrix");
            const float mv = A.values[size_t(p - A.col_idx.data())];
            if (std::fabs(double(mv) - x.value) > 1e-6 * std::max(std::fabs(double(mv)), std::fabs(double(x.value))))
                throw fail(x.line, "entry " + where + " differs from its mirror " + mirror + " (" + std::to_string(x.value) +
                                       " vs " + std::to_string(mv) + "): CG needs a symmetric matrix");
        }
    }
    return A;
}

/// Reads a Matrix Market file; errors name the file and line (see read_matrix_market()).
inline Csr read_matrix_market_file(const std::string& path, MatrixMarketOptions opt = {}) {
    std::ifstream f(path);
    if (!f) throw MatrixMarketError(path + ": cannot open the file");
    std::string base = path.substr(path.find_last_of("/\\") == std::string::npos ? 0 : path.find_last_of("/\\") + 1);
    Csr A = read_matrix_market(f, path, opt);
    A.label = base;
    return A;
}

// ---------------------------------------------------------------------------------------
// CPU reference, in double
// ---------------------------------------------------------------------------------------

/// y = A x in double (x may be float or double).
template <class T>
void spmv_cpu(const Csr& A, const T* x, double* y) {
    for (int i = 0; i < A.rows; ++i) {
        double s = 0.0;
        for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) s += double(A.values[k]) * double(x[A.col_idx[k]]);
        y[i] = s;
    }
}

/// ||b - A x|| / ||b|| in double: the "true" relative residual of a computed solution,
/// as opposed to the one the iteration carries (which rounding lets drift from it).
inline double true_relative_residual(const Csr& A, const std::vector<float>& b, const std::vector<float>& x) {
    std::vector<double> ax(size_t(A.rows));
    spmv_cpu(A, x.data(), ax.data());
    double rr = 0.0, bb = 0.0;
    for (int i = 0; i < A.rows; ++i) {
        const double r = double(b[i]) - ax[i];
        rr += r * r;
        bb += double(b[i]) * double(b[i]);
    }
    return bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
}

/// Returns the smallest diagonal entry's row, and its value, or -1 when every row has a
/// positive diagonal. (Missing diagonal entries count as 0.)
inline int first_nonpositive_diagonal(const Csr& A, float* value = nullptr) {
    for (int i = 0; i < A.rows; ++i) {
        float d = 0.0f;
        for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
            if (A.col_idx[k] == i) d += A.values[k];
        if (!(d > 0.0f)) {
            if (value) *value = d;
            return i;
        }
    }
    return -1;
}

enum class Outcome { converged, max_iterations, not_positive_definite };

inline const char* outcome_name(Outcome o) {
    switch (o) {
        case Outcome::converged: return "converged";
        case Outcome::max_iterations: return "hit the iteration limit";
        case Outcome::not_positive_definite: return "not positive definite (p.Ap <= 0)";
    }
    return "?";
}

struct CpuCgResult {
    Outcome outcome = Outcome::max_iterations;
    int iterations = 0;         ///< loop bodies run (= matrix-vector products in the loop)
    double residual = NAN;      ///< final ||r|| / ||b|| as the iteration carries it
    std::vector<double> x;
};

/// Conjugate gradients in double, unpreconditioned or with the Jacobi (diagonal)
/// preconditioner, with the loop ordered as Eigen's ConjugateGradient orders it:
/// q = A p; alpha = rz / p.q; x += alpha p; r -= alpha q; stop if ||r|| <= tol ||b||;
/// z = D^-1 r; beta = r.z_new / r.z_old; p = z + beta p. A p.q <= 0 stops with
/// not_positive_definite. The iteration counts the lessons are held to come from here.
inline CpuCgResult cg_cpu(const Csr& A, const std::vector<float>& b_in, double tol, int max_iterations, bool jacobi) {
    const int n = A.rows;
    CpuCgResult res;
    std::vector<double> b(b_in.begin(), b_in.end()), r = b, z(n), p(n), q(n), dinv(n, 1.0);
    res.x.assign(n, 0.0);
    if (jacobi) {
        const int bad = first_nonpositive_diagonal(A);
        if (bad >= 0) throw std::invalid_argument("cg_cpu: row " + std::to_string(bad) + " has no positive diagonal");
        for (int i = 0; i < n; ++i)
            for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
                if (A.col_idx[k] == i) dinv[i] = 1.0 / A.values[k];
    }
    auto dot = [n](const std::vector<double>& u, const std::vector<double>& v) {
        double s = 0.0;
        for (int i = 0; i < n; ++i) s += u[i] * v[i];
        return s;
    };
    const double bb = dot(b, b);
    const double threshold = tol * tol * bb;
    double rr = bb;
    if (rr <= threshold) {
        res.outcome = Outcome::converged;
        res.residual = bb > 0 ? std::sqrt(rr / bb) : 0.0;
        return res;
    }
    for (int i = 0; i < n; ++i) p[i] = z[i] = dinv[i] * r[i];
    double rz = dot(r, z);
    while (res.iterations < max_iterations) {
        spmv_cpu(A, p.data(), q.data());
        ++res.iterations;
        const double pq = dot(p, q);
        if (!(pq > 0.0)) {
            res.outcome = Outcome::not_positive_definite;
            break;
        }
        const double alpha = rz / pq;
        for (int i = 0; i < n; ++i) {
            res.x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        rr = dot(r, r);
        if (rr <= threshold) {
            res.outcome = Outcome::converged;
            break;
        }
        for (int i = 0; i < n; ++i) z[i] = dinv[i] * r[i];
        const double rz_new = dot(r, z);
        const double beta = rz_new / rz;
        rz = rz_new;
        for (int i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
    }
    res.residual = std::sqrt(rr / bb);
    return res;
}

// ---------------------------------------------------------------------------------------
// The bandwidth floor
// ---------------------------------------------------------------------------------------

/// Bytes one CG iteration must move through DRAM at the very least ("compulsory traffic"):
/// the matrix once (4-byte values and column indices, 4-byte row pointers) and each
/// vector of the iteration's state read and written once: x, r and p read and written
/// (p's gathered reads in the SpMV assumed to hit in cache), plus D^-1 read when Jacobi
/// preconditioned. Temporaries (A p, z) are free here: an implementation may keep them
/// on chip. Time / iteration >= this / bandwidth; we divide by the measured
/// device-to-device copy bandwidth of the same run.
inline double floor_bytes_per_iteration(long long n, long long nnz, bool preconditioned) {
    const double matrix = 8.0 * double(nnz) + 4.0 * double(n + 1);
    const double vectors = 4.0 * double(n) * (preconditioned ? 7.0 : 6.0);
    return matrix + vectors;
}

/// Bytes one y = A x moves at least: the matrix, x once (gathers hit in cache), y written.
inline double spmv_bytes(long long n, long long nnz) { return 8.0 * double(nnz) + 4.0 * double(n + 1) + 8.0 * double(n); }

}  // namespace tut::cg
