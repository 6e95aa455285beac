// What the GPU backend can see: the devices present and their compute capability. Plain C++
// header: callers never include a CUDA header.
#pragma once

#include <string>
#include <vector>

namespace tcemu::gpu {

struct DeviceInfo {
  int index;
  std::string name;
  int compute_major;
  int compute_minor;
  std::size_t global_memory_bytes;
  int multiprocessors;

  // The emulator's architecture preset for this device ("sm90"), or "" when it has none.
  std::string arch_preset() const;
};

// Every CUDA device present; empty (not an error) when the driver reports none or is missing.
// `why_none` receives the driver's reason when the list is empty.
std::vector<DeviceInfo> list_devices(std::string* why_none = nullptr);

// Device `index`; throws std::runtime_error "no CUDA device (REASON)" when there is none, or
// naming the index and how many devices are present.
DeviceInfo require_device(int index = 0);

}  // namespace tcemu::gpu
