#include "sim/cli/command.hpp"

namespace clustersim::cli {

std::span<const Command> commands() {
  static constexpr Command kCommands[] = {
      {"simulate", "simulate one training step of a workload on a cluster",
       "usage: clustersim simulate --cluster C --workload W [--fidelity flow|analytical]\n"
       "                           [--algorithm A | --algorithm GROUP=A ...] [--network-profile P]\n"
       "                           [--json] [--out report.json] [--timeline trace.json [--timeline-ranks N]]\n"
       "                           [--set key.path=value ...] [--trace-host measured|none] [--exhaustive]\n"
       "                           [--train-tokens N [--checkpoint-interval-s S] [--runs R] [--seed S]]\n\n"
       "  --cluster C      a cluster spec file (JSON) or preset name (clustersim presets)\n"
       "  --workload W     a workload spec file (JSON) or preset name\n"
       "  --fidelity F     network model: flow (SimGrid max-min flows; default) or analytical\n"
       "                   (own event queue, bottleneck shares fixed at start: fast, for sweeps)\n"
       "  --algorithm A    collective algorithm for every group: auto (default: the fastest on an\n"
       "                   idle fabric, like NCCL's tuner), ring, tree, halving_doubling, direct,\n"
       "                   hierarchical, nvls, sharp; GROUP=A for one process group (dp=ring)\n"
       "  --network-profile P  link efficiencies and latencies: auto (default: the profile fitted\n"
       "                   on the cluster's GPU, else ideal), ideal, nccl-a100, nccl-h100 or a file\n"
       "  --json           print only the report JSON on stdout\n"
       "  --timeline F     write the step as a Chrome/Perfetto trace (ui.perfetto.dev): a track per\n"
       "                   rank class (pipeline stage) and stream, arrows from sends to receives\n"
       "  --timeline-ranks N  rank classes in the timeline, evenly spaced (default 64)\n"
       "  --trace-host H   a PyTorch trace's host: measured (no op starts before its rank's CPU\n"
       "                   launched it in the trace: late launches are replayed) or none (default)\n"
       "  --exhaustive     simulate every transfer: no one transfer per class of identical ones\n"
       "                   (docs/performance.md; the answer within 1e-9, slower at scale)\n"
       "  --out FILE       also write the report JSON to FILE\n"
       "  --set K=V        override a spec value before validation; K is cluster.<path> or\n"
       "                   workload.<path> (the prefix may be left out when the first key\n"
       "                   belongs to one spec only), e.g. --set nodes=64\n"
       "                   --set parallelism.dp=64 --set fabric.oversubscription=2\n"
       "  --train-tokens N time to train N tokens (15T, 2e12): a Monte Carlo of the whole run with\n"
       "                   the cluster's failures (reliability.*), checkpoints (storage.*) and\n"
       "                   restarts; the report's time_to_train section (docs/time_to_train.md)\n"
       "  --checkpoint-interval-s S  training seconds between checkpoints (default: Young/Daly)\n"
       "  --runs R         Monte Carlo runs (default 1000)\n"
       "  --seed S         the Monte Carlo's seed (default 1)\n",
       &run_simulate},
      {"compare", "one workload (or serving deployment) on several cluster designs: time, power, cost, Pareto front",
       "usage: clustersim compare --workload W --cluster A --cluster B ... [--tokens N]\n"
       "                          [--gpus N | --budget-usd X] [--fidelity flow|analytical] [--json]\n"
       "                          [--html report.html] [--jobs N]\n"
       "                          [--set key.path=value ...]\n"
       "       clustersim compare --serving S --cluster A --cluster B ... [--json] [--set key.path=value ...]\n\n"
       "  --cluster C      a cluster spec file or preset name; repeat for every design\n"
       "  --workload W     a workload spec file or preset name\n"
       "  --gpus N         size every design to N GPUs by its own rules (whole nodes and NVLink domains, a\n"
       "                   near-cubic torus, more spines or a third fat-tree tier when the switches are\n"
       "                   full; the changes go to stderr) and leave the workload's dp to the cluster; a\n"
       "                   design that cannot reach N is a row with the reason (exit 1)\n"
       "  --budget-usd X   size every design to the most GPUs its capital cost (GPU servers, NICs,\n"
       "                   switches, cables, optics) stays within X (e.g. 50M), in whole model replicas\n"
       "                   whose data-parallel size divides the step's micro-batches\n"
       "  --tokens N       length of the training run for time and cost to train (default 1e12, at most 1e18;\n"
       "                   suffixes K, M, B/G, T: 2T, 300B)\n"
       "  --fidelity F     network model: flow (default) or analytical\n"
       "  --jobs N         designs simulated at once, each in its own process (default: the cores);\n"
       "                   the output does not depend on it\n"
       "  --json           print the comparison as JSON (with every design's full report)\n"
       "  --html FILE      also write the purchase report: one self-contained HTML page (no script, no\n"
       "                   network) with the table, step time and its error bar, time and cost to train\n"
       "                   with the Pareto front, cost per hour, power, bottleneck links, assumptions\n"
       "  --set K=V        override a spec value of the workload or of every cluster\n\n"
       "  Columns: step time, tokens/s, MFU, memory fit, average facility power, energy per token,\n"
       "  capital cost, $ per million tokens, time and cost to train N tokens; '*' marks the designs\n"
       "  no other design beats on both time and cost (among those that fit in memory).\n"
       "  --serving S      a serving spec file or preset instead of --workload: per design the run of its\n"
       "                   traffic (TTFT p90, TBT p99, throughput, $ per hour and per million output tokens)\n"
       "                   and the highest rate meeting its SLO (serve --find-max-rate) with its cost per\n"
       "                   million output tokens; 'pareto' marks the designs no other beats on both that\n"
       "                   cost and the TTFT p90. A design the deployment cannot run on says why (exit 1).\n",
       &run_compare},
      {"collective", "simulated nccl-tests: one collective swept over sizes (size, time, algbw, busbw)",
       "usage: clustersim collective --cluster C [--op all_reduce] [--ranks 0-63] [--min-bytes 8]\n"
       "                             [--max-bytes 128M] [--step-factor 2] [--fidelity flow|analytical]\n"
       "                             [--algorithm auto] [--network-profile P] [--json] [--set k=v ...]\n\n"
       "  --op             all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce\n"
       "  --ranks          the communicator: 0-63, 0,8,16, 0-7,64-71 (default: every GPU)\n"
       "  --min-bytes/--max-bytes/--step-factor  the sizes, as nccl-tests -b -e -f (K, M, G suffixes)\n"
       "  busbw = algbw x 2(n-1)/n (all_reduce), (n-1)/n (all_gather, reduce_scatter, all_to_all),\n"
       "  1 (broadcast, reduce): nccl-tests' bus bandwidth, comparable to link speeds.\n",
       &run_collective},
      {"calibrate-network", "fit the network profile to nccl-tests tables; report held-out errors",
       "usage: clustersim calibrate-network [--datasets calibration/network/datasets.json]\n"
       "                                    [--data-dir calibration/data] [--out-dir sim/network/profiles]\n"
       "                                    [--min-bytes 1048576] [--profile P]\n"
       "       clustersim calibrate-network --check [--fidelity flow] [--profile P]\n\n"
       "  For each profile of the dataset file (one per GPU generation), fits NVLink efficiency and\n"
       "  per-step latency, the per-call latency, the NVLS efficiency and each scale-out technology's\n"
       "  efficiency and latency to the tables whose role is 'fit', then prints the bus-bandwidth error\n"
       "  of every table ('validate' tables were not used in the fit). --check evaluates the shipped\n"
       "  profiles instead. --profile P: that profile only (nccl-a100, nccl-h100).\n",
       &run_calibrate_network},
      {"calibrate",
       "fit the GPU kernel model to measurements; --report: its error on held-out data; --from-trace: a "
       "software-stack profile from PyTorch profiler traces",
       "usage: clustersim calibrate MEASUREMENTS... [--gpu ID] [--out profile.json] [--held-out FILE ...]\n"
       "                            [--fixed KEY,...] [--description TEXT] [--data DIR]\n"
       "       clustersim calibrate --report [--gpu ID] [--data DIR] [--json]\n\n"
       "  MEASUREMENTS     clustersim measurement JSON (calibration/microbench), Vidur mlp.csv, or the\n"
       "                   published microbench.json; FILE#ID..ID keeps the records with those ids,\n"
       "                   FILE#dtype=bf16,dtype=fp16 those of the dtypes (measurement JSON)\n"
       "  --gpu ID         the catalogue GPU (default: the one the measurements name)\n"
       "  --fixed KEY,...  parameters kept at the catalogue's values, not fitted (what the measurements\n"
       "                   cannot fix: gemm_memory_efficiency on a sweep without HBM-bound GEMMs)\n"
       "  --out FILE       write the calibration profile (default: print it)\n"
       "  --held-out FILE  measurements kept out of the fit: their error is printed and recorded\n"
       "  --data DIR       where relative measurement paths are looked up (default calibration/data)\n"
       "  --report         per-operator error of the compiled-in profiles (calibration/profiles) on\n"
       "                   their held-out measurements and on a second split (fit on tensor-parallel\n"
       "                   degree 1, test on 2, 4, 8)\n\n"
       "       clustersim calibrate --from-trace TRACE --workload SPEC [--from-trace TRACE --workload SPEC ...]\n"
       "                            --cluster CLUSTER [--step last|N] [--id ID] [--name TEXT]\n"
       "                            [--fidelity analytical] [--out profile.json] [--json]\n\n"
       "  --from-trace T   a PyTorch profiler (Kineto) trace of one training step of rank 0 (.json/.json.gz)\n"
       "  --workload SPEC  the workload the trace ran (model, micro-batch, parallelism, training.stack), one\n"
       "                   per trace, in order\n"
       "  --cluster C      the cluster the traces were recorded on\n"
       "  --step N         the ProfilerStep#N of every trace (default: the last one)\n"
       "  --out FILE       write the fitted stack profile; training.stack: \"FILE\" uses it (default: print it)\n"
       "  --json           print the fit (per kernel class, per trace) as JSON\n",
       &run_calibrate},
      {"validate",
       "replay published training runs (vTrain, Megatron, NeMo, llm-foundry) and serving throughputs and "
       "latencies (TensorRT-LLM, NIM); error, error bars",
       "usage: clustersim validate DATASET... [--fidelity flow|analytical] [--jobs N] [--limit N]\n"
       "                           [--json] [--out results.json] [--residuals residuals.json]\n"
       "       clustersim validate SERVING-DATASET... [--limit N] [--scheduler NAME] [--json] [--out results.json]\n"
       "       clustersim validate --coverage [--json]\n"
       "       clustersim validate --list\n\n"
       "  DATASET          a shipped dataset (vtrain-multi, megatron-h100-2024, llmfoundry-h100, ...:\n"
       "                   docs/validation.md lists them; an unknown name prints them), all, or a\n"
       "                   dataset description file (calibration/validation/README.md)\n"
       "  --fidelity F     network model: flow (default) or analytical\n"
       "  --jobs N         simulations at once, each in its own process (default 2)\n"
       "  --limit N        only the first N rows of each dataset (quick runs)\n"
       "  --json           print only the results JSON: per row measured, predicted, error; summary\n"
       "  --out FILE       also write the results JSON to FILE\n"
       "  --residuals FILE write the residual file of the error bars (calibration/validation/residuals.json:\n"
       "                   per simulated row its features and step-time error; serving rows name their\n"
       "                   metric)\n"
       "  SERVING-DATASET  a shipped serving dataset (serving-trtllm-inflight: TensorRT-LLM's published\n"
       "                   saturation throughputs; serving-nim-latency: NIM's TTFT, ITL and throughput at\n"
       "                   its operating points; serving-trtllm-mla: DeepSeek-R1 on 8 H200s; docs/serving.md),\n"
       "                   each row a run of the serving engine; part of all, named alone without\n"
       "                   training datasets\n"
       "  --scheduler NAME serving datasets: another batching policy than the dataset's (a comparison)\n"
       "  --list           the shipped datasets, one a line, with their kind (training or serving)\n"
       "  --coverage       how often the error bars of the shipped residuals contain the measured step\n"
       "                   time (serving: the metric), per dataset, leaving out the row (and, second, its\n"
       "                   whole dataset)\n"
       "  error = (predicted - measured) / measured; rows the simulator refuses are listed as\n"
       "  unsupported with the reason and left out of the statistics (MAPE, median, p90, max, bias).\n",
       &run_validate},
      {"serve", "inference serving: requests through replicas' schedulers; latency percentiles, throughput, cost",
       "usage: clustersim serve --cluster C --serving S [--json] [--out report.json]\n"
       "                        [--timeline trace.json [--timeline-requests N]] [--sample-interval S]\n"
       "                        [--find-max-rate] [--set key.path=value ...]\n"
       "       clustersim serve --search-layouts --cluster C [--cluster C2 ...] --serving S\n"
       "                        [--target-rate R] [--tp 1,2,4,8] [--pp 1] [--json] [--out F]\n\n"
       "  --cluster C      a cluster spec file or preset name: its GPU, links, power and prices\n"
       "  --serving S      a serving spec file or preset (llama3-8b-h100, llama3-70b-h100): the model,\n"
       "                   replicas and their layout, the scheduler, the SLO and the traffic (docs/specs.md)\n"
       "  --json           print only the report JSON on stdout\n"
       "  --out FILE       also write the report JSON to FILE\n"
       "  --timeline F     write the requests as a Chrome/Perfetto trace (ui.perfetto.dev): a process per\n"
       "                   replica, a slice per request with its time to first token inside\n"
       "  --timeline-requests N  the first N finished requests in the timeline (default 10000)\n"
       "  --sample-interval S    seconds between the report's samples of queue and KV cache (default 1)\n"
       "  --find-max-rate  the highest arrival rate (same seed and duration) with TTFT p90 <= slo.ttft_s and\n"
       "                   TBT p99 <= slo.tbt_s: doubling from traffic.rate_rps, then bisection to 1 %;\n"
       "                   prints every probe and the report at the maximum\n"
       "  --search-layouts for each --cluster design and each tp x pp layout, the fewest replicas meeting\n"
       "                   the SLO (and rejecting no request for KV cache) at --target-rate (default:\n"
       "                   traffic.rate_rps); their $ per hour, the cheapest and the cost-latency frontier\n"
       "  --tp, --pp       the layouts the search tries (default tp 1,2,4,8 and pp 1)\n"
       "  --set K=V        override a spec value; K is cluster.<path> or serving.<path> (the prefix may\n"
       "                   be left out but for name and description), e.g. --set traffic.rate_rps=50\n"
       "                   --set replica.replicas=16 --set scheduler.name=chunked_prefill\n",
       &run_serve},
      {"presets", "list the cluster presets, workload presets and GPU catalogue",
       "usage: clustersim presets [--json]\n", &run_presets},
      {"topology", "inspect a cluster: counts, bisection, diameter; export it (SimGrid, DOT, JSON)",
       "usage: clustersim topology info C [--json] [--set key.path=value ...]\n"
       "       clustersim topology export C --format simgrid|dot|json [--out FILE] [--set key.path=value ...]\n\n"
       "  C                a cluster spec file (JSON) or preset name (clustersim presets)\n"
       "  info             device, port, cable and transceiver counts, bisection bandwidth, diameter,\n"
       "                   hop counts between GPU pairs, oversubscription per tier (--json: as JSON)\n"
       "  export           simgrid: a SimGrid 3.32 platform file; dot: a GraphViz picture (dot -Tsvg);\n"
       "                   json: the spec, devices and links\n"
       "  --out FILE       write the export to FILE instead of stdout\n"
       "  --set K=V        override a cluster spec value before validation, e.g. --set nodes=64\n",
       &run_topology},
      {"schema", "a spec's keys: type, range, default, unit, meaning (JSON or docs/specs.md's table)",
       "usage: clustersim schema workload|cluster|serving [--markdown]\n\n"
       "  workload         the workload spec (workloads/workload_schema.cpp declares every key once)\n"
       "  cluster          the cluster spec's node, fabric, power and cost blocks (topologies/cluster_schema.cpp)\n"
       "  serving          the serving spec (sim/serving/serving_spec.cpp)\n"
       "  --markdown       docs/specs.md's table rows instead of JSON\n",
       &run_schema},
  };
  return kCommands;
}

}  // namespace clustersim::cli
