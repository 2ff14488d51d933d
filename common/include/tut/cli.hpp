/// @file cli.hpp
/// @brief Command-line parsing with usage, defaults and validation.
///
///     tut::Cli cli("naive", "SGEMM, one thread per element of C");
///     int n = 4096;
///     cli.add_int("n", &n, "matrix size N", 1, 8192);
///     tut::RunOptions run;
///     tut::add_run_options(cli, run);
///     cli.parse_or_exit(argc, argv);   // --help: usage, exit 0; bad input: message + usage, exit 2
///
/// Options are written `--name value` or `--name=value`; flags take no value.
/// Numbers must be in range and nothing else, and are refused with a message that names
/// the option otherwise. Whole numbers are decimal digits with an optional leading '-':
/// "12abc", "1e3", "", " 42", "+42" are refused. Reals are decimal, an optional '-', digits
/// with an optional point and an optional exponent ("0.25", "1e-6", "5e-324": subnormals
/// are accepted); hexadecimal ("0x1p-3"), "inf", "nan", spaces and '+' are refused. A list
/// is whole numbers separated by single commas: "1,2," and "1,,2" are refused.
#pragma once

#include <cctype>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tut {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Exit code for bad command-line input.
inline constexpr int kUsageExitCode = 2;

namespace detail {
inline bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

/// True when `text` is '-'? digits+ and nothing else.
inline bool whole_number_syntax(const std::string& text) {
    size_t i = text.size() > 0 && text[0] == '-' ? 1 : 0;
    if (i == text.size()) return false;
    for (; i < text.size(); ++i)
        if (!is_digit(text[i])) return false;
    return true;
}

/// True when `text` is '-'? (digits+ ('.' digits*)? | '.' digits+) ([eE] [+-]? digits+)?
/// and nothing else: what strtod reads as a decimal number, without the spaces, '+',
/// hexadecimal, "inf" and "nan" it also takes.
inline bool decimal_syntax(const std::string& text) {
    size_t i = text.size() > 0 && text[0] == '-' ? 1 : 0;
    size_t digits = 0;
    for (; i < text.size() && is_digit(text[i]); ++i) ++digits;
    if (i < text.size() && text[i] == '.')
        for (++i; i < text.size() && is_digit(text[i]); ++i) ++digits;
    if (digits == 0) return false;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        size_t exponent_digits = 0;
        for (; i < text.size() && is_digit(text[i]); ++i) ++exponent_digits;
        if (exponent_digits == 0) return false;
    }
    return i == text.size();
}
}  // namespace detail

/// Parses a whole decimal integer in [lo, hi]; throws UsageError naming `what` otherwise.
inline long long parse_integer(const std::string& text, long long lo, long long hi, const std::string& what) {
    if (text.empty()) throw UsageError(what + ": expected a whole number, got nothing");
    // strtoll alone would also take leading spaces and a '+'.
    if (!detail::whole_number_syntax(text)) throw UsageError(what + ": '" + text + "' is not a whole number");
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0' || end == text.c_str()) throw UsageError(what + ": '" + text + "' is not a whole number");
    if (errno == ERANGE || v < lo || v > hi)
        throw UsageError(what + ": " + text + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
}

/// Parses a finite decimal number in [lo, hi]; throws UsageError naming `what` otherwise.
/// A number too small for a normal double is taken as its subnormal (or zero) value.
inline double parse_real(const std::string& text, double lo, double hi, const std::string& what) {
    if (!detail::decimal_syntax(text)) throw UsageError(what + ": '" + text + "' is not a decimal number");
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (*end != '\0') throw UsageError(what + ": '" + text + "' is not a decimal number");
    // strtod reports ERANGE for underflow too; only overflow (to infinity) is out of range.
    const bool overflow = errno == ERANGE && std::fabs(v) > DBL_MIN;
    if (overflow || !(v >= lo && v <= hi)) {
        std::ostringstream os;
        os << what << ": " << text << " is out of range [" << lo << ", " << hi << "]";
        throw UsageError(os.str());
    }
    return v;
}

class Cli {
  public:
    Cli(std::string program, std::string summary) : program_(std::move(program)), summary_(std::move(summary)) {}

    template <class Int>
    void add_int(const std::string& name, Int* target, const std::string& help, long long lo, long long hi) {
        add(name, help, std::to_string(*target), true, [=](const std::string& v) {
            *target = static_cast<Int>(parse_integer(v, lo, hi, "--" + name));
        });
    }
    /// A comma-separated list of integers, e.g. `--sizes 1024,2048,4096`.
    template <class Int>
    void add_int_list(const std::string& name, std::vector<Int>* target, const std::string& help, long long lo,
                      long long hi) {
        std::string def;
        for (auto x : *target) def += (def.empty() ? "" : ",") + std::to_string(x);
        add(name, help, def, true, [=](const std::string& v) {
            target->clear();
            // Split at every comma, so that an empty item anywhere (",1", "1,,2", "1,2,") is
            // refused; getline would drop a trailing one.
            for (size_t start = 0;;) {
                const size_t comma = v.find(',', start);
                const std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
                if (item.empty())
                    throw UsageError("--" + name + ": '" + v + "' is not a comma-separated list of whole numbers (an " +
                                     "item is empty)");
                target->push_back(static_cast<Int>(parse_integer(item, lo, hi, "--" + name)));
                if (comma == std::string::npos) break;
                start = comma + 1;
            }
        });
    }
    void add_real(const std::string& name, double* target, const std::string& help, double lo, double hi) {
        std::ostringstream def;
        def << *target;
        add(name, help, def.str(), true, [=](const std::string& v) { *target = parse_real(v, lo, hi, "--" + name); });
    }
    void add_flag(const std::string& name, bool* target, const std::string& help) {
        add(name, help, "", false, [=](const std::string&) { *target = true; });
    }
    /// A free string; with `choices`, only one of them is accepted.
    void add_string(const std::string& name, std::string* target, const std::string& help,
                    std::vector<std::string> choices = {}) {
        std::string h = help;
        if (!choices.empty()) {
            h += " (one of:";
            for (auto& c : choices) h += " " + c;
            h += ")";
        }
        add(name, h, *target, true, [=](const std::string& v) {
            if (choices.empty()) {
                *target = v;
                return;
            }
            for (auto& c : choices)
                if (c == v) {
                    *target = v;
                    return;
                }
            throw UsageError("--" + name + ": '" + v + "' is not one of the choices");
        });
    }

    std::string usage() const {
        std::ostringstream os;
        os << "usage: " << program_ << " [options]\n" << summary_ << "\n\noptions:\n";
        for (auto& o : options_) {
            std::string left = "  --" + o.name + (o.takes_value ? " VALUE" : "");
            os << left << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ') << o.help;
            if (o.takes_value && !o.default_text.empty()) os << " [default: " << o.default_text << "]";
            os << "\n";
        }
        os << "  --help                  print this message\n";
        return os.str();
    }

    /// Parses; returns false when --help was given. Throws UsageError on bad input.
    bool parse(int argc, const char* const* argv) {
        for (int i = 1; i < argc; ++i) {
            std::string arg = argv[i];
            if (arg == "--help" || arg == "-h") return false;
            if (arg.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + arg + "'");
            std::string name = arg.substr(2), value;
            bool has_value = false;
            if (auto eq = name.find('='); eq != std::string::npos) {
                value = name.substr(eq + 1);
                name = name.substr(0, eq);
                has_value = true;
            }
            const Option* opt = find(name);
            if (!opt) throw UsageError("unknown option '--" + name + "'");
            if (opt->takes_value && !has_value) {
                if (i + 1 >= argc) throw UsageError("--" + name + " needs a value");
                value = argv[++i];
            } else if (!opt->takes_value && has_value) {
                throw UsageError("--" + name + " takes no value");
            }
            opt->apply(value);
        }
        return true;
    }

    /// parse(), printing usage and exiting 0 on --help, or an error and usage and
    /// exiting kUsageExitCode on bad input.
    void parse_or_exit(int argc, const char* const* argv) {
        try {
            if (!parse(argc, argv)) {
                std::fputs(usage().c_str(), stdout);
                std::exit(0);
            }
        } catch (const UsageError& e) {
            std::fprintf(stderr, "%s: error: %s\n\n%s", program_.c_str(), e.what(), usage().c_str());
            std::exit(kUsageExitCode);
        }
    }

    const std::string& program() const { return program_; }

  private:
    struct Option {
        std::string name, help, default_text;
        bool takes_value;
        std::function<void(const std::string&)> apply;
    };
    void add(const std::string& name, const std::string& help, std::string def, bool takes_value,
             std::function<void(const std::string&)> apply) {
        options_.push_back({name, help, std::move(def), takes_value, std::move(apply)});
    }
    const Option* find(const std::string& name) const {
        for (auto& o : options_)
            if (o.name == name) return &o;
        return nullptr;
    }
    std::string program_, summary_;
    std::vector<Option> options_;
};

/// Options every lesson binary takes, so runs are comparable and profilable.
struct RunOptions {
    int warmup = 3;          ///< untimed runs before timing
    int repeats = 20;        ///< timed runs; the median is reported
    bool no_check = false;   ///< skip validation against the reference
    bool profile = false;    ///< one clean launch per variant: no warm-up, one repeat, no check, no library baseline
    std::string json;        ///< append one JSON record per result to this file
    std::string variant;     ///< run only this variant (empty: all)
    long long seed = 2024;   ///< input data seed

    bool check() const { return !no_check && !profile; }
};

inline void add_run_options(Cli& cli, RunOptions& run) {
    cli.add_int("warmup", &run.warmup, "untimed runs before timing", 0, 1000);
    cli.add_int("repeats", &run.repeats, "timed runs; the median is reported", 1, 100000);
    cli.add_flag("no-check", &run.no_check, "skip validation against the reference");
    cli.add_flag("profile", &run.profile,
                 "one clean launch per variant for a profiler: no warm-up, one repeat, no check, no library run");
    cli.add_string("variant", &run.variant, "run only the variant of this name");
    cli.add_string("json", &run.json, "append one JSON record per result to this file");
    cli.add_int("seed", &run.seed, "seed of the random inputs", 0, (1ll << 62));
}

/// Applies --profile after parsing.
inline void finish_run_options(RunOptions& run) {
    if (run.profile) {
        run.warmup = 0;
        run.repeats = 1;
    }
}

}  // namespace tut
