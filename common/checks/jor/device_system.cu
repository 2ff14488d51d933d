// The JOR checks' own copy of the device generator (tut/jor_device.cuh), compiled once
// for every check program of the track. The checks are plain C++: they call
// tut::jor::generate_system(), which jor_gpu.hpp declares, and these explicit
// instantiations define it for both element types, whatever a lesson's .cu instantiates.
#include "tut/jor_device.cuh"

template void tut::jor::generate_system<float>(tut::jor::DeviceSystem<float>&, uint64_t, uint32_t);
template void tut::jor::generate_system<double>(tut::jor::DeviceSystem<double>&, uint64_t, uint32_t);
