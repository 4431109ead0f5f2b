#pragma once
// The GPU catalogue: sim/hardware/catalogue/<id>.json compiled into the library.
#include <string>
#include <string_view>
#include <vector>

#include "sim/hardware/gpu_spec.hpp"

namespace clustersim {

std::vector<std::string> gpu_catalogue_ids();
// The catalogue entry `id`. Throws SpecError(file, json_path, "unknown GPU ...; known: ...") naming
// the spec that asked for it.
GpuSpec find_gpu(std::string_view id, const std::string& file, const std::string& json_path);
// An inline GPU object of a cluster spec (same fields as a catalogue file; may start from a catalogue
// entry with "base": "<id>"). Throws SpecError with the paths of bad fields.
GpuSpec parse_gpu_spec(std::string_view json_text, const std::string& file, const std::string& json_path);

}  // namespace clustersim
