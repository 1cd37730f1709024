base=open('d_base.hip').read()
def rep(s,a,b,cnt=1):
    assert s.count(a)==cnt,(a,s.count(a)); return s.replace(a,b)
def bt(u, vpre=False):
    s=base
    s=rep(s,'#define ATT_U 4 ','#define ATT_U %d '%u)
    s=rep(s,'''__device__ __forceinline__ long long att_row(const int* __restrict__ tab, int t, int BS, long long rowStride, int off) {
  return ((long long)tab[t / BS] * BS + t % BS) * rowStride + off;''','''__device__ __forceinline__ long long att_row(const int* blk, int b0, int t, int BS, long long rowStride, int off) {
  const int tq = t / BS;
  return ((long long)blk[tq - b0] * BS + (t - tq * BS)) * rowStride + off;''')
    s=rep(s,'''  for (int i = threadIdx.x; i < ATT_GMAX * HD; i += blockDim.x) acc_sh[i / HD][i % HD] = 0.0f;
''','''  for (int i = threadIdx.x; i < ATT_GMAX * HD; i += blockDim.x) acc_sh[i / HD][i % HD] = 0.0f;
  // the partition's block-table entries (at most n), staged so that no K/V
  // load waits on a table load
  __shared__ int blk[ATT_PART];
  const int b0 = t0 / BS;
  for (int i = threadIdx.x; i <= (t0 + n - 1) / BS - b0; i += blockDim.x) blk[i] = tab[b0 + i];
  __syncthreads();
''')
    s=rep(s,'att_row(tab, ','att_row(blk, b0, ',2)
    if vpre:
        s=rep(s,'''    }
  }
  __syncthreads();
  // softmax of each head's scores''','''    }
  }
  // the first V rows are loaded before the softmax, so pass 2 starts with them in flight
  uint4 vpre[ATT_U];
#pragma unroll
  for (int u = 0; u < ATT_U; u++) vpre[u] = *(const uint4*)(vc + att_row(blk, b0, t0 + min(u * NL + tl, n - 1), BS, rowStride, kvh * HD + dc * 8));
  __syncthreads();
  // softmax of each head's scores''')
        s=rep(s,'''      for (int u = 0; u < ATT_U; u++) raw[u] = *(const uint4*)(vc + att_row(blk, b0, ''','''      for (int u = 0; u < ATT_U; u++) raw[u] = jb == 0 ? vpre[u] : *(const uint4*)(vc + att_row(blk, b0, ''')
    return s
for name,u,v in [('bt4',4,0),('bt4v',4,1),('bt2',2,0),('bt2v',2,1),('bt8',8,0),('bt6v',6,1)]:
    open('d_%s.hip'%name,'w').write(bt(u,v))
