#pragma once
// A validation dataset: published measurements of training runs, each mapped to the cluster and
// workload specs that describe it, so that clustersim can replay the run and compare.
//
// A dataset is a description file (JSON, calibration/validation/datasets/*.json, compiled in and used
// by name; or any file given by path) that names its data file and says, as data, everything the
// mapping assumes:
//   name, title, source, license   where the figures come from
//   stack                         the training software that was measured (megatron-deepspeed, nemo,
//                                 llm-foundry, ...): named in the residuals of the error bars
//   data {path, format}           the measurements (path relative to the description; row_source.hpp)
//   select [ids]                  optional: only these records
//   measured {metric, field, flops}  the measured figure (validation_metric.hpp) and where it is
//   peak_memory {field, unit, counts}  optional: the row's measured peak memory per GPU, its unit and
//                                 which bytes it counts (validation_metric.hpp), compared as well
//   gpus                          the field holding the GPU count
//   fields {"model.layers": F}    workload spec keys (dotted) taken from the row's fields
//   row_fields {id: {key: value}}  per-record additions (figures the record lacks, with their source)
//   workload {...}                the template every row's workload starts from (workload spec keys)
//   derived {ffn_hidden_per_hidden, vocab_multiple_per_tp, when_tp_above_1 {key: value}}
//                                 rules applied after the fields (Megatron's 4h MLP, its vocabulary
//                                 padding to a multiple of 128 x tp, settings that only exist with TP)
//   cluster {spec, gpus_per_node, overrides {key: value}}
//                                 a cluster spec (file relative to the description, or a preset); each
//                                 row gets nodes = GPUs / gpus_per_node, or one node of its GPUs when it
//                                 has fewer
//   assumptions [text]            the choices the source does not state, printed by the command
// A row that cannot be turned into valid specs is kept as unsupported, with the reason; a row whose
// fields are malformed (not numbers, missing, non-positive measurement) is a SpecError naming the data
// file and the cell.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/validation/validation_metric.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

struct ValidationCase {
  std::string id;     // record id ("0818", "e2e-0012")
  std::string label;  // the configuration in one line: "L30 h3072 a32 s2048 | gb512 mb8 | tp1 pp1 dp64"
  int gpus = 0;
  double measured = 0.0;             // in the dataset's metric
  double flops_per_step = 0.0;       // by the dataset's flops formula (0 when it has none)
  double measured_peak_bytes = 0.0;  // the measured peak memory per GPU; 0: the row has none
  std::optional<ClusterSpec> cluster;
  std::optional<WorkloadSpec> workload;
  std::string unsupported;  // non-empty: why the row has no valid specs (then cluster/workload may be empty)
};

struct ValidationDataset {
  std::string name;
  std::string title;
  std::string source;
  std::string license;
  std::string stack;      // the measured training software ("" when the description does not say)
  std::string file;       // the description file (a source-tree path when compiled in)
  std::string data_file;  // the data file it names
  const ValidationMetric* metric = nullptr;
  const FlopsFormula* flops = nullptr;           // nullptr: the metric needs none
  const PeakMemoryCount* peak_memory = nullptr;  // nullptr: no peak memory measured
  const MemoryUnit* peak_memory_unit = nullptr;
  std::string cluster;               // the cluster spec it starts from, and how nodes are set
  std::string workload_template;     // compact JSON
  std::vector<std::string> mapping;  // the field mapping and derived rules, one line each
  std::vector<std::string> assumptions;
  std::size_t total_rows = 0;  // rows in the dataset (before --limit)
  std::vector<ValidationCase> cases;
};

// The compiled-in datasets, by name (sorted).
std::vector<std::string> validation_dataset_names();
// The dataset called `name_or_path` (a compiled-in name, or a description file path). `limit` > 0
// maps only the first `limit` rows. Throws SpecError for a bad description or data file.
ValidationDataset load_validation_dataset(std::string_view name_or_path, std::size_t limit = 0);

}  // namespace clustersim
