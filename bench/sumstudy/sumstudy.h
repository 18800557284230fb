/* bench/sumstudy/sumstudy.h: the FPNA sum study (miniapp-sumstudy): how the
 * scalar variability V_s = 1 - |S / S_ref| of a sum grows with its length N
 * under different combination orders. Shared by the driver (sumstudy.c), the
 * CPU sums (sumstudy_sums.c), the statistics (sumstudy_stats.c) and the GPU
 * sums (sumstudy_cuda.cu, only when built with CUDA). No PETSc. */
#ifndef MINIAPP_BENCH_SUMSTUDY_H
#define MINIAPP_BENCH_SUMSTUDY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The combination orders studied (docs/fpna-sums.md). */
typedef enum {
  SS_ELEMENT,    /* uniformly random order of the N summands (seeded shuffle)  */
  SS_BLOCK,      /* the app's atomic replay: fixed blocks, random block order  */
  SS_OMP,        /* real OpenMP atomics, one `omp atomic` per summand          */
  SS_OMP_BLOCK,  /* the app's real atomic path: block partials, `omp atomic`   */
  SS_CUDA_ELEMENT, /* one atomicAdd per summand                                */
  SS_CUDA_BLOCK,   /* tile of 1024: 256-thread tree, then atomicAdd            */
  SS_CUDA_TREE,    /* the same tiles, partials combined by a fixed tree        */
  SS_CUDA_CUB,     /* cub::DeviceReduce::Sum                                   */
  SS_NMETHODS
} ss_method;
#define SS_FIRST_CUDA SS_CUDA_ELEMENT

typedef enum { SS_UNIFORM, SS_NORMAL, SS_NDISTS } ss_dist;
typedef enum { SS_REF_EXACT, SS_REF_ORDERED, SS_REF_DETERMINISTIC } ss_ref;

extern const char *const ss_method_names[SS_NMETHODS];
extern const char *const ss_dist_names[SS_NDISTS];
extern const char *const ss_ref_names[3];

/* ---- options (sumstudy_opts.c) ------------------------------------------ */
#define SS_PROG "miniapp-sumstudy"
typedef struct {
  int         dist[SS_NDISTS];      /* 1: studied                            */
  int         method[SS_NMETHODS];  /* 1: requested                          */
  int         methods_given;        /* -methods was given                    */
  size_t     *n;                    /* the N studied, ascending, distinct    */
  int         nn;
  int         arrays, orders, threads;
  size_t      block;
  ss_ref      ref;
  uint64_t    seed;
  const char *out, *samples;        /* samples: NULL unless -samples         */
} ss_opts;
/* Fills o from argv; on bad input prints one line on stderr and returns 1
 * (2 after -help, which prints the usage on stdout). */
int  ss_parse_options(int argc, char **argv, ss_opts *o);
/* One line "miniapp-sumstudy: error: ..." on stderr; returns rc. */
int  ss_fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ss_free_options(ss_opts *o);

/* ---- data and sums (sumstudy_sums.c) ---------------------------------- */
/* x[k], k < n: array `a` of distribution d, a pure function of (seed, d, n, a):
 * uniform on [0, 1) (53 random bits) or standard normal (Marsaglia polar). */
uint64_t ss_array_seed(ss_dist d, uint64_t seed, size_t n, uint64_t a);
void   ss_generate(ss_dist d, uint64_t seed, size_t n, uint64_t a, double *x);
double ss_reference(ss_ref r, size_t n, const double *x);
/* Seed of order o of method m on array `a` (never 0: 0 means real atomics). */
uint64_t ss_order_seed(uint64_t array_seed, ss_method m, int o);
/* Sum of x in a uniformly random order drawn from seed; scratch holds n. */
double ss_sum_element(size_t n, const double *x, uint64_t seed, double *scratch);
/* The app's seeded atomic replay with blocks of `block` summands: through
 * kernels/reduce.c when block == RED_BLOCK, else the same algorithm here.
 * Not thread-safe (the kernel's order seed is global): call from one thread. */
double ss_sum_block(size_t n, const double *x, size_t block, uint64_t seed);
/* 0 when the replay here equals kernels/reduce.c bitwise at RED_BLOCK. */
int    ss_check_block_replay(size_t *bad_n);
double ss_sum_omp(size_t n, const double *x);       /* all threads, omp atomic */
double ss_sum_omp_block(size_t n, const double *x); /* kernels/reduce.c, seed 0 */
/* The fixed order of SS_CUDA_TREE, on the CPU (for the bitwise check). */
double ss_sum_cuda_tree_cpu(size_t n, const double *x);

/* ---- statistics and output (sumstudy_stats.c) -------------------------- */
typedef struct {
  int    samples, zeros, undefined;
  double max, q50, q90, q99, mean_abs, mean, spread;
} ss_summary;
/* Summary of nv values of V_s (vs is sorted by |.| in place). sums/refs (may
 * be NULL) give the spread: max over arrays of (max - min of the orders'
 * sums) / |S_ref|, NaN when there is one order per array. */
void ss_summarize(int nv, double *vs, int orders, const double *sums, const double *refs, ss_summary *s);
typedef struct {
  int    points;
  double alpha, alpha_se, beta, r2, nlo, nhi;
} ss_fit;
/* Least squares of log10 y on log10 n over the points with y > 0. */
void ss_fit_power(int np, const double *n, const double *y, ss_fit *f);

/* ---- GPU sums (sumstudy_cuda.cu) ---------------------------------------- */
#ifdef __cplusplus
extern "C" {
#endif
typedef struct ss_cuda ss_cuda;
/* 1 when a usable device exists; else 0 and *why says what cudaGetDeviceCount said. */
int         ss_cuda_available(const char **why);
int         ss_cuda_create(size_t nmax, ss_cuda **ctx); /* 0 or a cudaError_t */
int         ss_cuda_upload(ss_cuda *ctx, size_t n, const double *x);
int         ss_cuda_sum(ss_cuda *ctx, ss_method m, double *sum); /* of the uploaded array */
void        ss_cuda_destroy(ss_cuda **ctx);
const char *ss_cuda_strerror(int rc);
#ifdef __cplusplus
}
#endif

#endif
