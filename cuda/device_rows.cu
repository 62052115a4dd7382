// SPDX-License-Identifier: MIT
#include "cuda/device_rows.hpp"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "cuda/check.hpp"
#include "cuda/cuda_backend.hpp"

#if SIM_HAVE_NCCL
#include <nccl.h>
#endif

namespace sim::cuda {

namespace {

template <class T>
__global__ void add_row_kernel(T* dst, const T* __restrict__ src, int n) {
  const int q = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (q < n) dst[q] += src[q];
}

#if SIM_HAVE_NCCL
void check_nccl(ncclResult_t r, const char* call) {
  if (r != ncclSuccess) throw std::runtime_error(std::string("nccl: ") + call + ": " + ncclGetErrorString(r));
}
#define SIM_NCCL(call) check_nccl((call), #call)

template <class T>
ncclDataType_t nccl_type();
template <>
ncclDataType_t nccl_type<float>() { return ncclFloat32; }
template <>
ncclDataType_t nccl_type<double>() { return ncclFloat64; }
template <>
ncclDataType_t nccl_type<unsigned long long>() { return ncclUint64; }

ncclComm_t as_comm(void* p) { return static_cast<ncclComm_t>(p); }
#endif

using RowRun = SlabRows::RowRun;
std::vector<RowRun> row_runs(const std::vector<SlabRows::RowCopy>& list, int rank) {
  return SlabRows::row_runs(list, rank);
}

}  // namespace

bool nccl_built() { return SIM_HAVE_NCCL != 0; }

}  // namespace sim::cuda

namespace sim {
bool cuda_ranks_built() { return cuda::nccl_built(); }
}  // namespace sim

namespace sim::cuda {

RankDevice rank_device(const Comm& comm, int device_count) {
  RankDevice d;
  const int on_host = comm.ranks_sharing_memory();
  const int place = comm.rank_on_host();
  d.ordinal = device_count > 0 ? place % device_count : 0;
  // Every rank answers alike: is any host of the run short of GPUs?
  const int64_t short_here = on_host > device_count ? 1 : 0;
  d.shared = comm.allreduce_max(short_here) > 0;
  return d;
}

DeviceRows::DeviceRows(std::shared_ptr<const RankSplit> ranks, cudaStream_t stream, bool shared,
                       RankTransport transport, bool overlap)
    : ranks_(std::move(ranks)), slabs_(ranks_->slabs()), stream_(stream) {
  if (!slabs_) return;  // one GPU: nothing moves
  pitch_ = static_cast<int>(Grid::pitch_for(slabs_->nx()));
  host_ = transport == RankTransport::auto_ ? shared : transport == RankTransport::host;
  shared_ = shared;
  overlap_ = overlap;
  if (host_) {
    ranks_->attach(this);
    return;
  }
#if SIM_HAVE_NCCL
  const Comm& comm = slabs_->comm();
  // NCCL refuses two ranks on one GPU of one host: ranks that share one
  // present themselves as hosts of their own (unless the user chose).
  if (shared && std::getenv("NCCL_HOSTID") == nullptr) {
    const std::string id = "sim-rank-" + std::to_string(comm.rank());
    setenv("NCCL_HOSTID", id.c_str(), 1);
  }
  ncclUniqueId uid;
  std::vector<char> bytes(sizeof uid);
  if (comm.rank() == 0) {
    SIM_NCCL(ncclGetUniqueId(&uid));
    std::memcpy(bytes.data(), &uid, sizeof uid);
  }
  comm.broadcast(bytes, 0);
  std::memcpy(&uid, bytes.data(), sizeof uid);
  ncclComm_t c = nullptr;
  SIM_NCCL(ncclCommInitRank(&c, comm.size(), uid, comm.rank()));
  nccl_ = c;
  SIM_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
  SIM_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
  SIM_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  ranks_->attach(this);
#else
  (void)shared;
  throw std::runtime_error("cuda: this sim was built without NCCL, which GPU ranks exchange their rows through");
#endif
}

DeviceRows::~DeviceRows() {
  if (slabs_) ranks_->attach(nullptr);
  if (side_) (void)cudaStreamSynchronize(side_);
  for (cudaEvent_t e : {ready_, done_})
    if (e) (void)cudaEventDestroy(e);
  if (side_) (void)cudaStreamDestroy(side_);
  for (cudaEvent_t e : starts_) (void)cudaEventDestroy(e);
  for (cudaEvent_t e : stops_) (void)cudaEventDestroy(e);
#if SIM_HAVE_NCCL
  if (nccl_) (void)ncclCommDestroy(as_comm(nccl_));
#endif
}

void DeviceRows::begin_timing(cudaStream_t on) {
  cudaEvent_t e;
  SIM_CUDA_CHECK(cudaEventCreate(&e));
  starts_.push_back(e);
  SIM_CUDA_CHECK(cudaEventRecord(e, on));
}

void DeviceRows::end_timing(cudaStream_t on) {
  cudaEvent_t e;
  SIM_CUDA_CHECK(cudaEventCreate(&e));
  stops_.push_back(e);
  SIM_CUDA_CHECK(cudaEventRecord(e, on));
  if (stops_.size() >= 256) (void)transport_ms();  // fold the oldest pairs, long finished by now
}

std::string DeviceRows::describe() const {
  if (!slabs_) return {};
  return std::string(host_ ? ", rows through host memory and MPI" : ", rows through NCCL") +
         (shared_ ? " (ranks share a GPU)" : "");
}

void DeviceRows::max_over_ranks(unsigned int* values, int n) {
  if (!slabs_) return;
  std::vector<unsigned int> b(static_cast<size_t>(n));
  SIM_CUDA_CHECK(cudaMemcpyAsync(b.data(), values, b.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost, stream_));
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  for (unsigned int& x : b) x = static_cast<unsigned int>(slabs_->comm().allreduce_max(static_cast<int64_t>(x)));
  SIM_CUDA_CHECK(cudaMemcpyAsync(values, b.data(), b.size() * sizeof(unsigned int), cudaMemcpyHostToDevice, stream_));
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void DeviceRows::sum_over_ranks(double* values, int n) {
  if (!slabs_) return;
  std::vector<double> g(static_cast<size_t>(n));
  SIM_CUDA_CHECK(cudaMemcpyAsync(g.data(), values, g.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  for (double& x : g) x = slabs_->sum(x);
  SIM_CUDA_CHECK(cudaMemcpyAsync(values, g.data(), g.size() * sizeof(double), cudaMemcpyHostToDevice, stream_));
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

double DeviceRows::transport_ms() {
  for (size_t k = 0; k < stops_.size(); ++k) {
    SIM_CUDA_CHECK(cudaEventSynchronize(stops_[k]));
    float ms = 0;
    SIM_CUDA_CHECK(cudaEventElapsedTime(&ms, starts_[k], stops_[k]));
    summed_ms_ += ms;
    (void)cudaEventDestroy(starts_[k]);
    (void)cudaEventDestroy(stops_[k]);
  }
  starts_.clear();
  stops_.clear();
  return summed_ms_;
}

template <class T>
bool DeviceRows::transfer(T* field, int pitch, const std::vector<std::vector<SlabRows::RowCopy>>& wanted, bool add,
                          cudaStream_t on) {
  const int me = slabs_->rank(), n = slabs_->ranks();
  const size_t row = static_cast<size_t>(pitch);
  auto at_row = [&](int r) { return field + static_cast<size_t>(r + 1) * row; };
  size_t arrivals = 0, departures = 0;
  for (const SlabRows::RowCopy& w : wanted[static_cast<size_t>(me)])
    if (w.owner != me) ++arrivals;
  for (int q = 0; q < n; ++q)
    if (q != me)
      for (const SlabRows::RowCopy& w : wanted[static_cast<size_t>(q)]) departures += w.owner == me ? 1 : 0;
  if (arrivals == 0 && departures == 0) return false;  // nothing for this rank
  if (add) inbox_.reserve(arrivals * row * sizeof(T), "row arrivals");
  T* inbox = reinterpret_cast<T*>(inbox_.data());
  if (grouped_) {
    if (add || on != stream_) throw std::logic_error("DeviceRows::together takes copy_rows calls only");
    group_moved_ = true;
  } else {
    ++calls_;
    begin_timing(on);
  }
  if (host_) {
    host_transfer(field, pitch, wanted, add ? inbox : nullptr);
  } else {
#if SIM_HAVE_NCCL
  const ncclComm_t c = as_comm(nccl_);
  SIM_NCCL(ncclGroupStart());
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    for (const RowRun& r : row_runs(wanted[static_cast<size_t>(q)], q))
      if (r.owner == me) SIM_NCCL(ncclSend(at_row(r.src), r.count * row, nccl_type<T>(), q, c, on));
  }
  for (const RowRun& r : row_runs(wanted[static_cast<size_t>(me)], me))
    SIM_NCCL(ncclRecv(add ? inbox + r.slot * row : at_row(r.dst), r.count * row, nccl_type<T>(), r.owner, c, on));
  SIM_NCCL(ncclGroupEnd());
#else
  (void)n;
#endif
  }
  if (add) {  // in list order, as the CPU's fold adds them
    for (const RowRun& r : row_runs(wanted[static_cast<size_t>(me)], me)) {
      const size_t count = r.count * row;
      add_row_kernel<T><<<static_cast<unsigned>((count + 255) / 256), 256, 0, on>>>(
          at_row(r.dst), inbox + r.slot * row, static_cast<int>(count));
      SIM_CUDA_CHECK_LAUNCH("add_row_kernel");
    }
  }
  if (!grouped_) end_timing(on);
  return true;
}

void DeviceRows::group_begin() {
  join();
#if SIM_HAVE_NCCL
  SIM_NCCL(ncclGroupStart());
#endif
  grouped_ = true;
  group_moved_ = false;
  begin_timing(stream_);
}

void DeviceRows::group_end() {
  grouped_ = false;
#if SIM_HAVE_NCCL
  SIM_NCCL(ncclGroupEnd());  // the outermost end: every copy's sends and receives in one launch
#endif
  end_timing(stream_);
  if (group_moved_) ++calls_;
}

// The rows through host memory and MPI (Comm::exchange): the stream's work
// first, the sent rows copied out, the received ones copied in (or into
// `inbox`, in list order, for the caller to add).
template <class T>
void DeviceRows::host_transfer(T* field, int pitch, const std::vector<std::vector<SlabRows::RowCopy>>& wanted,
                               T* inbox) {
  const int me = slabs_->rank(), n = slabs_->ranks();
  const size_t row = static_cast<size_t>(pitch);
  auto at_row = [&](int r) { return field + static_cast<size_t>(r + 1) * row; };
  std::vector<std::vector<T>> out(static_cast<size_t>(n)), in(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    auto& o = out[static_cast<size_t>(q)];
    for (const SlabRows::RowCopy& w : wanted[static_cast<size_t>(q)])
      if (w.owner == me) o.resize(o.size() + row);
    size_t at = 0;
    for (const RowRun& r : row_runs(wanted[static_cast<size_t>(q)], q)) {
      if (r.owner != me) continue;
      const size_t count = r.count * row;
      SIM_CUDA_CHECK(
          cudaMemcpyAsync(o.data() + at, at_row(r.src), count * sizeof(T), cudaMemcpyDeviceToHost, stream_));
      at += count;
    }
  }
  for (const SlabRows::RowCopy& w : wanted[static_cast<size_t>(me)])
    if (w.owner != me) in[static_cast<size_t>(w.owner)].resize(in[static_cast<size_t>(w.owner)].size() + row);
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<SendBuffer> sends;
  std::vector<RecvBuffer> recvs;
  for (int q = 0; q < n; ++q) {
    auto& o = out[static_cast<size_t>(q)];
    auto& i = in[static_cast<size_t>(q)];
    if (!o.empty()) sends.push_back({q, 6, o.data(), o.size() * sizeof(T)});
    if (!i.empty()) recvs.push_back({q, 6, i.data(), i.size() * sizeof(T)});
  }
  slabs_->comm().exchange(sends, recvs);
  std::vector<size_t> next(static_cast<size_t>(n), 0);  // rows taken from each source's message
  for (const RowRun& r : row_runs(wanted[static_cast<size_t>(me)], me)) {
    const size_t count = r.count * row;
    const T* src = in[static_cast<size_t>(r.owner)].data() + next[static_cast<size_t>(r.owner)] * row;
    next[static_cast<size_t>(r.owner)] += static_cast<size_t>(r.count);
    T* dst = inbox ? inbox + r.slot * row : at_row(r.dst);
    SIM_CUDA_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyHostToDevice, stream_));
  }
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before `in` goes
}

template <class T>
void DeviceRows::copy_rows(T* field, int pitch, const std::vector<std::vector<SlabRows::RowCopy>>& wanted) {
  if (!slabs_) return;
  join();
  transfer(field, pitch, wanted, false, stream_);
}

template <class T>
void DeviceRows::copy_rows_beside(T* field, int pitch, const std::vector<std::vector<SlabRows::RowCopy>>& wanted) {
  if (!slabs_) return;
  join();
  if (host_) return (void)transfer(field, pitch, wanted, false, stream_);
  SIM_CUDA_CHECK(cudaEventRecord(ready_, stream_));
  SIM_CUDA_CHECK(cudaStreamWaitEvent(side_, ready_, 0));
  if (!transfer(field, pitch, wanted, false, side_)) return;
  SIM_CUDA_CHECK(cudaEventRecord(done_, side_));
  pending_ = true;
}

void DeviceRows::join() {
  if (!pending_) return;
  pending_ = false;
  SIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, done_, 0));
}

template <class T>
void DeviceRows::fold(T* field, Stagger s) {
  if (!slabs_) return;
  join();
  transfer(field, pitch_, slabs_->fold_plan(s), true, stream_);
  for (const int r : slabs_->borrowed(s))
    SIM_CUDA_CHECK(cudaMemsetAsync(field + static_cast<size_t>(r + 1) * pitch_, 0, sizeof(T) * pitch_, stream_));
}

template void DeviceRows::copy_rows<float>(float*, int, const std::vector<std::vector<SlabRows::RowCopy>>&);
template void DeviceRows::copy_rows<double>(double*, int, const std::vector<std::vector<SlabRows::RowCopy>>&);
template void DeviceRows::copy_rows<unsigned long long>(unsigned long long*, int,
                                                        const std::vector<std::vector<SlabRows::RowCopy>>&);
template void DeviceRows::copy_rows_beside<float>(float*, int, const std::vector<std::vector<SlabRows::RowCopy>>&);
template void DeviceRows::copy_rows_beside<double>(double*, int, const std::vector<std::vector<SlabRows::RowCopy>>&);
template void DeviceRows::fold<float>(float*, Stagger);
template void DeviceRows::fold<unsigned long long>(unsigned long long*, Stagger);

}  // namespace sim::cuda
