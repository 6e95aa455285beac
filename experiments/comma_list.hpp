// The items of a comma-separated command-line value ("halfhalf,tf32tf32"), empty items dropped;
// shared by the experiment and benchmark programs.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace tcemu::experiments {

inline std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace tcemu::experiments
