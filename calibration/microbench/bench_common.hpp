#pragma once
// Shared by the microbenchmarks: command-line options, the device description, CUDA error checks and
// the writer of clustersim's measurement JSON ("format": "clustersim-measurements/1", documented in
// calibration/README.md and read by sim/hardware/kernel_measurement.cpp).
//
// `--help` prints the usage without touching the GPU (the build's smoke test runs it on machines
// without one).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace clustersim_bench {

// Exits with the file, line, call and describe(status) when `call` returns anything but `ok` (CUDA's,
// cuBLAS's and NCCL's status types).
#define BENCH_CHECK_STATUS(call, ok, describe)                                                                    \
  do {                                                                                                            \
    const auto status_ = (call);                                                                                  \
    if (status_ != (ok)) {                                                                                        \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, std::string(describe(status_)).c_str()); \
      std::exit(1);                                                                                               \
    }                                                                                                             \
  } while (0)

#define BENCH_CHECK_CUDA(call) BENCH_CHECK_STATUS(call, cudaSuccess, cudaGetErrorString)

struct Options {
  std::string out;  // "" = stdout
  int device = 0;
  int repetitions = 0;     // 0: the program's default
  double max_bytes = 0.0;  // 0: the program's default
  std::vector<std::string> dtypes;
  std::string shapes;  // gemm_sweep: "m,n,k;m,n,k"
};

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Parses the common options; prints `usage` and exits 0 on --help, 2 on a bad option.
inline Options parse_options(int argc, char** argv, const char* usage) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "option %s needs a value\n\n%s", a.c_str(), usage);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--device") {
      o.device = std::atoi(value().c_str());
    } else if (a == "--reps") {
      o.repetitions = std::atoi(value().c_str());
    } else if (a == "--max-bytes") {
      o.max_bytes = std::atof(value().c_str());
    } else if (a == "--dtypes") {
      o.dtypes = split(value(), ',');
    } else if (a == "--shapes") {
      o.shapes = value();
    } else {
      std::fprintf(stderr, "unknown option %s\n\n%s", a.c_str(), usage);
      std::exit(2);
    }
  }
  return o;
}

// Makes the options' device current and returns its properties.
inline cudaDeviceProp select_device(const Options& o) {
  BENCH_CHECK_CUDA(cudaSetDevice(o.device));
  cudaDeviceProp prop{};
  BENCH_CHECK_CUDA(cudaGetDeviceProperties(&prop, o.device));
  return prop;
}

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

// The NVIDIA kernel-module version ("550.54.15") from /proc, else the CUDA driver API version.
inline std::string driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(in, line)) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  ..." or, on the open modules,
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  ...": the first word after
    // "Kernel Module" that starts with a digit.
    const auto pos = line.find("Kernel Module");
    if (pos != std::string::npos) {
      std::stringstream s(line.substr(pos + 13));
      for (std::string word; s >> word;)
        if (word[0] >= '0' && word[0] <= '9') return word;
    }
  }
  int v = 0;
  cudaDriverGetVersion(&v);
  return "CUDA driver API " + std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The "device" object of the measurement file, for `device` (and `ranks` GPUs when > 1).
inline std::string device_json(int device, int ranks = 1) {
  cudaDeviceProp p{};
  BENCH_CHECK_CUDA(cudaGetDeviceProperties(&p, device));
  int runtime = 0, clock_khz = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  std::ostringstream o;
  o << "{\"name\": " << json_string(p.name) << ", \"driver\": " << json_string(driver_version())
    << ", \"runtime\": " << json_string(std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10))
    << ", \"sm_count\": " << p.multiProcessorCount << ", \"clock_MHz\": " << clock_khz / 1000
    << ", \"memory_bytes\": " << p.totalGlobalMem;
  if (ranks > 1) o << ", \"ranks\": " << ranks;
  o << "}";
  return o.str();
}

// Collects measurement records (JSON objects without braces) and writes the file.
class MeasurementWriter {
 public:
  MeasurementWriter(std::string benchmark, std::string device)
      : benchmark_(std::move(benchmark)), device_(std::move(device)) {}

  void add(const std::string& fields) { records_.push_back("{" + fields + "}"); }

  void write(const std::string& path) const {
    std::ostringstream o;
    o << "{\n  \"format\": \"clustersim-measurements/1\",\n  \"benchmark\": " << json_string(benchmark_)
      << ",\n  \"device\": " << device_ << ",\n  \"measurements\": [\n";
    for (std::size_t i = 0; i < records_.size(); ++i)
      o << "    " << records_[i] << (i + 1 < records_.size() ? ",\n" : "\n");
    o << "  ]\n}\n";
    if (path.empty()) {
      std::fputs(o.str().c_str(), stdout);
      return;
    }
    std::ofstream f(path);
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      std::exit(1);
    }
    f << o.str();
    std::fprintf(stderr, "wrote %zu measurements to %s\n", records_.size(), path.c_str());
  }

 private:
  std::string benchmark_;
  std::string device_;
  std::vector<std::string> records_;
};

inline std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Times `body` on the current stream with CUDA events: warm-up launches, then `repetitions` timed
// back to back; returns seconds per repetition.
template <class Body>
double time_per_call_s(Body body, int repetitions, int warmup = 3, cudaStream_t stream = nullptr) {
  for (int i = 0; i < warmup; ++i)
    body();
  cudaEvent_t start, stop;
  BENCH_CHECK_CUDA(cudaEventCreate(&start));
  BENCH_CHECK_CUDA(cudaEventCreate(&stop));
  BENCH_CHECK_CUDA(cudaEventRecord(start, stream));
  for (int i = 0; i < repetitions; ++i)
    body();
  BENCH_CHECK_CUDA(cudaEventRecord(stop, stream));
  BENCH_CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0.0f;
  BENCH_CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return double(ms) * 1e-3 / repetitions;
}

// Repetitions for about `budget_s` of GPU time, at least `min_reps`, given one call's time.
inline int repetitions_for(double single_s, int fixed, double budget_s = 0.2, int min_reps = 10, int max_reps = 10000) {
  if (fixed > 0) return fixed;
  const double n = budget_s / (single_s > 0 ? single_s : 1e-6);
  return n < min_reps ? min_reps : n > max_reps ? max_reps : int(n);
}

// A call's time and the repetitions it is the mean of.
struct Timing {
  double time_s = 0.0;
  int repetitions = 0;
};

// Times `body` once to size the run, then `fixed` repetitions (> 0) or about `budget_s` of them
// (repetitions_for) after `warmup` calls.
template <class Body>
Timing time_repeated(Body body, int fixed, double budget_s = 0.2, int min_reps = 10, int warmup = 3) {
  const int reps = repetitions_for(time_per_call_s(body, 1), fixed, budget_s, min_reps);
  return {time_per_call_s(body, reps, warmup), reps};
}

// The run of a single-GPU microbenchmark: parses the options (prints the usage on --help without
// touching the GPU), makes the device current, lets `measure(options, device properties, writer)` add
// the records of benchmark `name`, and writes the file. `measure` returns the exit status; anything but
// 0 ends the run without writing.
template <class Measure>
int run_single_gpu_benchmark(int argc, char** argv, const char* name, const char* usage, Measure measure) {
  const Options o = parse_options(argc, argv, usage);
  const cudaDeviceProp prop = select_device(o);
  MeasurementWriter writer(name, device_json(o.device));
  const int status = measure(o, prop, writer);
  if (status == 0) writer.write(o.out);
  return status;
}

}  // namespace clustersim_bench
