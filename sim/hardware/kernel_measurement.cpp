// Reading measured kernel times. Each format is a row of kFormats (detected from the file's content),
// and turns its records into kernel descriptions the kernel model times (kernel_model.cpp):
//
// clustersim-measurements/1 (calibration/README.md): {"format", "benchmark", "device": {"name", ...},
//   "measurements": [{"kernel", "dtype", "m", "n", "k", "batch", "rows", "role", "flops", "bytes",
//   "time_s", "repetitions", "id", "timing"}]}. kernel is a KernelClass name, "launch" (an empty kernel: its
//   time is the fixed cost) or "collective" (for the network fit, skipped here). A GEMM's flops
//   default to 2 m n k batch and its bytes to (m k + k n + m n) batch x element size.
//
// Vidur mlp.csv (microsoft/vidur, vidur/profiling/mlp/mlp_impl.py: one Llama-style layer in fp16, run
//   by Sarathi's kernels, timed per operator with CUDA events; columns time_stats.<op>.median in ms).
//   T = num_tokens, t = num_tensor_parallel_workers, h = n_embd, a = n_head, g = n_kv_head,
//   d = h / a, f = n_expanded_embd, gated = use_gated_mlp (2 up matrices), e = 2 bytes:
//     attn_pre_proj   gemm m T, n (a + 2g) d / t, k h          (QKV, column-parallel)
//     attn_post_proj  gemm m T, n h, k a d / t                 (output projection, row-parallel)
//     mlp_up_proj     gemm m T, n (gated ? 2 : 1) f / t, k h
//     mlp_down_proj   gemm m T, n h, k f / t
//     mlp_act         elementwise "activation", T rows, (gated ? 3 : 2) T f / t e bytes (SiluAndMul)
//     input_layernorm, post_attention_layernorm   normalization, T rows, 2 T h e bytes (RMSNorm)
//     attn_rope       elementwise "rope", T rows, 2 T (a + g) d / t e bytes (q and k in place)
//     add             elementwise "residual", 3 T h e bytes (torch add: no rows)
//     emb             embedding, 2 T h e + 8 T bytes (gather of T rows of int64 ids)
//   The GPU is the path's directory name (a100 -> a100-sxm4-80gb, h100 -> h100-sxm5-80gb), the group
//   the model's directory name ("Llama-2-7b-hf").
//
// published microbench.json (calibration/data/published): an array of records with "id", "kind", "gpu":
//   gemm, gemm_max_achievable, grouped_gemm   M, N, K (groups: batch), dtype, tflops: time = flops /
//       tflops; fp8 GEMMs read 1-byte operands, nvfp4 ones half-byte operands ("nvfp4" in the dtype), and
//       both write bf16 (2 bytes); others use the dtype's size.
//       Timed per call, except the libraries of kKernelDurationLibraries (kernel durations).
//   attention_kernel "Flash Attention 2.0"    head dimension, batch and sequence length from "notes";
//       heads = 2048 / head dimension (flash-attention's benchmark: model dimension 2048); forward,
//       non-causal: flops 4 b s^2 heads d, fp16.
//   hbm_bandwidth (STREAM)   elementwise "stream", a nominal 1 GiB moved at the measured bandwidth.
//   Records of other kinds, or of a GPU the catalogue does not have, are skipped.
#include "sim/hardware/kernel_measurement.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <span>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/core/csv_table.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/spec_document.hpp"
#include "sim/core/spec_source.hpp"

namespace clustersim {
namespace {

constexpr double kMsToS = 1e-3;
constexpr double kHalfBytes = 2.0;
constexpr double kTokenIdBytes = 8.0;                 // int64 token ids (PyTorch's default)
constexpr double kFlashAttentionModelDim = 2048.0;    // flash-attention's benchmark: heads * head_dim
constexpr double kStreamNominalBytes = 1073741824.0;  // STREAM records give a bandwidth, not a size
constexpr double kAttentionFlopsPerScore = 4.0;       // QK^T and PV: 2 d flops each per score

// Device names to catalogue ids: the first row whose every fragment appears in the name wins; an
// empty id means "not in the catalogue".
struct DeviceName {
  std::vector<std::string_view> fragments;
  std::string_view id;
};
const DeviceName kDeviceNames[] = {
    {{"GH200"}, ""},
    {{"GB200"}, "gb200"},
    {{"GB300"}, "gb300"},
    {{"B300"}, "b300"},
    {{"MI300X"}, "mi300x"},
    {{"MI325X"}, "mi325x"},
    {{"MI355X"}, "mi355x"},
    {{"A100", "PCIe"}, ""},
    {{"A100", "40GB"}, "a100-sxm4-40gb"},
    {{"A100"}, "a100-sxm4-80gb"},
    {{"H100", "PCIe"}, "h100-pcie-80gb"},
    {{"H100"}, "h100-sxm5-80gb"},
    {{"H800"}, "h100-sxm5-80gb"},  // H800 SXM: the H100 SXM's compute and HBM, NVLink cut to 400 GB/s
    {{"H200"}, "h200-sxm-141gb"},
    {{"B200"}, "b200"},
    {{"L40"}, ""},
    {{"L4"}, "l4"},
    {{"V100"}, "v100-sxm2-32gb"},
    {{"a100"}, "a100-sxm4-80gb"},  // Vidur's directory names
    {{"h100"}, "h100-sxm5-80gb"},
};

std::optional<Precision> precision_named(std::string_view name) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8}) {
    if (name == to_string(p)) return p;
  }
  return std::nullopt;
}

std::optional<KernelClass> kernel_named(std::string_view name) {
  for (KernelClass k : {KernelClass::gemm, KernelClass::attention, KernelClass::elementwise, KernelClass::normalization,
                        KernelClass::optimizer, KernelClass::embedding, KernelClass::loss}) {
    if (name == to_string(k)) return k;
  }
  return std::nullopt;
}

// --- record selection ("#micro-0001..micro-0008,micro-0015", "#dtype=bf16,dtype=fp16") -----------
// An item is an id, a range of ids (string order) or "dtype=X": the records of that dtype (what a
// sweep of the project's own microbenchmarks, whose records carry no ids, is split by).

class Selector {
 public:
  Selector() = default;
  Selector(std::string_view text, const std::string& file) {
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      const std::string_view item = text.substr(start, comma - start);
      if (item.empty()) throw SpecError(file, "", "empty record id in the selector '#" + std::string(text) + "'");
      const std::size_t dots = item.find("..");
      if (item.starts_with(kDtypeItem)) {
        const std::string dtype(item.substr(kDtypeItem.size()));
        if (!precision_named(dtype))
          throw SpecError(file, "", "expected fp32, tf32, fp16, bf16 or fp8 after 'dtype=' in the selector '#" +
                                        std::string(text) + "', got \"" + dtype + "\"");
        dtypes_.push_back(dtype);
      } else if (dots == std::string_view::npos)
        ranges_.emplace_back(std::string(item), std::string(item));
      else
        ranges_.emplace_back(std::string(item.substr(0, dots)), std::string(item.substr(dots + 2)));
      start = comma + 1;
    }
  }
  bool active() const { return !ranges_.empty() || !dtypes_.empty(); }
  bool selects(const std::string& id, const std::string& dtype = "") const {
    if (!active()) return true;
    return std::any_of(ranges_.begin(), ranges_.end(), [&](const auto& r) { return id >= r.first && id <= r.second; }) ||
           std::find(dtypes_.begin(), dtypes_.end(), dtype) != dtypes_.end();
  }

 private:
  static constexpr std::string_view kDtypeItem = "dtype=";
  std::vector<std::pair<std::string, std::string>> ranges_;
  std::vector<std::string> dtypes_;
};

// Published GEMM tables timed as kernel durations by a profiler, by the start of the record's
// "library": DeepGEMM's tests time its kernels with bench_kineto (torch.profiler kernel durations;
// deepseek-ai/DeepGEMM tests/test_core.py). The others are per-call times: cuBLASLt benchmark loops,
// mamf-finder's torch.matmul loops (mean of 100 calls, CUDA events).
constexpr std::string_view kKernelDurationLibraries[] = {"DeepGEMM"};

KernelTiming published_timing(std::string_view library) {
  for (std::string_view l : kKernelDurationLibraries) {
    if (library.starts_with(l)) return KernelTiming::kernel_duration;
  }
  return KernelTiming::per_call;
}

KernelMeasurement gemm_measurement(double m, double n, double k, double batch, Precision p) {
  KernelMeasurement g;
  g.kernel = KernelClass::gemm;
  g.precision = p;
  g.m = static_cast<std::uint32_t>(m);
  g.n = static_cast<std::uint32_t>(n);
  g.k = static_cast<std::uint32_t>(k);
  g.batch = static_cast<std::uint32_t>(batch);
  g.flops = 2.0 * m * n * k * batch;
  const double in = bytes_per_element(p), out = low_precision(p) ? kHalfBytes : in;  // fp8 / fp4 GEMMs write bf16
  g.bytes = ((m * k + k * n) * in + m * n * out) * batch;
  return g;
}

// --- clustersim-measurements/1 ------------------------------------------------------------------

constexpr std::string_view kOwnFormat = "clustersim-measurements/1";

MeasurementSet read_own(const std::string& file, const std::string& text, const Selector& selector) {
  const SpecDocument doc = parse_spec_text(text, file);
  JsonReader r(doc.json, file);
  const std::string format = r.string("format");
  if (format != kOwnFormat) r.fail("format", "expected \"" + std::string(kOwnFormat) + "\", got \"" + format + "\"");
  r.accept("benchmark");
  JsonReader device = r.object("device");
  const std::string device_name = device.string("name");
  std::string gpu = device.optional_string("gpu").value_or(gpu_id_for_device(device_name));
  for (const char* key : {"driver", "runtime", "sm_count", "clock_MHz", "memory_bytes", "cuda_runtime", "cublas",
                          "nccl", "ranks", "hostname"})
    device.accept(key);
  device.finish();
  MeasurementSet set;
  const nlohmann::json& list = r.array("measurements");
  std::size_t collectives = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    JsonReader e = r.element("measurements", i);
    if (!list[i].is_object()) e.fail_here("expected an object, got " + describe_json(list[i]));
    const std::string id = e.optional_string("id").value_or("");
    const std::string kind = e.string("kernel");
    const double time_s = e.number("time_s", NumberRange::positive());
    const int repetitions = static_cast<int>(e.integer("repetitions", 1));
    if (kind == "collective") {
      for (const char* key : {"collective", "ranks", "bytes", "algbw_GBps", "busbw_GBps", "peer", "in_place"})
        e.accept(key);
      e.finish();
      ++collectives;
      continue;
    }
    KernelMeasurement mm;
    const std::optional<KernelClass> kernel = kind == "launch" ? KernelClass::elementwise : kernel_named(kind);
    if (!kernel)
      e.fail("kernel",
             "expected gemm, attention, elementwise, normalization, optimizer, embedding, loss, launch or collective, "
             "got \"" +
                 kind + "\"");
    const std::string dtype = e.optional_string("dtype").value_or("bf16");
    const std::optional<Precision> precision = precision_named(dtype);
    if (!precision) e.fail("dtype", "expected fp32, tf32, fp16, bf16 or fp8, got \"" + dtype + "\"");
    if (*kernel == KernelClass::gemm) {
      const double m = double(e.integer("m", 1, UINT32_MAX)), n = double(e.integer("n", 1, UINT32_MAX));
      const double k = double(e.integer("k", 1, UINT32_MAX)), batch = double(e.integer_or("batch", 1, 1, UINT32_MAX));
      mm = gemm_measurement(m, n, k, batch, *precision);
    } else {
      mm.kernel = *kernel;
      mm.precision = *precision;
      if (*kernel == KernelClass::attention) {
        mm.m = static_cast<std::uint32_t>(e.integer("m", 1, UINT32_MAX));
        mm.n = static_cast<std::uint32_t>(e.integer("n", 1, UINT32_MAX));
        mm.k = static_cast<std::uint32_t>(e.integer("k", 1, UINT32_MAX));
        mm.batch = static_cast<std::uint32_t>(e.integer_or("batch", 1, 1, UINT32_MAX));
        mm.causal = e.boolean_or("causal", false);
        mm.backward = e.boolean_or("backward", false);
        mm.flops = kAttentionFlopsPerScore * mm.m * double(mm.n) * mm.k * mm.batch * (mm.causal ? 0.5 : 1.0) *
                   (mm.backward ? kAttentionBackwardFlopsFactor : 1.0);
        mm.bytes = 4.0 * mm.m * double(mm.k) * mm.batch * bytes_per_element(*precision);
      } else {
        mm.m = static_cast<std::uint32_t>(e.integer_or("rows", 0, 0, UINT32_MAX));
        mm.bytes = kind == "launch" ? 0.0 : e.number("bytes", NumberRange::positive());
      }
    }
    if (auto f = e.optional_number("flops", NumberRange::non_negative())) mm.flops = *f;
    if (auto b = e.optional_number("bytes", NumberRange::non_negative())) mm.bytes = *b;
    const std::string role = e.optional_string("role").value_or(kind);
    if (auto timing = e.optional_string("timing")) {
      const auto* named = std::find_if(std::begin(kKernelTimings), std::end(kKernelTimings),
                                       [&](KernelTiming t) { return to_string(t) == *timing; });
      if (named == std::end(kKernelTimings))
        e.fail("timing", "expected \"per_call\" or \"kernel_duration\", got \"" + *timing + "\"");
      mm.timing = *named;
    }
    for (const char* key : {"library", "algorithm", "layout", "note"})
      e.accept(key);
    e.finish();
    if (selector.active() && !selector.selects(id, dtype)) continue;
    mm.gpu = gpu;
    mm.operation = role;
    mm.name = "bench." + role;
    mm.time_s = time_s;
    mm.repetitions = repetitions;
    mm.file = file;
    mm.source = file + e.path();
    set.kernels.push_back(std::move(mm));
  }
  r.finish();
  if (collectives > 0) {
    set.skipped += collectives;
    set.notes.push_back(std::to_string(collectives) +
                        " collective measurements skipped (network calibration: clustersim calibrate-network)");
  }
  return set;
}

// --- Vidur mlp.csv -------------------------------------------------------------------------------

struct VidurOperator {
  std::string_view column;  // time_stats.<column>.median
  std::string_view role;    // the op's name: "vidur.<role>"
  KernelClass kernel;
};
constexpr VidurOperator kVidurOperators[] = {
    {"attn_pre_proj", "qkv", KernelClass::gemm},
    {"attn_post_proj", "attn_out", KernelClass::gemm},
    {"mlp_up_proj", "mlp_up", KernelClass::gemm},
    {"mlp_down_proj", "mlp_down", KernelClass::gemm},
    {"mlp_act", "activation", KernelClass::elementwise},
    {"input_layernorm", "input_norm", KernelClass::normalization},
    {"post_attention_layernorm", "post_attention_norm", KernelClass::normalization},
    {"attn_rope", "rope", KernelClass::elementwise},
    {"add", "residual", KernelClass::elementwise},
    {"emb", "embedding", KernelClass::embedding},
};
constexpr std::string_view kVidurShapeColumns[] = {
    "n_head", "n_kv_head", "n_embd", "n_expanded_embd", "use_gated_mlp", "num_tokens", "num_tensor_parallel_workers"};

struct VidurShape {
  double T, t, h, a, g, f;
  bool gated;
};

// The kernel one Vidur operator ran, for a row's shape (the table at the top of the file).
KernelMeasurement vidur_kernel(const VidurOperator& op, const VidurShape& s) {
  const double d = s.h / s.a, q = s.a * d / s.t, kv = s.g * d / s.t, f = s.f / s.t, e = kHalfBytes;
  const std::string_view c = op.column;
  KernelMeasurement k;
  if (c == "attn_pre_proj") k = gemm_measurement(s.T, q + 2.0 * kv, s.h, 1.0, Precision::fp16);
  if (c == "attn_post_proj") k = gemm_measurement(s.T, s.h, q, 1.0, Precision::fp16);
  if (c == "mlp_up_proj") k = gemm_measurement(s.T, (s.gated ? 2.0 : 1.0) * f, s.h, 1.0, Precision::fp16);
  if (c == "mlp_down_proj") k = gemm_measurement(s.T, s.h, f, 1.0, Precision::fp16);
  k.kernel = op.kernel;
  k.precision = Precision::fp16;
  const auto rows = static_cast<std::uint32_t>(s.T);
  if (c == "mlp_act") {
    k.m = rows;
    k.bytes = (s.gated ? 3.0 : 2.0) * s.T * f * e;
  } else if (c == "input_layernorm" || c == "post_attention_layernorm") {
    k.m = rows;
    k.bytes = 2.0 * s.T * s.h * e;
  } else if (c == "attn_rope") {
    k.m = rows;
    k.bytes = 2.0 * s.T * (q + kv) * e;
  } else if (c == "add") {
    k.bytes = 3.0 * s.T * s.h * e;
  } else if (c == "emb") {
    k.bytes = 2.0 * s.T * s.h * e + kTokenIdBytes * s.T;
  }
  return k;
}

MeasurementSet read_vidur(const std::string& file, const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv_line(line);
  auto column = [&](std::string_view name) -> std::optional<std::size_t> {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) return std::nullopt;
    return static_cast<std::size_t>(it - header.begin());
  };
  std::map<std::string_view, std::size_t> shape;
  for (std::string_view c : kVidurShapeColumns) {
    const auto index = column(c);
    if (!index) throw SpecError(file, "column " + std::string(c), "required column is missing from the header");
    shape[c] = *index;
  }
  std::vector<std::pair<const VidurOperator*, std::size_t>> operators;
  for (const auto& op : kVidurOperators) {
    if (const auto index = column("time_stats." + std::string(op.column) + ".median"))
      operators.emplace_back(&op, *index);
  }
  if (operators.empty())
    throw SpecError(file, "column time_stats.<operator>.median",
                    "no operator time columns (expected e.g. time_stats.mlp_up_proj.median)");

  // Vidur's layout: .../<gpu>/<model>/mlp.csv
  const std::filesystem::path path(file);
  const std::string model = path.parent_path().filename().string();
  const std::string gpu = gpu_id_for_device(path.parent_path().parent_path().filename().string());

  MeasurementSet set;
  int row = 0;
  while (std::getline(in, line)) {
    ++row;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> cells = split_csv_line(line);
    auto cell = [&](std::size_t index, std::string_view name) -> const std::string& {
      if (index >= cells.size())
        throw SpecError(
            file, "row " + std::to_string(row) + "/column " + std::string(name),
            "the row has " + std::to_string(cells.size()) + " cells, the header " + std::to_string(header.size()));
      return cells[index];
    };
    auto number = [&](std::size_t index, std::string_view name, bool integer) {
      const std::string& value = cell(index, name);
      double v = 0.0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      const bool ok = ec == std::errc() && end == value.data() + value.size() && std::isfinite(v) && v > 0.0 &&
                      (!integer || v == std::floor(v));
      if (!ok)
        throw SpecError(
            file, "row " + std::to_string(row) + "/column " + std::string(name),
            std::string("expected a positive ") + (integer ? "integer" : "number") + ", got '" + value + "'");
      return v;
    };
    const std::string& gated = cell(shape["use_gated_mlp"], "use_gated_mlp");
    if (gated != "True" && gated != "False")
      throw SpecError(file, "row " + std::to_string(row) + "/column use_gated_mlp",
                      "expected True or False, got '" + gated + "'");
    VidurShape s{number(shape["num_tokens"], "num_tokens", true),
                 number(shape["num_tensor_parallel_workers"], "num_tensor_parallel_workers", true),
                 number(shape["n_embd"], "n_embd", true),
                 number(shape["n_head"], "n_head", true),
                 number(shape["n_kv_head"], "n_kv_head", true),
                 number(shape["n_expanded_embd"], "n_expanded_embd", true),
                 gated == "True"};
    for (const auto& [op, index] : operators) {
      const std::string name = "time_stats." + std::string(op->column) + ".median";
      KernelMeasurement k = vidur_kernel(*op, s);
      k.time_s = number(index, name, false) * kMsToS;
      k.gpu = gpu;
      k.operation = op->column;
      k.name = "vidur." + std::string(op->role);
      k.file = file;
      k.source = file + ":row " + std::to_string(row);
      k.group = model;
      k.tp = static_cast<int>(s.t);
      set.kernels.push_back(std::move(k));
    }
  }
  return set;
}

// --- published microbench.json -------------------------------------------------------------------

std::optional<Precision> published_dtype(const std::string& dtype) {
  if (dtype.find("fp8") != std::string::npos) return Precision::fp8;
  if (dtype.find("nvfp4") != std::string::npos) return Precision::nvfp4;
  if (dtype.find("bf16") != std::string::npos) return Precision::bf16;
  if (dtype.find("fp16") != std::string::npos) return Precision::fp16;
  if (dtype.find("tf32") != std::string::npos) return Precision::tf32;
  return std::nullopt;
}

std::optional<double> note_number(const std::string& notes, const char* pattern) {
  std::smatch match;
  if (std::regex_search(notes, match, std::regex(pattern))) return std::stod(match[1].str());
  return std::nullopt;
}

MeasurementSet read_published(const std::string& file, const std::string& text, const Selector& selector) {
  const SpecDocument doc = parse_spec_text(text, file);
  MeasurementSet set;
  std::map<std::string, std::size_t> skipped_kinds;
  std::size_t other_gpus = 0;
  for (std::size_t i = 0; i < doc.json.size(); ++i) {
    const nlohmann::json& rec = doc.json[i];
    const std::string path = "/" + std::to_string(i);
    if (!rec.is_object()) throw SpecError(file, path, "expected a record object, got " + describe_json(rec));
    JsonReader r(rec, file, path);
    const std::string id = r.string("id");
    const std::string kind = r.string("kind");
    if (!selector.selects(id)) continue;
    const bool gemm = kind == "gemm" || kind == "gemm_max_achievable" || kind == "grouped_gemm";
    const bool attention = kind == "attention_kernel" && rec.value("kernel", "").find("Flash") != std::string::npos;
    const bool stream = kind == "hbm_bandwidth";
    if (!gemm && !attention && !stream) {
      ++skipped_kinds[kind];
      continue;
    }
    const std::string gpu = gpu_id_for_device(r.string("gpu"));
    if (gpu.empty()) {
      ++other_gpus;
      continue;
    }
    KernelMeasurement k;
    if (gemm) {
      const std::optional<Precision> p = published_dtype(r.string("dtype"));
      if (!p) {
        ++skipped_kinds[kind + " (dtype)"];
        continue;
      }
      const double batch = kind == "grouped_gemm" ? double(r.integer("groups", 1)) : 1.0;
      k = gemm_measurement(double(r.integer("M", 1)), double(r.integer("N", 1)), double(r.integer("K", 1)), batch, *p);
      k.time_s = k.flops / (r.number("tflops", NumberRange::positive()) * 1e12);
      k.operation = kind;
      k.name = "published.gemm";
      k.timing = published_timing(rec.value("library", ""));
    } else if (attention) {
      const std::string notes = r.string("notes");
      const auto d = note_number(notes, "head dimension of ([0-9]+)");
      const auto b = note_number(notes, "batch size of ([0-9]+)");
      const auto s = note_number(notes, "sequence length of ([0-9]+)");
      if (!d || !b || !s)
        r.fail("notes", "expected the head dimension, batch size and sequence length of the FlashAttention run");
      const double heads = kFlashAttentionModelDim / *d;
      k.kernel = KernelClass::attention;
      k.precision = Precision::fp16;
      k.m = k.n = static_cast<std::uint32_t>(*s);
      k.k = static_cast<std::uint32_t>(*d);
      k.batch = static_cast<std::uint32_t>(*b * heads);
      k.flops = 4.0 * *b * *s * *s * heads * *d;
      k.bytes = 4.0 * *b * *s * heads * *d * kHalfBytes;
      k.time_s = k.flops / (r.number("tflops", NumberRange::positive()) * 1e12);
      k.operation = "flash_attention";
      k.name = "published.attention";
    } else {
      k.kernel = KernelClass::elementwise;
      k.precision = Precision::fp32;
      k.bytes = kStreamNominalBytes;
      k.time_s = k.bytes / (r.number("bandwidth_TBps", NumberRange::positive()) * 1e12);
      k.operation = r.string("test");
      k.name = "published.stream";
    }
    k.gpu = gpu;
    k.file = file;
    k.source = file + "#" + id;
    set.kernels.push_back(std::move(k));
  }
  for (const auto& [kind, count] : skipped_kinds) {
    set.skipped += count;
    set.notes.push_back(std::to_string(count) + " records of kind " + kind + " skipped (not a kernel time)");
  }
  if (other_gpus > 0) {
    set.skipped += other_gpus;
    set.notes.push_back(std::to_string(other_gpus) + " records skipped: GPU not in the catalogue");
  }
  return set;
}

// --- format registry -------------------------------------------------------------------------------

struct MeasurementFormat {
  std::string_view name;
  bool (*detect)(const std::string& text);
  MeasurementSet (*read)(const std::string& file, const std::string& text, const Selector& selector);
};

std::string_view first_non_space(const std::string& text) {
  const auto pos = text.find_first_not_of(" \t\r\n");
  return pos == std::string::npos ? std::string_view{} : std::string_view(text).substr(pos);
}

constexpr MeasurementFormat kFormats[] = {
    {"clustersim measurement JSON", [](const std::string& t) { return first_non_space(t).substr(0, 1) == "{"; },
     read_own},
    {"published microbench.json", [](const std::string& t) { return first_non_space(t).substr(0, 1) == "["; },
     read_published},
    {"Vidur mlp.csv",
     [](const std::string& t) { return t.substr(0, t.find('\n')).find("time_stats.") != std::string::npos; },
     [](const std::string& file, const std::string& text, const Selector& selector) {
       if (selector.active()) throw SpecError(file, "", "a Vidur table has no record ids to select with '#'");
       return read_vidur(file, text);
     }},
};

}  // namespace

ComputeOp KernelMeasurement::op() const {
  ComputeOp o;
  o.name = name;
  o.kernel = kernel;
  o.precision = precision;
  o.flops = flops;
  o.bytes = bytes;
  o.m = m;
  o.n = n;
  o.k = k;
  o.batch = batch;
  o.causal = causal;
  o.backward = backward;
  return o;
}

namespace resources_detail {
std::span<const Resource> calibration_measurement_resources();  // generated from calibration/power_cap/*.json
}  // namespace resources_detail

namespace {

const Resource* compiled_in_measurement_file(std::string_view path) {
  for (const Resource& r : resources_detail::calibration_measurement_resources()) {
    if (path == r.path) return &r;
  }
  return nullptr;
}

}  // namespace

std::string gpu_id_for_device(std::string_view device_name) {
  for (const auto& d : kDeviceNames) {
    const bool all = std::all_of(d.fragments.begin(), d.fragments.end(),
                                 [&](std::string_view f) { return device_name.find(f) != std::string_view::npos; });
    if (all) return std::string(d.id);
  }
  return "";
}

bool is_compiled_in_measurement_file(const std::string& path) {
  return compiled_in_measurement_file(path) != nullptr;
}

MeasurementSet read_measurements(const std::string& path_and_selector) {
  const auto hash = path_and_selector.find('#');
  const std::string path = path_and_selector.substr(0, hash);
  const Selector selector =
      hash == std::string::npos ? Selector{} : Selector(std::string_view(path_and_selector).substr(hash + 1), path);
  const Resource* compiled_in = path_exists(path) ? nullptr : compiled_in_measurement_file(path);
  const std::string text =
      compiled_in != nullptr ? std::string(compiled_in->text) : read_text_file(path, "measurement file");
  for (const auto& f : kFormats) {
    if (f.detect(text)) return f.read(path, text, selector);
  }
  throw SpecError(path, "",
                  "not a measurement file: expected clustersim measurement JSON, a published microbench.json array "
                  "or a Vidur mlp.csv");
}

}  // namespace clustersim
