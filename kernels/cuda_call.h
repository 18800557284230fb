/* kernels/cuda_call.h: how an error message names a CUDA call that failed:
 * the function called (the text of the call before its first parenthesis),
 * or the whole call where it starts with one ((a ? f : g)(...)). For
 * "%.*s", CUDA_CALL_NAME(#call), #call. */
#ifndef MINIAPP_KERNELS_CUDA_CALL_H
#define MINIAPP_KERNELS_CUDA_CALL_H

#include <string.h>

#define CUDA_CALL_NAME(text) ((int)(strcspn(text, "(") ? strcspn(text, "(") : strlen(text)))

#endif
