#pragma once
// A ReplayResult as bytes and back, every field and every double's bits (sim/core/wire_bytes.hpp):
// a replay run in a child process (replay_engine.cpp: a backend that cannot start over, flow) sends
// its result to the parent this way, and the parent's report is the one the child would have written.
// Every field of ReplayResult is listed in replay_result_wire.cpp: a field added to it goes there too.
#include <string>
#include <string_view>

#include "sim/replay/replay_engine.hpp"

namespace clustersim {

std::string encode_replay_result(const ReplayResult& result);
// The result encode_replay_result wrote; a SimulationError where the bytes end early or run on.
ReplayResult decode_replay_result(std::string_view bytes);

}  // namespace clustersim
