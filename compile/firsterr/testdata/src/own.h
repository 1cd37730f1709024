__device__ float helper() { return 1.0f +; }
