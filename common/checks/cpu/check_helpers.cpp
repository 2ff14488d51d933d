// CPU checks of the shared helpers in common/include/tut: they run everywhere, GPU or not.
#include "catch.hpp"
#include "tut/cli.hpp"
#include "tut/compare.hpp"
#include "tut/device_facts.hpp"
#include "tut/random.hpp"
#include "tut/report.hpp"
#include "tut/shared_times.hpp"
#include "tut/sgemm.hpp"
#include "tut/timer.hpp"

#include <climits>
#include <cmath>
#include <limits>

namespace {
struct Args {
    std::vector<std::string> words;
    std::vector<const char*> ptrs;
    Args(std::initializer_list<const char*> w) {
        words.push_back("prog");
        for (auto* s : w) words.push_back(s);
        for (auto& s : words) ptrs.push_back(s.c_str());
    }
    int argc() const { return static_cast<int>(ptrs.size()); }
    const char* const* argv() const { return ptrs.data(); }
};
}  // namespace

TEST_CASE("cli: defaults, both option spellings, flags and lists", "[cli]") {
    tut::Cli cli("prog", "test");
    int n = 7;
    bool flag = false;
    std::string s = "x";
    std::vector<int> list{1};
    double r = 0.5;
    cli.add_int("n", &n, "size", 1, 100);
    cli.add_flag("flag", &flag, "a flag");
    cli.add_string("s", &s, "a string", {"x", "y"});
    cli.add_int_list("list", &list, "a list", 0, 9);
    cli.add_real("r", &r, "a real", 0, 1);
    Args none{};
    REQUIRE(cli.parse(none.argc(), none.argv()));
    CHECK(n == 7);
    Args a{"--n", "42", "--flag", "--s=y", "--list", "3,4,5", "--r=0.25"};
    REQUIRE(cli.parse(a.argc(), a.argv()));
    CHECK(n == 42);
    CHECK(flag);
    CHECK(s == "y");
    CHECK(list == std::vector<int>{3, 4, 5});
    CHECK(r == 0.25);
    Args help{"--help"};
    CHECK_FALSE(cli.parse(help.argc(), help.argv()));
    CHECK(cli.usage().find("--n VALUE") != std::string::npos);
    CHECK(cli.usage().find("[default: 42]") == std::string::npos);  // defaults are captured at registration
}

TEST_CASE("cli: bad input is refused with a message naming the option", "[cli]") {
    tut::Cli cli("prog", "test");
    int n = 7;
    bool flag = false;
    std::string s = "x";
    cli.add_int("n", &n, "size", 1, 100);
    cli.add_flag("flag", &flag, "a flag");
    cli.add_string("s", &s, "a string", {"x", "y"});
    for (auto bad : std::vector<Args>{{"--n", "abc"}, {"--n", "0"}, {"--n", "101"}, {"--n", "12abc"}, {"--n", "1e3"},
                                      {"--n", ""}, {"--n"}, {"--n", "99999999999999999999"}, {"--nope"}, {"stray"},
                                      {"--flag=1"}, {"--s", "z"}}) {
        INFO("argv: " << bad.words.size());
        CHECK_THROWS_AS(cli.parse(bad.argc(), bad.argv()), tut::UsageError);
    }
    try {
        Args a{"--n", "abc"};
        cli.parse(a.argc(), a.argv());
    } catch (const tut::UsageError& e) {
        CHECK(std::string(e.what()).find("--n") != std::string::npos);
    }
}

TEST_CASE("cli: whole numbers, reals and lists are strictly decimal", "[cli]") {
    tut::Cli cli("prog", "test");
    long long n = 7;
    double r = 0.5;
    std::vector<long long> list{1};
    cli.add_int("n", &n, "size", -100, 100);
    cli.add_real("r", &r, "a real", -1, 1);
    cli.add_int_list("list", &list, "a list", 0, 9);
    for (auto bad : std::vector<Args>{{"--n", " 42"}, {"--n", "\t42"}, {"--n", "+42"}, {"--n", "42 "}, {"--n", "-"},
                                      {"--n", "0x10"}, {"--n", "--5"}, {"--r", " 0.5"}, {"--r", "+0.5"},
                                      {"--r", "0x1p-3"}, {"--r", "0X.8"}, {"--r", "inf"}, {"--r", "nan"},
                                      {"--r", "-"}, {"--r", "."}, {"--r", "1e"}, {"--r", "1e+"}, {"--r", "0.5 "},
                                      {"--r", "1e400"}, {"--r", ""}, {"--list", "1,2,"}, {"--list", ",1"},
                                      {"--list", "1,,2"}, {"--list", ","}, {"--list", ""}, {"--list", "1, 2"},
                                      {"--list", "+1"}}) {
        INFO("argv: " << bad.words[1] << " '" << (bad.words.size() > 2 ? bad.words[2] : "") << "'");
        CHECK_THROWS_AS(cli.parse(bad.argc(), bad.argv()), tut::UsageError);
    }
    Args good{"--n", "-42", "--r", "-.5", "--list", "0,9,3"};
    REQUIRE(cli.parse(good.argc(), good.argv()));
    CHECK(n == -42);
    CHECK(r == -0.5);
    CHECK(list == std::vector<long long>{0, 9, 3});
    // Exponents, either case and sign; a subnormal is its value, not "out of range".
    CHECK(tut::parse_real("1e-6", 0, 1, "--r") == 1e-6);
    CHECK(tut::parse_real("2.5E+0", 0, 3, "--r") == 2.5);
    CHECK(tut::parse_real("5.", 0, 9, "--r") == 5.0);
    CHECK(tut::parse_real("5e-324", 0, 1, "--r") == std::numeric_limits<double>::denorm_min());
    CHECK(tut::parse_real("1e-310", 0, 1, "--r") == 1e-310);
    CHECK_THROWS_AS(tut::parse_real("5e-324", 1e-300, 1, "--tol"), tut::UsageError);  // below lo
    CHECK(tut::parse_integer("0", 0, 0, "--n") == 0);
    CHECK(tut::parse_integer("-9223372036854775808", LLONG_MIN, 0, "--n") == LLONG_MIN);
    CHECK_THROWS_AS(tut::parse_integer("9223372036854775808", 0, LLONG_MAX, "--n"), tut::UsageError);
    try {
        tut::parse_integer("+42", 0, 100, "--n");
        FAIL("+42 was accepted");
    } catch (const tut::UsageError& e) {
        CHECK(std::string(e.what()) == "--n: '+42' is not a whole number");
    }
    try {
        Args a{"--list", "1,2,"};
        cli.parse(a.argc(), a.argv());
        FAIL("1,2, was accepted");
    } catch (const tut::UsageError& e) {
        CHECK(std::string(e.what()).find("--list: '1,2,'") == 0);
    }
}

TEST_CASE("compare: tolerance, NaN, first and worst index", "[compare]") {
    std::vector<float> got{1.0f, 2.0f, 3.0f, 4.0f};
    std::vector<double> ref{1.0, 2.0, 3.0, 4.0};
    CHECK(tut::compare(got.data(), ref.data(), 4, 1e-6).ok());
    got[2] = 3.1f;
    got[3] = std::numeric_limits<float>::quiet_NaN();
    auto c = tut::compare(got.data(), ref.data(), 4, 1e-3);
    CHECK_FALSE(c.ok());
    CHECK(c.bad == 2);
    CHECK(c.nonfinite == 1);
    CHECK(c.first_bad == 2);
    CHECK(c.worst == 3);
    CHECK(c.describe().find("first bad index 2") != std::string::npos);
    // A per-element scale widens the allowance where rounding error is expected to be larger.
    std::vector<double> scale{1, 1, 1000, 1};
    got[3] = 4.0f;
    CHECK(tut::compare(got.data(), ref.data(), 4, 1e-3, scale.data()).ok());
}

TEST_CASE("random: the same seed gives the same data, different seeds differ, range holds", "[random]") {
    auto a = tut::random_vector<float>(1000, 5), b = tut::random_vector<float>(1000, 5),
         c = tut::random_vector<float>(1000, 6);
    CHECK(a == b);
    CHECK(a != c);
    for (float x : a) REQUIRE((x >= -1.0f && x <= 1.0f));
    // Fixed first value: the data must be identical on every machine and library.
    tut::SplitMix64 rng(0);
    CHECK(rng.next() == 0xE220A8397B1DCDAFull);
}

TEST_CASE("report: JSON escaping, numbers, records and the table", "[report]") {
    CHECK(tut::json_string("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
    CHECK(tut::json_number(NAN) == "null");
    CHECK(tut::json_number(1.5) == "1.5");
    tut::Record r;
    r.track = "sgemm";
    r.lesson = "01_naive";
    r.value = 50;
    r.library_value = 100;
    r.peak_value = 200;
    CHECK(r.ratio_to_library() == 0.5);
    CHECK(r.ratio_to_peak() == 0.25);
    const std::string j = r.json();
    for (auto key : {"\"track\": \"sgemm\"", "\"ratio_to_library\": 0.5", "\"ratio_to_peak\": 0.25", "\"extra\": {}"})
        CHECK(j.find(key) != std::string::npos);
    CHECK(tut::percent(0.123) == "12.3%");
    CHECK(tut::percent(NAN) == "-");
}

TEST_CASE("timer: median of odd and even counts", "[timer]") {
    CHECK(tut::median_of({3, 1, 2}) == 2);
    CHECK(tut::median_of({4, 1, 3, 2}) == 2.5);
    CHECK(tut::median_of({}) == 0);
}

TEST_CASE("device facts: FP32 lanes per SM by compute capability", "[device]") {
    CHECK(tut::fp32_lanes_per_sm(9, 0) == 128);  // H100/H200: 132 SMs x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s
    CHECK(tut::fp32_lanes_per_sm(8, 0) == 64);   // A100
    CHECK(tut::fp32_lanes_per_sm(8, 6) == 128);  // RTX 30xx
    CHECK(tut::fp32_lanes_per_sm(7, 0) == 64);   // V100
    CHECK(tut::fp32_lanes_per_sm(3, 5) == 0);    // unknown: no peak claimed
}

TEST_CASE("sgemm: the CPU reference and the tolerance", "[sgemm]") {
    // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50], row-major.
    std::vector<float> A{1, 2, 3, 4}, B{5, 6, 7, 8};
    std::vector<double> C, scale;
    tut::sgemm::reference_cpu(2, A, B, C, scale);
    CHECK(C == std::vector<double>{19, 22, 43, 50});
    std::vector<float> An{1, -2, 3, 4};
    tut::sgemm::reference_cpu(2, An, B, C, scale);
    CHECK(C[0] == 1 * 5 - 2 * 7);
    CHECK(scale[0] == 1 * 5 + 2 * 7);  // the error scale is sum |a b|, not |sum a b|
    const double fp32 = 0, tf32 = std::ldexp(1.0, -11);  // the inputs' unit roundoff
    // The FP32 allowance grows like sqrt(N); TF32 adds the input rounding.
    CHECK(tut::sgemm::tolerance(4096, fp32, false) == Approx(4 * 64 * std::ldexp(1.0, -24)));
    CHECK(tut::sgemm::tolerance(4096, fp32, true) == Approx(2 * 4 * 64 * std::ldexp(1.0, -24)));
    CHECK(tut::sgemm::tolerance(16, tf32, false) > std::ldexp(1.0, -10));
    // Sizes: in range, multiples, refusals.
    CHECK_NOTHROW(tut::sgemm::require_size(1));
    CHECK_NOTHROW(tut::sgemm::require_size(64, 32));
    CHECK_THROWS_AS(tut::sgemm::require_size(0), tut::Unsupported);
    CHECK_THROWS_AS(tut::sgemm::require_size(tut::sgemm::kMaxN + 1), tut::Unsupported);
    CHECK_THROWS_AS(tut::sgemm::require_size(65, 32), tut::Unsupported);
}

TEST_CASE("shared times file: later lines win, who and key must match whole", "[helpers]") {
    const std::string path = "shared_times_test.tsv";
    std::remove(path.c_str());
    REQUIRE(std::isnan(tut::read_shared_time(path, "eigen", "k").ms));
    tut::append_shared_time(path, "eigen", "k", 120.5, 455);
    tut::append_shared_time(path, "01_sample", "k", 60.0, 800);
    tut::append_shared_time(path, "eigen", "k", 100.25, 456);
    tut::append_shared_time(path, "eigen", "other", 1.0, 1);
    tut::append_shared_time(path, "cpu/simd", "8192 float", 31.5, 8);
    tut::append_shared_time(path, "cpu/simd", "8192 floatx", 99.0, 9.5);
    const tut::SharedTime e = tut::read_shared_time(path, "eigen", "k");
    REQUIRE(e.ms == Approx(100.25));
    REQUIRE(e.iterations == 456);
    REQUIRE(tut::read_shared_time(path, "01_sample", "k").iterations == 800);
    REQUIRE(std::isnan(tut::read_shared_time(path, "01_sample", "other").ms));
    REQUIRE(std::isnan(tut::read_shared_time(path, "eig", "k").ms));
    REQUIRE(tut::read_shared_time(path, "cpu/simd", "8192 float").ms == Approx(31.5));
    REQUIRE(tut::read_shared_time(path, "cpu/simd", "8192 floatx").iterations == Approx(9.5));
    REQUIRE(std::isnan(tut::read_shared_time(path, "cpu/simd", "8192").ms));
    REQUIRE(std::isnan(tut::read_shared_time("", "eigen", "k").ms));
    std::remove(path.c_str());
}

