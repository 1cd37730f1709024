// assert.h for NVRTC (rocmk): a failed assert traps the kernel.
#pragma once
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __trap())
#endif
