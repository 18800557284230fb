/* surrogate/surrogate_impl.h: the private object and the backend interface.
 * Backends (CPU, CUDA) compute per-parameter gradient partials and apply Adam;
 * surrogate.c owns the options, the strategy combine across ranks, and the
 * host copy of the state. Not a public header. */
#ifndef MINIAPP_SURROGATE_IMPL_H
#define MINIAPP_SURROGATE_IMPL_H

#include "surrogate.h"
#include "surrogate_math.h"
#include "reduce.h"
#include "gsum.h"
#include "fault.h"

#include "cuda_call.h"

#define SURR_MAX_LAYERS  16        /* hidden layers + output layer */
#define SURR_MAX_WEIGHTS (1 << 24) /* parameters (weights and biases) */

typedef struct {
  PetscErrorCode (*setup)(Surrogate);
  /* out[n][n_out] = denormalized network output for in[n][n_in]. */
  PetscErrorCode (*predict)(Surrogate, PetscInt n, const float *in, float *out);
  /* part[0..nparam) = this rank's partials of dL/dp (strategy s->strategy),
   * part[nparam] = partial of sum (z - t_n)^2; cscale = 2/(N n_out). */
  PetscErrorCode (*grad_partials)(Surrogate, PetscInt n, const float *in, const float *target, float cscale,
                                  red_partial_t *part);
  /* Adam on all parameters with the combined gradient grad[nparam] (host). */
  PetscErrorCode (*adam)(Surrogate, const float *grad, surr_adam_coef coef);
  PetscErrorCode (*pull)(Surrogate); /* device state -> s->w, s->m, s->v */
  PetscErrorCode (*push)(Surrogate); /* s->w, s->m, s->v -> device state */
  PetscErrorCode (*destroy)(Surrogate);
  /* A batch on the device (SurrogateGetDeviceBatch), read and written in
   * place: the CUDA backend's; NULL where the backend stages it (CPU). */
  PetscErrorCode (*device_batch)(Surrogate, size_t n, float **in, float **target, float **out);
  PetscErrorCode (*predict_device)(Surrogate, PetscInt n, const float *in, float *out);
  PetscErrorCode (*grad_partials_device)(Surrogate, PetscInt n, const float *in, const float *target, float cscale,
                                         red_partial_t *part);
} SurrogateOps;

/* Algorithm-based fault tolerance of the train step (Huang-Abraham checksums;
 * surrogate_checks.c, checks_cpu.c, docs/faults.md). Allocated on first use;
 * nothing here is touched while `on` is false. Layer l (0-based) maps dim[l]
 * = din inputs to dim[l+1] = dout outputs; its weight encodings live at
 * c/cabs + coff[l] (din entries) and r/rabs/rw + roff[l] (dout entries). */
typedef struct {
  PetscBool      on, encoded;
  size_t         coff[SURR_MAX_LAYERS], roff[SURR_MAX_LAYERS], ncol, nrow;
  double        *c, *cabs;  /* column sums 1^T W_l and 1^T |W_l| (double, j in index order) */
  double        *r, *rabs;  /* row sums W_l 1 and |W_l| 1, without the bias */
  double        *rw;        /* r + b: the row sums of [W_l | b_l], for the verification */
  double         cb[SURR_MAX_LAYERS], babs[SURR_MAX_LAYERS]; /* sum b_l, sum |b_l| */
  /* gradient references of layer l at goff[l]: row sums [dout], column sums
   * [din + 1] (the last one: the bias column), then the same of |d| |a| */
  size_t         goff[SURR_MAX_LAYERS], ng;
  red_partial_t *gpart;
  double        *gval;
  double        *scratch;   /* CPU backend: per-sample sums, 5 x cap doubles */
  size_t         scap;
  /* since the last SurrogateGetCheckResult */
  PetscInt       nrep, nloc; /* failures on replicated data (same count on every rank) / on this rank's samples */
  double         worst;      /* max |discrepancy| / threshold of the tolerance checks */
  char           what[128];  /* this rank's first failure */
} SurrogateChecks;

/* Device batches (surrogate_batch.c): the device buffers a backend without
 * its own (CPU) hands out, and the host copies it, or the first batch's
 * statistics, stages them through; each grown as the batch needs. */
typedef struct {
  float *in, *tgt, *out;
  size_t cap;
  float *hin, *htgt, *hout;
  size_t hcap;
} SurrogateDevBatch;

struct _p_Surrogate {
  MPI_Comm        comm;
  PetscMPIInt     rank, size;
  fault_ctx      *fault; /* the fault sites' hook (SurrogateSetFaults): NULL unless faults are injected */
  char           *prefix;
  /* architecture: nlayer affine maps, dim[0] = n_in ... dim[nlayer] = n_out */
  PetscInt        n_in, n_out, nhidden, hidden[SURR_MAX_LAYERS];
  int             nlayer;
  PetscInt        dim[SURR_MAX_LAYERS + 1];
  size_t          woff[SURR_MAX_LAYERS], boff[SURR_MAX_LAYERS], nparam;
  /* hyper-parameters */
  float           lr, beta1, beta2, eps, wd;
  uint64_t        seed;
  red_strategy_t  strategy; /* SURROGATE_REDUCTION; the benchmark may override */
  red_atomic_state own_order; /* -atomic_order_seed, from call 0 */
  red_atomic_state *order;   /* what its reductions draw from: own_order or its owner's (SurrogateSetAtomicOrder) */
  SurrogateDevice device_req, device;
  PetscInt        device_id_req; /* -surrogate_device_id (-1: node-local rank mod device count) */
  int             device_id;     /* the CUDA device in use, -1 on the CPU */
  PetscBool       cuda_gemm;     /* -surrogate_cuda_kernels gemm: the train step's GEMM-style kernels */
  char            device_name[64];
  PetscBool       setup, view;
  /* state (host copy; a device backend keeps its own and syncs via pull/push) */
  float          *w, *m, *v;
  PetscBool       host_stale; /* device holds newer w, m, v than the host */
  int64_t         step;
  float           beta1_t, beta2_t; /* beta^step by repeated multiplication */
  PetscBool       have_norm;
  float          *mu_in, *sd_in, *mu_out, *sd_out;
  /* the reproducible weight gradients' row exponents the last train step
   * used (kernels/gsum.h gsum_units; GSUM_ZERO before the first): layer l's
   * delta rows then its input rows at uexp + urow[l] */
  int32_t        *uexp;
  size_t          urow[SURR_MAX_LAYERS], nurow;
  /* work */
  red_partial_t  *part, *allpart;
  double         *gsum;
  float          *grad;
  const SurrogateOps *ops;
  void           *be; /* backend data */
  SurrogateChecks ck;
  SurrogateDevBatch db;
};

/* Layer l's row exponents for this train step (gsum_units) from amax, the
 * maxima of its dim[l+1] delta rows then its dim[l] input rows over the batch
 * and the ranks, into e; they become the state the next step starts from.
 * renewed (NULL: not wanted): 1 for each row whose exponent is not the last
 * step's (the sums made in the pass under it do not hold). Returns their number. */
PETSC_INTERN int SurrogateLayerUnits_Private(Surrogate s, int l, const float *amax, int32_t *e, unsigned char *renewed);
PETSC_INTERN const SurrogateOps SurrogateOps_CPU;
/* The library's CUDA switch must reach every file that includes this header
 * (MINIAPP_HAVE_CUDA is a PUBLIC definition of the surrogate targets). Each
 * such file refers to the configuration symbol of its own view, and the
 * library defines only the one of its build (surrogate.c), so a file compiled
 * with the other view fails to link instead of silently dropping its CUDA
 * code: bench_surrogate, without the switch, printed a device peak of
 * 0.0 GFLOP/s on an H100 (docs/gpu.md, 2026-11-26). */
#if defined(MINIAPP_HAVE_CUDA)
PETSC_INTERN const int SurrogateConfig_CUDA;
static const int *const SurrogateConfigCheck __attribute__((used)) = &SurrogateConfig_CUDA;
#else
PETSC_INTERN const int SurrogateConfig_NoCUDA;
static const int *const SurrogateConfigCheck __attribute__((used)) = &SurrogateConfig_NoCUDA;
#endif
#if defined(MINIAPP_HAVE_CUDA)
PETSC_INTERN const SurrogateOps SurrogateOps_CUDA;
PETSC_INTERN PetscErrorCode     SurrogateCUDASelectDevice_Private(Surrogate s);
PETSC_INTERN PetscErrorCode     SurrogateCUDAPeak_Private(double *gflops, double *gbs); /* mlp_cuda_peak */
PETSC_INTERN PetscErrorCode     SurrogateCUDAHostAlloc_Private(size_t bytes, void **p);  /* mlp_cuda_host_alloc */
PETSC_INTERN void               SurrogateCUDAHostFree_Private(void *p);
#endif

/* CPU backend. The batch is processed in chunks of SURR_CHUNK samples (the
 * unit of the float gradient partials, so it fixes their bits). */
#define SURR_CHUNK 1024
/* Compute kernels on one chunk (layers_cpu.c): serial, pointers at the chunk's
 * first sample, row stride cap; m16 = sample count rounded up to 16. With
 * lanes (else NULL), forward and back-data also leave there the maxima of the
 * rows they write over the chunk's m samples (8 lanes a row: see
 * SurrogateGradAcc). */
PETSC_INTERN void SurrogateLayerForward_CPU(const float *W, const float *bias, size_t din, size_t dout, const float *in,
                                            float *out, size_t cap, size_t m16, int hidden, size_t m, uint32_t *lanes);
PETSC_INTERN void SurrogateLayerBackData_CPU(const float *W, size_t din, size_t dout, const float *d,
                                             const float *aprev, float *dprev, size_t cap, size_t m16, size_t m,
                                             uint32_t *lanes);
PETSC_INTERN void SurrogateChunkPartials_CPU(size_t din, size_t dout, const float *d, const float *a, size_t m,
                                             size_t cap, float *out);
/* The weight/bias gradient reductions of one train step, all layers
 * (tallskinny_cpu.c): Begin, then every (layer, chunk) once, in any order and
 * on any thread tid < nth, then End writes part[0..nparam). */
typedef struct {
  red_strategy_t st;
  uint64_t       seed;
  size_t         nc, nth;
  float         *buf; /* float strategies: chunk partials or shared sums + per-thread scratch */
  size_t         nbuf;
  gsum_t        *gs; /* reproducible: nth x nparam states */
  size_t         ngs;
  /* reproducible: the chunks' row maxima, nc x nrow x 8 lanes of magnitude bits (rows: layer l's dout delta rows, then
   * its din input rows, at rowoff[l]; a row's maximum is its lanes' largest) */
  uint32_t              * lanes;
  int32_t       *ex;    /* reproducible: nrow global exponents */
  float         *rmax;  /* reproducible: nrow batch row maxima (then over the ranks) */
  size_t         ncmax, nrow, rowoff[SURR_MAX_LAYERS];
  int inpass[SURR_MAX_LAYERS]; /* reproducible: layer l's sums made in the pass, under the last step's exponents */
  unsigned char *renew;                    /* reproducible: nrow flags, a row whose exponent changed in End */
} SurrogateGradAcc;
PETSC_INTERN PetscErrorCode SurrogateGradBegin_CPU(Surrogate s, SurrogateGradAcc *g, size_t n);
/* known: the reproducible strategy's row maxima of (layer, c) were left by
 * the producers of d and a (SurrogateGradLanes_CPU); else they are taken here. */
PETSC_INTERN void SurrogateGradChunk_CPU(Surrogate s, SurrogateGradAcc *g, int layer, size_t c, const float *d,
                                         const float *a, size_t m, size_t cap, int tid, int known);
/* The lanes of (layer, chunk c)'s rows (NULL unless reproducible), and rows
 * x[0..rows) of m samples noted there by a plain pass (the inputs, the output
 * deltas: rows made by no kernel above). */
PETSC_INTERN uint32_t      *SurrogateGradLanes_CPU(SurrogateGradAcc *g, int layer, size_t c);
PETSC_INTERN void SurrogateGradNoteRows_CPU(uint32_t *lanes, size_t rows, const float *x, size_t m, size_t cap);
/* D[l], A[l]: the step's deltas and layer inputs, n samples, row stride cap
 * (the reproducible strategy sums them here, under the batch's global units) */
PETSC_INTERN PetscErrorCode SurrogateGradEnd_CPU(Surrogate s, SurrogateGradAcc *g, float *const *D, float *const *A,
                                                 size_t n, size_t cap, red_partial_t *part);
PETSC_INTERN PetscErrorCode SurrogateGradDestroy_CPU(SurrogateGradAcc *g);
/* Combine np per-rank partials into values (rank order on every rank). */
/* The call order: caller (PETSC_FUNCTION_NAME) needs SurrogateSetUp done (or not yet). */
PETSC_INTERN PetscErrorCode SurrogateCheckSetUp_Private(Surrogate s, PetscBool done, const char *caller);
/* A count of samples a call is given (what: its name in the refusal) is not negative. */
PETSC_INTERN PetscErrorCode SurrogateCheckCount_Private(PetscInt n, const char *what);
PETSC_INTERN PetscErrorCode SurrogateCombine_Private(Surrogate s, size_t np, red_partial_t *part, double *val);
PETSC_INTERN PetscErrorCode SurrogateSyncHost_Private(Surrogate s);
/* SurrogateTrain's step on a batch on the host or (device) on the CUDA device */
PETSC_INTERN PetscErrorCode SurrogateTrainStep_Private(Surrogate s, PetscInt n, const float *in, const float *target,
                                                       PetscBool device, float *loss);
/* host copies of a device batch's n rows (target may be NULL), in s->db's staging */
PETSC_INTERN PetscErrorCode SurrogateStageToHost_Private(Surrogate s, PetscInt n, const float *in, const float *target,
                                                         const float **hin, const float **htarget);
PETSC_INTERN PetscErrorCode SurrogateDeviceBatchDestroy_Private(Surrogate s);

/* ABFT checks (surrogate_checks.c). Layout of the encodings and references: SurrogateChecks. */
PETSC_INTERN PetscErrorCode SurrogateChecksLayout_Private(Surrogate s); /* at SetUp: offsets, ng */
PETSC_INTERN PetscErrorCode SurrogateChecksEncode_Private(Surrogate s); /* weights -> encodings (syncs the host) */
PETSC_INTERN PetscErrorCode SurrogateChecksVerifyWeights_Private(Surrogate s);
PETSC_INTERN PetscErrorCode SurrogateChecksGradient_Private(Surrogate s, int64_t N);
PETSC_INTERN PetscErrorCode SurrogateChecksDestroy_Private(Surrogate s);
/* Note nfail failures of one kind; what (the first, may be NULL when nfail is
 * 0) is kept if it is this rank's first; worst is a |discrepancy|/threshold. */
PETSC_INTERN void SurrogateChecksNote_Private(Surrogate s, PetscBool replicated, PetscInt nfail, double worst,
                                              const char *what);
/* Error-bound helpers: gamma_n = n u / (1 - n u) for float (u = 2^-24) and double (u = 2^-53). */
static inline double surr_gamma_f(double n) { return n * 0x1p-24 / (1.0 - n * 0x1p-24); }
static inline double surr_gamma_d(double n) { return n * 0x1p-53 / (1.0 - n * 0x1p-53); }
/* CPU backend (checks_cpu.c): per-sample forward and backward-data checks,
 * and the per-layer gradient references (partials with s->strategy). */
PETSC_INTERN PetscErrorCode SurrogateCheckForward_CPU(Surrogate s, float *const *A, size_t n, size_t cap);
PETSC_INTERN PetscErrorCode SurrogateCheckBackward_CPU(Surrogate s, int layer, const float *d, const float *dprev,
                                                       const float *aprev, size_t n, size_t cap);
PETSC_INTERN PetscErrorCode SurrogateCheckGradRefs_CPU(Surrogate s, int layer, const float *d, const float *a, size_t n,
                                                       size_t cap);
/* The gamma index of one float gradient entry of the CPU tall-skinny sums
 * (atomic, deterministic) over at most N samples (tallskinny_cpu.c). */
PETSC_INTERN double SurrogateTallSkinnyDepth_CPU(red_strategy_t st, int64_t N);
#if defined(MINIAPP_HAVE_CUDA)
PETSC_INTERN double SurrogateGradsumDepth_CUDA(red_strategy_t st, int64_t N); /* the same for kernels/gradsum_cuda.cu */
#endif
/* CPU activation fault site: layer output A[width][cap] of this rank's n
 * samples, global samples first .. first+n-1 of Ntot (surrogate_faults.c). */
PETSC_INTERN PetscErrorCode SurrogateFaultActivation_Private(fault_ctx *f, float *A, size_t width, size_t n, size_t cap,
                                                             long long first, long long Ntot);
/* Benchmark/test hook: run the train-step reductions with strategy st instead
 * of the compiled one (lets one binary compare all three side by side). */
PETSC_EXTERN PetscErrorCode SurrogateSetStrategy_Private(Surrogate s, red_strategy_t st);

/* A call of the CUDA backend's kernels (mlp_cuda.h: 0 or a CUDA error code) under PETSc's error handling. */
#define PetscCallMLP(call) \
  do { \
    int rc_ = (call); \
    PetscCheck(rc_ == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "CUDA error %d (%s) in %.*s", rc_, mlp_cuda_error_string(rc_), \
               CUDA_CALL_NAME(#call), #call); \
  } while (0)

#endif
