// The CG track's CPU baseline: Eigen's ConjugateGradient with the diagonal (Jacobi)
// preconditioner, multithreaded with OpenMP over all host cores, on the same matrix,
// right-hand side and tolerance as the lessons. Built only when CMake finds Eigen 3.3+
// and OpenMP (common/checks/cg/lessons.cmake); the tour runs it before the lessons and it
// leaves its time in the --share file, where the lessons read it for their "x Eigen" column.
//
//   build/checks/cg/eigen_baseline [--problem default|large|both] [--matrix FILE] [--threads N]
//
// Eigen parallelises the sparse matrix-vector product (only) when the matrix is row-major
// and both triangles are used (Lower|Upper); the vector updates and dot products run on
// one thread. Eigen's iterations() counts the loop passes that did not exit early, one
// fewer than the matrix-vector products it performed: we report iterations() + 1, the
// number the lessons count.
#include "tut/cg_matrix.hpp"
#include "tut/cg.hpp"  // share file, keys, rhs (host-side parts only; no GPU is used)

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <omp.h>

#include <chrono>
#include <cstdio>

namespace {

using SpMat = Eigen::SparseMatrix<float, Eigen::RowMajor, int>;

SpMat to_eigen(const tut::cg::Csr& A) {
    Eigen::Map<const SpMat> view(A.rows, A.cols, A.nnz(), A.row_ptr.data(), A.col_idx.data(), A.values.data());
    return SpMat(view);
}

template <class F>
double wall_ms(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    tut::Cli cli("00_eigen_baseline",
                 "CPU baseline: Eigen ConjugateGradient<SparseMatrix<float, RowMajor>, Lower|Upper, "
                 "DiagonalPreconditioner>, OpenMP.");
    tut::cg::ProblemOptions po;
    tut::cg::add_problem_options(cli, po);
    int threads = 0, warmup = 1, repeats = 5;
    long long seed = 2024;
    std::string json;
    cli.add_int("threads", &threads, "OpenMP threads (0: all cores)", 0, 4096);
    cli.add_int("warmup", &warmup, "untimed solves first", 0, 100);
    cli.add_int("repeats", &repeats, "timed solves; the median is reported", 1, 1000);
    cli.add_int("seed", &seed, "seed of the right-hand side", 0, (1ll << 62));
    cli.add_string("json", &json, "append one JSON record per problem to this file");
    cli.parse_or_exit(argc, argv);
    if (threads > 0) omp_set_num_threads(threads);
    Eigen::setNbThreads(threads > 0 ? threads : omp_get_max_threads());

    try {
        std::printf("Eigen %d.%d.%d, %d OpenMP threads\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
                    Eigen::nbThreads());
        tut::Table table({"problem", "iters", "total ms", "us/iter", "solves/s", "true resid", "check"});
        for (const std::string& name : tut::cg::problem_names(po)) {
            tut::cg::Csr A = tut::cg::load_matrix(name);
            tut::cg::require_solvable(A);
            const std::vector<float> b = tut::cg::make_rhs(A, uint64_t(seed));
            const std::string key = tut::cg::problem_key(A, po.tolerance, seed);
            const SpMat M = to_eigen(A);
            const Eigen::Map<const Eigen::VectorXf> rhs(b.data(), A.rows);

            Eigen::ConjugateGradient<SpMat, Eigen::Lower | Eigen::Upper, Eigen::DiagonalPreconditioner<float>> cg;
            cg.setTolerance(float(po.tolerance));
            cg.setMaxIterations(po.max_iterations);
            cg.compute(M);  // builds the preconditioner (1 / diagonal); not timed, as in the lessons
            if (cg.info() != Eigen::Success) throw std::runtime_error("Eigen could not set up the preconditioner");

            Eigen::VectorXf x;
            auto solve = [&] { x = cg.solve(rhs); };
            for (int i = 0; i < warmup; ++i) solve();
            std::vector<double> samples;
            for (int i = 0; i < repeats; ++i) samples.push_back(wall_ms(solve));
            const double ms = tut::median_of(samples);
            const int iterations = int(cg.iterations()) + 1;  // Eigen reports one fewer than it performs
            const bool converged = cg.info() == Eigen::Success;

            std::vector<float> xs(x.data(), x.data() + x.size());
            tut::cg::SolveResult r;
            r.outcome = converged ? tut::cg::Outcome::converged : tut::cg::Outcome::max_iterations;
            r.iterations = iterations;
            const auto check = tut::cg::check_solution(A, b, xs, r, po.tolerance);
            // The same algorithm in double on the CPU: Eigen's count should be close.
            std::string ref_note;
            if (A.nnz() < 5'000'000) {
                const auto ref = tut::cg::cg_cpu(A, b, po.tolerance, po.max_iterations, true);
                ref_note = " (CPU double reference: " + std::to_string(ref.iterations) + ")";
            }
            std::printf("%s: Eigen %d iterations%s, error estimate %.2e, true residual %.2e\n", A.label.c_str(),
                        iterations, ref_note.c_str(), double(cg.error()), check.true_residual);

            table.add_row({A.label, std::to_string(iterations), tut::fmt("%.2f", ms),
                           tut::fmt("%.1f", ms * 1e3 / iterations), tut::fmt("%.1f", 1000.0 / ms),
                           tut::fmt("%.1e", check.true_residual), check.verdict});
            tut::Record rec;
            rec.track = "cg";
            rec.lesson = "00_eigen_baseline";
            rec.variant = "Eigen CG + Jacobi, " + std::to_string(Eigen::nbThreads()) + " threads";
            rec.size = tut::cg::size_text(A);
            rec.value = 1000.0 / ms;
            rec.unit = "solves/s";
            rec.time_ms = ms;
            rec.library = "Eigen ConjugateGradient + DiagonalPreconditioner, OpenMP, all host cores";
            rec.library_value = rec.value;
            rec.checked = check.ok;
            rec.extra.add("iterations", iterations)
                .add("eigen_reported_iterations", int(cg.iterations()))
                .add("threads", Eigen::nbThreads())
                .add("total_ms", ms)
                .add("us_per_iter", ms * 1e3 / iterations)
                .add("true_relative_residual", check.true_residual)
                .add("check", check.verdict);
            tut::append_json_line(json, rec.json());
            tut::append_shared_time(po.share, "eigen", key, ms, iterations);
        }
        table.print();
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "00_eigen_baseline: error: %s\n", e.what());
        return 1;
    }
}
