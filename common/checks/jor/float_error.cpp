// Where does a float JOR solve lose accuracy? The measurements behind
// docs/experiments/jor.md (a tool, not a lesson; the tour does not run it).
//
//   build/checks/jor/float_error [--n 8192] [--matrices 3] [--sizes 128,...,8192] [--seed 2015]
//
// 1. Summation order. For every row j of --matrices float systems of size --n, the
//    off-diagonal sum sigma_j = sum_{k != j} A_jk x*_k is computed in float in several
//    orders and compared with the same sum in double (the float products are exact in
//    double, and the double sum's own error is about 2^29 times smaller). The error a
//    sum makes in x_j is a |error| / A_jj; the table gives its RMS and max over all rows.
//    Orders: sequential (the scalar CPU version); 4, 8 and 16 SIMD lanes (one partial
//    sum per lane, lanes added pairwise at the end); the 2015 report's CUDA kernel (128
//    threads per row, each summing every 128th term, then a shared-memory tree); a full
//    pairwise tree; Kahan's compensated sum; this build's `omp simd` sum (the sequential
//    and `omp simd` sums are the CPU variants' own, from tut/jor_cpu.hpp); and, for contrast, a sequential sum over the whole row, diagonal
//    included, as in the residual form x_j + a / A_jj (b_j - (A x)_j).
// 2. Whole solves in float at --n with those orders and both stopping rules (norm,
//    tol 1e-6 relative; min, the report's min_j |dx_j| < 1e-6): iterations, RMSE and
//    max error against x*.
// 3. The report's min rule over --sizes in float (tol 1e-6) and double (tol 1e-8),
//    beside the norm rule: iterations and RMSE, to compare with the report's RMSE
//    growing with N.
#include "tut/cli.hpp"
#include "tut/jor.hpp"
#include "tut/jor_cpu.hpp"
#include "tut/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace tut::jor;

enum class Order { sequential, lanes4, lanes8, lanes16, block128, pairwise, kahan, compiled_simd, full_row };

const char* order_name(Order o) {
    switch (o) {
        case Order::sequential: return "sequential";
        case Order::lanes4: return "4 SIMD lanes";
        case Order::lanes8: return "8 SIMD lanes";
        case Order::lanes16: return "16 SIMD lanes";
        case Order::block128: return "128 threads + tree (report's CUDA)";
        case Order::pairwise: return "pairwise tree";
        case Order::kahan: return "Kahan";
        case Order::compiled_simd: return "omp simd (this build)";
        default: return "sequential, diagonal included";
    }
}

// The term k of row j's sum (zero for the diagonal unless the whole row is summed).
template <class T>
T term(const T* row, const T* x, int j, int k, bool with_diagonal) {
    return (k == j && !with_diagonal) ? T(0) : row[k] * x[k];
}

template <class T>
T sum_lanes(const T* row, const T* x, int n, int j, int lanes) {
    std::vector<T> part(static_cast<size_t>(lanes), T(0));
    for (int k = 0; k < n; ++k) part[static_cast<size_t>(k % lanes)] += term(row, x, j, k, false);
    for (int width = lanes / 2; width > 0; width /= 2)
        for (int l = 0; l < width; ++l) part[static_cast<size_t>(l)] += part[static_cast<size_t>(l + width)];
    return part[0];
}

template <class T>
T sum_pairwise(const T* row, const T* x, int j, int begin, int end) {
    if (end - begin <= 8) {
        T s = 0;
        for (int k = begin; k < end; ++k) s += term(row, x, j, k, false);
        return s;
    }
    const int mid = begin + (end - begin) / 2;
    return sum_pairwise(row, x, j, begin, mid) + sum_pairwise(row, x, j, mid, end);
}

template <class T>
T sum_kahan(const T* row, const T* x, int n, int j) {
    T s = 0, c = 0;
    for (int k = 0; k < n; ++k) {
        const T y = term(row, x, j, k, false) - c;
        const T t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}

// Row j's sum in order `o` (the whole row, diagonal included, for Order::full_row).
template <class T>
T row_sum(Order o, const T* row, const T* x, int n, int j) {
    switch (o) {
        case Order::lanes4: return sum_lanes(row, x, n, j, 4);
        case Order::lanes8: return sum_lanes(row, x, n, j, 8);
        case Order::lanes16: return sum_lanes(row, x, n, j, 16);
        case Order::block128: return sum_lanes(row, x, n, j, 128);  // thread t sums k = t, t + 128, ...; then a tree
        case Order::pairwise: return sum_pairwise(row, x, j, 0, n);
        case Order::kahan: return sum_kahan(row, x, n, j);
        case Order::compiled_simd: return offdiag_sum_simd(row, x, n, j);  // the simd variant's own sum
        case Order::full_row: {
            T s = 0;
            for (int k = 0; k < n; ++k) s += term(row, x, j, k, true);
            return s;
        }
        default: return offdiag_sum_scalar(row, x, n, j);  // the scalar variant's own sum
    }
}

// One JOR solve from x = 0 with row sums in order `o`; returns the result's statistics.
struct Solved {
    int iterations = 0;
    bool converged = false;
    double rmse = NAN, max_error = NAN;
};

template <class T>
Solved solve(const System<T>& s, Order o, StopRule rule, double tol, int max_iterations) {
    const int n = s.n;
    const T a = static_cast<T>(kAlpha);
    std::vector<T> x(static_cast<size_t>(n), T(0)), x_new(static_cast<size_t>(n));
    Solved out;
    for (int it = 1; it <= max_iterations; ++it) {
        double dx_max = 0.0, dx_min = INFINITY, x_max = 0.0;
        int finite = 1;
#pragma omp parallel for schedule(dynamic, 16) reduction(max : dx_max, x_max) reduction(min : dx_min, finite)
        for (int j = 0; j < n; ++j) {
            const T* row = s.A.data() + static_cast<size_t>(j) * static_cast<size_t>(n);
            const T sum = row_sum(o, row, x.data(), n, j);
            const T v = o == Order::full_row ? x[j] + a / row[j] * (s.b[j] - sum)
                                             : (T(1) - a) * x[j] + a / row[j] * (s.b[j] - sum);
            x_new[j] = v;
            const double dx = std::fabs(double(v) - double(x[j]));
            dx_max = std::fmax(dx_max, dx);
            dx_min = std::fmin(dx_min, dx);
            x_max = std::fmax(x_max, std::fabs(double(v)));
            finite = std::min(finite, std::isfinite(v) ? 1 : 0);
        }
        x.swap(x_new);
        out.iterations = it;
        if (should_stop(rule, tol, dx_max, dx_min, x_max, finite != 0)) {
            out.converged = true;
            break;
        }
    }
    out.rmse = rmse(x.data(), s.x_star);
    out.max_error = max_error(x.data(), s.x_star);
    return out;
}

const std::vector<Order> kSumOrders = {Order::sequential, Order::lanes4,   Order::lanes8,        Order::lanes16,
                                       Order::block128,   Order::pairwise, Order::kahan,         Order::compiled_simd,
                                       Order::full_row};

void summation_table(int n, int matrices, uint64_t seed) {
    std::printf("\n1. Float row sums at N = %d (%d matrices, x = x*): error each makes in x_j, a |sum - exact| / A_jj\n",
                n, matrices);
    std::vector<double> sq(kSumOrders.size(), 0.0), worst(kSumOrders.size(), 0.0), raw_sq(kSumOrders.size(), 0.0);
    double count = 0, diag = 0;
    for (int m = 0; m < matrices; ++m) {
        const System<float> s = make_system<float>(n, seed, static_cast<uint32_t>(m));
        std::vector<float> xs(s.x_star.begin(), s.x_star.end());  // exact in float
        for (int j = 0; j < n; ++j) {
            const float* row = s.A.data() + static_cast<size_t>(j) * static_cast<size_t>(n);
            double exact_off = 0.0;
            for (int k = 0; k < n; ++k)
                if (k != j) exact_off += double(row[k]) * double(xs[k]);
            const double exact_full = exact_off + double(row[j]) * double(xs[j]);
            diag += row[j];
            for (size_t o = 0; o < kSumOrders.size(); ++o) {
                const double exact = kSumOrders[o] == Order::full_row ? exact_full : exact_off;
                const double err = std::fabs(double(row_sum(kSumOrders[o], row, xs.data(), n, j)) - exact);
                raw_sq[o] += err * err;
                const double in_x = kAlpha * err / double(row[j]);
                sq[o] += in_x * in_x;
                worst[o] = std::max(worst[o], in_x);
            }
            count += 1;
        }
    }
    std::printf("mean A_jj = %.0f\n", diag / count);
    tut::Table t({"order", "RMS |sum error|", "RMS error in x_j", "max error in x_j"});
    for (size_t o = 0; o < kSumOrders.size(); ++o)
        t.add_row({order_name(kSumOrders[o]), tut::fmt("%.2e", std::sqrt(raw_sq[o] / count)),
                   tut::fmt("%.2e", std::sqrt(sq[o] / count)), tut::fmt("%.2e", worst[o])});
    t.print();
}

void solve_table(int n, int matrices, uint64_t seed) {
    std::printf("\n2. Float solves at N = %d (%d matrices): mean iterations, RMSE and max error against x*\n", n,
                matrices);
    const std::vector<Order> orders = {Order::sequential, Order::lanes8, Order::block128, Order::kahan, Order::full_row};
    tut::Table t({"order", "rule", "iters", "RMSE", "max err", "converged"});
    for (StopRule rule : {StopRule::norm, StopRule::min}) {
        for (Order o : orders) {
            double it = 0, e2 = 0, emax = 0;
            int conv = 0;
            for (int m = 0; m < matrices; ++m) {
                const System<float> s = make_system<float>(n, seed, static_cast<uint32_t>(m));
                const Solved r = solve(s, o, rule, 1e-6, 1000);
                it += r.iterations;
                e2 += r.rmse;
                emax += r.max_error;
                conv += r.converged ? 1 : 0;
            }
            t.add_row({order_name(o), stop_rule_name(rule), tut::fmt("%.1f", it / matrices),
                       tut::fmt("%.2e", e2 / matrices), tut::fmt("%.2e", emax / matrices),
                       tut::fmt("%d/%d", conv, matrices)});
        }
    }
    t.print();
}

template <class T>
void rule_sweep(const std::vector<long long>& sizes, int matrices, uint64_t seed, double tol) {
    std::printf("\n3. %s, sequential sums, tol %g: the min rule beside the norm rule (mean over %d matrices)\n",
                type_name<T>(), tol, matrices);
    tut::Table t({"N", "iters (norm)", "RMSE (norm)", "iters (min)", "RMSE (min)", "max err (min)", "RMSE of x = 0"});
    for (long long n : sizes) {
        double it[2] = {0, 0}, e2[2] = {0, 0}, emax = 0, zero = 0;
        for (int m = 0; m < matrices; ++m) {
            const System<T> s = make_system<T>(n, seed, static_cast<uint32_t>(m));
            const Solved a = solve(s, Order::sequential, StopRule::norm, tol, 1000);
            const Solved b = solve(s, Order::sequential, StopRule::min, tol, 1000);
            it[0] += a.iterations;
            e2[0] += a.rmse;
            it[1] += b.iterations;
            e2[1] += b.rmse;
            emax += b.max_error;
            const std::vector<T> x0(static_cast<size_t>(n), T(0));
            zero += rmse(x0.data(), s.x_star);
        }
        t.add_row({std::to_string(n), tut::fmt("%.1f", it[0] / matrices), tut::fmt("%.2e", e2[0] / matrices),
                   tut::fmt("%.1f", it[1] / matrices), tut::fmt("%.2e", e2[1] / matrices),
                   tut::fmt("%.2e", emax / matrices), tut::fmt("%.3f", zero / matrices)});
    }
    t.print();
}

}  // namespace

int main(int argc, char** argv) {
    tut::Cli cli("float_error", "Float summation order and stopping rules in JOR: the measurements of "
                                "docs/experiments/jor.md.");
    int n = 8192, matrices = 3;
    long long seed = static_cast<long long>(kSeed);
    std::vector<long long> sizes{128, 256, 512, 1024, 2048, 4096, 8192};
    cli.add_int("n", &n, "size of parts 1 and 2", 2, 16384);
    cli.add_int("matrices", &matrices, "matrices per size", 1, 100);
    cli.add_int_list("sizes", &sizes, "sizes of part 3", 1, 16384);
    cli.add_int("seed", &seed, "seed of the systems", 0, (1ll << 62));
    cli.parse_or_exit(argc, argv);
    summation_table(n, matrices, static_cast<uint64_t>(seed));
    solve_table(n, matrices, static_cast<uint64_t>(seed));
    rule_sweep<float>(sizes, matrices, static_cast<uint64_t>(seed), 1e-6);
    rule_sweep<double>(sizes, matrices, static_cast<uint64_t>(seed), 1e-8);
    return 0;
}
