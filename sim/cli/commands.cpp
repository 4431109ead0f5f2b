#include "sim/cli/command.hpp"

namespace clustersim::cli {

std::span<const Command> commands() {
  static constexpr Command kCommands[] = {
      {"simulate", "simulate one training step of a workload on a cluster",
       "usage: clustersim simulate --cluster C --workload W [--fidelity flow] [--algorithm ring]\n"
       "                           [--json] [--out report.json] [--set key.path=value ...]\n\n"
       "  --cluster C      a cluster spec file (JSON) or preset name (clustersim presets)\n"
       "  --workload W     a workload spec file (JSON) or preset name\n"
       "  --fidelity F     network model: flow (SimGrid max-min flows; default)\n"
       "  --algorithm A    collective algorithm: ring (default)\n"
       "  --json           print only the report JSON on stdout\n"
       "  --out FILE       also write the report JSON to FILE\n"
       "  --set K=V        override a spec value before validation; K is cluster.<path> or\n"
       "                   workload.<path> (the prefix may be left out when the first key\n"
       "                   belongs to one spec only), e.g. --set nodes=64\n"
       "                   --set parallelism.dp=64 --set fabric.oversubscription=2\n",
       &run_simulate},
      {"presets", "list the cluster presets, workload presets and GPU catalogue",
       "usage: clustersim presets [--json]\n", &run_presets},
  };
  return kCommands;
}

}  // namespace clustersim::cli
