// SPDX-License-Identifier: MIT
// `sim bench`: measure the ceiling, run a suite, print and write the results.
#include "sim/app/bench/bench.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "cuda/cuda_backend.hpp"
#include "sim/app/backend_factory.hpp"
#include "sim/app/memory_check.hpp"

namespace sim {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Ceiling {
  std::string what;
  double gbps = 0;
};

// The copy bandwidth every GB/s figure is compared with, measured now, on
// the machine and in the state the variants run in.
Ceiling measure_ceiling(bool cuda, int64_t copy_mib) {
  Ceiling c;
  const int64_t mib = copy_mib > 0 ? copy_mib : (cuda ? 1024 : 512);
  const size_t bytes = static_cast<size_t>(mib) << 20;
  const std::string size = std::to_string(mib) + " MiB";
  if (cuda) {
    c.gbps = cuda_copy_bandwidth(bytes, 20) / 1e9;
    c.what = "cudaMemcpy device to device, " + size + ", median of 20, bytes read + written";
    return c;
  }
  c.gbps = host_copy_bandwidth(bytes, 10) / 1e9;
  c.what = "host memcpy on " + std::to_string(omp_get_max_threads()) + " OpenMP threads, " + size +
           ", median of 10, bytes read + written";
  return c;
}

// --copy-mib against the memory its two buffers take: the device's free
// memory (cudaMemcpy), or the host's (memcpy, and the CPU micro suite's
// host_copy rows): refused with one line naming the option, not a
// std::bad_alloc or a failed cudaMalloc mid-run. Unknown memory: no check.
void check_copy_fits(const Config& cfg, int64_t copy_mib, bool cuda) {
  if (copy_mib <= 0) return;
  const uint64_t buffer = static_cast<uint64_t>(copy_mib) << 20;  // cli.cpp caps copy_mib at 2^20
  uint64_t available = 0;
  if (cuda) {
    try {
      available = cuda_memory_need(cfg, Grid::make(8, 8, cfg.lx, cfg.ly)).free;
    } catch (const std::exception&) {
      available = 0;  // the backend reports what is wrong with the device
    }
  } else {
    available = host_memory_available();
  }
  if (available > 0 && 2 * buffer > available)
    throw std::runtime_error("--copy-mib " + std::to_string(copy_mib) + ": the copy-bandwidth buffers need 2 x " +
                             format_size(Bytes(buffer)) + " of " + (cuda ? "device" : "host") + " memory, " +
                             format_size(Bytes(available)) + " available");
}

void write_file(const std::string& path, const BenchReport& r, void (*writer)(std::ostream&, const BenchReport&)) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  writer(f, r);
  f.flush();
  if (!f) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
}

// Where --quiet sends the progress lines.
class NullBuffer final : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};

}  // namespace

double bench_clock_s() {
  static const auto t0 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double BenchRow::number(const std::string& key) const {
  const auto it = values.find(key);
  return it == values.end() || it->second.is_text ? std::nan("") : it->second.number;
}

std::string BenchRow::text(const std::string& key) const {
  const auto it = values.find(key);
  return it == values.end() || !it->second.is_text ? std::string() : it->second.text;
}

double host_copy_bandwidth(size_t bytes, int repeats) {
  if (bytes == 0 || repeats < 1) throw std::invalid_argument("host_copy_bandwidth: empty copy");
  std::unique_ptr<char[]> src(new char[bytes]), dst(new char[bytes]);
  const int threads = omp_get_max_threads();
  const size_t chunk = (bytes + threads - 1) / threads;
  // One chunk per thread, first touched by the thread that copies it.
  auto copy = [&](bool init) {
#pragma omp parallel num_threads(threads)
    {
      const size_t t = static_cast<size_t>(omp_get_thread_num());
      const size_t b = std::min(bytes, t * chunk), e = std::min(bytes, b + chunk);
      if (init) {
        std::memset(src.get() + b, 0x5a, e - b);
        std::memset(dst.get() + b, 0, e - b);
      }
      std::memcpy(dst.get() + b, src.get() + b, e - b);
    }
  };
  copy(true);
  std::vector<double> s;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    copy(false);
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (dst[bytes - 1] != 0x5a) throw std::runtime_error("host_copy_bandwidth: copy did not arrive");
  return 2.0 * static_cast<double>(bytes) / median(s);
}

int run_bench(const Config& cfg, const BenchOptions& opts, std::ostream& out, std::ostream& err) {
  try {
    bench_clock_s();
    NullBuffer null_buf;
    std::ostream null_stream(&null_buf);
    std::ostream& log = opts.quiet ? null_stream : out;
    const bool cuda = resolves_to_cuda(cfg);
    if (!opts.micro) check_run_fits(cfg);  // the matrix runs the config's sizes (the micro suite its own)
    if (!cuda && cfg.backend == BackendKind::auto_) log << "no CUDA device found: benchmarking the CPU backend\n";
    check_copy_fits(cfg, opts.copy_mib, cuda);
    const Ceiling ceiling = measure_ceiling(cuda, opts.copy_mib);
    log << "ceiling: " << ceiling.gbps << " GB/s (" << ceiling.what << ")\n";
    BenchReport r = opts.micro ? run_micro(cfg, opts, cuda, ceiling.gbps, log)
                               : run_matrix(cfg, opts, cuda, ceiling.gbps, log);
    if (r.ceiling_what.empty()) {  // the CPU micro suite measures its own (bench_micro.cpp: host_copy)
      r.ceiling_what = ceiling.what;
      r.ceiling_gbps = ceiling.gbps;
    }
    print_bench_table(out, r);
    if (!opts.csv.empty()) write_file(opts.csv, r, write_csv);
    if (!opts.json.empty()) write_file(opts.json, r, write_json);
    // Rows skipped for max_seconds are reported, not failures.
    int failed = 0;
    for (const BenchRow& row : r.rows) {
      const std::string e = row.text("error");
      if (!e.empty() && e.rfind("skipped", 0) != 0) ++failed;
    }
    if (failed > 0) {
      err << "sim: error: " << failed << " of " << r.rows.size() << " benchmark rows failed (see the error column)\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    err << "sim: error: " << e.what() << "\n";
    return 1;
  }
}

int run_bench_ranks(const Config& cfg, const BenchOptions& opts, const Comm& world, std::ostream& out,
                    std::ostream& err) {
  const bool root = world.rank() == 0;
  try {
    bench_clock_s();
    if (opts.micro) throw std::runtime_error("sim bench --micro runs on one rank: start it without mpirun");
    if (!opts.layouts.empty() || !opts.stencils.empty() || !opts.constants.empty() || !opts.samplings.empty() ||
        !opts.deposits.empty() || !opts.solvers.empty() || !opts.advections.empty())
      throw std::runtime_error(
          "under mpirun sim bench compares rank counts on the config's strategies: set them with --set (the axis "
          "options compare strategies on one rank)");
    NullBuffer null_buf;
    std::ostream null_stream(&null_buf);
    std::ostream& log = opts.quiet || !root ? null_stream : out;
    const BenchReport r = run_ranks(cfg, opts, world, log);
    int failed = 0;
    if (root) {
      print_bench_table(out, r);
      if (!opts.csv.empty()) write_file(opts.csv, r, write_csv);
      if (!opts.json.empty()) write_file(opts.json, r, write_json);
      for (const BenchRow& row : r.rows) {
        const std::string e = row.text("error");
        if (!e.empty() && e.rfind("skipped", 0) != 0) ++failed;
      }
      if (failed > 0)
        err << "sim: error: " << failed << " of " << r.rows.size() << " rank counts failed (see the error column)\n";
    }
    return world.allreduce_max(static_cast<int64_t>(failed)) > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    // The same checks on the same config on every rank: rank 0 says it.
    if (root) err << "sim: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace sim
