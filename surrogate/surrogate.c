/* surrogate/surrogate.c: the Surrogate object: options, set-up (architecture,
 * seeded initialization, backend choice), the train step's strategy combine
 * across ranks, Adam bookkeeping, normalization. Arithmetic on samples lives in
 * the backends (backend_cpu.c, backend_cuda.cu); checkpoints in surrogate_io.c. */
#include "surrogate_impl.h"
#include "surrogate_reduction.h"
#include "hashrng.h"
#include "optrange.h"

#include <stdio.h>
#include <string.h>

#if defined(MINIAPP_HAVE_CUDA) /* surrogate_impl.h: the one configuration symbol of this build */
const int SurrogateConfig_CUDA = 1;
#else
const int SurrogateConfig_NoCUDA = 1;
#endif

PetscErrorCode SurrogateCheckSetUp_Private(Surrogate s, PetscBool done, const char *caller)
{
  PetscFunctionBegin;
  PetscCheck(s->setup == done, s->comm, PETSC_ERR_ORDER, "%s: call it %s SurrogateSetUp()", caller,
             done ? "after" : "before");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateCreate(MPI_Comm comm, Surrogate *out)
{
  Surrogate s;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&s));
  s->comm = comm;
  s->order = &s->own_order;
  PetscCallMPI(MPI_Comm_rank(comm, &s->rank));
  PetscCallMPI(MPI_Comm_size(comm, &s->size));
  s->nhidden   = 2;
  s->hidden[0] = 32, s->hidden[1] = 32;
  s->lr = 1e-3f, s->beta1 = 0.9f, s->beta2 = 0.999f, s->eps = 1e-8f, s->wd = 0.0f;
  s->seed       = 42;
  s->strategy   = SURROGATE_REDUCTION;
  s->device_req = SURROGATE_DEVICE_AUTO;
  s->device_id_req = -1;
  s->device_id     = -1;
  s->beta1_t = 1.0f, s->beta2_t = 1.0f;
  *out = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetOptionsPrefix(Surrogate s, const char prefix[])
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(s->prefix));
  PetscCall(PetscStrallocpy(prefix, &s->prefix));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetSizes(Surrogate s, PetscInt n_in, PetscInt n_out)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_FALSE, PETSC_FUNCTION_NAME));
  PetscCheck(n_in >= 1 && n_out >= 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Surrogate sizes n_in=%" PetscInt_FMT " n_out=%" PetscInt_FMT " must be >= 1", n_in, n_out);
  s->n_in = n_in, s->n_out = n_out;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetHiddenLayers(Surrogate s, PetscInt nh, const PetscInt widths[])
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_FALSE, PETSC_FUNCTION_NAME));
  PetscCheck(nh >= 0 && nh < SURR_MAX_LAYERS, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-surrogate_layers: %" PetscInt_FMT " hidden layers, at most %d allowed", nh, SURR_MAX_LAYERS - 1);
  for (PetscInt i = 0; i < nh; i++)
    PetscCheck(widths[i] >= 1 && widths[i] <= 65536, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-surrogate_layers: width %" PetscInt_FMT " of hidden layer %" PetscInt_FMT " must be in [1, 65536]",
               widths[i], i + 1);
  s->nhidden = nh;
  for (PetscInt i = 0; i < nh; i++) s->hidden[i] = widths[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetDevice(Surrogate s, SurrogateDevice dev)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_FALSE, PETSC_FUNCTION_NAME));
  s->device_req = dev;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -surrogate_layers W1,W2,...: the hidden layers' widths. -help shows an
 * array's default as the entries it read: with the option not given, only the
 * first (<32>); so for -help alone the default goes into the database while
 * it is read, and out again: <32,32>. */
static PetscErrorCode ReadLayers(PetscOptionItems *PetscOptionsObject, Surrogate s)
{
  /* more than allowed, so that too many are counted (PETSc stops at the array's end) */
  PetscInt  widths[256], nw = 256;
  PetscBool set;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < SURR_MAX_LAYERS; i++) widths[i] = i < s->nhidden ? s->hidden[i] : 0;
  {
    char      full[256], def[SURR_MAX_LAYERS * 8] = "";
    PetscBool given = PETSC_TRUE, dflt = PETSC_FALSE;
    PetscCall(PetscSNPrintf(full, sizeof full, "-%ssurrogate_layers", s->prefix ? s->prefix : ""));
    if (PetscOptionsObject->printhelp) PetscCall(PetscOptionsHasName(NULL, NULL, full, &given));
    if (!given && s->nhidden > 0) {
      for (PetscInt i = 0; i < s->nhidden; i++)
        PetscCall(
          PetscSNPrintf(def + strlen(def), sizeof def - strlen(def), "%s%" PetscInt_FMT, i ? "," : "", s->hidden[i]));
      PetscCall(PetscOptionsSetValue(NULL, full, def));
      dflt = PETSC_TRUE;
    }
    PetscCall(PetscOptionsIntArray("-surrogate_layers", "hidden layer widths, e.g. 32,32", "SurrogateSetHiddenLayers",
                                   widths, &nw, &set));
    if (dflt) {
      PetscCall(PetscOptionsClearValue(NULL, full));
      set = PETSC_FALSE;
    }
  }
  PetscCheck(!set || nw < 256, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-surrogate_layers: 256 or more hidden layers, at most %d allowed", SURR_MAX_LAYERS - 1);
  if (set) PetscCall(SurrogateSetHiddenLayers(s, nw, widths));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetFromOptions(Surrogate s)
{
  PetscInt    seed = (PetscInt)s->seed;
  PetscReal   lr = s->lr, b1 = s->beta1, b2 = s->beta2, eps = s->eps, wd = s->wd;
  PetscBool   dset;
  char      dev[16] = "auto";
  const char *devnames[] = {"auto", "cpu", "cuda"};

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_FALSE, PETSC_FUNCTION_NAME));
  PetscCall(PetscStrncpy(dev, devnames[s->device_req], sizeof dev));
  PetscOptionsBegin(s->comm, s->prefix, "Neural surrogate options", "Surrogate");
  PetscCall(ReadLayers(PetscOptionsObject, s));
  PetscCall(PetscOptionsReal("-surrogate_lr", "Adam learning rate (1e-12 .. 1)", "", lr, &lr, NULL));
  PetscCall(PetscOptionsReal("-surrogate_beta1", "Adam beta1", "", b1, &b1, NULL));
  PetscCall(PetscOptionsReal("-surrogate_beta2", "Adam beta2", "", b2, &b2, NULL));
  PetscCall(PetscOptionsReal("-surrogate_eps", "Adam epsilon (1e-30 .. 1e-2)", "", eps, &eps, NULL));
  PetscCall(PetscOptionsReal("-surrogate_weight_decay", "decoupled (AdamW) weight decay", "", wd, &wd, NULL));
  PetscCall(PetscOptionsInt("-surrogate_seed", "seed of the initial weights", "", seed, &seed, NULL));
  PetscCall(
    PetscOptionsString("-surrogate_device", "auto|cpu|cuda", "SurrogateSetDevice", dev, dev, sizeof dev, &dset));
  PetscCall(PetscOptionsInt("-surrogate_device_id",
                            "CUDA device of this rank (-1: node-local rank modulo the node's device count)", "",
                            s->device_id_req, &s->device_id_req, NULL));
  PetscCheck(s->device_id_req >= -1 && s->device_id_req < 65536, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-surrogate_device_id %" PetscInt_FMT " must be -1 (automatic) or a device number >= 0", s->device_id_req);
  PetscCall(PetscOptionsBool("-surrogate_view", "print the configuration after set-up", "", s->view, &s->view, NULL));
  { /* an A/B switch for the GPU's train-step kernels (docs/gpu.md): the reproducible bits are the same either way */
    static const char *const kernels[] = {"tiled", "gemm"};
    PetscInt                 k         = 0;
    PetscCall(PetscOptionsEList("-surrogate_cuda_kernels",
                                "the CUDA train step's kernels (gemm: register and shared-memory tiles, faster at "
                                "large batches and slower at the decks' on an H100, docs/gpu.md; reproducible: the "
                                "same bits either way)",
                                "", kernels, 2, kernels[k], &k, NULL));
    s->cuda_gemm = (PetscBool)(k == 1);
  }
  {
    PetscBool on = s->ck.on, cset;
    PetscCall(PetscOptionsBool("-surrogate_checks",
                               "ABFT checksum checks of every train step (surrogate-train: an alarm ends it, nothing "
                               "saved; the miniapp: use -fault_checks)",
                               "SurrogateSetChecks", on, &on, &cset));
    if (cset) PetscCall(SurrogateSetChecks(s, on));
  }
  PetscOptionsEnd();

  { /* bounds that keep the float arithmetic meaningful: a rate below 1e-12
     * or an epsilon above 1e-2 leaves the weights where they started (every
     * float update rounds away), one outside float's range is 0 or Inf */
    const struct {
      const char *name, *range;
      double      v, lo, hi;
      PetscBool   beta; /* [lo, hi): hi itself is outside, and so is a value that rounds to it in float */
    } in[] = {{"-surrogate_lr", "[1e-12, 1]", lr, 1e-12, 1, PETSC_FALSE},
              {"-surrogate_beta1", "[0, 1)", b1, 0, 1, PETSC_TRUE},
              {"-surrogate_beta2", "[0, 1)", b2, 0, 1, PETSC_TRUE},
              {"-surrogate_eps", "[1e-30, 1e-2]", eps, 1e-30, 1e-2, PETSC_FALSE},
              {"-surrogate_weight_decay", "[0, 1]", wd, 0, 1, PETSC_FALSE}};
    for (size_t k = 0; k < sizeof in / sizeof *in; k++) {
      double v = in[k].v;
      PetscCheck(v >= in[k].lo && (in[k].beta ? v < in[k].hi : v <= in[k].hi), s->comm, PETSC_ERR_ARG_OUTOFRANGE,
                 "%s %g must be in %s", in[k].name, v, in[k].range);
      /* the optimizer computes in float: a beta that rounds to 1 there divides by 1 - beta^t = 0 */
      PetscCheck(!in[k].beta || (float)v < 1.0f, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
                 "%s %.17g rounds to 1 in float (the optimizer's precision): at most 0.99999994", in[k].name, v);
    }
  }
  {
    PetscInt  aseed = 0;
    PetscBool aset;
    char      msg[512];

    /* the atomic strategy's seeded order: the network's own, from call 0 */
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-atomic_order_seed", &aseed, &aset));
    const opt_range r[] = {
      {"-surrogate_seed", seed, 0, OPT_NONE, OPT_INT, NULL},
      {"-atomic_order_seed", aseed, 0, OPT_NONE, OPT_INT, NULL},
    };
    PetscCheck(!opt_ranges_refuse(r, sizeof r / sizeof *r, msg, sizeof msg), s->comm, PETSC_ERR_ARG_OUTOFRANGE, "%s",
               msg);
    if (aset) s->own_order = (red_atomic_state){(uint64_t)aseed, 0};
  }
  s->lr = (float)lr, s->beta1 = (float)b1, s->beta2 = (float)b2, s->eps = (float)eps, s->wd = (float)wd;
  s->seed = (uint64_t)seed;
  if (dset) {
    int k = -1;
    for (int i = 0; i < 3; i++)
      if (!strcmp(dev, devnames[i])) k = i;
    PetscCheck(k >= 0, s->comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "-surrogate_device %s is unknown: use auto, cpu or cuda",
               dev);
    s->device_req = (SurrogateDevice)k;
  }
  PetscCheck(!(s->device_req == SURROGATE_DEVICE_CPU && s->device_id_req >= 0), s->comm, PETSC_ERR_ARG_INCOMP,
             "-surrogate_device_id %" PetscInt_FMT ": names a CUDA device, but -surrogate_device is cpu",
             s->device_id_req);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetAtomicOrder(Surrogate s, red_atomic_state *ord)
{
  s->order = ord ? ord : &s->own_order;
  return PETSC_SUCCESS;
}

/* n means (0 when NULL) and standard deviations (1 when NULL, else > 0),
 * of the inputs (features) or the outputs (values). */
static PetscErrorCode SetStats(Surrogate s, PetscBool in, PetscInt n, const float mu[], const float sd[], float m[],
                               float d[])
{
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < n; i++) {
    m[i] = mu ? mu[i] : 0.0f, d[i] = sd ? sd[i] : 1.0f;
    PetscCheck(d[i] > 0, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "%s std %g of %s %" PetscInt_FMT " must be > 0",
               in ? "input" : "output", (double)d[i], in ? "feature" : "value", i);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The network's sizes come first (SurrogateSetSizes): caller needs them. */
static PetscErrorCode NeedSizes(Surrogate s, const char *caller)
{
  PetscFunctionBeginUser;
  PetscCheck(s->n_in >= 1 && s->n_out >= 1, s->comm, PETSC_ERR_ORDER, "call SurrogateSetSizes() before %s()", caller);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetNormalization(Surrogate s, const float mi[], const float si[], const float mo[],
                                         const float so[])
{
  PetscFunctionBeginUser;
  PetscCall(NeedSizes(s, PETSC_FUNCTION_NAME));
  if (!s->mu_in)
    PetscCall(PetscMalloc4(s->n_in, &s->mu_in, s->n_in, &s->sd_in, s->n_out, &s->mu_out, s->n_out, &s->sd_out));
  PetscCall(SetStats(s, PETSC_TRUE, s->n_in, mi, si, s->mu_in, s->sd_in));
  PetscCall(SetStats(s, PETSC_FALSE, s->n_out, mo, so, s->mu_out, s->sd_out));
  s->have_norm = PETSC_TRUE; /* backends read the statistics at every call */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device choice: auto prefers a usable GPU and says so when it falls back. */
static PetscErrorCode SurrogateChooseBackend(Surrogate s)
{
  PetscFunctionBeginUser;
  int  have = SurrogateCUDAAvailable();
  char why[256] = "";
  if (have == 0)
    PetscCall(PetscSNPrintf(why, sizeof why, "no usable CUDA device (%s)", SurrogateCUDAUnavailableReason()));
  PetscCheck(s->device_req != SURROGATE_DEVICE_CUDA || have > 0, s->comm, PETSC_ERR_SUP_SYS,
             "-surrogate_device cuda: %s", have < 0 ? SurrogateCUDAUnavailableReason() : why);
  s->device = (s->device_req == SURROGATE_DEVICE_CPU || have <= 0) ? SURROGATE_DEVICE_CPU : SURROGATE_DEVICE_CUDA;
  if (s->device_req == SURROGATE_DEVICE_AUTO && s->device == SURROGATE_DEVICE_CPU)
    PetscCall(PetscPrintf(s->comm, "# surrogate: %s; using the CPU backend\n", have < 0 ? "built without CUDA" : why));
  s->ops = &SurrogateOps_CPU;
#if defined(MINIAPP_HAVE_CUDA)
  if (s->device == SURROGATE_DEVICE_CUDA) {
    s->ops = &SurrogateOps_CUDA;
    PetscCall(SurrogateCUDASelectDevice_Private(s));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetUp(Surrogate s)
{
  PetscFunctionBeginUser;
  if (s->setup) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(NeedSizes(s, PETSC_FUNCTION_NAME));
  s->nlayer = (int)s->nhidden + 1;
  s->dim[0] = s->n_in;
  for (int l = 1; l < s->nlayer; l++) s->dim[l] = s->hidden[l - 1];
  s->dim[s->nlayer] = s->n_out;
  s->nparam         = 0;
  for (int l = 0; l < s->nlayer; l++) {
    s->woff[l] = s->nparam;
    s->boff[l] = s->woff[l] + (size_t)s->dim[l + 1] * (size_t)s->dim[l];
    s->nparam  = s->boff[l] + (size_t)s->dim[l + 1];
  }
  /* Each weight costs about 100 bytes per rank (weights, Adam moments,
   * gradient partials of 80 bytes for the reduction switch) plus 80 per rank
   * gathered, and a gather's byte count is a 32-bit int: past this bound the
   * allocations would fail with a bare out-of-memory, or the count wrap */
  PetscCheck(s->nparam <= SURR_MAX_WEIGHTS, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-surrogate_layers: the network would have %.0f weights, more than the %d this surrogate supports; use "
             "narrower or fewer layers",
             (double)s->nparam, SURR_MAX_WEIGHTS);
  PetscCall(PetscCalloc3(s->nparam, &s->w, s->nparam, &s->m, s->nparam, &s->v));
  s->nurow = 0;
  for (int l = 0; l < s->nlayer; l++) s->urow[l] = s->nurow, s->nurow += (size_t)s->dim[l + 1] + (size_t)s->dim[l];
  PetscCall(PetscMalloc1(s->nurow, &s->uexp));
  for (size_t r = 0; r < s->nurow; r++) s->uexp[r] = GSUM_ZERO;
  if (!s->mu_in) { /* identity until the first batch (or the user) sets it */
    PetscCall(SurrogateSetNormalization(s, NULL, NULL, NULL, NULL));
    s->have_norm = PETSC_FALSE;
  }
  PetscCall(SurrogateChecksLayout_Private(s));
  /* allpart also gathers the checks' gradient references (ng partials) */
  PetscCall(PetscMalloc4(s->nparam + 1, &s->part, (size_t)s->size * PetscMax(s->nparam + 1, s->ck.ng), &s->allpart,
                         s->nparam + 1, &s->gsum, s->nparam, &s->grad));
  /* He-uniform weights from the counter-based RNG, keyed by the global
   * parameter index: the same numbers on every rank and every device. */
  for (int l = 0; l < s->nlayer; l++) {
    float lim = sqrtf(6.0f / (float)s->dim[l]);
    for (size_t i = s->woff[l]; i < s->boff[l]; i++) s->w[i] = (2.0f * rng_uniformf(s->seed, i) - 1.0f) * lim;
  }
  PetscCall(SurrogateChooseBackend(s));
  PetscCall(s->ops->setup(s));
  s->setup = PETSC_TRUE;
  if (s->ops->push) PetscCall(s->ops->push(s));
  if (s->view) PetscCall(SurrogateView(s, PETSC_VIEWER_STDOUT_(s->comm)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetStrategy_Private(Surrogate s, red_strategy_t st)
{
  PetscFunctionBeginUser;
  s->strategy = st;
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *SurrogateGetStrategyName(void) { return red_strategy_name(SURROGATE_REDUCTION); }

#if !defined(MINIAPP_HAVE_CUDA)
int SurrogateCUDAAvailable(void) { return -1; } /* -1: not compiled in */
const char *SurrogateCUDAUnavailableReason(void) { return "this build has no CUDA support"; }
int SurrogateCUDAProbe(char *line, size_t len)
{
  snprintf(line, len, "this build has no CUDA support");
  return -1;
}
#endif

/* The settings that decide the network's arithmetic, as "key: value" lines
 * appended to buf (a restart must agree on them). */
PetscErrorCode SurrogateDescribe(Surrogate s, char buf[], size_t len)
{
  size_t n = strlen(buf);

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(buf + n, len - n,
                          "surrogate_strategy: %s\nsurrogate_sizes: %" PetscInt_FMT " %" PetscInt_FMT
                          "\nsurrogate_layers:",
                          red_strategy_name(s->strategy), s->n_in, s->n_out));
  for (PetscInt i = 0; i < s->nhidden; i++) {
    n = strlen(buf);
    PetscCall(PetscSNPrintf(buf + n, len - n, " %" PetscInt_FMT, s->hidden[i]));
  }
  n = strlen(buf);
  snprintf(buf + n, len - n, "\nsurrogate_adam: %.9g %.9g %.9g %.9g %.9g\nsurrogate_seed: %llu\nsurrogate_checks: %d\n",
           (double)s->lr, (double)s->beta1, (double)s->beta2, (double)s->eps, (double)s->wd,
           (unsigned long long)s->seed, (int)s->ck.on);
  if (s->strategy != RED_REPRODUCIBLE) {
    /* only the reproducible bits are the same on the CPU and the GPU, with either kernel set */
    n = strlen(buf);
    snprintf(buf + n, len - n, "surrogate_device_used: %s\n",
             s->device == SURROGATE_DEVICE_CUDA ? (s->cuda_gemm ? "cuda gemm" : "cuda tiled") : "cpu");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* p is the address of a pointer (as PetscMalloc's). */
PetscErrorCode SurrogateHostMalloc(Surrogate s, size_t bytes, void *p)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
#if defined(MINIAPP_HAVE_CUDA)
  if (s->device == SURROGATE_DEVICE_CUDA) {
    PetscCall(SurrogateCUDAHostAlloc_Private(bytes, (void **)p));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(PetscMalloc(bytes ? bytes : 1, (void **)p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateHostFree(Surrogate s, void *p)
{
  void **q = (void **)p;

  PetscFunctionBeginUser;
  if (!*q) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(MINIAPP_HAVE_CUDA)
  if (s->device == SURROGATE_DEVICE_CUDA) {
    SurrogateCUDAHostFree_Private(*q);
    *q = NULL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(PetscFree(*q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int SurrogateLayerUnits_Private(Surrogate s, int l, const float *amax, int32_t *e, unsigned char *renewed)
{
  int32_t *p = s->uexp + s->urow[l];
  size_t   n = (size_t)s->dim[l + 1] + (size_t)s->dim[l];
  int      k = gsum_units(n, p, amax, e);
  if (renewed)
    for (size_t r = 0; r < n; r++) renewed[r] = !(p[r] == e[r] && p[r] != GSUM_ZERO && p[r] != GSUM_NONFINITE);
  memcpy(p, e, n * sizeof *e);
  return k;
}
