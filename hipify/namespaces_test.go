package hipify

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// CUB's namespace is hipCUB's hipcub::, thrust's CUDA system is rocThrust's
// thrust::hip::; other names that happen to be cub or cuda are left alone.
func TestLibraryNamespaces(t *testing.T) {
	src := "namespace c2 = cub;\nusing namespace cub;\ntypedef ::cub::BlockReduce<float, 128> R;\n" +
		"using Scan = cub::BlockScan<int, 1024>;\n#define SUM(...) cub::DeviceReduce::Sum(__VA_ARGS__)\n" +
		"auto a = thrust::cuda::par.on(s);\nauto b = thrust::system::cuda::par;\n" +
		"int cub = 1; s.cub = 2; my::cub::f(); cuda::std::min(1, 2); other::cuda::x; thrust::device_vector<int> v;\n"
	out, rep := trLines(t, src, Options{})
	assert.Equal(t, "namespace c2 = hipcub;\nusing namespace hipcub;\ntypedef ::hipcub::BlockReduce<float, 128> R;\n"+
		"using Scan = hipcub::BlockScan<int, 1024>;\n#define SUM(...) hipcub::DeviceReduce::Sum(__VA_ARGS__)\n"+
		"auto a = thrust::hip::par.on(s);\nauto b = thrust::system::hip::par;\n"+
		"int cub = 1; s.cub = 2; my::cub::f(); cuda::std::min(1, 2); other::cuda::x; thrust::device_vector<int> v;\n", out)
	assert.Equal(t, 7, rep.Replaced["namespace"])
	again, _ := trLines(t, out, Options{})
	assert.Equal(t, out, again, "idempotent")
}
