// main() of every check executable, for Catch2 2.x and 3.x alike.
// Built twice: tut_checks_gpu (TUT_GPU_CHECKS defined) exits 77, "skipped", when no
// GPU is usable, so CTest and the grader report GPU checks as skipped, not passed.
// A lesson whose code runs on one GPU architecture only (tut_lesson(... HOPPER_FEATURES):
// sm_90a) compiles this file into its check executables with TUT_CHECK_NEEDS_CC (e.g. 90)
// and TUT_CHECK_NEEDS_WHAT (the instructions it needs): on any other GPU they exit 77 too.
#if TUT_CATCH_MAJOR < 3
#define CATCH_CONFIG_RUNNER
#endif
#include "catch.hpp"

#ifdef TUT_GPU_CHECKS
#include "tut/gpu.hpp"
#include <cstdio>
#include <string>
#endif

int main(int argc, char* argv[]) {
#ifdef TUT_GPU_CHECKS
    std::string why;
    if (!tut::gpu_available(&why)) {
        std::printf("SKIPPED: these checks need a CUDA GPU and none is usable here (%s).\n", why.c_str());
        return tut::kSkipExitCode;
    }
#ifdef TUT_CHECK_NEEDS_CC
#ifndef TUT_CHECK_NEEDS_WHAT
#define TUT_CHECK_NEEDS_WHAT "code built for that architecture only"
#endif
    if (const int cc = tut::compute_capability(); cc != TUT_CHECK_NEEDS_CC) {
        std::printf("SKIPPED: these checks need compute capability %d.%d (%s); this GPU is %d.%d.\n",
                    TUT_CHECK_NEEDS_CC / 10, TUT_CHECK_NEEDS_CC % 10, TUT_CHECK_NEEDS_WHAT, cc / 10, cc % 10);
        return tut::kSkipExitCode;
    }
#endif
#endif
    return Catch::Session().run(argc, argv);
}
