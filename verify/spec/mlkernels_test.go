package spec

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// Go transcriptions of testdata/port/mlkernels (the multi-file ML kernel
// project), loop for loop: every spec of mlkernels.toml must pass against
// its kernel, and the strided and broadcast cases must fail against a
// kernel that ignores the strides.

// mlDType is the dtype a kernel name ends with (uneg_bf16: bf16).
func mlDType(kernel string) verify.DType {
	d, err := verify.ParseDType(kernel[strings.LastIndex(kernel, "_")+1:])
	if err != nil {
		panic(err)
	}
	return d
}

// mlRound is a value as the kernel computes it: float for f32, f16 and bf16
// (they compute in float), double for f64, exact for integers.
func mlRound(d verify.DType, v float64) float64 {
	if d == verify.F32 || d == verify.F16 || d == verify.BF16 {
		return float64(float32(v))
	}
	return v
}

// stridedIndex is get_strided_index (cuda_utils.cuh).
func stridedIndex(idx int, dims, strides []int) int {
	s := 0
	for d := len(dims) - 1; d >= 0; d-- {
		s += idx % dims[d] * strides[d]
		idx /= dims[d]
	}
	return s
}

// contiguous is is_contiguous (cuda_utils.cuh).
func contiguous(dims, strides []int) bool {
	acc := 1
	for d := len(dims) - 1; d >= 0; d-- {
		if dims[d] > 1 && acc != strides[d] {
			return false
		}
		acc *= dims[d]
	}
	return true
}

// u64s reads n size_t values of a buffer (nil for a null pointer).
func (f *fakeRuntime) u64s(a verify.Arg, n int) []int {
	if a.Uint64() == 0 {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = int(verify.Decode(verify.U64, f.bytes(a), i))
	}
	return out
}

// indexer returns how element i of a tensor is read: contiguously, or
// through dims and strides; ignoreStrides is the porting bug.
func indexer(info []int, nd, which int, ignoreStrides bool) func(int) int {
	if info == nil || ignoreStrides {
		return func(i int) int { return i }
	}
	dims, strides := info[:nd], info[nd*which:nd*(which+1)]
	if contiguous(dims, strides) {
		return func(i int) int { return i }
	}
	return func(i int) int { return stridedIndex(i, dims, strides) }
}

func gelu(x float64) float64 {
	x = float64(float32(x))
	return 0.5 * x * (1 + math.Tanh(0.7978845608028654*(x+0.044715*x*x*x)))
}

// mlUnary is UNARY_OP and AFFINE_OP (unary.cu).
func mlUnary(kernel string, ignoreStrides bool) fakeKernel {
	d := mlDType(kernel)
	op := strings.SplitN(kernel, "_", 2)[0]
	return func(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
		n, nd := int(args[0].Uint64()), int(args[1].Uint64())
		at := indexer(rt.u64s(args[2], 2*nd), nd, 1, ignoreStrides)
		in, out := rt.bytes(args[3]), rt.bytes(args[4])
		var mul, add float64
		if op == "affine" {
			b := make([]byte, d.Size())
			for j, a := range args[5:7] {
				for k := range b {
					b[k] = byte(a.Uint64() >> (8 * k))
				}
				if j == 0 {
					mul = verify.Decode(d, b, 0)
				} else {
					add = verify.Decode(d, b, 0)
				}
			}
		}
		for i := 0; i < n; i++ {
			x := verify.Decode(d, in, at(i))
			var y float64
			switch op {
			case "ucopy":
				y = x
			case "uneg":
				y = -x
			case "uexp":
				y = math.Exp(x)
			case "usqrt":
				y = math.Sqrt(x)
			case "ugelu":
				y = gelu(x)
			case "affine":
				y = x*mul + add
			}
			verify.Encode(d, out, i, mlRound(d, y))
		}
		return nil
	}
}

// mlBinary is BINARY_OP (binary.cu).
func mlBinary(kernel string, ignoreStrides bool) fakeKernel {
	d := mlDType(kernel)
	op := strings.SplitN(kernel, "_", 2)[0]
	return func(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
		n, nd := int(args[0].Uint64()), int(args[1].Uint64())
		info := rt.u64s(args[2], 3*nd)
		l, r := indexer(info, nd, 1, ignoreStrides), indexer(info, nd, 2, ignoreStrides)
		lhs, rhs, out := rt.bytes(args[3]), rt.bytes(args[4]), rt.bytes(args[5])
		for i := 0; i < n; i++ {
			x, y := verify.Decode(d, lhs, l(i)), verify.Decode(d, rhs, r(i))
			var z float64
			switch op {
			case "badd":
				z = x + y
			case "bmul":
				z = x * y
			case "bmaximum":
				z = math.Max(x, y)
			}
			verify.Encode(d, out, i, mlRound(d, z))
		}
		return nil
	}
}

// mlReduce is SUM_OP, fast_max_* and softmax_f32 (reduce.cu): one block
// per row, accumulated in the kernel's type (float for f32, f16, bf16).
func mlReduce(kernel string) fakeKernel {
	d := mlDType(kernel)
	return func(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
		switch {
		case strings.HasPrefix(kernel, "fast_sum"):
			numel, per := int(args[0].Uint64()), int(args[1].Uint64())
			src, dst := rt.bytes(args[2]), rt.bytes(args[3])
			for b := 0; b < int(grid.X); b++ {
				acc := 0.0
				for i := b * per; i < min(b*per+per, numel); i++ {
					acc = mlRound(d, acc+verify.Decode(d, src, i))
				}
				verify.Encode(d, dst, b, acc)
			}
		case strings.HasPrefix(kernel, "fast_max"):
			cols := int(args[0].Uint64())
			src, dst := rt.bytes(args[1]), rt.bytes(args[2])
			for b := 0; b < int(grid.X); b++ {
				m := math.Inf(-1)
				for c := 0; c < cols; c++ {
					m = math.Max(m, verify.Decode(d, src, b*cols+c))
				}
				verify.Encode(d, dst, b, m)
			}
		default: // softmax_f32
			cols := int(args[0].Uint64())
			src, dst := rt.bytes(args[1]), rt.bytes(args[2])
			for b := 0; b < int(grid.X); b++ {
				m := float32(math.Inf(-1))
				for c := 0; c < cols; c++ {
					m = max(m, float32(verify.Decode(d, src, b*cols+c)))
				}
				var s float32
				for c := 0; c < cols; c++ {
					s += float32(math.Exp(float64(float32(verify.Decode(d, src, b*cols+c)) - m)))
				}
				for c := 0; c < cols; c++ {
					e := float32(math.Exp(float64(float32(verify.Decode(d, src, b*cols+c)) - m)))
					verify.Encode(d, dst, b*cols+c, float64(e/s))
				}
			}
		}
		return nil
	}
}

func mlKernel(s *Spec, ignoreStrides bool) fakeKernel {
	switch filepath.Base(s.Source) {
	case "unary.cu":
		return mlUnary(s.Kernel, ignoreStrides)
	case "binary.cu":
		return mlBinary(s.Kernel, ignoreStrides)
	}
	return mlReduce(s.Kernel)
}

// TestMLKernelsSpecs: every spec of the multi-file project passes against a
// Go transcription of its kernel, in every case (contiguous and strided,
// every dtype, every block size).
func TestMLKernelsSpecs(t *testing.T) {
	f := readSpec(t, filepath.Join("mlkernels", "mlkernels.toml"))
	require.Len(t, f.Specs, 49, "one spec per kernel")
	for _, s := range f.Specs {
		t.Run(s.Label(), func(t *testing.T) {
			res, _, err := runInline(t, s, map[string]fakeKernel{s.Kernel: mlKernel(s, false)})
			require.NoError(t, err)
			for _, c := range res.Cases {
				assert.True(t, c.OK, "%s: %s %+v", c.Case, c.Error, c.Outputs)
			}
		})
	}
}

// TestMLKernelsSpecsCatchIgnoredStrides: a kernel that reads every tensor
// as contiguous (the bug of a port that drops the info array) passes the
// contiguous cases and fails the strided and broadcast ones.
func TestMLKernelsSpecsCatchIgnoredStrides(t *testing.T) {
	f := readSpec(t, filepath.Join("mlkernels", "mlkernels.toml"))
	for _, s := range f.Specs {
		if base := filepath.Base(s.Source); base == "reduce.cu" || strings.HasPrefix(s.Kernel, "ucopy_u8") {
			continue // no strides; (u8 copies: random bytes could repeat by chance)
		}
		res, _, err := runInline(t, s, map[string]fakeKernel{s.Kernel: mlKernel(s, true)})
		require.NoError(t, err)
		failed := 0
		for _, c := range res.Cases {
			strided := strings.Contains(c.Case, "strided=1") || strings.Contains(c.Case, "bcast=1")
			if !c.OK {
				failed++
				assert.True(t, strided, "%s %s: a contiguous case fails", s.Label(), c.Case)
			}
			oneRow := strings.Contains(c.Case+" ", " rows=1 ") // one row: the transposed view is contiguous
			if strided && !oneRow {
				assert.False(t, c.OK, "%s %s: strides ignored, yet it passes", s.Label(), c.Case)
			}
		}
		assert.Greater(t, failed, 0, s.Label())
	}
}
