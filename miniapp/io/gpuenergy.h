/* miniapp/io/gpuenergy.h: the energy of the node's NVIDIA GPUs (gpuenergy.c), read through NVML, which is
 * loaded at run time: a build runs the same without the driver, and then reads nothing. */
#ifndef MINIAPP_GPUENERGY_H
#define MINIAPP_GPUENERGY_H

#define GPU_ENERGY_MAX 64 /* GPUs a reading holds: a node with more is not measured, never summed in part */

/* Every GPU NVML lists, its energy counter in millijoules since the driver loaded; n < 0: not read. */
typedef struct {
  int                n;
  unsigned long long mj[GPU_ENERGY_MAX];
} GpuEnergyReading;

/* n < 0 where any step fails: no NVML, no GPU, a counter not supported, any other NVML error. */
void   GpuEnergyRead(GpuEnergyReading *r);
/* Joules from a to b, all GPUs summed; negative (not measured) where either reading failed, the GPUs differ
 * in number, or any counter went backwards (the driver reloaded). */
double GpuEnergyJoules(const GpuEnergyReading *a, const GpuEnergyReading *b);

#endif
