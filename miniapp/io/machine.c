/* miniapp/io/machine.c: the report's machine and environment facts: host
 * name, CPU, ranks per node, peak memory, the network's device, cores, sockets, the vector
 * instructions the reproducible sums may use, memory, OS and kernel, the
 * nodes the ranks ran on, the environment variables that steer threads,
 * binding and the launcher, and the libraries' versions. What a vendor
 * needs to reproduce a result (docs/benchmark.md). Rank 0 writes. */
#define _GNU_SOURCE /* sched_getaffinity, RTLD_DEFAULT */
#include "machine.h"
#include "yamlfmt.h"

#include <petscconfiginfo.h>
#include <dirent.h>
#include <dlfcn.h>
#include <netcdf.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Distinct "physical id" values of /proc/cpuinfo (1 when there are none). */
static int Sockets(void)
{
  FILE *f = fopen("/proc/cpuinfo", "r");
  char  line[512];
  int   ids[256], n = 0;
  if (!f) return 1;
  while (fgets(line, sizeof line, f)) {
    int id, seen = 0;
    if (sscanf(line, "physical id : %d", &id) != 1) continue;
    for (int k = 0; k < n; k++) seen |= ids[k] == id;
    if (!seen && n < 256) ids[n++] = id;
  }
  fclose(f);
  return n ? n : 1;
}

/* The widest vector extension the CPU reports (the sums' clones use AVX2;
 * their bits are the same on any: docs/reductions.md). */
static const char *VectorISA(void)
{
  FILE       *f = fopen("/proc/cpuinfo", "r");
  char        line[8192];
  const char *isa = "unknown";
  if (!f) return isa;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8)) {
      isa = strstr(line, " avx512f") ? "avx512f"
          : strstr(line, " avx2")    ? "avx2"
          : strstr(line, " avx")     ? "avx"
          : strstr(line, " sse2")    ? "sse2"
          : strstr(line, " asimd")   ? "asimd (neon)"
                                     : "scalar";
      break;
    }
  fclose(f);
  return isa;
}

/* The CPU flags that decide which code paths run: vector and FMA extensions. */
static void CPUFlags(FILE *out)
{
  static const char *const want[] = {"sse2",     "sse4_2",   "avx",         "avx2",     "fma",   "avx512f", "avx512dq",
                                     "avx512bw", "avx512vl", "avx512_fp16", "amx_tile", "asimd", "sve",     "sve2"};
  FILE                    *f = fopen("/proc/cpuinfo", "r");
  char                     line[8192] = "";
  int                      k = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8)) break;
  if (f) fclose(f);
  fprintf(out, "  cpu_flags: [");
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    char word[32];
    snprintf(word, sizeof word, " %s", want[i]);
    const char *p = strstr(line, word);
    if (p && (p[strlen(word)] == ' ' || p[strlen(word)] == '\n' || p[strlen(word)] == 0))
      fprintf(out, "%s%s", k++ ? ", " : "", want[i]);
  }
  fprintf(out, "]\n");
}

/* The CPUs this rank may run on, as ranges ("0-3,8"): its binding. */
static void Affinity(char *buf, size_t len)
{
  cpu_set_t set;
  size_t    n = 0;
  buf[0]      = 0;
  if (sched_getaffinity(0, sizeof set, &set)) {
    snprintf(buf, len, "unknown");
    return;
  }
  for (int c = 0; c < CPU_SETSIZE && n + 24 < len; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) e++;
    n += (size_t)snprintf(buf + n, len - n, e > c ? "%s%d-%d" : "%s%d", n ? "," : "", c, e);
    c = e;
  }
}

/* OpenBLAS's own description when the BLAS PETSc loaded is OpenBLAS. */
static const char *BLASLibrary(void)
{
  char *(*cfg)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_config");
  return cfg ? cfg() : "not OpenBLAS (openblas_get_config not found)";
}

/* The first number in a file of /sys or /proc (negative when it cannot be read). */
static double ReadNumber(const char *path)
{
  FILE  *f = fopen(path, "r");
  double v = -1;
  if (f && fscanf(f, "%lf", &v) != 1) v = -1;
  if (f) fclose(f);
  return v;
}

/* The first line of a file of /sys, without its newline ("" when it cannot be read). */
static void ReadLine(const char *path, char *buf, size_t len)
{
  FILE *f = fopen(path, "r");
  buf[0] = 0;
  if (f && fgets(buf, (int)len, f)) buf[strcspn(buf, "\n")] = 0;
  if (f) fclose(f);
}

/* The node's fabric as /sys tells it: each InfiniBand (or RoCE) port's rate
 * and link layer, else the physical network interfaces' speeds (a VM's
 * virtual NIC may give none: "-1"); "" when none is listed. */
static void Interconnect(char *buf, size_t len)
{
  DIR           *dir;
  struct dirent *e;
  size_t         n = 0;

  buf[0] = 0;
  if ((dir = opendir("/sys/class/infiniband"))) { /* <dev>/ports/<p>/rate: "200 Gb/sec (4X HDR)" */
    while ((e = readdir(dir)) && n + 1 < len) {
      char path[512], rate[128], layer[64];
      if (e->d_name[0] == '.') continue;
      snprintf(path, sizeof path, "/sys/class/infiniband/%.200s/ports/1/rate", e->d_name);
      ReadLine(path, rate, sizeof rate);
      snprintf(path, sizeof path, "/sys/class/infiniband/%.200s/ports/1/link_layer", e->d_name);
      ReadLine(path, layer, sizeof layer);
      n += (size_t)snprintf(buf + n, len - n, "%s%s: %s %s", n ? "; " : "", e->d_name, rate[0] ? rate : "?", layer);
    }
    closedir(dir);
  }
  if (!n && (dir = opendir("/sys/class/net"))) { /* <if>/speed in Mb/s, for interfaces with a device */
    while ((e = readdir(dir)) && n + 1 < len) {
      char path[512];
      if (e->d_name[0] == '.') continue;
      snprintf(path, sizeof path, "/sys/class/net/%.200s/device", e->d_name);
      if (access(path, F_OK)) continue; /* loopback, bridges, virtual queues */
      snprintf(path, sizeof path, "/sys/class/net/%.200s/speed", e->d_name);
      double mbs = ReadNumber(path);
      if (mbs > 0) n += (size_t)snprintf(buf + n, len - n, "%s%s: %.0f Mb/s", n ? "; " : "", e->d_name, mbs);
      else n += (size_t)snprintf(buf + n, len - n, "%s%s: speed not reported", n ? "; " : "", e->d_name);
    }
    closedir(dir);
  }
  if (n >= len) buf[len - 1] = 0;
}

/* What a comparison of systems needs beyond the model name: the CPU's frequency (its maximum where cpufreq says
 * it, else /proc/cpuinfo's current one), hardware threads per core (SMT), NUMA nodes, and a GPU's model where
 * the NVIDIA driver lists one (/proc/driver/nvidia/gpus), the interconnect. Read from /proc and /sys; null where
 * they do not say. */
static void SystemFacts(FILE *out)
{
  double mhz = ReadNumber("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") / 1000.0;
  char   line[512], gpu[256] = "";
  int    smt = 0, numa = 0;
  FILE  *f;
  DIR   *dir;
  if (mhz <= 0 && (f = fopen("/proc/cpuinfo", "r"))) {
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "cpu MHz : %lf", &mhz) == 1) break;
    fclose(f);
  }
  if ((f = fopen("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "r"))) { /* "0,64" or "0-1": 2 */
    if (fgets(line, sizeof line, f)) {
      int a, b;
      smt = 1;
      for (char *p = line; *p; p++) smt += *p == ',';
      if (sscanf(line, "%d-%d", &a, &b) == 2) smt = b - a + 1;
    }
    fclose(f);
  }
  for (int k = 0; k < 4096; k++) {
    char node[64];
    snprintf(node, sizeof node, "/sys/devices/system/node/node%d", k);
    if (access(node, F_OK)) break;
    numa++;
  }
  if ((dir = opendir("/proc/driver/nvidia/gpus"))) { /* gpus/<bus id>/information: "Model: \t NVIDIA ..." */
    struct dirent *e;
    while (!gpu[0] && (e = readdir(dir))) {
      char path[512];
      if (e->d_name[0] == '.') continue;
      snprintf(path, sizeof path, "/proc/driver/nvidia/gpus/%.200s/information", e->d_name);
      if (!(f = fopen(path, "r"))) continue;
      while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Model:", 6)) {
          char *m = line + 6;
          m += strspn(m, " \t");
          m[strcspn(m, "\n")] = 0;
          snprintf(gpu, sizeof gpu, "%s", m);
          break;
        }
      fclose(f);
    }
    closedir(dir);
  }
  fprintf(out, "  cpu_mhz_max: %s\n  threads_per_core: ", mhz > 0 ? yaml_num("%.0f", mhz) : "null");
  fprintf(out, smt > 0 ? "%d\n" : "null\n", smt);
  fprintf(out, numa > 0 ? "  numa_nodes: %d\n" : "  numa_nodes: null\n", numa);
  fprintf(out, "  gpu: %s\n", gpu[0] ? yaml_str(gpu) : "null");
  Interconnect(line, sizeof line);
  fprintf(out, "  interconnect: %s\n", line[0] ? yaml_str(line) : "null");
}

PetscErrorCode MachineWriteFacts(MPI_Comm comm, FILE *f, PetscBool anonymize)
{
  static const char *const env[]     = {"OMP_NUM_THREADS",
                                        "OMP_PROC_BIND",
                                        "OMP_PLACES",
                                        "OMP_WAIT_POLICY",
                                        "GOMP_SPINCOUNT",
                                        "OPENBLAS_NUM_THREADS",
                                        "OMPI_MCA_hwloc_base_binding_policy",
                                        "OMPI_COMM_WORLD_SIZE",
                                        "PMI_SIZE",
                                        "SLURM_JOB_ID",
                                        "SLURM_NNODES",
                                        "SLURM_CPU_BIND",
                                        "CUDA_VISIBLE_DEVICES",
                                        "PETSC_OPTIONS"};
  char                     host[256] = "unknown", *all = NULL, aff[256], *affs = NULL;
  long                     cores = sysconf(_SC_NPROCESSORS_ONLN), *allc = NULL, total = 0;
  struct utsname           u;
  struct sysinfo           si;
  PetscMPIInt              rank, size, nodes = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  (void)gethostname(host, sizeof host);
  host[sizeof host - 1] = 0;
  Affinity(aff, sizeof aff);
  if (rank == 0)
    PetscCall(PetscMalloc3((size_t)size * sizeof host, &all, (size_t)size, &allc, (size_t)size * sizeof aff, &affs));
  PetscCallMPI(MPI_Gather(host, sizeof host, MPI_CHAR, all, sizeof host, MPI_CHAR, 0, comm));
  PetscCallMPI(MPI_Gather(&cores, 1, MPI_LONG, allc, 1, MPI_LONG, 0, comm));
  PetscCallMPI(MPI_Gather(aff, sizeof aff, MPI_CHAR, affs, sizeof aff, MPI_CHAR, 0, comm));
  if (rank) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscMPIInt r = 0; r < size; r++) { /* distinct hosts, in rank order; their cores */
    PetscBool seen = PETSC_FALSE;
    for (PetscMPIInt q = 0; q < r && !seen; q++)
      seen = (PetscBool)!strcmp(all + (size_t)q * sizeof host, all + (size_t)r * sizeof host);
    nodes += !seen, total += seen ? 0 : allc[r];
  }
  fprintf(f, "  nodes: %d\n  node_names: [", nodes);
  for (PetscMPIInt r = 0, k = 0; r < size; r++) {
    PetscBool seen = PETSC_FALSE;
    for (PetscMPIInt q = 0; q < r && !seen; q++)
      seen = (PetscBool)!strcmp(all + (size_t)q * sizeof host, all + (size_t)r * sizeof host);
    char hb[64];
    if (!seen)
      fprintf(f, "%s%s", k++ ? ", " : "",
              yaml_str(MachineHostName(all + (size_t)r * sizeof host, anonymize, hb, sizeof hb)));
  }
  fprintf(f, "]\n  binding: [");
  for (PetscMPIInt r = 0; r < size && r < 64; r++)
    fprintf(f, "%s%s", r ? ", " : "", yaml_str(affs + (size_t)r * sizeof aff));
  fprintf(f, "%s]  # the CPUs each rank may run on%s\n", size > 64 ? ", \"...\"" : "",
          size > 64 ? " (the first 64 ranks)" : "");
  PetscCall(PetscFree3(all, allc, affs));
  fprintf(f, "  cores_online: %ld\n  cores_total: %ld\n  sockets: %d\n  vector_isa: %s\n", cores, total, Sockets(),
          VectorISA());
  CPUFlags(f);
  SystemFacts(f);
  if (!sysinfo(&si)) fprintf(f, "  memory_gib: %.1f\n", (double)si.totalram * si.mem_unit / (1024.0 * 1024.0 * 1024.0));
  if (!uname(&u))
    fprintf(f, "  os: %s\n  kernel: %s\n  arch: %s\n", yaml_str(u.sysname), yaml_str(u.release), yaml_str(u.machine));
  fprintf(f, "  netcdf_library: %s\n  blas_library: %s\n  petsc_configure: %s\n", yaml_str(nc_inq_libvers()),
          yaml_str(BLASLibrary()), yaml_str(petscconfigureoptions));
  fprintf(f, "  environment:");
  {
    int any = 0;
    for (size_t k = 0; k < sizeof env / sizeof *env; k++) {
      const char *v = getenv(env[k]);
      if (!v) continue;
      fprintf(f, "%s\n    %s: %s", any ? "" : "", env[k], yaml_str(v));
      any = 1;
    }
    if (!any) fprintf(f, " {}");
    fprintf(f, "\n");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A host name as the report shows it: itself, or with -report_anonymize
 * "host-" and 48 bits of its FNV-1a hash (the same name for the same host,
 * so a submission's nodes stay distinct and comparable, none named). */
const char *MachineHostName(const char *name, PetscBool anonymize, char *buf, size_t len)
{
  uint64_t h;
  if (!anonymize) return name;
  h = yaml_fnv1a64(name, strlen(name), YAML_FNV_START);
  snprintf(buf, len, "host-%012llx", (unsigned long long)(h >> 16));
  return buf;
}

PetscErrorCode MachineGather(MPI_Comm comm, PetscBool anonymize, MachineInfo *mi)
{
  time_t        now = time(NULL);
  struct tm     tm;
  struct rusage ru;
  MPI_Comm      node;
  PetscMPIInt   nn, len;
  FILE         *ci;
  char          hb[64];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(mi, sizeof *mi));
  strcpy(mi->host, "unknown"), strcpy(mi->cpu, "unknown"), strcpy(mi->date, "unknown"), strcpy(mi->mpilib, "unknown");
  (void)strftime(mi->date, sizeof mi->date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
  PetscCallMPI(MPI_Get_library_version(mi->mpilib, &len));
  mi->mpilib[strcspn(mi->mpilib, "\n,")] = 0; /* the first line, up to its first comma */
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_size(node, &nn));
  PetscCallMPI(MPI_Comm_free(&node));
  PetscCallMPI(MPI_Allreduce(&nn, &mi->pernode, 1, MPI_INT, MPI_MAX, comm));
  mi->mem[0] = mi->mem[1] = getrusage(RUSAGE_SELF, &ru) ? NAN : ru.ru_maxrss / 1024.0; /* KiB on Linux */
  mi->mem[0] = -mi->mem[0];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mi->mem, 2, MPI_DOUBLE, MPI_MAX, comm));
  PetscCall(PetscGetHostName(mi->host, sizeof mi->host));
  PetscCall(PetscStrncpy(mi->host, MachineHostName(mi->host, anonymize, hb, sizeof hb), sizeof mi->host));
  if ((ci = fopen("/proc/cpuinfo", "r"))) {
    char line[512];
    while (fgets(line, sizeof line, ci))
      if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
        PetscCall(PetscStrncpy(mi->cpu, strchr(line, ':') + 2, sizeof mi->cpu));
        mi->cpu[strcspn(mi->cpu, "\n\"")] = 0;
        break;
      }
    fclose(ci);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The network's device; on a GPU the distinct device numbers of the ranks and rank 0's device. */
PetscErrorCode MachineWriteDevice(MPI_Comm comm, FILE *f, Surrogate net, PetscMPIInt size)
{
  SurrogateDevice d       = SURROGATE_DEVICE_CPU;
  const char     *kernels = "none", *dname;
  PetscInt        id;
  int             mine, *all = NULL;
  PetscMPIInt     me;

  PetscFunctionBegin;
  if (net) PetscCall(SurrogateGetDevice(net, &d));
  if (net) PetscCall(SurrogateGetCudaKernels(net, &kernels));
  PetscCall(
    PetscFPrintf(comm, f, "  device: %s\n  cuda_kernels: %s\n", d == SURROGATE_DEVICE_CUDA ? "cuda" : "cpu", kernels));
  if (!net || d != SURROGATE_DEVICE_CUDA) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_rank(comm, &me));
  PetscCall(SurrogateGetDeviceId(net, &id, &dname));
  mine = (int)id;
  if (me == 0) PetscCall(PetscMalloc1(size, &all));
  PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, comm));
  if (me == 0) {
    char ids[256] = "", gpu[512];
    for (int r = 0; r < size; r++) {
      PetscBool seen = PETSC_FALSE;
      for (int q = 0; q < r; q++) seen = (PetscBool)(seen || all[q] == all[r]);
      if (!seen && strlen(ids) < sizeof ids - 16)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d", ids[0] ? ", " : "", all[r]);
    }
    /* driver and runtime versions, rank 0's device: memory, SMs, compute mode */
    (void)SurrogateCUDAProbe(gpu, sizeof gpu);
    PetscCall(PetscFPrintf(comm, f, "  device_ids: [%s]\n  device_name: %s\n  device_facts: %s\n", ids, yaml_str(dname),
                           yaml_str(gpu)));
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(PETSC_SUCCESS);
}
