/* surrogate/mlp_cuda.h: plain-C interface of the CUDA MLP engine (mlp_cuda.cu),
 * free of PETSc so that nvcc never sees PETSc headers; backend_cuda.c wraps it
 * in PETSc error frames. Functions return 0 or a cudaError_t value. */
#ifndef MINIAPP_SURROGATE_MLP_CUDA_H
#define MINIAPP_SURROGATE_MLP_CUDA_H

#include "reduce.h"
#include "surrogate_math.h"
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
typedef struct mlp_cuda mlp_cuda;

int         mlp_cuda_available(void); /* 1: cudaGetDeviceCount > 0, else 0 */
int         mlp_cuda_device_count(void); /* 0 when none */
int mlp_cuda_probe(char *buf, size_t len);     /* versions, device 0, compute mode, a checked launch: one line in buf */
const char *mlp_cuda_unavailable_reason(void); /* why mlp_cuda_available() is 0; "" when it is 1 */
/* Make device id current for this process; name (len bytes) gets its name. */
int         mlp_cuda_select_device(int id, char *name, size_t len);
const char *mlp_cuda_error_string(int code);
/* page-locked host memory (cudaMallocHost): fast copies to and from the device */
int         mlp_cuda_host_alloc(void **p, size_t bytes);
void        mlp_cuda_host_free(void *p);
/* nlayer affine maps; dim[0..nlayer]; parameter offsets as in surrogate_impl.h */
int  mlp_cuda_create(int nlayer, const long long *dim, const size_t *woff, const size_t *boff, size_t nparam,
                     mlp_cuda **m);
void mlp_cuda_set_gemm(mlp_cuda *m, int on); /* 1: the GEMM-style kernels (forward, back-data, gradient sums) */
int  mlp_cuda_set_state(mlp_cuda *m, const float *w, const float *mo, const float *v);
int  mlp_cuda_get_state(mlp_cuda *m, float *w, float *mo, float *v);
/* norm = {mu_in[n_in], sd_in[n_in], mu_out[n_out], sd_out[n_out]} (host) */
int  mlp_cuda_predict(mlp_cuda *m, size_t n, const float *in, const float *norm, float *out);
/* part[nparam] gradient partials, part[nparam] (one more) loss partial.
 * ck (NULL: checks off): layer l's ABFT gradient references at ck + ckoff[l]:
 * row sums [dout], column sums [din + 1] (last: bias), then the same with
 * |d| |a| (surrogate_checks.c); per-sample sums in float, batch sums with st.
 * units (reproducible, required; else NULL): called once per layer l with
 * the maxima of its dout delta rows then its din input rows over this rank's
 * samples (n = dout + din floats on the host); replaces them by the bounds
 * of the layer's exponents (kernels/gsum.h gsum_units, gsum_unit_bound,
 * the maxima over all ranks first); every rank makes the same calls. */
int mlp_cuda_grad(mlp_cuda *m, red_strategy_t st, size_t n, const float *in, const float *target, const float *norm,
                  float cscale, red_partial_t *part, red_partial_t *ck, const size_t *ckoff,
                  int (*units)(float *m, size_t n, int layer, void *ctx), void *ctx);
/* The resident batch: device buffers of n samples (in[n][n_in], tgt and
 * out [n][n_out], grown as n needs, kept until destroy) that the caller
 * fills and reads on the device; the _resident calls take them in place of
 * host arrays (no copy of the batch). They are apart from the buffers the
 * host calls copy into: those never overwrite them. */
int mlp_cuda_batch(mlp_cuda *m, size_t n, float **in, float **tgt, float **out);
int mlp_cuda_predict_resident(mlp_cuda *m, size_t n, const float *in, const float *norm, float *out);
int mlp_cuda_grad_resident(mlp_cuda *m, red_strategy_t st, size_t n, const float *in, const float *target,
                           const float *norm, float cscale, red_partial_t *part, red_partial_t *ck, const size_t *ckoff,
                           int (*units)(float *m, size_t n, int layer, void *ctx), void *ctx);
/* device memory for a batch of another backend's, and its copies (bytes) */
int  mlp_cuda_dev_alloc(void **d, size_t bytes);
void mlp_cuda_dev_free(void *d);
int  mlp_cuda_copy(void *dst, const void *src, size_t bytes, int to_device);
/* gamma index of one float gradient entry of gradsum_cuda (atomic, deterministic) over <= N samples */
double mlp_cuda_gradsum_depth(red_strategy_t st, long long N);
int  mlp_cuda_adam(mlp_cuda *m, const float *grad, surr_adam_coef c);
void mlp_cuda_destroy(mlp_cuda *m);
/* The current device's float peak without FMA (GFLOP/s) and copy bandwidth
 * (GB/s, read + write of 1 GiB), measured: best of 3 runs of each kernel. */
int  mlp_cuda_peak(double *gflops, double *gbs);
#ifdef __cplusplus
}
#endif
#endif
