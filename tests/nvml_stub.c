/* tests/nvml_stub.c: a stand-in for the NVIDIA driver's libnvidia-ml.so.1 (tests/gpu_energy_tests.sh): the five
 * calls miniapp/io/gpuenergy.c makes, on two GPUs. Each read of GPU k's energy counter is STEP[k] millijoules above
 * the last (one read at the run's start and one at its report: 1.5 + 2.7 = 4.2 J). NVML_STUB picks a failure:
 *   unsupported  GPU 1's counter is NVML_ERROR_NOT_SUPPORTED (a GPU older than Volta)
 *   backwards    GPU 0's counter reads lower the second time (a driver reloaded mid-run)
 *   init         nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED */
#include <stdlib.h>
#include <string.h>

#define NVML_SUCCESS                 0
#define NVML_ERROR_UNINITIALIZED     1
#define NVML_ERROR_INVALID_ARGUMENT  2
#define NVML_ERROR_NOT_SUPPORTED     3
#define NVML_ERROR_DRIVER_NOT_LOADED 9

static const unsigned long long BASE[2] = {5000000, 7000000}, STEP[2] = {1500, 2700};
static int                      gpus[2], reads[2], inits;

static int Mode(const char *m)
{
  const char *e = getenv("NVML_STUB");
  return e && !strcmp(e, m);
}

int nvmlInit_v2(void)
{
  if (Mode("init")) return NVML_ERROR_DRIVER_NOT_LOADED;
  inits++;
  return NVML_SUCCESS;
}

int nvmlShutdown(void)
{
  if (!inits) return NVML_ERROR_UNINITIALIZED;
  inits--;
  return NVML_SUCCESS;
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
  if (!inits) return NVML_ERROR_UNINITIALIZED;
  if (!n) return NVML_ERROR_INVALID_ARGUMENT;
  *n = 2;
  return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int k, void **d)
{
  if (!inits) return NVML_ERROR_UNINITIALIZED;
  if (k >= 2 || !d) return NVML_ERROR_INVALID_ARGUMENT;
  *d = &gpus[k];
  return NVML_SUCCESS;
}

int nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *mj)
{
  int k = d == &gpus[0] ? 0 : d == &gpus[1] ? 1 : -1;

  if (!inits) return NVML_ERROR_UNINITIALIZED;
  if (k < 0 || !mj) return NVML_ERROR_INVALID_ARGUMENT;
  if (k == 1 && Mode("unsupported")) return NVML_ERROR_NOT_SUPPORTED;
  *mj = BASE[k] + STEP[k] * (unsigned long long)reads[k];
  if (k == 0 && reads[k] && Mode("backwards")) *mj = BASE[k] - STEP[k];
  reads[k]++;
  return NVML_SUCCESS;
}
