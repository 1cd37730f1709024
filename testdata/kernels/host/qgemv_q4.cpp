// The q4 qgemv lane arithmetic (qv_x<true, 32> of kernels/qgemv.hip: x as
// 8-bit limbs, dot products of 4 bytes, the target-independent fallback)
// run on the host, for kernels/qgemv_host_test.go. stdin: records of 32
// float32 x (a block's weights' order), a Q4_0 block (2-byte f16 scale, 16
// quant bytes) and one byte, the block's offset in the row (0 or 2, so that
// the quants are read at both alignments); stdout: one float32 per record.
#include "qgemv.hip"
#include <cstdio>

int main() {
  unsigned char rec[32 * 4 + 18 + 1];
  while (fread(rec, sizeof rec, 1, stdin) == 1) {
    float x[32];
    memcpy(x, rec, sizeof x);
    float4 v[8];
    for (int j = 0; j < 8; j++) v[j] = make_float4(x[4 * j], x[4 * j + 1], x[4 * j + 2], x[4 * j + 3]);
    const int off = rec[32 * 4 + 18];
    alignas(4) unsigned char row[24] = {};
    memcpy(row + off, rec + 32 * 4, 18);
    const int qo = off + 2;
    qv_raw<4> q;
    q.fetch(row, off, qo & ~3, (qo & 2) * 8);
    const qv_x<true, 32> xs(v);
    const float y = xs.dot(q, qv_keys{0, 0});
    fwrite(&y, sizeof y, 1, stdout);
  }
  return 0;
}
