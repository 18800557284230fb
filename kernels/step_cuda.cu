/* kernels/step_cuda.cu: the step's right-hand sides, the state scan and
 * the state hash on the device (step_cuda.h), in _rn intrinsics: one rounding per operation,
 * in the host's order. */
#include "step_cuda.h"

#include "grid_cuda.cuh"
#include "hashrng.h"

#include <math.h>

#define SC_MAXGRID 256 /* the scan's blocks: STEP_SCAN_SCRATCH / 8 */

__global__ void sc_gs_kernel(size_t npts, double dt, double F, double k, const double *w, const double *c, double *b)
{
  GRID_LOOP(i_, npts)
  {
    double u = w[2 * i_], v = w[2 * i_ + 1];
    double q = __dmul_rn(__dmul_rn(c ? c[i_] : u, v), v);
    b[2 * i_]     = __dadd_rn(u, __dmul_rn(dt, __dadd_rn(-q, __dmul_rn(F, __dsub_rn(1.0, u)))));
    b[2 * i_ + 1] = __dadd_rn(v, __dmul_rn(dt, __dsub_rn(q, __dmul_rn(__dadd_rn(F, k), v))));
  }
}

extern "C" int step_cuda_gs_rhs(size_t npts, double dt, double F, double k, const double *w, const double *c, double *b)
{
  if (!npts) return 0;
  sc_gs_kernel<<<grid_blocks(npts, GRID_MAX), GRID_THREADS>>>(npts, dt, F, k, w, c, b);
  return (int)cudaGetLastError();
}

/* u* at grid point (i, j), -1 <= i <= M, -1 <= j <= N, time factor e */
__device__ __forceinline__ double sc_exact(const step_heat_t &h, int i, int j, double e)
{
  return __dmul_rn(__dmul_rn(e, h.sx[i + 1]), h.cy[j + 1]);
}

__global__ void sc_heat_kernel(const step_heat_t h, const double *u, double *b)
{
  GRID_LOOP(i_, (size_t)h.xm * h.ym)
  {
    int           il = (int)(i_ % (size_t)h.xm), jl = (int)(i_ / (size_t)h.xm), i = h.xs + il, j = h.ys + jl;
    const double *gw = h.g, *ge = gw + h.ym, *gs = ge + h.ym, *gn = gs + h.xm;
    double        p = u[i_];
    double W  = il > 0 ? u[i_ - 1] : i > 0 ? gw[jl] : sc_exact(h, i - 1, j, h.e0);
    double E  = il < h.xm - 1 ? u[i_ + 1] : i < h.M - 1 ? ge[jl] : sc_exact(h, i + 1, j, h.e0);
    double S  = jl > 0 ? u[i_ - h.xm] : j > 0 ? gs[il] : sc_exact(h, i, j - 1, h.e0);
    double Nn = jl < h.ym - 1 ? u[i_ + h.xm] : j < h.N - 1 ? gn[il] : sc_exact(h, i, j + 1, h.e0);
    double lap = __dadd_rn(__dmul_rn(__dadd_rn(__dsub_rn(W, p), __dsub_rn(E, p)), h.ihx2),
                           __dmul_rn(__dadd_rn(__dsub_rn(S, p), __dsub_rn(Nn, p)), h.ihy2));
    double bx  = __dadd_rn(i == 0 ? sc_exact(h, -1, j, h.e1) : 0.0,
                           i == h.M - 1 ? __dmul_rn(__dmul_rn(h.e1, h.sx1), h.cy[j + 1]) : 0.0);
    double by  = __dadd_rn(j == 0 ? sc_exact(h, i, -1, h.e1) : 0.0,
                           j == h.N - 1 ? __dmul_rn(__dmul_rn(h.e1, h.sx[i + 1]), h.cy1) : 0.0);
    double bnd = __dadd_rn(__dmul_rn(bx, h.ihx2), __dmul_rn(by, h.ihy2));
    double f   = __dadd_rn(__dmul_rn(h.f_new, sc_exact(h, i, j, h.e1)), __dmul_rn(h.f_old, sc_exact(h, i, j, h.e0)));
    double pb  = __dadd_rn(__dadd_rn(p, __dmul_rn(h.c_old, lap)), __dmul_rn(h.c_new, bnd));
    b[i_]      = __dadd_rn(pb, __dmul_rn(h.dt, f));
  }
}

extern "C" int step_cuda_heat_rhs(const step_heat_t *h, const double *u, double *b)
{
  size_t n = (size_t)h->xm * h->ym;
  if (!n) return 0;
  sc_heat_kernel<<<grid_blocks(n, GRID_MAX), GRID_THREADS>>>(*h, u, b);
  return (int)cudaGetLastError();
}

/* The scan's partial: the first smallest and largest non-NaN entries with
 * their indices (a tie of equal values goes to the lower index: order-free),
 * and the flags. */
typedef struct {
  double             lo, hi, nanv;
  unsigned long long li, hi_i, nan_i; /* nan_i: 1 + the last NaN's index, 0 for none */
  int                nonfinite;
} sc_part;

__host__ __device__ __forceinline__ void sc_merge(sc_part *a, const sc_part *b)
{
  if (b->lo < a->lo || (b->lo == a->lo && b->li < a->li)) a->lo = b->lo, a->li = b->li;
  if (b->hi > a->hi || (b->hi == a->hi && b->hi_i < a->hi_i)) a->hi = b->hi, a->hi_i = b->hi_i;
  if (b->nan_i > a->nan_i) a->nanv = b->nanv, a->nan_i = b->nan_i;
  a->nonfinite |= b->nonfinite;
}

__device__ __forceinline__ double sc_index(unsigned long long i) { return i == ~0ULL ? -1.0 : (double)i; }
static unsigned long long sc_unindex(double d) { return d < 0 ? ~0ULL : (unsigned long long)d; }

__global__ void sc_scan_kernel(size_t n, const double *x, double *out)
{
  __shared__ sc_part sh[GRID_THREADS];
  int                t = threadIdx.x;
  sc_part            m = {INFINITY, -INFINITY, 0.0, ~0ULL, ~0ULL, 0, 0};

  GRID_LOOP(i_, n)
  { /* ascending indices: a strict comparison keeps the first */
    double v = x[i_];
    if (v != v) {
      m.nanv = v, m.nan_i = i_ + 1; /* ascending: the last one stays */
      m.nonfinite = 1;
    }
    else {
      if (v < m.lo || (v == m.lo && i_ < m.li)) m.lo = v, m.li = i_;
      if (v > m.hi || (v == m.hi && i_ < m.hi_i)) m.hi = v, m.hi_i = i_;
      if (isinf(v)) m.nonfinite = 1;
    }
  }
  sh[t] = m;
  __syncthreads();
  for (int h = GRID_THREADS / 2; h > 0; h >>= 1) {
    if (t < h) sc_merge(&sh[t], &sh[t + h]);
    __syncthreads();
  }
  if (t == 0) {
    double *o = out + 8 * blockIdx.x; /* indices below 2^53: exact as doubles; none: -1 */
    o[0] = sh[0].lo, o[1] = sc_index(sh[0].li), o[2] = sh[0].hi, o[3] = sc_index(sh[0].hi_i);
    o[4] = sh[0].nanv, o[5] = (double)sh[0].nan_i, o[6] = sh[0].nonfinite;
  }
}

extern "C" int step_cuda_scan(size_t n, const double *x, double *scratch, step_scan_t *out)
{
  double   h[STEP_SCAN_SCRATCH];
  unsigned g = grid_blocks(n, SC_MAXGRID);
  sc_part  m = {INFINITY, -INFINITY, 0.0, ~0ULL, ~0ULL, 0, 0};

  if (n) {
    int e;
    sc_scan_kernel<<<g, GRID_THREADS>>>(n, x, scratch);
    if ((e = (int)cudaGetLastError())) return e;
    if ((e = (int)cudaMemcpy(h, scratch, 8 * g * sizeof(double), cudaMemcpyDeviceToHost))) return e;
    for (unsigned k = 0; k < g; k++) { /* the blocks in any order: each merge is order-free */
      const double *o = h + 8 * k;
      sc_part       p = {o[0], o[2], o[4], sc_unindex(o[1]), sc_unindex(o[3]), (unsigned long long)o[5], o[6] != 0};
      sc_merge(&m, &p);
    }
  }
  out->lo = m.lo, out->hi = m.hi, out->nanv = m.nanv, out->nan = m.nan_i != 0, out->nonfinite = m.nonfinite;
  return 0;
}

/* Each block's sum of hash terms into out[block]: integers mod 2^64, exact in any order. */
__global__ void sc_hash_kernel(size_t n, size_t xm, size_t xs, size_t ys, size_t M, size_t dof, const double *x,
                               unsigned long long *out)
{
  __shared__ unsigned long long sh[GRID_THREADS];
  int                           t = threadIdx.x;
  unsigned long long            h = 0;

  GRID_LOOP(o, n)
  {
    size_t p = o / dof, c = o % dof, i = xs + p % xm, j = ys + p / xm;
    h += hash_term((j * M + i) * dof + c, x[o]);
  }
  sh[t] = h;
  __syncthreads();
  for (int k = GRID_THREADS / 2; k > 0; k >>= 1) {
    if (t < k) sh[t] += sh[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = sh[0];
}

extern "C" int step_cuda_hash(size_t xm, size_t ym, size_t xs, size_t ys, size_t M, size_t dof, const double *x,
                              double *scratch, uint64_t *out)
{
  size_t             n = xm * ym * dof;
  unsigned           g = grid_blocks(n, SC_MAXGRID);
  unsigned long long h[SC_MAXGRID];
  int                e;

  *out = 0;
  if (!n) return 0;
  sc_hash_kernel<<<g, GRID_THREADS>>>(n, xm, xs, ys, M, dof, x, (unsigned long long *)scratch);
  if ((e = (int)cudaGetLastError())) return e;
  if ((e = (int)cudaMemcpy(h, scratch, g * sizeof *h, cudaMemcpyDeviceToHost))) return e;
  for (unsigned k = 0; k < g; k++) *out += h[k];
  return 0;
}
