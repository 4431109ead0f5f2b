#pragma once
// Writing an output file (a report, a timeline, residuals, a profile) all or nothing: the text goes to
// a temporary file beside the target (mkstemp: a name no one can guess or race), every write and the
// close are checked, the data is fsync'ed, then the temporary is renamed over the target. A failure
// (a full disk, a file-size limit, a killed process) never leaves a half-written file where a reader
// expects a whole one: the previous file stays as it was.
//
// Before any work, check_output_paths refuses outputs that cannot be written (no such directory, not
// writable, a directory) and outputs that are one of the inputs or each other, so that a simulation
// is not run only to lose its report, and `--out spec.json` cannot destroy the spec.
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

// Writes `text` to `path` atomically. Throws SpecError(path, "", "cannot write the <what>: <OS reason>")
// when the directory cannot take the temporary file, a write, the fsync, the close or the rename
// fails; the target is then untouched and the temporary removed. A target that exists and is not a
// regular file (/dev/null, /dev/full, a pipe) is written in place, each write checked.
void write_output_file(const std::string& path, std::string_view text, std::string_view what);

struct OutputPath {
  std::string path;
  std::string what;  // "report file", "timeline file": named in the error
};

// Throws SpecError(path, "", "cannot write the <what>: ...") for an output whose directory is missing
// or not writable, an output that is a directory, an output that is the same file as one of `inputs`
// (paths that do not exist are skipped) or as another output.
void check_output_paths(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs);

}  // namespace clustersim
