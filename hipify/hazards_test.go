package hipify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// ROCm 7 made warpSize a run-time value: each use as a constant expression
// is a hazard at its position; run-time uses are not.
func TestWarpSizeConstantHazard(t *testing.T) {
	src := `template <int W> __device__ int f() { return W; }
constexpr int W = warpSize;
static_assert(warpSize == 32, "wave32");
__global__ void k(float* p, int n) {
  __shared__ float s[warpSize];
  int lane = threadIdx.x % warpSize;
  p[lane] = f<warpSize>() + s[warpSize - 1] + (n < warpSize ? 1 : 0);
  switch (n) { case warpSize: p[0] = 0; }
  if (lane < warpSize) p[1] = p[warpSize];
}
`
	_, rep := tr(t, src, Options{})
	var got []string
	for _, d := range rep.Hazards {
		if d.Code == "warpsize-constant" {
			got = append(got, d.Where+" "+strings.SplitN(d.Msg, ":", 2)[0])
		}
	}
	assert.Equal(t, []string{
		"t.cu:2:19 warpSize in a constexpr declaration",
		"t.cu:3:15 warpSize in a static_assert",
		"t.cu:5:22 warpSize as an array bound",
		"t.cu:7:15 warpSize as a template argument",
		"t.cu:8:21 warpSize as a case label",
	}, got)
}
