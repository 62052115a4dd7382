// SPDX-License-Identifier: MIT
// Whether a run fits the machine, decided from the config before anything is
// allocated or created: the host memory it needs against what is available,
// the device memory against what is free (CUDA backend), and the particle
// slots against the 32-bit ids. Every refusal is one line naming the file
// (or the --set option) and the key that drives the size.
#pragma once
#include <cstdint>
#include <string>

#include "sim/model/checked.hpp"
#include "sim/model/config.hpp"

namespace sim {

// Host bytes of a run, by what scales them. An estimate of the peak (the
// largest of the setup and the stepping with snapshots in flight), from the
// arrays the backends, the pressure solvers and the snapshot writer allocate.
struct MemoryNeed {
  Bytes grid;       // arrays of one value per grid point or cell
  Bytes particles;  // arrays of one record per particle slot
  Bytes base;       // the process itself: code, libraries, threads, HDF5
  Bytes total() const { return grid + particles + base; }
};

// What `sim CONFIG` holds on the host at its peak with the CPU backend, or,
// with `cuda`, beside a CUDA backend (the host state, snapshot staging and copies).
MemoryNeed host_memory_need(const Config& cfg, bool cuda);

// The same for `ranks_on_host` processes of one run on this host: each holds
// the whole grid; over CPU ranks (`split`, not cuda) the particles are shared
// out (each record on one rank), so together they hold one run's particles
// and, while rank 0 gathers a snapshot, at most one copy more; the host side
// of GPU ranks holds every slot on each.
MemoryNeed host_memory_need_on_host(const Config& cfg, bool cuda, int ranks_on_host, bool split);

// Bytes the host can still give this process: MemAvailable of /proc/meminfo,
// lowered to what a cgroup memory limit leaves; 0 when unknown.
uint64_t host_memory_available();

// "1.20 TiB", "23.0 GiB", "512 B"; "more than 16.0 EiB" for an overflowed count.
std::string format_size(Bytes b);

// The one-line refusal when `need` exceeds `available` bytes of `kind`
// memory ("host", "device"), naming the key that drives the larger part and
// where its value came from: the `--set KEY=VALUE` that gave it
// (override_of, io/config_loader.hpp), else cfg.source; `on` follows "available" (" on NVIDIA H200 (...)"). "" when
// it fits, or when `available` is 0 (unknown).
std::string memory_shortfall(const Config& cfg, const MemoryNeed& need, uint64_t available, const std::string& kind,
                             const std::string& on = {});

// Throws std::runtime_error with one line when the run does not fit: the
// host memory, then, when the run resolves to the CUDA backend, the device
// memory (and the kernels' 32-bit counts). Creates and allocates nothing.
// Over several ranks (`split`), `ranks_on_host` processes of the run share
// this host's memory, each holding the whole grid (the slabs' storage,
// sim/ranks/slab_rows.hpp): they must fit together (host_memory_need_on_host).
void check_run_fits(const Config& cfg, int ranks_on_host = 1, bool split = false);

}  // namespace sim
