// CPU checks of the performance gates' judgement (common/checks/perf_gate.hpp): the JSON
// reader, the GPU's file name, and the verdicts against a thresholds file; no GPU needed.
#include "catch.hpp"
#include "perf_gate.hpp"

#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

// A thresholds folder of its own under /tmp, with one file for "Test GPU 80GB".
struct Folder {
    std::string dir;
    Folder() {
        char tmpl[] = "/tmp/perf_gate_XXXXXX";
        const char* made = mkdtemp(tmpl);
        REQUIRE(made != nullptr);
        dir = made;
        std::ofstream(dir + "/Test_GPU_80GB.json") << R"({
  "gpu": "Test GPU 80GB",
  "source": "tour 2026-11-26",
  "lessons": {
    "sgemm/11_double_buffering": {"measure": "% of cuBLAS FP32", "size": "N = 4096", "solution": 0.825,
                                  "previous": 0.62, "threshold": 0.715, "source": "tour 2026-11-26", "reason": ""},
    "sgemm/14_tuning": {"measure": "% of cuBLAS FP32", "size": "N = 4096", "solution": 0.92, "previous": 0.9,
                        "threshold": null, "reason": "the gain is within the run-to-run spread"},
    "cg/10_one_round: speed": {"measure": "x the grid-barrier variant's speed per iteration", "size": "default problem",
                               "solution": 1.59, "previous": 1.0, "threshold": 1.26}
  }
})";
    }
    ~Folder() {
        std::remove((dir + "/Test_GPU_80GB.json").c_str());
        rmdir(dir.c_str());
    }
};

perf_gate::Measurement sgemm11(double ratio) {
    perf_gate::Measurement m;
    m.measure = "% of cuBLAS FP32";
    m.size = "N = 4096";
    m.ratio = ratio;
    m.hint = "Are the next tile's loads in flight during the FFMAs?";
    return m;
}

}  // namespace

TEST_CASE("perf_gate: the JSON reader reads what the thresholds files hold", "[perf_gate]") {
    const perf_gate::Json j = perf_gate::parse_json(
        R"({"a": 1.5e-1, "b": [true, false, null], "c": {"d": "x\"y\\z\u0041"}, "e": -3})");
    REQUIRE(j.is_object());
    CHECK(j.number_or("a") == Approx(0.15));
    CHECK(j.number_or("e") == -3);
    REQUIRE(j.find("b") != nullptr);
    REQUIRE(j.find("b")->items.size() == 3);
    CHECK(j.find("b")->items[0].boolean);
    CHECK_FALSE(j.find("b")->items[1].boolean);
    CHECK(j.find("b")->items[2].is_null());
    CHECK(j.find("c")->string_or("d") == "x\"y\\zA");
    CHECK(std::isnan(j.number_or("missing")));
    CHECK_THROWS(perf_gate::parse_json("{\"a\": }"));
    CHECK_THROWS(perf_gate::parse_json("{\"a\": 1} x"));
    CHECK_THROWS(perf_gate::parse_json("[1, 2"));
}

TEST_CASE("perf_gate: the GPU's file name is results/'s", "[perf_gate]") {
    CHECK(perf_gate::gpu_file_stem("NVIDIA H100 80GB HBM3") == "NVIDIA_H100_80GB_HBM3");
    CHECK(perf_gate::gpu_file_stem("NVIDIA H200") == "NVIDIA_H200");
    CHECK(perf_gate::gpu_file_stem(" NVIDIA GeForce RTX 4090 (rev. a) ") == "NVIDIA_GeForce_RTX_4090_rev._a");
}

TEST_CASE("perf_gate: a ratio at or above the threshold passes, below it fails, with the hint", "[perf_gate]") {
    Folder f;
    const auto pass = perf_gate::evaluate("sgemm/11_double_buffering", "Test GPU 80GB", f.dir, sgemm11(0.80), false);
    CHECK(pass.status == "pass");
    CHECK(pass.threshold == Approx(0.715));
    CHECK(pass.source == "tour 2026-11-26");
    const auto fail = perf_gate::evaluate("sgemm/11_double_buffering", "Test GPU 80GB", f.dir, sgemm11(0.61), false);
    CHECK(fail.status == "fail");
    INFO(fail.sentence);
    CHECK(fail.sentence.find("61% of cuBLAS FP32 at N = 4096") != std::string::npos);
    CHECK(fail.sentence.find("reaches about 82%") != std::string::npos);
    CHECK(fail.sentence.find("the gate is 72%") != std::string::npos);
    CHECK(fail.sentence.find("in flight during the FFMAs?") != std::string::npos);
    const auto nan = perf_gate::evaluate("sgemm/11_double_buffering", "Test GPU 80GB", f.dir, sgemm11(NAN), false);
    CHECK(nan.status == "fail");
}

TEST_CASE("perf_gate: unscored without a file, an entry, a threshold or a matching measure, and when calibrating",
          "[perf_gate]") {
    Folder f;
    const auto no_file = perf_gate::evaluate("sgemm/11_double_buffering", "Other GPU", f.dir, sgemm11(0.1), false);
    CHECK(no_file.status == "unscored");
    CHECK(no_file.reason.find("--calibrate") != std::string::npos);
    const auto no_entry = perf_gate::evaluate("sgemm/13_cp_async", "Test GPU 80GB", f.dir, sgemm11(0.1), false);
    CHECK(no_entry.status == "unscored");
    const auto no_threshold = perf_gate::evaluate("sgemm/14_tuning", "Test GPU 80GB", f.dir, sgemm11(0.1), false);
    CHECK(no_threshold.status == "unscored");
    CHECK(no_threshold.reason == "the gain is within the run-to-run spread");
    perf_gate::Measurement other = sgemm11(0.1);
    other.size = "N = 2048";
    const auto mismatch = perf_gate::evaluate("sgemm/11_double_buffering", "Test GPU 80GB", f.dir, other, false);
    CHECK(mismatch.status == "unscored");
    CHECK(mismatch.reason.find("N = 2048") != std::string::npos);
    const auto calibrating = perf_gate::evaluate("sgemm/11_double_buffering", "Test GPU 80GB", f.dir, sgemm11(0.1), true);
    CHECK(calibrating.status == "unscored");
    CHECK(calibrating.threshold == Approx(0.715));
    perf_gate::Measurement unflushed = sgemm11(0.1);
    unflushed.unscored_because = "the L2 could not be flushed";
    CHECK(perf_gate::evaluate("sgemm/11_double_buffering", "Test GPU 80GB", f.dir, unflushed, false).status ==
          "unscored");
}

TEST_CASE("perf_gate: a named gate, a speed-up measure, and the report line", "[perf_gate]") {
    Folder f;
    perf_gate::Measurement m;
    m.gate = "speed";
    m.measure = "x the grid-barrier variant's speed per iteration";
    m.size = "default problem";
    m.ratio = 1.1;
    m.hint = "Does any block wait for the whole grid?";
    const auto v = perf_gate::evaluate("cg/10_one_round", "Test GPU 80GB", f.dir, m, false);
    CHECK(v.status == "fail");
    INFO(v.sentence);
    CHECK(v.sentence.find("1.10x the grid-barrier variant's speed per iteration at default problem") != std::string::npos);
    const std::string line = perf_gate::report_line("cg/10_one_round", "case \"q\"", "Test GPU 80GB", m, v);
    const perf_gate::Json j = perf_gate::parse_json(line);
    CHECK(j.string_or("lesson") == "cg/10_one_round");
    CHECK(j.string_or("case") == "case \"q\"");
    CHECK(j.string_or("gate") == "cg/10_one_round: speed");
    CHECK(j.string_or("status") == "fail");
    CHECK(j.number_or("ratio") == Approx(1.1));
    CHECK(j.number_or("threshold") == Approx(1.26));
    CHECK(j.number_or("solution") == Approx(1.59));
    CHECK(j.find("previous_measured")->is_null());
}
