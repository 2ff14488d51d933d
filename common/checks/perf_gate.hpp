/// @file perf_gate.hpp
/// @brief Performance gates: a check case tagged [performance] times the lesson's own variant
/// beside the lesson's yardstick in the same process, and judges the ratio against this
/// GPU's threshold.
///
/// A case measures, then calls judge():
///
///     const perf_gate::Times t = perf_gate::time_beside([&] { v.run(n, A, B, C); },
///                                                       [&] { cublas().sgemm(n, A, B, C); });
///     perf_gate::Measurement m;
///     m.measure = "% of cuBLAS FP32";  m.size = "N = 4096";
///     m.ratio = t.yardstick_ms / t.work_ms;
///     m.hint = "are the next tile's loads in flight during the FFMAs?";
///     perf_gate::judge("sgemm/11_double_buffering: ...", m);
///
/// **Thresholds.** common/checks/thresholds/<gpu>.json (`<gpu>`: the GPU's name as results/
/// spells it, scripts/tour.py's gpu_file_name()) holds, per lesson, the measure and size the
/// threshold was measured for, the solution's ratio, the previous approach's, the threshold
/// (null: unscored, with the reason) and where the numbers come from. The folder is this
/// header's own (`__FILE__`, as the CG checks find their data), or the compile definition
/// TUT_THRESHOLDS_DIR, or the environment variable TUT_THRESHOLDS_DIR, which wins.
/// scripts/perf_gates.py writes the files (write_thresholds(), which `scripts/grade.py
/// --calibrate` calls); common/checks/thresholds/README.md gives the rule.
///
/// **The verdict.** `pass` when the ratio reaches the threshold, `fail` (the case fails)
/// when it does not; `unscored` (the case passes) when this GPU has no thresholds file, the
/// file has no threshold for the lesson (the reason is the file's), the file's measure or
/// size is not the case's, or the environment variable TUT_PERF_CALIBRATE is 1 (a
/// calibration run: measure and report, never fail). Every verdict is printed as a sentence
/// and, when the environment variable TUT_PERF_REPORT names a file, appended to it as one
/// JSON line: lesson, case, gate, measure, size, ratio, threshold, solution, previous,
/// status, reason, hint, gpu, detail, source, and for calibration previous_measured,
/// previous_from, spread_floor and unscored_because.
///
/// **Timing.** time_beside() runs the work and the yardstick in alternating rounds (at least
/// 100 ms of warm-up runs, then CUDA events, or the host's clock for work paced by the host),
/// the median of each; with flush_l2 (the work) and flush_l2_yardstick, a read of a buffer twice the
/// L2 size before every timed run (outside the events), as tut::L2Flusher does in
/// nvcc-compiled code. The checks are
/// compiled by the host compiler, which cannot launch a kernel, so the reading kernel comes
/// as PTX text, loaded once through the runtime's library API (the driver compiles it for
/// this GPU).
#pragma once

#include "catch.hpp"
#include "lesson_hint.hpp"
#include "tut/check.hpp"
#include "tut/report.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#ifndef TUT_LESSON_ID
#define TUT_LESSON_ID "unknown/lesson"
#endif

namespace perf_gate {

// ---------------------------------------------------------------------------------------
// A minimal JSON reader (the thresholds files: objects, arrays, strings, numbers, null)
// ---------------------------------------------------------------------------------------

struct Json {
    enum class Kind { null, boolean, number, string, array, object };
    Kind kind = Kind::null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<Json> items;
    std::vector<std::pair<std::string, Json>> members;

    bool is_null() const { return kind == Kind::null; }
    bool is_number() const { return kind == Kind::number; }
    bool is_string() const { return kind == Kind::string; }
    bool is_object() const { return kind == Kind::object; }
    /// The member `key` of an object; null when absent or not an object.
    const Json* find(const std::string& key) const {
        if (kind != Kind::object) return nullptr;
        for (const auto& m : members)
            if (m.first == key) return &m.second;
        return nullptr;
    }
    /// The member's number, or `fallback` (NaN) when it is absent or not a number.
    double number_or(const std::string& key, double fallback = NAN) const {
        const Json* j = find(key);
        return j && j->is_number() ? j->number : fallback;
    }
    /// The member's string, or `fallback` when it is absent or not a string.
    std::string string_or(const std::string& key, const std::string& fallback = {}) const {
        const Json* j = find(key);
        return j && j->is_string() ? j->string : fallback;
    }
};

namespace detail {

class JsonParser {
  public:
    explicit JsonParser(const std::string& text) : s_(text) {}

    Json parse() {
        Json v = value();
        space();
        if (i_ != s_.size()) fail("text after the value");
        return v;
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(i_));
    }
    void space() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
    }
    bool take(const char* word) {
        const std::string w(word);
        if (s_.compare(i_, w.size(), w) != 0) return false;
        i_ += w.size();
        return true;
    }
    Json value() {
        space();
        if (i_ >= s_.size()) fail("unexpected end");
        Json v;
        const char c = s_[i_];
        if (c == '{') {
            v.kind = Json::Kind::object;
            ++i_;
            space();
            if (i_ < s_.size() && s_[i_] == '}') {
                ++i_;
                return v;
            }
            for (;;) {
                space();
                if (i_ >= s_.size() || s_[i_] != '"') fail("expected a key");
                std::string key = string_body();
                space();
                if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':'");
                ++i_;
                v.members.emplace_back(std::move(key), value());
                space();
                if (i_ < s_.size() && s_[i_] == ',') {
                    ++i_;
                    continue;
                }
                if (i_ < s_.size() && s_[i_] == '}') {
                    ++i_;
                    return v;
                }
                fail("expected ',' or '}'");
            }
        }
        if (c == '[') {
            v.kind = Json::Kind::array;
            ++i_;
            space();
            if (i_ < s_.size() && s_[i_] == ']') {
                ++i_;
                return v;
            }
            for (;;) {
                v.items.push_back(value());
                space();
                if (i_ < s_.size() && s_[i_] == ',') {
                    ++i_;
                    continue;
                }
                if (i_ < s_.size() && s_[i_] == ']') {
                    ++i_;
                    return v;
                }
                fail("expected ',' or ']'");
            }
        }
        if (c == '"') {
            v.kind = Json::Kind::string;
            v.string = string_body();
            return v;
        }
        if (take("null")) return v;
        if (take("true") || take("false")) {
            v.kind = Json::Kind::boolean;
            v.boolean = s_[i_ - 1] == 'e' && s_[i_ - 2] == 'u';
            return v;
        }
        if (take("NaN")) {  // Python's json writes it; the files should not hold one
            v.kind = Json::Kind::number;
            v.number = NAN;
            return v;
        }
        const size_t start = i_;
        while (i_ < s_.size() && std::string("+-0123456789.eE").find(s_[i_]) != std::string::npos) ++i_;
        if (start == i_) fail(std::string("unexpected '") + c + "'");
        v.kind = Json::Kind::number;
        try {
            size_t used = 0;
            v.number = std::stod(s_.substr(start, i_ - start), &used);
            if (used != i_ - start) fail("bad number");
        } catch (const std::logic_error&) {
            fail("bad number");
        }
        return v;
    }
    // A string from its opening quote; \uXXXX below 0x80 only (the files are ASCII).
    std::string string_body() {
        ++i_;
        std::string out;
        while (i_ < s_.size() && s_[i_] != '"') {
            char c = s_[i_++];
            if (c == '\\') {
                if (i_ >= s_.size()) fail("unexpected end in a string");
                const char e = s_[i_++];
                switch (e) {
                    case 'n': c = '\n'; break;
                    case 't': c = '\t'; break;
                    case 'r': c = '\r'; break;
                    case 'b': c = '\b'; break;
                    case 'f': c = '\f'; break;
                    case 'u': {
                        if (i_ + 4 > s_.size()) fail("short \\u escape");
                        const unsigned code = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
                        i_ += 4;
                        c = code < 0x80 ? static_cast<char>(code) : '?';
                        break;
                    }
                    default: c = e;  // \" \\ \/
                }
            }
            out += c;
        }
        if (i_ >= s_.size()) fail("unterminated string");
        ++i_;
        return out;
    }

    const std::string& s_;
    size_t i_ = 0;
};

/// `s` as a JSON string literal.
inline std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

/// A number for JSON: null when not finite.
inline std::string number(double x) {
    if (!std::isfinite(x)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

inline bool env_is(const char* name, const char* value) {
    const char* v = std::getenv(name);
    return v && std::string(v) == value;
}

}  // namespace detail

/// printf-style formatting for the sentences ("%.2f us"): the project's one formatter.
using tut::fmt;

/// Parses a JSON text; throws std::runtime_error on malformed input.
inline Json parse_json(const std::string& text) { return detail::JsonParser(text).parse(); }

// ---------------------------------------------------------------------------------------
// Where the thresholds are
// ---------------------------------------------------------------------------------------

/// The results/ file name of a GPU: runs of characters other than letters, digits, '.',
/// '_' and '-' become one '_', leading and trailing '_' go ("NVIDIA H100 80GB HBM3" ->
/// "NVIDIA_H100_80GB_HBM3"); scripts/tour.py's gpu_file_name() without ".json".
inline std::string gpu_file_stem(const std::string& gpu) {
    std::string out;
    bool run = false;
    for (const char c : gpu) {
        const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                          c == '_' || c == '-';
        if (keep) {
            out += c;
            run = false;
        } else if (!run) {
            out += '_';
            run = true;
        }
    }
    const size_t first = out.find_first_not_of('_');
    if (first == std::string::npos) return "";
    const size_t last = out.find_last_not_of('_');
    return out.substr(first, last - first + 1);
}

/// The current device's name, as cudaGetDeviceProperties() gives it.
inline std::string gpu_name() {
    int device = 0;
    TUT_CUDA(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    TUT_CUDA(cudaGetDeviceProperties(&prop, device));
    return prop.name;
}

/// The folder of the thresholds files: $TUT_THRESHOLDS_DIR, else the compile definition
/// TUT_THRESHOLDS_DIR, else thresholds/ next to this header.
inline std::string thresholds_dir() {
    if (const char* env = std::getenv("TUT_THRESHOLDS_DIR"); env && *env) return env;
#ifdef TUT_THRESHOLDS_DIR
    return TUT_THRESHOLDS_DIR;
#else
    const std::string here = __FILE__;
    const size_t slash = here.find_last_of("/\\");
    return (slash == std::string::npos ? std::string(".") : here.substr(0, slash)) + "/thresholds";
#endif
}

// ---------------------------------------------------------------------------------------
// The measurement and the verdict
// ---------------------------------------------------------------------------------------

/// What a [performance] case measured. The ratio is always "higher is faster".
struct Measurement {
    std::string gate;     ///< empty for the lesson's one gate; a name when a lesson has several
    std::string measure;  ///< what the ratio is, e.g. "% of cuBLAS FP32"; a leading '%' prints it as a percentage
    std::string size;     ///< where it was measured, e.g. "N = 4096"
    double ratio = NAN;
    std::string hint;     ///< a question that points at the lesson's idea
    std::string detail;   ///< the times behind the ratio, e.g. "kernel 3.30 ms, cuBLAS 2.70 ms"
    /// Set when the measurement cannot be compared with the thresholds (e.g. the L2 could
    /// not be flushed): the verdict is then unscored, for this reason.
    std::string unscored_because;
    /// Calibration only: the previous approach's ratio measured in the same run, where the
    /// lesson keeps it as a variant (NaN otherwise), and the gate of the lesson whose
    /// solution is the previous approach, measured the same way (empty if none).
    double previous_measured = NAN;
    std::string previous_from;
    /// The run-to-run spread the rule assumes when too few runs are known (host-paced
    /// work is noisier than a kernel timed by events).
    double spread_floor = 0.03;
};

/// What judge() decided.
struct Verdict {
    std::string status;  ///< "pass", "fail" or "unscored"
    std::string reason;  ///< why unscored (empty otherwise)
    double threshold = NAN, solution = NAN, previous = NAN;
    std::string source;  ///< where the thresholds came from, e.g. "tour 2026-11-26"
    std::string sentence;
    bool failed() const { return status == "fail"; }
};

/// A ratio as its measure reads: "61%" for a measure that starts with '%' ("% of cuBLAS
/// FP32"), "1.52x" for one that starts with "x " ("x the grid-barrier variant's speed"),
/// else the number.
inline std::string shown(const std::string& measure, double x) {
    if (!std::isfinite(x)) return "n/a";
    if (!measure.empty() && measure[0] == '%') return tut::fmt(x < 0.1 ? "%.1f%%" : "%.0f%%", 100 * x);
    if (measure.rfind("x ", 0) == 0) return tut::fmt("%.2fx", x);
    return tut::fmt("%.3g", x);
}

/// What follows the number in a sentence: the measure without its leading '%' or 'x'.
inline std::string shown_unit(const std::string& measure) {
    if (!measure.empty() && measure[0] == '%') return measure.substr(1);
    if (measure.rfind("x ", 0) == 0) return measure.substr(1);
    return " " + measure;
}

/// The key of a gate in the thresholds file: the lesson, or "lesson: gate".
inline std::string gate_key(const std::string& lesson, const std::string& gate) {
    return gate.empty() ? lesson : lesson + ": " + gate;
}

/// Judges `m` for `lesson` on `gpu` from the thresholds in `dir` (no CUDA, no Catch2: the
/// CPU checks call it directly). `calibrating`: measure and report, never fail.
inline Verdict evaluate(const std::string& lesson, const std::string& gpu, const std::string& dir,
                        const Measurement& m, bool calibrating) {
    Verdict v;
    v.status = "unscored";
    const std::string key = gate_key(lesson, m.gate);
    const std::string file = dir + "/" + gpu_file_stem(gpu) + ".json";
    const std::string what = shown(m.measure, m.ratio) + shown_unit(m.measure) + " at " + m.size;
    std::ifstream in(file);
    const Json* entry = nullptr;
    Json root;
    if (!in) {
        v.reason = "no thresholds for this GPU (" + gpu + "): " + file +
                   " does not exist; the ratio is reported, not scored (an instructor can measure the solutions "
                   "with scripts/grade.py --calibrate)";
    } else {
        std::stringstream text;
        text << in.rdbuf();
        try {
            root = parse_json(text.str());
            const Json* lessons = root.find("lessons");
            entry = lessons ? lessons->find(key) : nullptr;
            if (!entry) v.reason = "the thresholds of " + gpu + " (" + file + ") have none for " + key;
        } catch (const std::exception& e) {
            v.reason = file + " cannot be read (" + e.what() + ")";
        }
    }
    if (entry) {
        v.solution = entry->number_or("solution");
        v.previous = entry->number_or("previous");
        v.threshold = entry->number_or("threshold");
        v.source = entry->string_or("source", root.string_or("source"));
        const std::string measure = entry->string_or("measure"), size = entry->string_or("size");
        if (measure != m.measure || size != m.size) {
            v.reason = "the threshold was measured as '" + measure + "' at '" + size + "', this case measures '" +
                       m.measure + "' at '" + m.size + "': it needs new thresholds (scripts/grade.py --calibrate)";
            v.threshold = v.solution = v.previous = NAN;  // numbers of another measure would mislead
        } else if (!std::isfinite(v.threshold)) {
            v.reason = entry->string_or("reason", "no threshold for this lesson on this GPU");
        }
    }
    if (calibrating) {
        v.reason = "calibration run: measured, not judged";
    } else if (!m.unscored_because.empty()) {
        v.reason = m.unscored_because;
    } else if (std::isfinite(v.threshold) && v.reason.empty()) {
        v.status = std::isfinite(m.ratio) && m.ratio >= v.threshold ? "pass" : "fail";
    }

    std::string s = lesson + (m.gate.empty() ? "" : " (" + m.gate + ")") + ": " + what;
    if (!m.detail.empty()) s += " (" + m.detail + ")";
    if (std::isfinite(v.solution)) s += "; this lesson's solution reaches about " + shown(m.measure, v.solution);
    if (std::isfinite(v.previous))
        s += std::string(std::isfinite(v.solution) ? ", " : "; ") + "the previous lesson's approach about " +
             shown(m.measure, v.previous);
    if (v.status == "pass") {
        s += "; the gate is " + shown(m.measure, v.threshold) + ": passed.";
    } else if (v.status == "fail") {
        s += "; the gate is " + shown(m.measure, v.threshold) + ": too slow. " + m.hint;
    } else {
        s += "; not scored: " + v.reason + ".";
        if (!m.hint.empty()) s += " " + m.hint;
    }
    v.sentence = s;
    return v;
}

/// The JSON line of a verdict (contract: lesson, case, measure, ratio, threshold, solution,
/// status, reason, hint; and the rest named in the file comment).
inline std::string report_line(const std::string& lesson, const std::string& case_name, const std::string& gpu,
                               const Measurement& m, const Verdict& v) {
    using detail::number;
    using detail::quoted;
    std::string j = "{";
    j += "\"lesson\": " + quoted(lesson);
    j += ", \"case\": " + quoted(case_name);
    j += ", \"gate\": " + quoted(gate_key(lesson, m.gate));
    j += ", \"measure\": " + quoted(m.measure);
    j += ", \"size\": " + quoted(m.size);
    j += ", \"ratio\": " + number(m.ratio);
    j += ", \"threshold\": " + number(v.threshold);
    j += ", \"solution\": " + number(v.solution);
    j += ", \"previous\": " + number(v.previous);
    j += ", \"status\": " + quoted(v.status);
    j += ", \"reason\": " + quoted(v.reason);
    j += ", \"hint\": " + quoted(m.hint);
    j += ", \"gpu\": " + quoted(gpu);
    j += ", \"detail\": " + quoted(m.detail);
    j += ", \"source\": " + quoted(v.source);
    j += ", \"previous_measured\": " + number(m.previous_measured);
    j += ", \"previous_from\": " + quoted(m.previous_from);
    j += ", \"spread_floor\": " + number(m.spread_floor);
    j += ", \"unscored_because\": " + quoted(m.unscored_because);
    j += ", \"sentence\": " + quoted(v.sentence);
    return j + "}";
}

/// True under TUT_PERF_CALIBRATE=1: a case may then also measure the previous approach.
inline bool calibrating() { return detail::env_is("TUT_PERF_CALIBRATE", "1"); }

/// Judges `m` on this GPU, prints the sentence, appends the JSON line to $TUT_PERF_REPORT,
/// and fails the case (REQUIRE) when the verdict is "fail".
inline Verdict judge(const std::string& case_name, const Measurement& m) {
    const std::string lesson = TUT_LESSON_ID;
    const std::string gpu = gpu_name();
    const Verdict v = evaluate(lesson, gpu, thresholds_dir(), m, calibrating());
    std::printf("[performance] %s\n", v.sentence.c_str());
    std::fflush(stdout);
    if (const char* path = std::getenv("TUT_PERF_REPORT"); path && *path) {
        if (FILE* f = std::fopen(path, "a")) {
            const std::string line = report_line(lesson, case_name, gpu, m, v) + "\n";
            std::fputs(line.c_str(), f);
            std::fclose(f);
        } else {
            WARN("cannot append the performance report to " << path);
        }
    }
    INFO(v.sentence);
    if (v.failed()) INFO(tut_checks::exercise_hint());
    REQUIRE_FALSE(v.failed());
    return v;
}

// ---------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------

/// How time_beside() and median_ms() repeat their work.
struct Plan {
    int warmup = 2;           ///< untimed runs of each before the first round, at least
    /// ... and warm-up goes on until this much time has passed: a GPU that sat idle while the
    /// process started raises its clocks only after some milliseconds of work
    double warmup_ms = 100;
    int repeats = 10;         ///< timed runs of each per round
    int rounds = 3;           ///< rounds alternate work and yardstick, so both see the same drift
    bool flush_l2 = false;    ///< read 2 x L2 before every timed run of the work (events only)
    bool flush_l2_yardstick = false;  ///< the same before the yardstick's
    bool host_clock = false;  ///< the host's steady clock around each run (the work returns when done)
};

struct Times {
    double work_ms = NAN;       ///< median of the work's timed runs
    double yardstick_ms = NAN;  ///< median of the yardstick's
    int samples = 0;            ///< timed runs of each
    std::string flush_note;     ///< why the L2 was not flushed, when it was asked for and could not be
};

/// Reads a buffer twice the size of L2 (ld.global.cg, nothing written but a never-taken
/// store), leaving L2 with clean lines of that buffer only: the previous run's output is
/// written back here, outside the timed region, and the next run finds none of its data.
class L2Reader {
  public:
    L2Reader() {
        int device = 0, l2 = 0;
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        bytes_ = 2 * static_cast<size_t>(l2 > 0 ? l2 : (8 << 20));
        int sms = 1;
        TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        blocks_ = 4 * std::max(sms, 1);
        const cudaError_t loaded =
            cudaLibraryLoadData(&library_, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0);
        if (loaded == cudaSuccess && cudaLibraryGetKernel(&kernel_, library_, "tut_perf_read_to_evict_l2") == cudaSuccess) {
            TUT_CUDA(cudaMalloc(&buffer_, bytes_ + 256));
            TUT_CUDA(cudaMemset(buffer_, 0, bytes_ + 256));
            TUT_CUDA(cudaDeviceSynchronize());
        } else {
            why_not_ = std::string("the L2 could not be flushed (loading its PTX: ") + cudaGetErrorString(loaded) + ")";
            (void)cudaGetLastError();
            kernel_ = nullptr;
        }
    }
    ~L2Reader() {
        if (buffer_) cudaFree(buffer_);
        if (library_) cudaLibraryUnload(library_);
    }
    L2Reader(const L2Reader&) = delete;
    L2Reader& operator=(const L2Reader&) = delete;

    bool ready() const { return kernel_ != nullptr; }
    const std::string& why_not() const { return why_not_; }

    void flush(cudaStream_t stream = nullptr) {
        if (!kernel_) return;
        void* data = buffer_;
        unsigned long long count = bytes_ / 16;
        void* sink = static_cast<char*>(buffer_) + bytes_;
        void* args[] = {&data, &count, &sink};
        // A cudaKernel_t is accepted where a kernel's address is (CUDA runtime API).
        TUT_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(blocks_), dim3(512), args, 0, stream));
    }

  private:
    static constexpr const char* kPtx = R"PTX(
.version 7.0
.target sm_70
.address_size 64

.visible .entry tut_perf_read_to_evict_l2(
    .param .u64 data,
    .param .u64 count,
    .param .u64 sink
)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;

    ld.param.u64 %rd1, [data];
    ld.param.u64 %rd2, [count];
    ld.param.u64 %rd3, [sink];
    cvta.to.global.u64 %rd4, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd5, %r1, %r2;
    cvt.u64.u32 %rd6, %r3;
    add.s64 %rd7, %rd5, %rd6;
    mul.wide.u32 %rd8, %r4, %r2;
    mov.u32 %r5, 0;
    setp.ge.u64 %p1, %rd7, %rd2;
    @%p1 bra DONE;
LOOP:
    shl.b64 %rd9, %rd7, 4;
    add.s64 %rd10, %rd4, %rd9;
    ld.global.cg.v4.u32 {%r6, %r7, %r8, %r9}, [%rd10];
    xor.b32 %r5, %r5, %r6;
    xor.b32 %r5, %r5, %r7;
    xor.b32 %r5, %r5, %r8;
    xor.b32 %r5, %r5, %r9;
    add.s64 %rd7, %rd7, %rd8;
    setp.lt.u64 %p2, %rd7, %rd2;
    @%p2 bra LOOP;
DONE:
    setp.ne.s32 %p1, %r5, 2147483647;
    @%p1 bra END;
    cvta.to.global.u64 %rd11, %rd3;
    st.global.u32 [%rd11], %r5;
END:
    ret;
}
)PTX";

    cudaLibrary_t library_ = nullptr;
    cudaKernel_t kernel_ = nullptr;
    void* buffer_ = nullptr;
    size_t bytes_ = 0;
    int blocks_ = 1;
    std::string why_not_;
};

/// One L2Reader per check program.
inline L2Reader& l2_reader() {
    static L2Reader reader;
    return reader;
}

/// The median of `v`, which it sorts.
inline double median_in_place(std::vector<double>& v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const size_t mid = v.size() / 2;
    return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

inline double median_of(std::vector<double> v) { return median_in_place(v); }

namespace detail {

/// Runs `work` plan.warmup times, then on until plan.warmup_ms have passed; returns with the
/// GPU idle.
template <class Work>
void warm_up(Work&& work, const Plan& plan) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0;; ++i) {
        if (i >= plan.warmup) {
            TUT_CUDA(cudaDeviceSynchronize());
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            if (ms >= plan.warmup_ms) break;
        }
        work();
    }
}

/// Appends `count` timed runs of `work` to `samples` (milliseconds).
template <class Work>
void time_runs(Work& work, int count, const Plan& plan, bool flush, std::vector<double>& samples) {
    if (plan.host_clock) {
        for (int i = 0; i < count; ++i) {
            TUT_CUDA(cudaDeviceSynchronize());
            const auto t0 = std::chrono::steady_clock::now();
            work();  // returns when the GPU is done (as for tut::Bench::time_host)
            samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        return;
    }
    cudaEvent_t start, stop;
    TUT_CUDA(cudaEventCreate(&start));
    TUT_CUDA(cudaEventCreate(&stop));
    for (int i = 0; i < count; ++i) {
        if (flush) l2_reader().flush();
        TUT_CUDA(cudaEventRecord(start, nullptr));
        work();
        TUT_CUDA(cudaEventRecord(stop, nullptr));
        TUT_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        TUT_CUDA(cudaEventElapsedTime(&ms, start, stop));
        samples.push_back(ms);
    }
    TUT_CUDA(cudaEventDestroy(start));
    TUT_CUDA(cudaEventDestroy(stop));
}

}  // namespace detail

/// Times `work` and `yardstick` (each enqueues its GPU work on the default stream, or, with
/// host_clock, returns when it is done): warm-up runs of each, then `rounds` rounds of
/// `repeats` timed runs of the work and then of the yardstick; the median of each.
template <class Work, class Yardstick>
Times time_beside(Work&& work, Yardstick&& yardstick, const Plan& plan = {}) {
    Times t;
    if ((plan.flush_l2 || plan.flush_l2_yardstick) && !plan.host_clock && !l2_reader().ready())
        t.flush_note = l2_reader().why_not();
    detail::warm_up([&] {
        work();
        yardstick();
    }, plan);
    std::vector<double> a, b;
    for (int r = 0; r < std::max(1, plan.rounds); ++r) {
        detail::time_runs(work, std::max(1, plan.repeats), plan, plan.flush_l2, a);
        detail::time_runs(yardstick, std::max(1, plan.repeats), plan, plan.flush_l2_yardstick, b);
    }
    t.work_ms = median_of(a);
    t.yardstick_ms = median_of(b);
    t.samples = static_cast<int>(a.size());
    return t;
}

/// The median time of `work` alone (for a yardstick that is computed, not run).
template <class Work>
double median_ms(Work&& work, const Plan& plan = {}) {
    detail::warm_up(work, plan);
    std::vector<double> a;
    detail::time_runs(work, std::max(1, plan.repeats) * std::max(1, plan.rounds), plan, plan.flush_l2, a);
    return median_of(a);
}

/// Median microseconds per iteration of two solves paced by the host (see solves_beside()).
struct PerIteration {
    double work_us = NAN;
    double yardstick_us = NAN;
    int samples = 0;  ///< timed solves of each
};

/// Two solves paced by the host, timed by its clock beside each other, one solve of each in
/// turn, `solves` of each: such a solve's time drifts by a tenth over a few solves, and both
/// must see the same drift. Each callable runs one solve and returns its iteration count;
/// every solve's count, warm-up included, makes one median.
template <class Work, class Yardstick>
PerIteration solves_beside(Work&& work, Yardstick&& yardstick, int solves) {
    std::vector<double> work_iterations, yardstick_iterations;
    Plan plan;
    plan.host_clock = true;
    plan.repeats = 1;
    plan.rounds = solves;
    const Times t = time_beside([&] { work_iterations.push_back(work()); },
                                [&] { yardstick_iterations.push_back(yardstick()); }, plan);
    PerIteration p;
    p.work_us = 1000 * t.work_ms / std::max(1.0, median_in_place(work_iterations));
    p.yardstick_us = 1000 * t.yardstick_ms / std::max(1.0, median_in_place(yardstick_iterations));
    p.samples = t.samples;
    return p;
}

/// "'2 buffers' 3.30 ms, cuBLAS 2.70 ms" (the medians, three significant digits).
inline std::string against(double work_ms, const std::string& work_name, double yardstick_ms,
                           const std::string& yardstick_name) {
    return work_name + " " + tut::fmt("%.3g ms", work_ms) + ", " + yardstick_name + " " +
           tut::fmt("%.3g ms", yardstick_ms);
}

/// A case whose ratio is the yardstick's time over the work's (see time_and_judge()).
struct RatioCase {
    std::string name;     ///< the TEST_CASE's name, for the report
    std::string gate;     ///< see Measurement::gate
    std::string measure;  ///< e.g. "% of cuBLAS FP32"
    std::string size;     ///< e.g. "N = 4096"
    std::string hint;     ///< the question a student whose kernel is too slow should ask
    std::string work_name = "the lesson's variant";
    std::string yardstick_name = "the yardstick";
    /// ratio = scale x yardstick time / work time: 0.5 when the yardstick moves twice the
    /// bytes (a copy of B bytes reads and writes them; a sum of B bytes only reads).
    double scale = 1.0;
    std::string previous_from;  ///< see Measurement::previous_from
    double spread_floor = 0.03;
    Plan plan;
};

/// Times `work` beside `yardstick` (time_beside()), judges scale x yardstick / work with
/// judge(), and returns the verdict. `previous`, when given, is the previous lesson's
/// approach as the lesson keeps it (a variant): under TUT_PERF_CALIBRATE=1 it is timed
/// beside the yardstick too and reported as previous_measured, for scripts/perf_gates.py.
template <class Work, class Yardstick>
Verdict time_and_judge(const RatioCase& c, Work&& work, Yardstick&& yardstick,
                       const std::function<void()>& previous = {}) {
    const Times t = time_beside(work, yardstick, c.plan);
    Measurement m;
    m.gate = c.gate;
    m.measure = c.measure;
    m.size = c.size;
    m.hint = c.hint;
    m.ratio = c.scale * t.yardstick_ms / t.work_ms;
    m.detail = against(t.work_ms, c.work_name, t.yardstick_ms, c.yardstick_name) + ", medians of " +
               std::to_string(t.samples);
    m.unscored_because = t.flush_note;
    m.previous_from = c.previous_from;
    m.spread_floor = c.spread_floor;
    if (previous && calibrating()) {
        const Times p = time_beside(previous, yardstick, c.plan);
        m.previous_measured = c.scale * p.yardstick_ms / p.work_ms;
    }
    return judge(c.name, m);
}

}  // namespace perf_gate
