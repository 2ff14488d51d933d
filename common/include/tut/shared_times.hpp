/// @file shared_times.hpp
/// @brief Times one program of a tour run leaves for the next: a CPU baseline's time for a
/// lesson's speedup column, lesson 1's for the later lessons'.
///
/// The tour passes the same `--share FILE` to every program of a track. A program appends
/// one tab-separated line per result, `who  key  ms  iterations` (who: the program or
/// variant, key: the problem, e.g. "8192 float"); a reader asks for who and key and gets
/// the last matching line's figures, NaN when there is none. An empty path disables both.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tut {

struct SharedTime {
    double ms = NAN;          ///< time of the result, ms
    double iterations = NAN;  ///< iterations it took (a mean where the program solved several systems)
};

inline void append_shared_time(const std::string& path, const std::string& who, const std::string& key, double ms,
                               double iterations) {
    if (path.empty()) return;
    std::FILE* f = std::fopen(path.c_str(), "a");
    if (!f) return;
    std::fprintf(f, "%s\t%s\t%.9g\t%.9g\n", who.c_str(), key.c_str(), ms, iterations);
    std::fclose(f);
}

inline SharedTime read_shared_time(const std::string& path, const std::string& who, const std::string& key) {
    SharedTime r;
    if (path.empty()) return r;
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (!f) return r;
    char line[1024];
    while (std::fgets(line, sizeof line, f)) {
        const std::string s(line);
        const size_t t1 = s.find('\t');
        const size_t t2 = t1 == std::string::npos ? t1 : s.find('\t', t1 + 1);
        const size_t t3 = t2 == std::string::npos ? t2 : s.find('\t', t2 + 1);
        if (t3 == std::string::npos) continue;
        if (s.compare(0, t1, who) != 0 || s.compare(t1 + 1, t2 - t1 - 1, key) != 0) continue;
        r.ms = std::strtod(s.c_str() + t2 + 1, nullptr);
        r.iterations = std::strtod(s.c_str() + t3 + 1, nullptr);
    }
    std::fclose(f);
    return r;
}

}  // namespace tut
