/* tests/cudaemu/emu.cpp: the emulation's runtime (see cuda_runtime.h).
 * Launch: blocks in a seeded shuffled order, one at a time; a block's threads
 * are ucontext fibers run in a shuffled order until each reaches
 * __syncthreads or returns; a phase in which some threads returned while
 * others wait at a barrier is a divergent barrier (reported, the process
 * exits 3). A launch with an empty grid or block, or more than 1024 threads
 * per block, is cudaErrorInvalidConfiguration, as on a GPU. Memory:
 * allocations are filled with 0xFF bytes (NaN in every float type) and end
 * exactly at a PROT_NONE guard page (a read past the end faults); cudaMemcpy
 * checks that the device side is inside one allocation and the kind matches.
 * Environment: CUDAEMU_SEED (the shuffles' seed, default 1). */
#include "cuda_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sys/mman.h>
#include <csetjmp>
#include <signal.h>
#include <setjmp.h>
#include <ucontext.h>
#include <unistd.h>
#include <algorithm>
#include <vector>

namespace emu {
uint3 *cur_tid;
uint3  block;
dim3   bdim, gdim;

static uint64_t rng = 0;
static uint64_t next(void)
{
  if (!rng) {
    const char *s = getenv("CUDAEMU_SEED");
    rng           = 0x9E3779B97F4A7C15ull * (uint64_t)(s ? strtoull(s, NULL, 10) + 1 : 2);
  }
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
template <class T> static void shuffle(std::vector<T> &v)
{
  for (size_t i = v.size(); i > 1; i--) std::swap(v[i - 1], v[next() % i]);
}

enum { READY, AT_BARRIER, DONE };
/* A fiber is a worker for one thread index of the block: it runs the kernel
 * for one block, reports DONE and waits to be resumed for the next block.
 * Switches are _setjmp/_longjmp (no signal-mask system call); a worker's
 * stack is entered once per launch through its ucontext. */
struct Fiber {
  ucontext_t ctx;
  jmp_buf    jb;
  uint3      tid;
  int        state, started;
  char      *stack;
};
static std::vector<Fiber>           fibers;
static jmp_buf                      sched_jb;
static Fiber                       *running;
static const std::function<void()> *body;
static const size_t                 STACK = 256 * 1024;
static cudaError_t                  last_error = cudaSuccess;
static const char                  *kernel_name = "";

static void worker(void)
{
  for (;;) {
    (*body)();
    running->state = DONE;
    if (!_setjmp(running->jb)) _longjmp(sched_jb, 1);
  }
}

void sync(void)
{
  if (!running) { /* rewrite.py found no __syncthreads in this kernel's body: it is in a function it calls */
    fprintf(stderr, "cudaemu: __syncthreads outside a kernel's own body (kernel %s): not emulated\n", kernel_name);
    exit(3);
  }
  running->state = AT_BARRIER;
  if (!_setjmp(running->jb)) _longjmp(sched_jb, 1);
}

static void fail(const char *what, const char *kernel)
{
  fprintf(stderr, "cudaemu: %s in kernel %s (block %u,%u,%u)\n", what, kernel, block.x, block.y, block.z);
  exit(3);
}

static void resume(Fiber *f)
{
  running = f, cur_tid = &f->tid;
  if (!_setjmp(sched_jb)) {
    if (!f->started) {
      f->started = 1;
      setcontext(&f->ctx);
    }
    _longjmp(f->jb, 1);
  }
}

void launch(dim3 g, dim3 b, const std::function<void()> &k, const char *name, bool use_fibers)
{
  size_t nthreads = (size_t)b.x * b.y * b.z, nblocks = (size_t)g.x * g.y * g.z;
  if (!nthreads || !nblocks || nthreads > 1024 || b.z > 64 || g.y > 65535 || g.z > 65535) {
    last_error = cudaErrorInvalidConfiguration; /* as a GPU: the launch does not run */
    return;
  }
  const char *refuse = getenv("CUDAEMU_FAIL_LAUNCH"); /* a launch the device refuses (e.g. too many registers) */
  if (refuse && !strcmp(refuse, name)) {
    last_error = cudaErrorLaunchOutOfResources;
    return;
  }
  gdim = g, bdim = b, body = &k, kernel_name = name;
  std::vector<uint3> blocks;
  for (unsigned z = 0; z < g.z; z++)
    for (unsigned y = 0; y < g.y; y++)
      for (unsigned x = 0; x < g.x; x++) blocks.push_back(uint3{x, y, z});
  /* CUDAEMU_WAVE=W: a GPU's dispatch instead: blocks in linear order (x
   * fastest), W resident at once and finishing in any order (a shuffle
   * within each group of W). Default: every block order is possible. */
  const char *wave = getenv("CUDAEMU_WAVE");
  size_t      W    = wave ? strtoul(wave, NULL, 10) : 0;
  if (!W) shuffle(blocks);
  for (size_t b0 = 0; W && b0 < blocks.size(); b0 += W) {
    std::vector<uint3> g(blocks.begin() + b0, blocks.begin() + std::min(blocks.size(), b0 + W));
    shuffle(g);
    std::copy(g.begin(), g.end(), blocks.begin() + b0);
  }
  if (!use_fibers) { /* no barrier in the kernel: each thread runs to its end, in a shuffled order */
    std::vector<uint3> tids(nthreads);
    for (size_t t = 0; t < nthreads; t++) tids[t] = uint3{(unsigned)(t % b.x), (unsigned)(t / b.x % b.y), (unsigned)(t / ((size_t)b.x * b.y))};
    running = NULL;
    for (const uint3 &bi : blocks) {
      block = bi;
      shuffle(tids);
      for (uint3 &t : tids) cur_tid = &t, k();
    }
    return;
  }
  if (fibers.size() < nthreads) {
    size_t old = fibers.size();
    fibers.resize(nthreads);
    for (size_t t = old; t < nthreads; t++) fibers[t].stack = (char *)malloc(STACK);
  }
  for (size_t t = 0; t < nthreads; t++) { /* fresh workers for this launch */
    Fiber &f = fibers[t];
    f.tid     = uint3{(unsigned)(t % b.x), (unsigned)(t / b.x % b.y), (unsigned)(t / ((size_t)b.x * b.y))};
    f.started = 0;
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp   = f.stack;
    f.ctx.uc_stack.ss_size = STACK;
    f.ctx.uc_link          = NULL;
    makecontext(&f.ctx, worker, 0);
  }
  std::vector<size_t> order(nthreads);
  for (size_t t = 0; t < nthreads; t++) order[t] = t;
  for (const uint3 &bi : blocks) {
    block = bi;
    for (size_t t = 0; t < nthreads; t++) fibers[t].state = READY;
    for (;;) { /* one phase: every ready thread runs to a barrier or its end, in a shuffled order */
      shuffle(order);
      size_t done = 0;
      for (size_t t : order) {
        Fiber &f = fibers[t];
        if (f.state == READY) resume(&f);
        done += f.state == DONE;
      }
      if (done == nthreads) break;
      if (done) fail("divergent __syncthreads (some threads returned, others wait at a barrier)", name);
      for (size_t t = 0; t < nthreads; t++) fibers[t].state = READY; /* all arrived: release */
    }
  }
  running = NULL;
}

/* ---- memory ------------------------------------------------------------ */
struct Alloc {
  char  *base; /* mapping start */
  size_t maplen, n;
};
static std::map<char *, Alloc> allocs; /* by the user pointer */

static const Alloc *find(const void *p, size_t n)
{
  auto it = allocs.upper_bound((char *)p);
  if (it == allocs.begin()) return NULL;
  --it;
  const char *q = (const char *)p;
  if (q < it->first || q + n > it->first + it->second.n) return NULL;
  return &it->second;
}
bool is_device(const void *p, size_t n) { return find(p, n) != NULL; }

/* A fault in a guard page: an access past the end of a device allocation. */
static void on_segv(int, siginfo_t *si, void *)
{
  char msg[256];
  int  n = snprintf(msg, sizeof msg, "cudaemu: invalid memory access at %p (a guard page: past the end of a device allocation, or outside every allocation) in kernel %s\n", si->si_addr, kernel_name);
  if (n > 0) (void)!write(2, msg, (size_t)n);
  _exit(3);
}
static struct Segv {
  Segv()
  {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags     = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
  }
} segv_handler;
} // namespace emu

using namespace emu;

cudaError_t cudaMallocBytes(void **p, size_t n)
{
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), data = (n + pg - 1) / pg * pg, len = data + pg;
  char  *m  = (char *)mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return last_error = cudaErrorMemoryAllocation;
  mprotect(m + data, pg, PROT_NONE);
  char *user = m + data - n; /* the allocation ends at the guard page */
  memset(user, 0xFF, n);     /* NaN in every float type: uninitialized reads show */
  allocs[user] = Alloc{m, len, n};
  *p           = user;
  return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
  if (!p) return cudaSuccess;
  auto it = allocs.find((char *)p);
  if (it == allocs.end()) {
    fprintf(stderr, "cudaemu: cudaFree of %p, not a device allocation\n", p);
    exit(3);
  }
  munmap(it->second.base, it->second.maplen);
  allocs.erase(it);
  return cudaSuccess;
}

/* Pinned host memory: plain host memory here, NaN-filled like device memory. */
cudaError_t cudaMallocHostBytes(void **p, size_t n)
{
  *p = malloc(n ? n : 1);
  if (!*p) return last_error = cudaErrorMemoryAllocation;
  memset(*p, 0xFF, n);
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void *p)
{
  if (p && find(p, 1)) {
    fprintf(stderr, "cudaemu: cudaFreeHost of %p, a device allocation\n", p);
    exit(3);
  }
  free(p);
  return cudaSuccess;
}

/* The host's waits on the device: a synchronous copy to or from host memory
 * (pageable host memory: the runtime syncs the stream first) and the
 * Synchronize calls. A real device's fixed cost per call is mostly these;
 * test_emu_errors counts a train step's. */
static unsigned long host_waits;
extern "C" unsigned long cudaemu_host_waits(void) { return host_waits; }

static cudaError_t copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
  if (n && (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost)) host_waits++;
  return copy(dst, src, n, kind);
}

static cudaError_t copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
  int dd = find(dst, n) != NULL, sd = find(src, n) != NULL;
  int ok = kind == cudaMemcpyHostToDevice ? dd && !find(src, 1) : kind == cudaMemcpyDeviceToHost ? sd && !find(dst, 1) : kind == cudaMemcpyDeviceToDevice ? dd && sd : 1;
  if (!n) return cudaSuccess;
  if (!ok) {
    fprintf(stderr, "cudaemu: cudaMemcpy of %zu bytes, kind %d: the device side is not inside one allocation (or the kind is wrong)\n", n, (int)kind);
    exit(3);
  }
  memmove(dst, src, n);
  return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int v, size_t n)
{
  if (n && !find(p, n)) {
    fprintf(stderr, "cudaemu: cudaMemset of %zu bytes outside an allocation\n", n);
    exit(3);
  }
  memset(p, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t) { return cudaMemset(p, v, n); }
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t) { return copy(d, s, n, k); } /* one stream: in order; no wait */
cudaError_t cudaGetLastError(void)
{
  cudaError_t e = last_error;
  last_error    = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return last_error; }
const char *cudaGetErrorString(cudaError_t e)
{
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorNoDevice: return "no CUDA-capable device is detected";
  case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
  case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
  default: return "unknown error";
  }
}
/* CUDAEMU_DEVICE_ERROR=35 (or 100, ...): no usable device, for that reason */
cudaError_t cudaGetDeviceCount(int *n)
{
  const char *e = getenv("CUDAEMU_DEVICE_ERROR");
  *n = e ? 0 : 1;
  return e ? (last_error = (cudaError_t)atoi(e)) : cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int *v) { return *v = getenv("CUDAEMU_DEVICE_ERROR") ? 12020 : 13000, cudaSuccess; } /* an old driver with the error */
cudaError_t cudaRuntimeGetVersion(int *v) { return *v = 13000, cudaSuccess; }
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : (last_error = cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int *d) { return *d = 0, cudaSuccess; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d)
{
  if (d) return cudaErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "cudaemu (host emulation)");
  p->totalGlobalMem = (size_t)1 << 30, p->multiProcessorCount = 2, p->major = 9, p->minor = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int) { return *v = a == cudaDevAttrMultiProcessorCount ? 2 : 0, cudaSuccess; } /* compute mode 0: default */
cudaError_t cudaDeviceSynchronize(void) { return host_waits++, cudaSuccess; }
struct emu_event {
  double t;
};
#include <chrono>
cudaError_t cudaEventCreate(cudaEvent_t *e) { return *e = new emu_event{0}, cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) { return e->t = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(), cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return host_waits++, cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { return *ms = (float)(1e3 * (b->t - a->t)), cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t e) { return delete e, cudaSuccess; }
