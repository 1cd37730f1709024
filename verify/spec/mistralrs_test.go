package spec

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// Go transcriptions of the mistral.rs kernels that
// testdata/port/mistralrs/kernels.toml specifies, loop for loop, with float32
// arithmetic where the CUDA code uses float: each spec must pass against its
// kernel, and fail against the kernel with a typical porting bug.

// at resolves a device address that may point inside an allocation (a
// table of pointers holds such addresses).
func (f *fakeRuntime) at(addr uint64) []byte {
	for base, b := range f.mem {
		if addr >= uint64(base) && addr < uint64(base)+uint64(len(b)) {
			return b[addr-uint64(base):]
		}
	}
	panic("fake: no allocation holds the address")
}

func getF32(b []byte, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
}
func setF32(b []byte, i int, v float32) {
	binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
}
func getI64(b []byte, i int) int64 { return int64(binary.LittleEndian.Uint64(b[8*i:])) }
func getU32(b []byte, i int) uint32 {
	return binary.LittleEndian.Uint32(b[4*i:])
}
func setU32(b []byte, i int, v uint32) { binary.LittleEndian.PutUint32(b[4*i:], v) }
func argInt(a verify.Arg) int          { return int(int32(a.Uint64())) }
func argF32(a verify.Arg) float32      { return math.Float32frombits(uint32(a.Uint64())) }

// rotaryGPTJ is rotary_embedding_kernel<float, false>.
func rotaryGPTJ(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	q, k, cs, sn := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2]), rt.bytes(args[3])
	rot := argInt(args[4])
	qs, ks := int(args[5].Uint64()), int(args[6].Uint64())
	nh, nkv, hs := argInt(args[7]), argInt(args[8]), argInt(args[9])
	for token := 0; token < int(grid.X); token++ {
		apply := func(arr []byte, stride, heads int) {
			for i := 0; i < heads*rot; i++ {
				base := token*stride + i/rot*hs
				xi, yi := 2*(i%rot), 2*(i%rot)+1
				c, s := getF32(cs, token*rot+xi/2), getF32(sn, token*rot+xi/2)
				x, y := getF32(arr, base+xi), getF32(arr, base+yi)
				setF32(arr, base+xi, x*c-y*s)
				setF32(arr, base+yi, y*c+x*s)
			}
		}
		apply(q, qs, nh)
		apply(k, ks, nkv)
	}
	return nil
}

// copyBlocks is copy_blocks_kernel_f32.
func copyBlocks(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	kp, vp, mapping := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2])
	nk, nv := argInt(args[3]), argInt(args[4])
	for l := 0; l < int(grid.X); l++ {
		kc, vc := rt.at(uint64(getI64(kp, l))), rt.at(uint64(getI64(vp, l)))
		for p := 0; p < int(grid.Y); p++ {
			src, dst := int(getI64(mapping, 2*p)), int(getI64(mapping, 2*p+1))
			for i := 0; i < nk; i++ {
				setF32(kc, dst*nk+i, getF32(kc, src*nk+i))
			}
			for i := 0; i < nv; i++ {
				setF32(vc, dst*nv+i, getF32(vc, src*nv+i))
			}
		}
	}
	return nil
}

// reshapeAndCache is reshape_and_cache_kernel<float, float, kAuto>.
func reshapeAndCache(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	key, value, kc, vc, slots := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2]), rt.bytes(args[3]), rt.bytes(args[4])
	ks, vs, nh, hs, bs, x := argInt(args[5]), argInt(args[6]), argInt(args[7]), argInt(args[8]), argInt(args[9]), argInt(args[10])
	if args[11].Uint64() != 0 || args[12].Uint64() != 0 {
		panic("k_scale and v_scale are null")
	}
	for token := 0; token < int(grid.X); token++ {
		slot := int(getI64(slots, token))
		if slot < 0 {
			continue
		}
		bi, bo := slot/bs, slot%bs
		for i := 0; i < nh*hs; i++ {
			head, ho := i/hs, i%hs
			tk := bi*nh*(hs/x)*bs*x + head*(hs/x)*bs*x + ho/x*bs*x + bo*x + ho%x
			tv := bi*nh*hs*bs + head*hs*bs + ho*bs + bo
			setF32(kc, tk, getF32(key, token*ks+i))
			setF32(vc, tv, getF32(value, token*vs+i))
		}
	}
	return nil
}

// quantFP8 is quant_fp8_vector_kernel<float>: absmax / 448 in float, then
// float -> __float2half -> __nv_cvt_halfraw_to_fp8(SATFINITE, E4M3).
func quantFP8(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	in, w, scale := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2])
	n := int(args[3].Uint64())
	for v := 0; v < int(grid.X); v++ {
		var absmax float32
		for i := v * 128; i < min(v*128+128, n); i++ {
			absmax = max(absmax, float32(math.Abs(float64(getF32(in, i)))))
		}
		s := absmax / 448
		if s < 1e-12 {
			s = 1e-12
		}
		setF32(scale, v, s)
		for i := v * 128; i < min(v*128+128, n); i++ {
			sv := min(max(getF32(in, i)/s, -448), 448)
			w[i] = verify.F64ToE4M3(verify.F16ToF64(verify.F32ToF16(sv)), true)
		}
	}
	return nil
}

// dequantFP8 is dequant_fp8_vector_kernel<float>.
func dequantFP8(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	w, scale, out := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2])
	n := int(args[3].Uint64())
	for i := 0; i < n; i++ {
		setF32(out, i, float32(verify.E4M3ToF64(w[i]))*getF32(scale, i/128))
	}
	return nil
}

// bitonicStage is bitonic_sort_kernel<float, true>.
func bitonicStage(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	arr, dst := rt.bytes(args[0]), rt.bytes(args[1])
	j, k := argInt(args[2]), argInt(args[3])
	for i := 0; i < int(grid.X*block.X); i++ {
		ij := i ^ j
		if ij <= i {
			continue
		}
		a, b := getF32(arr, i), getF32(arr, ij)
		if i&k == 0 && a > b || i&k != 0 && a < b {
			setF32(arr, i, b)
			setF32(arr, ij, a)
			di, dj := getU32(dst, i), getU32(dst, ij)
			setU32(dst, i, dj)
			setU32(dst, ij, di)
		}
	}
	return nil
}

func fillF32(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	for i := 0; i < argInt(args[2]); i++ {
		setF32(rt.bytes(args[0]), i, argF32(args[1]))
	}
	return nil
}

// capacityMask is hunyuan_moe_capacity_mask_kernel.
func capacityMask(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	ids, weights, masked := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2])
	tokens, experts, topK, capacity := argInt(args[3]), argInt(args[4]), argInt(args[5]), argInt(args[6])
	for e := 0; e < int(grid.X) && e < experts; e++ {
		for p := 0; p < int(grid.Y) && p < topK; p++ {
			accepted := 0
			for q := 0; q < p; q++ {
				for t := 0; t < tokens; t++ {
					if getU32(ids, t*topK+q) == uint32(e) {
						accepted++
					}
				}
			}
			for t := 0; t < tokens; t++ {
				r := t*topK + p
				if getU32(ids, r) == uint32(e) && accepted < capacity {
					setF32(masked, r, getF32(weights, r))
					accepted++
				}
			}
		}
	}
	return nil
}

func TestMistralrsSpecsAgainstTheirKernels(t *testing.T) {
	f := readSpec(t, filepath.Join("mistralrs", "kernels.toml"))
	kernels := map[string]map[string]fakeKernel{
		"rotary_gptj":           {"rotary_embedding_kernel<float, false>": rotaryGPTJ},
		"copy_blocks":           {"copy_blocks_kernel_f32": copyBlocks},
		"reshape_and_cache":     {"_ZN4vllm24reshape_and_cache_kernelIffLNS_18Fp8KVCacheDataTypeE0EEEvPKT_S4_PT0_S6_PKliiiiiiPKfSA_": reshapeAndCache},
		"quant_fp8_vector":      {"quant_fp8_vector_kernel<float>": quantFP8},
		"dequant_fp8_vector":    {"dequant_fp8_vector_kernel<float>": dequantFP8},
		"bitonic_argsort8":      {"bitonic_sort_kernel<float, true>": bitonicStage},
		"hunyuan_capacity_mask": {"fill_f32_kernel": fillF32, "hunyuan_moe_capacity_mask_kernel": capacityMask},
	}
	require.Len(t, f.Specs, len(kernels))
	for _, s := range f.Specs {
		t.Run(s.Label(), func(t *testing.T) {
			ks := kernels[s.Label()]
			require.NotNil(t, ks)
			res, _, err := runInline(t, s, ks)
			require.NoError(t, err)
			for _, c := range res.Cases {
				assert.True(t, c.OK, "%s: %s %+v", c.Case, c.Error, c.Outputs)
			}
		})
	}
}

// TestMistralrsSpecsCatchPortingBugs: each spec fails against its kernel
// with a bug of the kind a port introduces.
func TestMistralrsSpecsCatchPortingBugs(t *testing.T) {
	f := readSpec(t, filepath.Join("mistralrs", "kernels.toml"))
	spec := func(name string) *Spec {
		for _, s := range f.Specs {
			if s.Label() == name {
				return s
			}
		}
		t.Fatalf("no spec %s", name)
		return nil
	}
	for _, c := range []struct {
		spec    string
		kernels map[string]fakeKernel
	}{
		// NeoX pairing (d with d + rot_dim) where GPT-J pairs neighbours.
		{"rotary_gptj", map[string]fakeKernel{"rotary_embedding_kernel<float, false>": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			q, cs, sn := rt.bytes(args[0]), rt.bytes(args[2]), rt.bytes(args[3])
			rot, qs, nh, hs := argInt(args[4]), int(args[5].Uint64()), argInt(args[7]), argInt(args[9])
			for token := 0; token < int(g.X); token++ {
				for i := 0; i < nh*rot; i++ {
					base, ro := token*qs+i/rot*hs, i%rot
					c, s := getF32(cs, token*rot+ro), getF32(sn, token*rot+ro)
					x, y := getF32(q, base+ro), getF32(q, base+rot+ro)
					setF32(q, base+ro, x*c-y*s)
					setF32(q, base+rot+ro, y*c+x*s)
				}
			}
			return nil
		}}},
		// The pointer table read as one layer (layer 0 for all).
		{"copy_blocks", map[string]fakeKernel{"copy_blocks_kernel_f32": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			return copyBlocks(rt, verify.Dim3{X: 1, Y: g.Y, Z: 1}, b, args)
		}}},
		// Rounding float -> e4m3 directly, skipping the kernel's half step.
		{"quant_fp8_vector", map[string]fakeKernel{"quant_fp8_vector_kernel<float>": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			if err := quantFP8(rt, g, b, args); err != nil {
				return err
			}
			in, w, scale := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2])
			for i := 0; i < int(args[3].Uint64()); i++ {
				w[i] = verify.F64ToE4M3(float64(getF32(in, i)/getF32(scale, i/128)), true)
			}
			return nil
		}}},
		// The padding token (slot -1) written to slot 0's neighbour.
		{"reshape_and_cache", map[string]fakeKernel{"_ZN4vllm24reshape_and_cache_kernelIffLNS_18Fp8KVCacheDataTypeE0EEEvPKT_S4_PT0_S6_PKliiiiiiPKfSA_": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			slots := rt.bytes(args[4])
			for t := 0; t < int(g.X); t++ {
				if getI64(slots, t) < 0 {
					binary.LittleEndian.PutUint64(slots[8*t:], 1)
				}
			}
			return reshapeAndCache(rt, g, b, args)
		}}},
	} {
		s := spec(c.spec)
		res, _, err := runInline(t, s, c.kernels)
		require.NoError(t, err, c.spec)
		assert.False(t, res.OK, "%s: the bug is caught", c.spec)
	}
}
