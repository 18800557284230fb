/* miniapp/io/gpuenergy.c: the NVIDIA GPUs' energy counters (gpuenergy.h). NVML is dlopen'ed, never linked:
 * the few types it needs are declared here, as NVML's API documents them. */
#include "gpuenergy.h"

#include <dlfcn.h>
#include <stddef.h>

typedef int   nvmlReturn_t; /* NVML_SUCCESS, else an error code */
typedef void *nvmlDevice_t; /* opaque handle */
#define NVML_SUCCESS 0

typedef nvmlReturn_t (*NvmlVoid)(void);
typedef nvmlReturn_t (*NvmlCount)(unsigned int *);
typedef nvmlReturn_t (*NvmlHandle)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*NvmlEnergy)(nvmlDevice_t, unsigned long long *);

/* The library, loaded at the first reading and kept: both readings of a run then use one copy of it. */
static void *Library(void)
{
  static void *lib;
  static int   tried;
  if (!tried) lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  tried = 1;
  return lib;
}

/* Every device's counter, between nvmlInit_v2 and nvmlShutdown; r->n is set only once all are read. */
static void ReadDevices(void *lib, GpuEnergyReading *r)
{
  NvmlCount    count  = (NvmlCount)dlsym(lib, "nvmlDeviceGetCount_v2");
  NvmlHandle   handle = (NvmlHandle)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
  NvmlEnergy   energy = (NvmlEnergy)dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption");
  unsigned int n;

  if (!count || !handle || !energy || count(&n) != NVML_SUCCESS || n == 0 || n > GPU_ENERGY_MAX) return;
  for (unsigned int k = 0; k < n; k++) {
    nvmlDevice_t d;
    if (handle(k, &d) != NVML_SUCCESS || energy(d, &r->mj[k]) != NVML_SUCCESS) return;
  }
  r->n = (int)n;
}

void GpuEnergyRead(GpuEnergyReading *r)
{
  void    *lib = Library();
  NvmlVoid init, shutdown;

  r->n = -1;
  if (!lib) return;
  init     = (NvmlVoid)dlsym(lib, "nvmlInit_v2");
  shutdown = (NvmlVoid)dlsym(lib, "nvmlShutdown");
  if (!init || !shutdown || init() != NVML_SUCCESS) return;
  ReadDevices(lib, r);
  (void)shutdown();
}

double GpuEnergyJoules(const GpuEnergyReading *a, const GpuEnergyReading *b)
{
  unsigned long long sum = 0;

  if (a->n < 0 || a->n != b->n) return -1;
  for (int k = 0; k < a->n; k++) {
    if (b->mj[k] < a->mj[k]) return -1;
    sum += b->mj[k] - a->mj[k];
  }
  return (double)sum / 1e3;
}
