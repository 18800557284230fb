/* surrogate/surrogate.h: a small float32 multilayer perceptron trained online
 * (Adam, MSE) and queried for grid-local predictions, on the CPU or a CUDA GPU.
 * PETSc-style object and error frame; no knowledge of the solver or the grid.
 *
 * Data layout: samples are rows, row-major: in[n][n_in], target/out[n][n_out].
 * Every reduction of a train step (weight and bias gradients, loss) follows the
 * compile-time MINIAPP_SURROGATE_REDUCTION strategy (surrogate_reduction.h);
 * inference uses one fixed summation order in every build.
 * Lifecycle: SurrogateCreate -> [SurrogateSetSizes] -> SurrogateSetFromOptions
 *   -> SurrogateSetUp -> SurrogateTrain / SurrogatePredict / SurrogateSave /
 *   SurrogateLoad -> SurrogateDestroy(&s). */
#ifndef MINIAPP_SURROGATE_H
#define MINIAPP_SURROGATE_H

#include <petscsys.h>
#include <petscviewer.h>
#include <stdint.h>
#include "reduce.h" /* red_atomic_state */

#ifndef PETSC_SUCCESS
#define PETSC_SUCCESS 0 /* spelled this way from PETSc 3.19 on; Debian 12 has 3.18 */
#endif

typedef struct _p_Surrogate *Surrogate;

typedef enum { SURROGATE_DEVICE_AUTO = 0, SURROGATE_DEVICE_CPU = 1, SURROGATE_DEVICE_CUDA = 2 } SurrogateDevice;

PETSC_EXTERN PetscErrorCode SurrogateCreate(MPI_Comm comm, Surrogate *s);
PETSC_EXTERN PetscErrorCode SurrogateSetOptionsPrefix(Surrogate s, const char prefix[]);
/* Options: -surrogate_layers 32,32 (hidden widths), -surrogate_lr,
 * -surrogate_beta1, -surrogate_beta2, -surrogate_eps, -surrogate_weight_decay,
 * -surrogate_seed, -surrogate_device auto|cpu|cuda, -surrogate_view,
 * -surrogate_checks (ABFT checks of every train step, default off),
 * -atomic_order_seed (atomic build: replay a seeded combination order). */
PETSC_EXTERN PetscErrorCode SurrogateSetFromOptions(Surrogate s);
PETSC_EXTERN PetscErrorCode SurrogateSetSizes(Surrogate s, PetscInt n_in, PetscInt n_out);
PETSC_EXTERN PetscErrorCode SurrogateSetHiddenLayers(Surrogate s, PetscInt nhidden, const PetscInt widths[]);
PETSC_EXTERN PetscErrorCode SurrogateSetDevice(Surrogate s, SurrogateDevice dev);
/* Explicit normalization x_n = (x - mean)/std per feature. Without it, the
 * statistics are computed from the first training batch (all ranks) and
 * frozen; they are part of the checkpoint. NULL std means 1. */
PETSC_EXTERN PetscErrorCode SurrogateSetNormalization(Surrogate s, const float mean_in[], const float std_in[],
                                                      const float mean_out[], const float std_out[]);
PETSC_EXTERN PetscErrorCode SurrogateSetUp(Surrogate s);

/* One Adam step on the n local samples (all ranks together form the batch);
 * loss = MSE in normalized output units over the global batch (may be NULL). */
PETSC_EXTERN PetscErrorCode SurrogateTrain(Surrogate s, PetscInt n, const float in[], const float target[],
                                           float *loss);
/* The batch gradient (same order as SurrogateGetWeights) without stepping:
 * no state changes but the normalization, which the first batch fixes as in
 * SurrogateTrain (the reproducible sums' row exponents stay as the last train
 * step left them, and the gradient is taken under them). */
PETSC_EXTERN PetscErrorCode SurrogateComputeGradient(Surrogate s, PetscInt n, const float in[], const float target[],
                                                     float grad[], float *loss);
PETSC_EXTERN PetscErrorCode SurrogatePredict(Surrogate s, PetscInt n, const float in[], float out[]);
/* Batches on the CUDA device (surrogate_batch.c), after SetUp: GetDeviceBatch
 * gives device buffers of n samples (in[n][n_in], target[n][n_out],
 * out[n][n_out]; kept until Destroy, moved by a call with a larger n);
 * PredictDevice and TrainDevice take device arrays as Predict and Train take
 * host ones, with the same results. On the CUDA device no batch is copied;
 * a CPU network copies its inputs from the device and its predictions back.
 * Refused in a build without CUDA or where no device is usable. */
PETSC_EXTERN PetscErrorCode SurrogateGetDeviceBatch(Surrogate s, PetscInt n, float **in, float **target, float **out);
PETSC_EXTERN PetscErrorCode SurrogatePredictDevice(Surrogate s, PetscInt n, const float in[], float out[]);
PETSC_EXTERN PetscErrorCode SurrogateTrainDevice(Surrogate s, PetscInt n, const float in[], const float target[],
                                                 float *loss);

/* Checkpoint: weights, Adam moments and step count, normalization; bit-exact. */
PETSC_EXTERN PetscErrorCode SurrogateSave(Surrogate s, const char path[]);
PETSC_EXTERN PetscErrorCode SurrogateLoad(Surrogate s, const char path[]);
/* The same bytes in memory, for a checkpoint that holds more than the
 * network: Serialize gives them on rank 0 (PetscFree them); Deserialize
 * takes them on every rank, `what` names them in messages. */
PETSC_EXTERN PetscErrorCode SurrogateSerialize(Surrogate s, unsigned char **buf, size_t *len);
PETSC_EXTERN PetscErrorCode SurrogateDeserialize(Surrogate s, const unsigned char *buf, size_t len, const char what[]);

/* Parameters in the order W_1, b_1, W_2, b_2, ... with W_l row-major [out][in]. */
PETSC_EXTERN PetscErrorCode SurrogateGetNumWeights(Surrogate s, PetscInt *n);
PETSC_EXTERN PetscErrorCode SurrogateGetWeights(Surrogate s, float buf[], PetscInt n);
PETSC_EXTERN PetscErrorCode SurrogateSetWeights(Surrogate s, const float buf[], PetscInt n);
/* Wrapping sum of hash_termf(i, w_i): equal hashes <=> (almost surely) equal bits. */
PETSC_EXTERN PetscErrorCode SurrogateGetWeightsHash(Surrogate s, uint64_t *hash);
/* The same kind of hash of Adam's moments m and v: the rest of the state a
 * train step carries forward (a flip can change them before the weights). */
PETSC_EXTERN PetscErrorCode SurrogateGetOptimizerHash(Surrogate s, uint64_t *hash);
PETSC_EXTERN PetscErrorCode SurrogateGetStep(Surrogate s, PetscInt64 *step);
PETSC_EXTERN PetscErrorCode SurrogateGetDevice(Surrogate s, SurrogateDevice *dev); /* after SetUp: CPU or CUDA */
/* The seeded atomic order (kernels/reduce.h) the network's reductions draw
 * from: its own (seed -atomic_order_seed, set by SurrogateSetFromOptions)
 * unless ord, an order its owner keeps (NULL: its own again). */
PETSC_EXTERN PetscErrorCode SurrogateSetAtomicOrder(Surrogate s, red_atomic_state *ord);
/* after SetUp: the CUDA train step's kernel set, "tiled" or "gemm" (-surrogate_cuda_kernels;
 * the deterministic and atomic bits depend on it), "none" on the CPU */
PETSC_EXTERN PetscErrorCode SurrogateGetCudaKernels(Surrogate s, const char **name);
/* after SetUp: host memory for arrays that cross to the device every step (training
 * inputs and targets, predictions): page-locked on the CUDA device, else PetscMalloc */
PETSC_EXTERN PetscErrorCode SurrogateHostMalloc(Surrogate s, size_t bytes, void *p);
PETSC_EXTERN PetscErrorCode SurrogateHostFree(Surrogate s, void *p);
/* After SetUp: this rank's CUDA device number and name (-1 and "cpu" on the CPU). */
PETSC_EXTERN PetscErrorCode SurrogateGetDeviceId(Surrogate s, PetscInt *id, const char **name);
PETSC_EXTERN const char    *SurrogateGetStrategyName(void);                        /* compiled-in strategy */
PETSC_EXTERN PetscErrorCode SurrogateView(Surrogate s, PetscViewer viewer);
/* "key: value" lines a restart must match */
PETSC_EXTERN PetscErrorCode SurrogateDescribe(Surrogate s, char buf[], size_t len);
PETSC_EXTERN PetscErrorCode SurrogateDestroy(Surrogate *s);

/* Algorithm-based fault tolerance (Huang-Abraham checksums, docs/faults.md):
 * with checks on, every gradient computation verifies the weights against
 * their checksums (stored after every Adam update, set-up, load and
 * SetWeights; exact comparison), the forward pass and the backward-data
 * products of every sample (CPU backend only) and the row and column sums of
 * every layer's batch gradient after the cross-rank combine. Thresholds are
 * rounding-error bounds: fault-free data never fails. Off: one branch, no
 * work; results are bitwise the same on or off. Option -surrogate_checks. */
PETSC_EXTERN PetscErrorCode SurrogateSetChecks(Surrogate s, PetscBool on);
/* The fault experiment's hooks (kernels/fault.h): the train step's sites
 * (gradient, weight, activation) report to f; NULL (the default) removes them. */
struct fault_ctx;
PETSC_EXTERN PetscErrorCode SurrogateSetFaults(Surrogate s, struct fault_ctx *f);
/* Collective. Since the last call: the number of failed checks (all ranks),
 * the largest |discrepancy| / threshold of the tolerance checks (all ranks;
 * the exact weight check only counts), and the first failure of the lowest
 * rank that has one ("forward layer 2 sample 17", "gradient layer 1 entry
 * (5,3)", ...; "" if none); then resets. what/worst may be NULL. */
PETSC_EXTERN PetscErrorCode SurrogateGetCheckResult(Surrogate s, PetscInt *nfail, PetscReal *worst, char what[],
                                                    size_t len);
/* Whether the fault site (kernels/fault.h fault_site) can be injected into
 * this surrogate after SetUp: gradient and weight always, activation on the
 * CPU backend only; solver sites never. */
PETSC_EXTERN PetscErrorCode SurrogateFaultSiteSupported(Surrogate s, int site, PetscBool *ok);

/* 1: a usable CUDA device exists (cudaGetDeviceCount > 0); 0: none; -1: built without CUDA. */
PETSC_EXTERN int SurrogateCUDAAvailable(void);
PETSC_EXTERN const char *SurrogateCUDAUnavailableReason(void); /* why SurrogateCUDAAvailable() is not 1 */
/* first contact: versions, device, a checked launch; 0 when all is well */
PETSC_EXTERN int         SurrogateCUDAProbe(char *line, size_t len);

#endif
