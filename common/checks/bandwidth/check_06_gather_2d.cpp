// Checks for bandwidth/06_gather_2d: exact gathers against src(:, indices) on the CPU,
// float4 only where every column is 16-byte aligned.
#include "bandwidth_checks.hpp"

using namespace bandwidth_checks;

TEST_CASE("bandwidth/06_gather_2d: small shapes, 0, 1 and many indices, repeated and out of order", "[exercise]") {
    check_small_gathers();
}

TEST_CASE("bandwidth/06_gather_2d: the classic size and many indices", "[exercise]") { check_many_indices(); }

TEST_CASE("bandwidth/06_gather_2d: float4 only when rows % 4 == 0 and both pointers are 16-byte aligned",
          "[exercise]") {
    const std::vector<int> indices = make_indices(300, 500, IndexOrder::Random, 31);
    struct Case {
        int rows;
        size_t src_offset, dst_offset;
        const char* path;
    };
    for (const Case& c : {Case{1000, 0, 0, "float4"}, Case{1000, 1, 0, "float: pointer not 16-byte aligned"},
                          Case{1000, 0, 2, "float: pointer not 16-byte aligned"},
                          Case{1000, 3, 3, "float: pointer not 16-byte aligned"},
                          Case{1000, 4, 4, "float4"}, Case{1002, 0, 0, "float: rows % 4 != 0"},
                          Case{4, 0, 0, "float4"}, Case{8, 0, 0, "float4"}}) {
        for (const auto& v : lesson::gather_variants()) {
            check_gather(v, c.rows, 500, indices, "alignment case", c.src_offset, c.dst_offset);
            if (v.name.find("float4") == std::string::npos) continue;
            Matrix& m = matrix(c.rows, 500, c.src_offset);
            tut::DeviceBuffer<float> dst(size_t(c.rows) * indices.size() + c.dst_offset);
            INFO("variant '" << v.name << "', rows " << c.rows << ", offsets " << c.src_offset << ", " << c.dst_offset);
            CHECK(v.path(make_gather_input(c.rows, 500, m.src(), indices, nullptr), dst.get() + c.dst_offset) ==
                  c.path);
        }
    }
}

TEST_CASE("bandwidth/06_gather_2d: huge columns and the largest size, 2^30 floats", "[exercise]") {
    check_largest();
}

TEST_CASE("bandwidth/06_gather_2d: refuses an empty matrix, a bad index, too large a size", "[baseline]") {
    check_all_refusals();
}

TEST_CASE("bandwidth/06_gather_2d: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}
