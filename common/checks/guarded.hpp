/// @file guarded.hpp
/// @brief Output buffers with guard zones, for every track's checks.
///
/// A kernel that writes past the end of its output (an edge tile stored whole when
/// N % tile != 0, a last block that overhangs) or before its start can still leave the
/// output itself right. So each checked output sits between two guard zones, poisoned
/// with the same bytes as the output; after the run the zones must still hold exactly
/// those bytes, and a check that finds one changed names the offset of the first
/// changed element relative to the output's start (negative: before it).
#pragma once

#include "tut/buffer.hpp"
#include "tut/check.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace tut_checks {

template <class T>
class GuardedBuffer {
  public:
    /// `count` elements of output with `guard` elements of guard zone on each side.
    GuardedBuffer(size_t count, size_t guard) : count_(count), guard_(guard), whole_(count + 2 * guard) {
        poison();
    }

    T* get() { return whole_.get() + guard_; }
    const T* get() const { return whole_.get() + guard_; }
    size_t size() const { return count_; }
    size_t guard() const { return guard_; }

    /// Fills the output and both guard zones with 0xFF bytes (NaN for floating types,
    /// -1 for integers), as tut::DeviceBuffer::poison() does.
    void poison() { whole_.poison(); }

    /// The output (without the guard zones), copied to the host.
    std::vector<T> download() const {
        std::vector<T> host(count_);
        if (count_) TUT_CUDA(cudaMemcpy(host.data(), get(), count_ * sizeof(T), cudaMemcpyDeviceToHost));
        return host;
    }

    /// Empty when both guard zones still hold the poison; otherwise where the first
    /// changed element is, e.g. "a write past the end of the output: offset 4099 (the
    /// output has 4096 elements)". Offsets count elements from the output's first.
    std::string damage() const {
        std::vector<unsigned char> zone(guard_ * sizeof(T));
        for (int side = 0; side < 2; ++side) {
            if (guard_ == 0) break;
            const T* start = side == 0 ? whole_.get() : whole_.get() + guard_ + count_;
            TUT_CUDA(cudaMemcpy(zone.data(), start, zone.size(), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < guard_; ++i) {
                bool changed = false;
                for (size_t b = 0; b < sizeof(T); ++b) changed = changed || zone[i * sizeof(T) + b] != 0xFF;
                if (!changed) continue;
                // The offset of the element relative to the output's first element.
                const long long offset = side == 0 ? static_cast<long long>(i) - static_cast<long long>(guard_)
                                                   : static_cast<long long>(count_ + i);
                return side == 0 ? "a write before the start of the output: offset " + std::to_string(offset)
                                 : "a write past the end of the output: offset " + std::to_string(offset) +
                                       " (the output has " + std::to_string(count_) + " elements)";
            }
        }
        return {};
    }

  private:
    size_t count_, guard_;
    tut::DeviceBuffer<T> whole_;
};

}  // namespace tut_checks
