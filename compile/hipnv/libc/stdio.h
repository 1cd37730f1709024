// stdio.h for NVRTC (rocmk): what device code uses of it (printf, malloc, free, memcpy, memset) is built into NVRTC.
#pragma once
