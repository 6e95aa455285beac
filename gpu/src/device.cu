#include <cuda_runtime.h>

#include <stdexcept>

#include <tcemu/gpu/device.hpp>

namespace tcemu::gpu {

std::string DeviceInfo::arch_preset() const {
  const int cc = compute_major * 10 + compute_minor;
  if (cc == 70 || cc == 72) return "sm70";
  if (cc == 75) return "sm75";
  if (cc == 80 || cc == 86 || cc == 87) return "sm80";
  if (cc == 89) return "sm89";
  if (cc == 90) return "sm90";
  if (cc == 100) return "sm100";
  if (cc == 120) return "sm120";
  return "";
}

std::vector<DeviceInfo> list_devices(std::string* why_none) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    if (why_none) {
      *why_none = status != cudaSuccess ? std::string(cudaGetErrorString(status))
                                        : std::string("the driver reports no CUDA device");
    }
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return {};
  }
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    devices.push_back(
        {i, prop.name, prop.major, prop.minor, prop.totalGlobalMem, prop.multiProcessorCount});
  }
  return devices;
}

DeviceInfo require_device(int index) {
  std::string why;
  const auto devices = list_devices(&why);
  if (devices.empty()) throw std::runtime_error("no CUDA device (" + why + ")");
  if (index < 0 || index >= static_cast<int>(devices.size())) {
    throw std::runtime_error("no CUDA device " + std::to_string(index) + " (" +
                             std::to_string(devices.size()) + " present)");
  }
  return devices[static_cast<std::size_t>(index)];
}

}  // namespace tcemu::gpu
