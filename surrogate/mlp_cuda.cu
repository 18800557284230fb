/* surrogate/mlp_cuda.cu: the CUDA MLP engine: normalization, forward,
 * backward-data and Adam kernels, one thread per sample (or parameter), with
 * exactly the arithmetic of backend_cpu.c (surrogate_math.h: _rn intrinsics,
 * k and j loops in index order); batch reductions in kernels/gradsum_cuda.cu
 * and kernels/gsum_cuda.cu; the device itself (whether one is usable, first
 * contact, selection, page-locked memory, peak figures) in device_cuda.cu.
 * A train step copies the inputs in once (none from a resident batch); only
 * the per-parameter partials (KBs) cross back to the host, in one copy at the
 * end of the step (F4), where ranks and strategies combine them. */
#include "mlp_cuda.h"

#include "gradsum_cuda.h"

#include <cuda_runtime.h>
#include <stdlib.h>

#define MAXL 16
#define TPB  128

struct mlp_cuda {
  int       nlayer;
  size_t    dim[MAXL + 1], woff[MAXL], boff[MAXL], nparam, cap, maxdim;
  float    *w, *m, *v, *g, *norm; /* device */
  float    *in, *tgt, *A[MAXL + 1], *D[2], *E;
  float    *ck; /* ABFT references: 4 per-sample rows + one |matrix| [maxdim][cap]; allocated with checks on */
  gradsum_ws ws; /* gradient sums: their results reach the host once per step */
  float     *hb, *db; /* a layer's row maxima, then the bounds of its exponents (2 maxdim): host, device */
  float     *rin, *rtgt, *rout; /* the resident batch (mlp_cuda_batch): read and written in place */
  size_t     rcap;
};

/* A layer's dout*(din+1) weight-gradient sums are formed MLP_PAIR_CHUNK pairs at
 * a time, in whole rows: gradsum's device scratch and pending
 * results stay bounded for any width, where one call per layer asked 128 GB
 * at width 40000. Each pair's sum does not depend on the pairs beside it in a
 * call: the same bits in every strategy. The emulation sets it small so that
 * its tests cross chunk edges. */
#ifndef MLP_PAIR_CHUNK
#define MLP_PAIR_CHUNK ((size_t)1 << 20)
#endif
static size_t layer_rows(size_t din)
{
  return MLP_PAIR_CHUNK / (din + 1) ? MLP_PAIR_CHUNK / (din + 1) : 1;
} /* rows of W per call */

#define CK(x) \
  do { \
    int e_ = (int)(x); \
    if (e_ != 0) return e_; \
  } while (0)

__global__ void k_normalize(size_t n, size_t nin, size_t cap, const float *in, const float *mu, const float *sd,
                            float *A0)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (size_t f = 0; f < nin; f++) A0[f * cap + i] = surr_normalize(in[i * nin + f], mu[f], sd[f]);
}

/* Per sample: z_j = sum_k W[j][k] in_k in k order, FT outputs per pass over
 * the sample's inputs (each input read dout/FT times, not dout
 * times); every output's own chain is unchanged, so are its bits. */
#define FT 4
__global__ void k_forward(const float *W, const float *b, size_t din, size_t dout, const float *in, float *out,
                          size_t n, size_t cap, int hidden)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (size_t j0 = 0; j0 < dout; j0 += FT) {
    size_t nj = dout - j0 < FT ? dout - j0 : FT;
    float  acc[FT];
#pragma unroll
    for (int t = 0; t < FT; t++) acc[t] = 0.0f;
    for (size_t k = 0; k < din; k++) {
      float x = in[k * cap + i];
#pragma unroll
      for (int t = 0; t < FT; t++)
        if ((size_t)t < nj) acc[t] = surr_madd(acc[t], W[(j0 + t) * din + k], x);
    }
    for (size_t t = 0; t < nj; t++) {
      float z               = SURR_ADD(acc[t], b[j0 + t]);
      out[(j0 + t) * cap + i] = hidden ? surr_act(z) : z;
    }
  }
}

/* The same products with a register tile of FT outputs x SPT samples per
 * thread (-surrogate_cuda_kernels gemm): each weight read serves SPT samples
 * (k_forward reads one weight per multiply-add); thread t of a block takes
 * samples base + t + s TPB, so every load of a row stays coalesced. Each
 * output's chain, its k order and its operations are k_forward's: the same
 * bits. */
#define SPT 4
/* acc[t][s] = the chain over q < nq of w_tq v_q(sample s), w_tq = W[t wt + q
 * wq] (0 for t >= nt), v_q = v[q cap + i]: the register tile of
 * k_forward_tile (t outputs, q inputs) and k_backdata_tile (t inputs, q
 * outputs). */
__device__ __forceinline__ void tile_chains(const float *W, size_t wt, size_t wq, size_t nt, const float *v, size_t nq,
                                            size_t cap, size_t i0, size_t n, float acc[FT][SPT])
{
#pragma unroll
  for (int t = 0; t < FT; t++)
#pragma unroll
    for (int s = 0; s < SPT; s++) acc[t][s] = 0.0f;
  for (size_t q = 0; q < nq; q++) {
    float x[SPT];
#pragma unroll
    for (int s = 0; s < SPT; s++) {
      size_t i = i0 + (size_t)s * blockDim.x;
      x[s]     = i < n ? v[q * cap + i] : 0.0f;
    }
#pragma unroll
    for (int t = 0; t < FT; t++) {
      float w = (size_t)t < nt ? W[t * wt + q * wq] : 0.0f;
#pragma unroll
      for (int s = 0; s < SPT; s++) acc[t][s] = surr_madd(acc[t][s], w, x[s]);
    }
  }
}

__global__ void k_forward_tile(const float *W, const float *b, size_t din, size_t dout, const float *in, float *out,
                               size_t n, size_t cap, int hidden)
{
  size_t i0 = blockIdx.x * (size_t)blockDim.x * SPT + threadIdx.x;
  if (i0 >= n) return;
  for (size_t j0 = 0; j0 < dout; j0 += FT) {
    size_t nj = dout - j0 < FT ? dout - j0 : FT;
    float  acc[FT][SPT];
    tile_chains(W + j0 * din, din, 1, nj, in, din, cap, i0, n, acc);
    for (size_t t = 0; t < nj; t++)
#pragma unroll
      for (int s = 0; s < SPT; s++) {
        size_t i = i0 + (size_t)s * blockDim.x;
        if (i >= n) continue;
        float z                 = SURR_ADD(acc[t][s], b[j0 + t]);
        out[(j0 + t) * cap + i] = hidden ? surr_act(z) : z;
      }
  }
}

__global__ void k_output(size_t n, size_t nout, size_t cap, const float *z, const float *tgt, const float *mu,
                         const float *sd, float cscale, float *D, float *E)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (size_t j = 0; j < nout; j++) {
    float e          = SURR_SUB(z[j * cap + i], surr_normalize(tgt[i * nout + j], mu[j], sd[j]));
    D[j * cap + i]   = SURR_MUL(cscale, e);
    E[j * n + i]     = e;
  }
}

__global__ void k_denormalize(size_t n, size_t nout, size_t cap, const float *z, const float *mu, const float *sd,
                              float *out)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (size_t j = 0; j < nout; j++) out[i * nout + j] = surr_denormalize(z[j * cap + i], mu[j], sd[j]);
}

/* Per sample: dprev_k = act'(sum_j W[j][k] d_j in j order), FT inputs per
 * pass over the sample's deltas (F2), each chain as before. */
__global__ void k_backdata(const float *W, size_t din, size_t dout, const float *d, const float *aprev, float *dprev,
                           size_t n, size_t cap)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (size_t k0 = 0; k0 < din; k0 += FT) {
    size_t nk = din - k0 < FT ? din - k0 : FT;
    float  acc[FT];
#pragma unroll
    for (int t = 0; t < FT; t++) acc[t] = 0.0f;
    for (size_t j = 0; j < dout; j++) {
      float dj = d[j * cap + i];
#pragma unroll
      for (int t = 0; t < FT; t++)
        if ((size_t)t < nk) acc[t] = surr_madd(acc[t], W[j * din + k0 + t], dj);
    }
    for (size_t t = 0; t < nk; t++) dprev[(k0 + t) * cap + i] = surr_act_grad(acc[t], aprev[(k0 + t) * cap + i]);
  }
}

/* k_backdata with k_forward_tile's register tile (FT inputs x SPT samples):
 * each chain, its j order and its operations as k_backdata's: the same bits. */
__global__ void k_backdata_tile(const float *W, size_t din, size_t dout, const float *d, const float *aprev,
                                float *dprev, size_t n, size_t cap)
{
  size_t i0 = blockIdx.x * (size_t)blockDim.x * SPT + threadIdx.x;
  if (i0 >= n) return;
  for (size_t k0 = 0; k0 < din; k0 += FT) {
    size_t nk = din - k0 < FT ? din - k0 : FT;
    float  acc[FT][SPT];
    tile_chains(W + k0, 1, din, nk, d, dout, cap, i0, n, acc);
    for (size_t t = 0; t < nk; t++)
#pragma unroll
      for (int s = 0; s < SPT; s++) {
        size_t i = i0 + (size_t)s * blockDim.x;
        if (i < n) dprev[(k0 + t) * cap + i] = surr_act_grad(acc[t][s], aprev[(k0 + t) * cap + i]);
      }
  }
}

/* Per-sample sums for the ABFT gradient references (float, index order):
 * asum = sum_k a_k + 1, aabs = sum_k |a_k| + 1, dsum = sum_j d_j, dabs = sum_j |d_j|. */
__global__ void k_cksums(size_t din, size_t dout, const float *a, const float *d, size_t n, size_t cap, float *asum,
                         float *aabs, float *dsum, float *dabs)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f, sa = 0.0f, t = 0.0f, ta = 0.0f;
  for (size_t k = 0; k < din; k++) s = SURR_ADD(s, a[k * cap + i]), sa = SURR_ADD(sa, fabsf(a[k * cap + i]));
  for (size_t j = 0; j < dout; j++) t = SURR_ADD(t, d[j * cap + i]), ta = SURR_ADD(ta, fabsf(d[j * cap + i]));
  asum[i] = SURR_ADD(s, 1.0f), aabs[i] = SURR_ADD(sa, 1.0f), dsum[i] = t, dabs[i] = ta;
}

__global__ void k_abs(size_t rows, const float *x, size_t n, size_t cap, float *y)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (size_t r = 0; r < rows; r++) y[r * cap + i] = fabsf(x[r * cap + i]);
}

__global__ void k_adam(size_t np, float *w, float *m, float *v, const float *g, surr_adam_coef c)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < np) surr_adam(&w[i], &m[i], &v[i], g[i], c);
}

/* Blocks for n samples. A rank may hold no samples (the batch is split over
 * ranks): its per-sample launches are skipped (a GPU refuses an empty grid),
 * and its gradient partials are gradsum_cuda's empty sums. */
static unsigned nblk(size_t n) { return (unsigned)((n + TPB - 1) / TPB); }
static unsigned nblk_tile(size_t n) { return (unsigned)((n + (size_t)TPB * SPT - 1) / ((size_t)TPB * SPT)); }

extern "C" void mlp_cuda_set_gemm(mlp_cuda *m, int on) { m->ws.gemm = on; }

extern "C" int mlp_cuda_create(int nlayer, const long long *dim, const size_t *woff, const size_t *boff, size_t nparam,
                               mlp_cuda **out)
{
  mlp_cuda *m = (mlp_cuda *)calloc(1, sizeof *m);
  if (!m || nlayer > MAXL) return (int)cudaErrorMemoryAllocation;
  *out = m;
  m->nlayer = nlayer, m->nparam = nparam;
  for (int l = 0; l <= nlayer; l++)
    m->dim[l] = (size_t)dim[l], m->maxdim = m->dim[l] > m->maxdim ? m->dim[l] : m->maxdim;
  for (int l = 0; l < nlayer; l++) m->woff[l] = woff[l], m->boff[l] = boff[l];
  CK(cudaMalloc(&m->w, 4 * nparam * sizeof(float)));
  m->m = m->w + nparam, m->v = m->m + nparam, m->g = m->v + nparam;
  CK(cudaMalloc(&m->norm, 2 * (m->dim[0] + m->dim[nlayer]) * sizeof(float)));
  if (!(m->hb = (float *)malloc(2 * m->maxdim * sizeof *m->hb))) return (int)cudaErrorMemoryAllocation;
  CK(cudaMalloc(&m->db, 2 * m->maxdim * sizeof(float)));
  return 0;
}

static void free_batch(mlp_cuda *m)
{
  cudaFree(m->in), cudaFree(m->tgt), cudaFree(m->D[0]), cudaFree(m->D[1]), cudaFree(m->E), cudaFree(m->ck);
  m->ck = nullptr;
  for (int l = 0; l <= m->nlayer; l++) cudaFree(m->A[l]), m->A[l] = nullptr;
  m->in = m->tgt = m->D[0] = m->D[1] = m->E = nullptr;
  m->cap = 0;
}

static int reserve(mlp_cuda *m, size_t n)
{
  if (n <= m->cap) return 0;
  free_batch(m);
  size_t nin = m->dim[0], nout = m->dim[m->nlayer];
  CK(cudaMalloc(&m->in, n * nin * sizeof(float)));
  CK(cudaMalloc(&m->tgt, n * nout * sizeof(float)));
  CK(cudaMalloc(&m->E, n * nout * sizeof(float)));
  CK(cudaMalloc(&m->D[0], n * m->maxdim * sizeof(float)));
  CK(cudaMalloc(&m->D[1], n * m->maxdim * sizeof(float)));
  for (int l = 0; l <= m->nlayer; l++) CK(cudaMalloc(&m->A[l], n * m->dim[l] * sizeof(float)));
  m->cap = n;
  return 0;
}

extern "C" int mlp_cuda_set_state(mlp_cuda *m, const float *w, const float *mo, const float *v)
{
  CK(cudaMemcpy(m->w, w, m->nparam * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(m->m, mo, m->nparam * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(m->v, v, m->nparam * sizeof(float), cudaMemcpyHostToDevice));
  return 0;
}

extern "C" int mlp_cuda_get_state(mlp_cuda *m, float *w, float *mo, float *v)
{
  CK(cudaMemcpy(w, m->w, m->nparam * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(mo, m->m, m->nparam * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(v, m->v, m->nparam * sizeof(float), cudaMemcpyDeviceToHost));
  return 0;
}

/* resident: in is on the device (the resident batch), else on the host */
static int forward(mlp_cuda *m, size_t n, const float *in, const float *norm, int resident)
{
  size_t nin = m->dim[0], nout = m->dim[m->nlayer];
  CK(reserve(m, n));
  CK(cudaMemcpy(m->norm, norm, 2 * (nin + nout) * sizeof(float), cudaMemcpyHostToDevice));
  if (!resident) {
    CK(cudaMemcpy(m->in, in, n * nin * sizeof(float), cudaMemcpyHostToDevice));
    in = m->in;
  }
  if (n) k_normalize<<<nblk(n), TPB>>>(n, nin, m->cap, in, m->norm, m->norm + nin, m->A[0]);
  for (int l = 0; l < m->nlayer; l++)
    if (n && m->ws.gemm)
      k_forward_tile<<<nblk_tile(n), TPB>>>(m->w + m->woff[l], m->w + m->boff[l], m->dim[l], m->dim[l + 1], m->A[l],
                                            m->A[l + 1], n, m->cap, l + 1 < m->nlayer);
    else if (n)
      k_forward<<<nblk(n), TPB>>>(m->w + m->woff[l], m->w + m->boff[l], m->dim[l], m->dim[l + 1], m->A[l], m->A[l + 1],
                                  n, m->cap, l + 1 < m->nlayer);
  return (int)cudaGetLastError();
}

static int predict(mlp_cuda *m, size_t n, const float *in, const float *norm, float *out, int resident)
{
  size_t nin = m->dim[0], nout = m->dim[m->nlayer];
  CK(forward(m, n, in, norm, resident));
  if (n)
    k_denormalize<<<nblk(n), TPB>>>(n, nout, m->cap, m->A[m->nlayer], m->norm + 2 * nin, m->norm + 2 * nin + nout,
                                    resident ? out : m->D[0]);
  CK(cudaGetLastError()); /* a refused launch leaves D[0] stale: no copy of it (C7) */
  if (!resident) CK(cudaMemcpy(out, m->D[0], n * nout * sizeof(float), cudaMemcpyDeviceToHost));
  return 0;
}

extern "C" int mlp_cuda_predict(mlp_cuda *m, size_t n, const float *in, const float *norm, float *out)
{
  return predict(m, n, in, norm, out, 0);
}

extern "C" int mlp_cuda_predict_resident(mlp_cuda *m, size_t n, const float *in, const float *norm, float *out)
{
  return predict(m, n, in, norm, out, 1);
}

extern "C" int mlp_cuda_batch(mlp_cuda *m, size_t n, float **in, float **tgt, float **out)
{
  if (n > m->rcap) {
    cudaFree(m->rin), cudaFree(m->rtgt), cudaFree(m->rout);
    m->rin = m->rtgt = m->rout = nullptr, m->rcap = 0;
    CK(cudaMalloc(&m->rin, n * m->dim[0] * sizeof(float)));
    CK(cudaMalloc(&m->rtgt, n * m->dim[m->nlayer] * sizeof(float)));
    CK(cudaMalloc(&m->rout, n * m->dim[m->nlayer] * sizeof(float)));
    m->rcap = n;
  }
  *in = m->rin, *tgt = m->rtgt, *out = m->rout;
  return 0;
}

/* Layer l's ABFT references (see mlp_cuda.h) from its delta d and input A[l].
 * gradsum pairs: (x row, y row) with y = 1 for the last pair of each x row;
 * the results land in out at the step's flush. */
static int grad_refs(mlp_cuda *m, red_strategy_t st, int l, const float *d, size_t n, red_partial_t *out)
{
  size_t din = m->dim[l], dout = m->dim[l + 1], cap = m->cap;
  if (!m->ck) CK(cudaMalloc(&m->ck, (m->maxdim + 4) * cap * sizeof(float)));
  float *asum = m->ck, *aabs = asum + cap, *dsum = aabs + cap, *dabs = dsum + cap, *absm = dabs + cap;
  if (n) k_cksums<<<nblk(n), TPB>>>(din, dout, m->A[l], d, n, cap, asum, aabs, dsum, dabs);
  /* rows: x = d_j, y = asum -> out[j]; x = |d_j|, y = aabs -> out[dout+din+1+j] (their y = 1 sums dropped) */
  CK(gradsum_cuda(st, (int)(2 * dout), 1, d, cap, asum, cap, n, &m->ws, gradsum_dst{out, 1, nullptr, 0}));
  if (n) k_abs<<<nblk(n), TPB>>>(dout, d, n, cap, absm);
  CK(gradsum_cuda(st, (int)(2 * dout), 1, absm, cap, aabs, cap, n, &m->ws,
                  gradsum_dst{out + dout + din + 1, 1, nullptr, 0}));
  /* columns: x = dsum, y = a_k -> out[dout+k], and the bias column (y = 1) -> out[dout+din] */
  CK(gradsum_cuda(st, (int)(din + 1), (int)din, dsum, cap, m->A[l], cap, n, &m->ws,
                  gradsum_dst{out + dout, 0, out + dout + din, 0}));
  /* absm is rewritten here: the sums above were launched first on the same stream */
  if (n) k_abs<<<nblk(n), TPB>>>(din, m->A[l], n, cap, absm);
  CK(gradsum_cuda(st, (int)(din + 1), (int)din, dabs, cap, absm, cap, n, &m->ws,
                  gradsum_dst{out + 2 * dout + din + 1, 0, out + 2 * dout + 2 * din + 1, 0}));
  return (int)cudaGetLastError();
}

/* gradsum_cuda's float sums (kernels/gradsum_cuda.cu: GS_CHUNK 4096 samples per
 * block, GS_THREADS 256): each thread adds <= 16 products, the block tree 8
 * levels, then the nc = ceil(N/4096) block partials: ceil(log2 nc) levels
 * (deterministic tree) or nc - 1 additions (atomicAdd, any order). */
extern "C" double mlp_cuda_gradsum_depth(red_strategy_t st, long long N)
{
  double nc = (double)((N + 4095) / 4096), depth = 0.0;
  if (st == RED_DETERMINISTIC)
    while ((double)(1LL << (int)depth) < nc) depth += 1.0;
  else depth = nc > 1 ? nc - 1 : 0;
  return 16 + 8 + depth;
}

static int grad(mlp_cuda *m, red_strategy_t st, size_t n, const float *in, const float *target, const float *norm,
                float cscale, red_partial_t *part, red_partial_t *ck, const size_t *ckoff,
                int (*units)(float *, size_t, int, void *), void *ctx, int resident)
{
  if (st == RED_REPRODUCIBLE && !units) return (int)cudaErrorInvalidValue;
  size_t nin = m->dim[0], nout = m->dim[m->nlayer];
  int    L = m->nlayer, cur = 0, rc;
  CK(forward(m, n, in, norm, resident));
  if (!resident) {
    CK(cudaMemcpy(m->tgt, target, n * nout * sizeof(float), cudaMemcpyHostToDevice));
    target = m->tgt;
  }
  if (n)
    k_output<<<nblk(n), TPB>>>(n, nout, m->cap, m->A[L], target, m->norm + 2 * nin, m->norm + 2 * nin + nout, cscale,
                               m->D[0], m->E);
  /* loss: one pair, sum over all n*nout errors of e*e */
  CK(gradsum_cuda(st, 1, 1, m->E, 0, m->E, 0, n * nout, &m->ws, gradsum_dst{&part[m->nparam], 0, nullptr, 0}));
  for (int l = L - 1; l >= 0; l--) {
    size_t din = m->dim[l], dout = m->dim[l + 1], rows = layer_rows(din);
    float *bnd = m->hb;
    if (st == RED_REPRODUCIBLE) { /* the layer's exponents from its rows' maxima (all ranks) and the last step's */
      CK(gradsum_cuda_rowmax((int)dout, m->D[cur], m->cap, (int)din, m->A[l], m->cap, n, &m->ws, bnd));
      if (units(bnd, dout + din, l, ctx)) return (int)cudaErrorUnknown;
      CK(cudaMemcpy(m->db, bnd, (dout + din) * sizeof *bnd, cudaMemcpyHostToDevice));
    }
    for (size_t j0 = 0; j0 < dout;
         j0 += rows) { /* whole rows j0..: pair (j-j0)*(din+1)+k -> W[j][k], k == din -> b[j] */
      size_t nj = dout - j0 < rows ? dout - j0 : rows;
      gradsum_dst dst{part + m->woff[l] + j0 * din, din, part + m->boff[l] + j0, 1};
      if (st == RED_REPRODUCIBLE) /* kernels/gsum.c's sums, under the layer's exponents */
        CK(gradsum_cuda_outer_at((int)(nj * (din + 1)), (int)din, m->D[cur] + j0 * m->cap, m->cap, m->A[l], m->cap, n,
                                 &m->ws, dst, m->db + j0, m->db + dout));
      else
        CK(gradsum_cuda(st, (int)(nj * (din + 1)), (int)din, m->D[cur] + j0 * m->cap, m->cap, m->A[l], m->cap, n,
                        &m->ws, dst));
    }
    if (ck && (rc = grad_refs(m, st, l, m->D[cur], n, ck + ckoff[l]))) return rc;
    if (l > 0) {
      if (n && m->ws.gemm)
        k_backdata_tile<<<nblk_tile(n), TPB>>>(m->w + m->woff[l], din, dout, m->D[cur], m->A[l], m->D[1 - cur], n,
                                               m->cap);
      else if (n)
        k_backdata<<<nblk(n), TPB>>>(m->w + m->woff[l], din, dout, m->D[cur], m->A[l], m->D[1 - cur], n, m->cap);
      cur = 1 - cur;
    }
  }
  CK(cudaGetLastError());
  return gradsum_cuda_flush(&m->ws); /* every partial of the step in one copy (F4) */
}

extern "C" int mlp_cuda_grad(mlp_cuda *m, red_strategy_t st, size_t n, const float *in, const float *target,
                             const float *norm, float cscale, red_partial_t *part, red_partial_t *ck,
                             const size_t *ckoff, int (*units)(float *, size_t, int, void *), void *ctx)
{
  return grad(m, st, n, in, target, norm, cscale, part, ck, ckoff, units, ctx, 0);
}

extern "C" int mlp_cuda_grad_resident(mlp_cuda *m, red_strategy_t st, size_t n, const float *in, const float *target,
                                      const float *norm, float cscale, red_partial_t *part, red_partial_t *ck,
                                      const size_t *ckoff, int (*units)(float *, size_t, int, void *), void *ctx)
{
  return grad(m, st, n, in, target, norm, cscale, part, ck, ckoff, units, ctx, 1);
}

extern "C" int mlp_cuda_adam(mlp_cuda *m, const float *grad, surr_adam_coef c)
{
  CK(cudaMemcpy(m->g, grad, m->nparam * sizeof(float), cudaMemcpyHostToDevice));
  k_adam<<<nblk(m->nparam), TPB>>>(m->nparam, m->w, m->m, m->v, m->g, c);
  return (int)cudaGetLastError();
}

extern "C" void mlp_cuda_destroy(mlp_cuda *m)
{
  if (!m) return;
  free_batch(m);
  cudaFree(m->rin), cudaFree(m->rtgt), cudaFree(m->rout);
  cudaFree(m->w), cudaFree(m->norm), cudaFree(m->db);
  gradsum_cuda_free(&m->ws);
  free(m->hb);
  free(m);
}
