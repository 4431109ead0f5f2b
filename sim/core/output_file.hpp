#pragma once
// Writing an output file (a report, a timeline, residuals, a profile) all or nothing: the text goes to
// a temporary file beside the target, which is renamed over it once completely written, so a
// failure (a full disk, a killed process) never leaves a half-written file where a reader expects
// a whole one.
#include <string>
#include <string_view>

namespace clustersim {

// Writes `text` to `path` atomically. Throws SpecError(path, "", "cannot write the <what>: ...") when
// the directory cannot take the temporary file or the rename fails; the target is then untouched.
void write_output_file(const std::string& path, std::string_view text, std::string_view what);

}  // namespace clustersim
