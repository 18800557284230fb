/* kernels/gsum_cuda.cu: gsum's sums on the GPU (gradsum_cuda.h):
 * the reproducible strategy's weight and bias gradients with kernels/gsum.c's
 * arithmetic, every product rounded once to its pair's unit 2^(ex + ey - 51)
 * and added as an integer (the same integers as the CPU: the emulation tests
 * hold them bitwise). The rows' maxima come from gradsum_cuda_rowmax (the
 * host then fixes the exponents: gsum_units) or from the call itself
 * (gradsum_cuda_outer); the sums wait on the device until gradsum_cuda_flush
 * (gradsum_cuda.cu), which rebuilds each pair with gs_outer_result. The
 * GEMM-style kernel of the same sums is gradsum_gemm_gbins
 * (gradsum_gemm_cuda.cu). */
#include "gradsum_cuda_impl.cuh"

#include <stdlib.h>
#include <string.h>

/* gsum: the largest |x| of each of nrow rows over len samples, as
 * the bits of a non-negative float (+Inf for a row holding an Inf or NaN):
 * atomicMax on them is order-free. Block (row, chunk stride gridDim.y). */
__global__ void gradsum_rowmax_kernel(int nrow, const float *X, size_t ldx, size_t len, int nchunk, unsigned *out)
{
  __shared__ float sh[GS_THREADS];
  int              t = threadIdx.x, row = blockIdx.x;
  float            m = 0.0f;
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) {
      float v = X[(size_t)row * ldx + i], a = fabsf(v);
      m       = !(a <= m) ? (isfinite(v) ? a : INFINITY) : m; /* NaN: +Inf */
    }
  }
  sh[t] = m;
  __syncthreads();
  for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
    if (t < h) sh[t] = fmaxf(sh[t], sh[t + h]);
    __syncthreads();
  }
  if (t == 0 && row < nrow) atomicMax(&out[row], __float_as_uint(sh[0]));
}

/* gsum's sums: bins[(p * nseg + g) * GS_GDIG + k], the digits of the fold
 * sum of pair p over segment g, each product rounded to the pair's unit
 * 2^(ex + ey - 51) from the rows' maxima (xmax, ymax: float bits; the bias
 * column y = 1 has exponent 1). Integer adds: any order, any tiling. A pair
 * with a non-finite bound records which non-finite products it has (nf, as
 * gradsum_absmax_kernel); one with a zero row adds nothing. */
__global__ void gradsum_gbins_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy,
                                     size_t len, int nchunk, int nseg, const unsigned *xmax, const unsigned *ymax,
                                     unsigned long long *nf, unsigned long long *bins)
{
  const int            T = GS_RT, R = 4; /* pairs per round of the block tree: 32 KB */
  __shared__ long long sh[R][GS_GDIG][GS_THREADS];
  int                  t = threadIdx.x;
  gs_tile              g = gs_tile_at(npair, ny, T, blockIdx.x);
  double               sx[T], sy[T]; /* 2^-ex, 2^-ey: 0 for a zero row */
  int                  bad = 0;      /* bit a (x row) or T + b (y column): non-finite bound */
  float                xv[T], yv[T];
  int                  nx = (npair + ny) / (ny + 1);
#pragma unroll
  for (int a = 0; a < T; a++) {
    int e = g.j0 + a < nx ? gsum_exp_of(__uint_as_float(xmax[g.j0 + a])) : GSUM_ZERO;
    sx[a] = e == GSUM_ZERO || e == GSUM_NONFINITE ? 0.0 : ldexp(1.0, -e), bad |= (e == GSUM_NONFINITE) << a;
  }
#pragma unroll
  for (int b = 0; b < T; b++) {
    int k = g.k0 + b, e = k < ny ? gsum_exp_of(__uint_as_float(ymax[k])) : 1;
    sy[b] = e == GSUM_ZERO || e == GSUM_NONFINITE ? 0.0 : ldexp(1.0, -e), bad |= (e == GSUM_NONFINITE) << (T + b);
  }
  unsigned long long f = 0;
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t    s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    long long a0[T * T];
#pragma unroll
    for (int q = 0; q < T * T; q++) a0[q] = 0;
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) {
      gs_load<T>(g, X, ldx, Y, ldy, i, xv, yv);
#pragma unroll
      for (int q = 0; q < T * T; q++) {
        int a = q / T, b = q % T;
        if ((bad >> a & 1) | (bad >> (T + b) & 1)) { /* the sum is its non-finite products' */
          double v = __dmul_rn((double)xv[a], (double)yv[b]);
          if (!isfinite(v)) f |= (v != v ? 1ull : v > 0 ? 2ull : 4ull) << (3 * q);
          continue;
        }
        if (sx[a] == 0.0 || sy[b] == 0.0) continue;
        /* at most GS_CHUNK / GS_THREADS = 16 products of < 2^51 */
        a0[q] += gsum_fold(__dmul_rn(__dmul_rn((double)xv[a], sx[a]), __dmul_rn((double)yv[b], sy[b])));
      }
    }
#pragma unroll
    for (int p0 = 0; p0 < T * T; p0 += R) {
#pragma unroll
      for (int r = 0; r < R; r++) {
        sh[r][0][t] = a0[p0 + r] >> 32, sh[r][1][t] = a0[p0 + r] & 0xffffffffll;
      }
      __syncthreads();
      for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
        if (t < h)
          for (int r = 0; r < R; r++)
            for (int k = 0; k < GS_GDIG; k++) sh[r][k][t] += sh[r][k][t + h];
        __syncthreads();
      }
      if (t < GS_GDIG * R) {
        int r = t / GS_GDIG, k = t % GS_GDIG, p = gs_pair(g, (p0 + r) / T, (p0 + r) % T);
        if (p >= 0)
          atomicAdd(&bins[GS_GDIG * ((size_t)p * nseg + s0 / GS_SEG_LEN) + k], (unsigned long long)sh[r][k][0]);
      }
      __syncthreads();
    }
  }
  __shared__ unsigned long long shf[GS_THREADS]; /* 3 bits per pair */
  shf[t] = f;
  __syncthreads();
  for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
    if (t < h) shf[t] |= shf[t + h];
    __syncthreads();
  }
  int p = t < T * T ? gs_pair(g, t / T, t % T) : -1;
  if (p >= 0 && (shf[0] >> (3 * t) & 7ull)) atomicOr(&nf[p], shf[0] >> (3 * t) & 7ull);
}

/* Layout of an outer call's results: xmax[nx], ymax[ny] (uint, padded to 8
 * bytes), nf[npair], bins[npair * nseg * GS_GDIG]. */
static size_t gs_outer_head(int nx, int ny) { return ((size_t)nx + (size_t)ny + 1) / 2 * 8; }

/* The outer call with its rows' maxima found here (bx NULL: on the device,
 * then rowmax on the host) or given (bx, by: the bounds on the device, nx
 * then ny floats, copied into the call's results for the host's rebuild). */
static int outer_call(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len,
                      gradsum_ws *ws, gradsum_dst dst, gradsum_rowmax_fn rowmax, void *ctx, const float *bx,
                      const float *by)
{
  size_t nch = (len + GS_CHUNK - 1) / GS_CHUNK, off;
  int    nx  = (npair + ny) / (ny + 1), rc;
  if (npair <= 0) return 0;
  if (nch > INT_MAX) return (int)cudaErrorInvalidValue;
  int    nchunk = (int)nch, nseg = (int)gradsum_nseg(len);
  size_t head  = gs_outer_head(nx, ny),
         bytes = head + (size_t)npair * (1 + GS_GDIG * (size_t)nseg) * sizeof(unsigned long long);
  if ((rc = gs_ws_results(ws, bytes, &off))) return rc;
  ws->call[ws->ncall++] = gradsum_call{RED_REPRODUCIBLE, 1, npair, ny, nseg, off, dst};
  char               *res = (char *)ws->res + off;
  unsigned           *xmax = (unsigned *)res, *ymax = xmax + nx;
  unsigned long long *nf = (unsigned long long *)(res + head), *bins = nf + npair;
  CK_GS(cudaMemsetAsync(res, 0, bytes));
  if (bx) { /* the bounds of the rows' exponents, decided before the call */
    CK_GS(cudaMemcpyAsync(xmax, bx, (size_t)nx * sizeof *xmax, cudaMemcpyDeviceToDevice));
    if (ny) CK_GS(cudaMemcpyAsync(ymax, by, (size_t)ny * sizeof *ymax, cudaMemcpyDeviceToDevice));
  } else if (nchunk) {
    size_t nty = nch < GS_GRID_Y ? nch : GS_GRID_Y;
    gradsum_rowmax_kernel<<<dim3((unsigned)nx, (unsigned)nty), GS_THREADS>>>(nx, X, ldx, len, nchunk, xmax);
    if (ny) gradsum_rowmax_kernel<<<dim3((unsigned)ny, (unsigned)nty), GS_THREADS>>>(ny, Y, ldy, len, nchunk, ymax);
  }
  if (!bx && rowmax) { /* the maxima over all ranks: one round trip through the host */
    size_t nrow = (size_t)nx + (size_t)ny;
    float *h    = (float *)malloc(nrow * sizeof *h);
    if (!h) return (int)cudaErrorMemoryAllocation;
    rc = (int)cudaMemcpy(h, xmax, nrow * sizeof *h, cudaMemcpyDeviceToHost);
    if (!rc) rc = rowmax(h, nrow, ctx) ? (int)cudaErrorUnknown : 0;
    if (!rc) rc = (int)cudaMemcpy(xmax, h, nrow * sizeof *h, cudaMemcpyHostToDevice);
    free(h);
    if (rc) return rc;
  }
  if (nchunk && ws->gemm) gradsum_gemm_gbins(npair, ny, X, ldx, Y, ldy, len, nseg, xmax, ymax, nf, bins);
  else if (nchunk) {
    size_t nty = nch < GS_GRID_Y ? nch : GS_GRID_Y;
    gradsum_gbins_kernel<<<dim3((unsigned)gs_ntiles(npair, ny, GS_RT), (unsigned)nty), GS_THREADS>>>(npair, ny, X, ldx,
                                                                                                     Y, ldy, len,
                                                                                                     nchunk, nseg, xmax,
                                                                                                     ymax, nf, bins);
  }
  return (int)cudaGetLastError();
}

extern "C" int gradsum_cuda_outer(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len,
                                  gradsum_ws *ws, gradsum_dst dst, gradsum_rowmax_fn rowmax, void *ctx)
{
  return outer_call(npair, ny, X, ldx, Y, ldy, len, ws, dst, rowmax, ctx, nullptr, nullptr);
}

extern "C" int gradsum_cuda_outer_at(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy,
                                     size_t len, gradsum_ws *ws, gradsum_dst dst, const float *bx, const float *by)
{
  if (!bx || (ny && !by)) return (int)cudaErrorInvalidValue;
  return outer_call(npair, ny, X, ldx, Y, ldy, len, ws, dst, nullptr, nullptr, bx, by);
}

extern "C" int gradsum_cuda_rowmax(int nx, const float *X, size_t ldx, int ny, const float *Y, size_t ldy, size_t len,
                                   gradsum_ws *ws, float *h)
{
  size_t nch = (len + GS_CHUNK - 1) / GS_CHUNK, nrow = (size_t)(nx > 0 ? nx : 0) + (size_t)(ny > 0 ? ny : 0);
  int    rc;
  if (nrow == 0) return 0;
  if (nch > INT_MAX) return (int)cudaErrorInvalidValue;
  if ((rc = gs_ws_scratch(ws, nrow * sizeof(unsigned)))) return rc; /* stream-ordered after any earlier use */
  unsigned *d = (unsigned *)ws->dev;
  CK_GS(cudaMemsetAsync(d, 0, nrow * sizeof(unsigned)));
  if (nch) {
    size_t nty = nch < GS_GRID_Y ? nch : GS_GRID_Y;
    if (nx > 0) gradsum_rowmax_kernel<<<dim3((unsigned)nx, (unsigned)nty), GS_THREADS>>>(nx, X, ldx, len, (int)nch, d);
    if (ny > 0)
      gradsum_rowmax_kernel<<<dim3((unsigned)ny, (unsigned)nty), GS_THREADS>>>(ny, Y, ldy, len, (int)nch,
                                                                               d + (nx > 0 ? nx : 0));
  }
  return (int)cudaMemcpy(h, d, nrow * sizeof *h, cudaMemcpyDeviceToHost); /* both blocks' maxima in one wait */
}

/* An outer call's pair p on the host: the gsum state from the digits of its
 * segments, then gsum_to_rsum (the CPU's conversion: the same rsum state). */
void gs_outer_result(const gradsum_call *c, const char *h, size_t p, red_partial_t *d)
{
  int                       nx = (c->npair + c->ny) / (c->ny + 1);
  const unsigned           *xmax = (const unsigned *)h, *ymax = xmax + nx;
  const unsigned long long *nf = (const unsigned long long *)(h + gs_outer_head(nx, c->ny)), *bins = nf + c->npair;
  size_t                    j = p / ((size_t)c->ny + 1), k = p % ((size_t)c->ny + 1);
  float                     fx, fy = 1.0f;
  memcpy(&fx, &xmax[j], sizeof fx);
  if (k < (size_t)c->ny) memcpy(&fy, &ymax[k], sizeof fy);
  gsum_t g;
  gsum_init(&g);
  for (int s = 0; s < c->nseg; s++) {
    const long long *b = (const long long *)&bins[GS_GDIG * (p * (size_t)c->nseg + (size_t)s)];
    g.c += (__int128)b[0] * ((__int128)1 << 32) + b[1];
  }
  if (nf[p]) { /* the sum of the non-finite products: NaN with a NaN or both infinities, else the infinity */
    g.nonfinite = 1;
    g.special   = (nf[p] & 1) || (nf[p] & 6) == 6 ? (double)NAN : nf[p] & 2 ? (double)INFINITY : -(double)INFINITY;
  }
  gsum_to_rsum(&g, gsum_exp_of(fx), gsum_exp_of(fy), &d->r);
  d->d = gsum_half_unit(gsum_exp_of(fx), gsum_exp_of(fy)); /* as the CPU's: the ABFT checks' bound */
}
