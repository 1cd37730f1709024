// cooperative_groups/reduce.h and the partitions HIP lacks: the include asks
// for the compat header's CG piece, which provides them on AMD and includes
// CUDA's reduce.h on NVIDIA.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void sums(const int *in, int *out, double *dot)
{
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    out[0] = cg::reduce(tile32, v, cg::plus<int>());
    out[1] = cg::reduce(tile32, v, cg::less<int>());
    out[2] = cg::reduce(tile32, v, cg::greater<int>());
    out[3] = cg::reduce(tile32, v, cg::bit_xor<int>());
    dot[0] = cg::reduce(tile32, (double)v * v, cg::plus<double>());

    auto odd = cg::binary_partition(tile32, v & 1);
    out[4] = cg::reduce(odd, v, cg::plus<int>());

    cg::coalesced_group active = cg::coalesced_threads();
    auto bucket = cg::labeled_partition(active, v % 4);
    if (bucket.thread_rank() == 0)
        out[5 + v % 4] = cg::reduce(bucket, v, cg::greater<int>());
}

int main()
{
    sums<<<1, 32>>>(nullptr, nullptr, nullptr);
    return cudaDeviceSynchronize() != cudaSuccess;
}
