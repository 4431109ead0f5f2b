#pragma once
// The GPU catalogue: sim/hardware/catalogue/<id>.json compiled into the library.
#include <optional>
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

// A number of the catalogue format by its key ("gemm_max_efficiency", "kernel_launch_us"), in the
// key's unit; nullopt for a key that is not a number of the format. set_gpu_number converts a value
// in the key's unit to SI and stores it; false for an unknown key.
std::optional<double> gpu_number(const GpuSpec& gpu, std::string_view key);
bool set_gpu_number(GpuSpec& gpu, std::string_view key, double value);

}  // namespace clustersim
