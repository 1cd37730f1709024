// A project's own operators on CUDA's vector types (helper_math.h's, copied
// into countless projects): HIP's vector types define the same ones, so they
// are kept for CUDA only; the shapes HIP lacks stay for everyone.
#include <cuda_runtime.h>

typedef unsigned int uint;

inline __host__ __device__ float2 operator-(float2 &a) { return make_float2(-a.x, -a.y); }
// the sum of two vectors
inline __host__ __device__ float3 operator+(float3 a, float3 b)
{
    return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);
}
inline __host__ __device__ void operator+=(float3 &a, float3 b) { a.x += b.x; a.y += b.y; a.z += b.z; }
inline __host__ __device__ float2 operator/(float2 a, float2 b) { return make_float2(a.x / b.x, a.y / b.y); }
inline __host__ __device__ float4 operator*(float b, float4 a) { return make_float4(b * a.x, b * a.y, b * a.z, b * a.w); }
inline __host__ __device__ void operator*=(uint3 &a, uint b) { a.x *= b; a.y *= b; a.z *= b; }

inline __host__ __device__ float dot(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

// HIP has no & on float vectors, no - on unsigned ones, no float3 + float4:
// these stay
inline __host__ __device__ float2 operator&(float2 a, float2 b) { return a; }
inline __host__ __device__ uint2 operator-(uint2 &a) { return a; }
inline __host__ __device__ float3 operator+(float3 a, float4 b) { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }
template <typename T> __device__ T operator+(T a, int2 b) { return a; }

namespace geom {
__device__ int2 operator%(int2 a, int b) { return make_int2(a.x % b, a.y % b); }
}

__global__ void shade(float2 *a, float3 *b, float4 *c, uint3 *d)
{
    float3 s = b[0] + b[1];
    s += b[2];
    a[0] = -(a[0] / a[1]);
    c[0] = 2.0f * c[0];
    d[0] *= 3u;
    b[0] = s * dot(s, s);
}
