// Checks for bandwidth/01_transfers: pinned allocation and exact transfers in every direction.
#include "bandwidth_checks.hpp"

using namespace bandwidth_checks;

TEST_CASE("bandwidth/01_transfers: allocate_pinned returns page-locked host memory", "[exercise]") {
    for (size_t bytes : {size_t(1), size_t(4097), size_t(1) << 20, size_t(64) << 20}) {
        PinnedBuffer buffer(bytes);
        INFO("allocate_pinned(" << bytes << "): cudaPointerGetAttributes must report cudaMemoryTypeHost, "
                                   "i.e. memory from cudaMallocHost (or cudaHostAlloc / cudaHostRegister)");
        INFO(tut_checks::exercise_hint());
        REQUIRE(buffer.get() != nullptr);
        REQUIRE(is_pinned(buffer.get()));
        buffer.get()[0] = 1;  // usable from the host
        buffer.get()[bytes - 1] = 2;
    }
}

// free_pinned must give the page-locked memory back: afterwards the driver no longer knows
// the address as page-locked (memory left locked, or a registration left behind when the
// pages went back to malloc, stays so). Sizes of a megabyte and more: whole allocations of
// their own, whatever allocator the driver uses for small ones.
TEST_CASE("bandwidth/01_transfers: free_pinned releases the page-locked memory", "[exercise]") {
    for (size_t bytes : {size_t(1) << 20, size_t(64) << 20}) {
        void* p = lesson::allocate_pinned(bytes);
        INFO("allocate_pinned(" << bytes << ") then free_pinned: afterwards cudaPointerGetAttributes must no longer "
                                   "report the address as page-locked host memory (release it the way it was "
                                   "obtained: cudaFreeHost, or cudaHostUnregister before std::free)");
        INFO(tut_checks::exercise_hint());
        REQUIRE(p != nullptr);
        REQUIRE(is_pinned(p));
        lesson::free_pinned(p);
        REQUIRE_FALSE(is_pinned(p));
    }
}

TEST_CASE("bandwidth/01_transfers: transfers are exact in every direction, pageable and pinned", "[baseline]") {
    for (size_t bytes : {size_t(1), size_t(3), size_t(4096), size_t(65537), (size_t(16) << 20) + 3}) {
        INFO(bytes << " bytes");
        std::vector<unsigned char> pageable_src(bytes), pageable_dst(bytes, 0);
        tut::SplitMix64 rng(bytes);
        for (auto& b : pageable_src) b = static_cast<unsigned char>(rng.next());
        PinnedBuffer pinned_src(bytes), pinned_dst(bytes);
        std::memcpy(pinned_src.get(), pageable_src.data(), bytes);
        std::memset(pinned_dst.get(), 0, bytes);
        tut::DeviceBuffer<unsigned char> a(bytes), b(bytes);
        b.poison();
        lesson::transfer(Direction::HostToDevice, a.get(), pageable_src.data(), bytes);
        lesson::transfer(Direction::DeviceToDevice, b.get(), a.get(), bytes);
        lesson::transfer(Direction::DeviceToHost, pinned_dst.get(), b.get(), bytes);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        REQUIRE(std::memcmp(pinned_dst.get(), pageable_src.data(), bytes) == 0);
        a.poison();
        lesson::transfer(Direction::HostToDevice, a.get(), pinned_src.get(), bytes);
        lesson::transfer(Direction::DeviceToHost, pageable_dst.data(), a.get(), bytes);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        REQUIRE(std::memcmp(pageable_dst.data(), pageable_src.data(), bytes) == 0);
    }
}

TEST_CASE("bandwidth/01_transfers: zero bytes allocate nothing; freeing nothing is a no-op", "[baseline]") {
    REQUIRE(lesson::allocate_pinned(0) == nullptr);
    REQUIRE_NOTHROW(lesson::free_pinned(nullptr));
}
