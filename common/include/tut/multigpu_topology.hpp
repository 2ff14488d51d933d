/// @file multigpu_topology.hpp
/// @brief How two GPUs of this machine are connected, and the line rate of that link: the
/// ceiling a peer copy is held against.
///
/// The CUDA runtime says whether two GPUs can be peers (cudaDeviceCanAccessPeer) and
/// ranks the path (cudaDevP2PAttrPerformanceRank), but not what the path is. NVML, the
/// driver's management library (what nvidia-smi shows), knows: which NVLink links of a
/// GPU are up, their version, whether they end at another GPU or at an NVSwitch, and the
/// PCIe generation and width. NVML is loaded at run time (dlopen of libnvidia-ml.so.1,
/// which comes with the driver), so a program links and starts on a machine without a
/// driver (CI) and reports "unknown" there.
///
/// NVML does not give the NVLink generation as a number but as an enum that also counts minor
/// versions (nvmlNvlinkVersion_t: 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0,
/// 7 = 5.0); an H100 reports 6. nvlink_generation_of() turns it into 1 to 5.
/// Line rates, per direction: NVLink 1 20 GB/s per link, NVLink 2 to 4 25 GB/s, NVLink 5
/// 50 GB/s (NVIDIA's data sheets: an H100 SXM has 18 NVLink 4 links, 450 GB/s each way);
/// PCIe per lane 0.25, 0.5, 0.985, 1.969, 3.938 GB/s for generations 1 to 5 (x16 gen5:
/// 63 GB/s). nvidia-smi nvlink -s prints 26.562 GB/s per NVLink 4 link: the signalling
/// rate before the link's protocol overhead; these files use the data rate.
#pragma once

#include "check.hpp"
#include "report.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <string>

namespace tut::mg {

/// What connects GPU a to GPU b, as far as this machine says.
struct Link {
    bool peer_access = false;    ///< both directions can be enabled (cudaDeviceCanAccessPeer)
    bool native_atomics = false; ///< cudaDevP2PAttrNativeAtomicSupported
    int performance_rank = -1;   ///< cudaDevP2PAttrPerformanceRank (lower is better)
    int nvlinks = 0;             ///< active NVLink links of GPU a
    int nvlink_generation = 0;   ///< 1 to 5; 0 if NVML did not say
    bool through_switch = false; ///< those links end at an NVSwitch (any GPU of the switch is reachable)
    int pcie_generation = 0, pcie_width = 0;
    std::string kind = "unknown";  ///< "NVLink", "PCIe" or "unknown"
    double line_rate_gbs = NAN;  ///< per direction, GB/s
    std::string text() const {
        if (kind == "NVLink")
            return fmt("NVLink %d x %d links%s, %.0f GB/s per direction", nvlink_generation, nvlinks,
                       through_switch ? " (NVSwitch)" : "", line_rate_gbs);
        if (kind == "PCIe")
            return fmt("PCIe gen %d x%d, %.1f GB/s per direction%s", pcie_generation, pcie_width, line_rate_gbs,
                       peer_access ? "" : ", no peer access");
        return "unknown link";
    }
};

/// The NVLink generation (1 to 5) of NVML's version enum, 0 if unknown. Some drivers report
/// 5.0 for a Hopper GPU's NVLink 4 links (hwloc and others correct it the same way):
/// NVLink 5 came with Blackwell (compute capability 10), so a GPU older than that has at most 4.
inline int nvlink_generation_of(unsigned nvml_version, int compute_capability_major) {
    int generation = 0;
    switch (nvml_version) {
        case 1: generation = 1; break;
        case 2:
        case 3: generation = 2; break;
        case 4:
        case 5: generation = 3; break;
        case 6: generation = 4; break;
        case 7: generation = 5; break;
        default: return 0;
    }
    if (generation == 5 && compute_capability_major > 0 && compute_capability_major < 10) generation = 4;
    return generation;
}

/// Per-direction data rate of one NVLink link of a generation (GB/s), NaN if unknown.
inline double nvlink_rate_gbs(int generation) {
    switch (generation) {
        case 1: return 20.0;
        case 2:
        case 3:
        case 4: return 25.0;
        case 5: return 50.0;
        default: return NAN;
    }
}
/// Per-direction data rate of one PCIe lane of a generation (GB/s), NaN if unknown.
inline double pcie_lane_gbs(int generation) {
    static const double rate[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
    return generation >= 1 && generation <= 6 ? rate[generation] : NAN;
}

namespace detail {
/// The few NVML functions used here, looked up at run time. NVML's handles are opaque
/// pointers and its enums ints, which is all these signatures need.
struct Nvml {
    using Device = void*;
    int (*init)() = nullptr;
    int (*shutdown)() = nullptr;
    int (*by_bus_id)(const char*, Device*) = nullptr;
    int (*link_state)(Device, unsigned, int*) = nullptr;
    int (*link_version)(Device, unsigned, unsigned*) = nullptr;
    int (*remote_type)(Device, unsigned, int*) = nullptr;
    int (*pcie_generation)(Device, unsigned*) = nullptr;
    int (*pcie_width)(Device, unsigned*) = nullptr;
    void* library = nullptr;

    Nvml() {
        library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!library) return;
        init = reinterpret_cast<int (*)()>(dlsym(library, "nvmlInit_v2"));
        shutdown = reinterpret_cast<int (*)()>(dlsym(library, "nvmlShutdown"));
        by_bus_id = reinterpret_cast<int (*)(const char*, Device*)>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
        link_state = reinterpret_cast<int (*)(Device, unsigned, int*)>(dlsym(library, "nvmlDeviceGetNvLinkState"));
        link_version = reinterpret_cast<int (*)(Device, unsigned, unsigned*)>(dlsym(library, "nvmlDeviceGetNvLinkVersion"));
        remote_type =
            reinterpret_cast<int (*)(Device, unsigned, int*)>(dlsym(library, "nvmlDeviceGetNvLinkRemoteDeviceType"));
        pcie_generation =
            reinterpret_cast<int (*)(Device, unsigned*)>(dlsym(library, "nvmlDeviceGetMaxPcieLinkGeneration"));
        pcie_width = reinterpret_cast<int (*)(Device, unsigned*)>(dlsym(library, "nvmlDeviceGetMaxPcieLinkWidth"));
        if (!init || !by_bus_id || init() != 0) {
            dlclose(library);
            library = nullptr;
        }
    }
    ~Nvml() {
        if (library) {
            if (shutdown) shutdown();
            dlclose(library);
        }
    }
    bool ok() const { return library != nullptr; }
    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;
};
}  // namespace detail

/// The link from GPU a to GPU b (device numbers of this process).
inline Link link_between(int a, int b) {
    Link link;
    int ab = 0, ba = 0, value = 0;
    if (cudaDeviceCanAccessPeer(&ab, a, b) == cudaSuccess && cudaDeviceCanAccessPeer(&ba, b, a) == cudaSuccess)
        link.peer_access = ab && ba;
    if (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrPerformanceRank, a, b) == cudaSuccess)
        link.performance_rank = value;
    if (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, a, b) == cudaSuccess)
        link.native_atomics = value != 0;
    cudaGetLastError();

    detail::Nvml nvml;
    char bus_id[32] = {0};
    detail::Nvml::Device device = nullptr;
    if (!nvml.ok() || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, a) != cudaSuccess ||
        nvml.by_bus_id(bus_id, &device) != 0) {
        cudaGetLastError();
        return link;
    }
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, a) != cudaSuccess) major = 0;
    cudaGetLastError();
    if (nvml.link_state) {
        for (unsigned l = 0; l < 32; ++l) {
            int active = 0;
            if (nvml.link_state(device, l, &active) != 0) continue;
            if (!active) continue;
            ++link.nvlinks;
            unsigned version = 0;
            if (nvml.link_version && nvml.link_version(device, l, &version) == 0)
                link.nvlink_generation = nvlink_generation_of(version, major);
            int type = -1;
            if (nvml.remote_type && nvml.remote_type(device, l, &type) == 0 && type == 2) link.through_switch = true;
        }
    }
    unsigned generation = 0, width = 0;
    if (nvml.pcie_generation && nvml.pcie_width && nvml.pcie_generation(device, &generation) == 0 &&
        nvml.pcie_width(device, &width) == 0) {
        link.pcie_generation = static_cast<int>(generation);
        link.pcie_width = static_cast<int>(width);
    }
    if (link.nvlinks > 0 && link.peer_access) {
        link.kind = "NVLink";
        link.line_rate_gbs = link.nvlinks * nvlink_rate_gbs(link.nvlink_generation);
    } else if (link.pcie_generation > 0) {
        link.kind = "PCIe";
        link.line_rate_gbs = link.pcie_width * pcie_lane_gbs(link.pcie_generation);
    }
    return link;
}

}  // namespace tut::mg
