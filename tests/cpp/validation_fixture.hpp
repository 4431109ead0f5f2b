#pragma once
// A tiny validation dataset for the tests of `clustersim validate` (sim and CLI): a CSV with a header
// and a description mapping its columns to a GPT workload on the dgx-h100 preset.
#include <string>

namespace clustersim::testing {

inline constexpr const char* kTinyDatasetHeader = "gpus,layers,hidden,heads,batch,tp,dp,time (ms)\n";

// The description of a CSV at `csv_path` with kTinyDatasetHeader; `extra` is appended to its keys
// (", \"row_fields\": {...}").
inline std::string tiny_dataset_description(const std::string& csv_path, const std::string& extra = "") {
  return R"json({"name": "tiny", "source": "a test", "data": {"path": ")json" + csv_path +
         R"json(", "format": "csv"},
    "measured": {"metric": "iteration_time_ms", "field": "time (ms)"}, "gpus": "gpus",
    "fields": {"model.layers": "layers", "model.hidden": "hidden", "model.heads": "heads",
               "training.global_batch": "batch", "parallelism.tp": "tp", "parallelism.dp": "dp"},
    "workload": {"model": {"seq_len": 1024, "vocab": 32000}, "training": {"micro_batch": 1, "precision": "bf16"},
                 "parallelism": {"pp": 1}},
    "derived": {"ffn_hidden_per_hidden": 4},
    "cluster": {"spec": "dgx-h100", "gpus_per_node": 8})json" +
         extra + "}";
}

}  // namespace clustersim::testing
