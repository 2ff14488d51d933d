/// @file buffer.hpp
/// @brief A device array that frees itself, with poison and host copies.
///
/// `poison()` fills the buffer with 0xFF bytes: NaN for float and double, -1 for
/// integers. Outputs are poisoned before every checked run, so an element the
/// kernel never wrote cannot pass as a correct (or zero) result.
#pragma once

#include "check.hpp"

#include <vector>

namespace tut {

template <class T>
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t count) : count_(count) {
        if (count_) TUT_CUDA(cudaMalloc(&data_, bytes()));
    }
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
    ~DeviceBuffer() {
        if (data_) cudaFree(data_);
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept : data_(o.data_), count_(o.count_) {
        o.data_ = nullptr;
        o.count_ = 0;
    }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(count_, o.count_);
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* get() { return data_; }
    const T* get() const { return data_; }
    size_t size() const { return count_; }
    size_t bytes() const { return count_ * sizeof(T); }

    void upload(const std::vector<T>& host) {
        if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
        if (count_) TUT_CUDA(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
    }
    std::vector<T> download() const {
        std::vector<T> host(count_);
        if (count_) TUT_CUDA(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
        return host;
    }
    void poison() {
        if (count_) TUT_CUDA(cudaMemset(data_, 0xFF, bytes()));
    }

  private:
    T* data_ = nullptr;
    size_t count_ = 0;
};

}  // namespace tut
