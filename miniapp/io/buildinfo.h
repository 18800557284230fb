/* miniapp/io/buildinfo.h: what the build recorded about itself (CMake passes
 * these as definitions; the fallbacks keep other build systems working). */
#ifndef MINIAPP_BUILDINFO_H
#define MINIAPP_BUILDINFO_H

#ifndef MINIAPP_VERSION
#define MINIAPP_VERSION "unknown"
#endif
#ifndef MINIAPP_REVISION
extern const char miniapp_revision[]; /* revision.c, generated at build time (cmake/revision.cmake) */
#define MINIAPP_REVISION miniapp_revision
#endif
#ifndef MINIAPP_C_COMPILER
#define MINIAPP_C_COMPILER "unknown"
#endif
#ifndef MINIAPP_C_FLAGS
#define MINIAPP_C_FLAGS "unknown"
#endif
#ifndef MINIAPP_CUDA_VERSION
#define MINIAPP_CUDA_VERSION "none (built without CUDA)"
#endif
#ifndef MINIAPP_SURROGATE_REDUCTION_NAME
#define MINIAPP_SURROGATE_REDUCTION_NAME "unknown"
#endif

#endif
