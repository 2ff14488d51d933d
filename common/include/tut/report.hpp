/// @file report.hpp
/// @brief Results: an aligned table for people, one JSON record per line for the tour.
///
/// Every measured result is a tut::Record: the value, its unit, and the two ceilings it
/// is judged against, both measured or computed in the same run: the library
/// (cuBLAS, CUB, cudaMemcpy...) and the hardware peak. tut::append_json() writes it
/// as one line of JSON (JSON Lines), which scripts/tour.py gathers into
/// `results/<gpu>.json`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

namespace tut {

/// JSON text of a string, with the escapes JSON requires.
inline std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

/// JSON text of a number; NaN and infinities (which JSON lacks) become null.
inline std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

/// A flat JSON object built field by field, in insertion order.
class JsonObject {
  public:
    JsonObject& add(const std::string& key, const std::string& v) { return raw(key, json_string(v)); }
    JsonObject& add(const std::string& key, const char* v) { return raw(key, json_string(v)); }
    JsonObject& add(const std::string& key, double v) { return raw(key, json_number(v)); }
    JsonObject& add(const std::string& key, int v) { return raw(key, std::to_string(v)); }
    JsonObject& add(const std::string& key, long long v) { return raw(key, std::to_string(v)); }
    JsonObject& add(const std::string& key, bool v) { return raw(key, v ? "true" : "false"); }
    /// Adds already-formatted JSON text (a nested object or array).
    JsonObject& raw(const std::string& key, const std::string& json) {
        fields_.emplace_back(key, json);
        return *this;
    }
    std::string str() const {
        std::string out = "{";
        for (size_t i = 0; i < fields_.size(); ++i)
            out += (i ? ", " : "") + json_string(fields_[i].first) + ": " + fields_[i].second;
        return out + "}";
    }

  private:
    std::vector<std::pair<std::string, std::string>> fields_;
};

/// One measured result. `value` and `library_value` share `unit`; ratios are
/// value / library and value / peak for throughputs (GFLOP/s, GB/s).
struct Record {
    std::string track, lesson, variant;
    std::string size;             ///< e.g. "4096" (N) or "67108864" (elements)
    double value = NAN;           ///< the lesson's result, in `unit`
    std::string unit;             ///< e.g. "GFLOP/s", "GB/s"
    double time_ms = NAN;         ///< median time of one run
    std::string library;          ///< what the library baseline is, e.g. "cublasSgemm (FP32)"
    double library_value = NAN;   ///< the library's result in the same unit, same run
    std::string peak;             ///< what the peak is, e.g. "FP32 peak from clocks"
    double peak_value = NAN;      ///< the hardware ceiling in the same unit
    bool checked = false;         ///< the output was validated in this run
    JsonObject extra;             ///< lesson-specific fields (registers, shared memory, iterations...)

    double ratio_to_library() const { return library_value > 0 ? value / library_value : NAN; }
    double ratio_to_peak() const { return peak_value > 0 ? value / peak_value : NAN; }

    std::string json() const {
        JsonObject o;
        o.add("track", track).add("lesson", lesson).add("variant", variant).add("size", size);
        o.add("value", value).add("unit", unit).add("time_ms", time_ms);
        o.add("library", library).add("library_value", library_value).add("ratio_to_library", ratio_to_library());
        o.add("peak", peak).add("peak_value", peak_value).add("ratio_to_peak", ratio_to_peak());
        o.add("checked", checked);
        o.raw("extra", extra.str());
        return o.str();
    }
};

/// Appends one line of JSON to `path` (no-op for an empty path). Returns false on I/O failure.
inline bool append_json_line(const std::string& path, const std::string& json) {
    if (path.empty()) return true;
    std::FILE* f = std::fopen(path.c_str(), "a");
    if (!f) return false;
    bool ok = std::fprintf(f, "%s\n", json.c_str()) > 0;
    return std::fclose(f) == 0 && ok;
}

/// A table printed with aligned columns: text left, numbers right.
class Table {
  public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    void add_row(std::vector<std::string> row) {
        row.resize(header_.size());
        rows_.push_back(std::move(row));
    }
    void print(std::FILE* out = stdout) const {
        std::vector<size_t> width(header_.size());
        for (size_t c = 0; c < header_.size(); ++c) {
            width[c] = header_[c].size();
            for (auto& r : rows_) width[c] = std::max(width[c], r[c].size());
        }
        auto line = [&](const std::vector<std::string>& r) {
            for (size_t c = 0; c < r.size(); ++c) {
                bool left = c == 0;
                std::fprintf(out, c ? "  " : "");
                std::fprintf(out, left ? "%-*s" : "%*s", static_cast<int>(width[c]), r[c].c_str());
            }
            std::fprintf(out, "\n");
        };
        line(header_);
        std::vector<std::string> rule;
        for (auto w : width) rule.push_back(std::string(w, '-'));
        line(rule);
        for (auto& r : rows_) line(r);
        std::fflush(out);
    }

  private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

/// printf-style formatting into a std::string, for table cells and titles (any length).
template <class... Args>
std::string fmt(const char* format, Args... args) {
    const int size = std::snprintf(nullptr, 0, format, args...);
    if (size <= 0) return {};
    std::string out(static_cast<size_t>(size) + 1, '\0');
    std::snprintf(out.data(), out.size(), format, args...);
    out.resize(static_cast<size_t>(size));
    return out;
}

/// A ratio as a percentage cell, "-" when unknown.
inline std::string percent(double ratio) { return std::isfinite(ratio) ? fmt("%.1f%%", 100.0 * ratio) : "-"; }

}  // namespace tut
