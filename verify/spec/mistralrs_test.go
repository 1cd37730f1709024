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

func getU16(b []byte, i int) uint16    { return binary.LittleEndian.Uint16(b[2*i:]) }
func setU16(b []byte, i int, v uint16) { binary.LittleEndian.PutUint16(b[2*i:], v) }
func getF16(b []byte, i int) float32   { return verify.F16ToF32(getU16(b, i)) }
func setF16(b []byte, i int, v float32) {
	setU16(b, i, verify.F32ToF16(v))
}

// actAndMulF16 is (anonymous namespace)::act_and_mul_kernel<__half, 0>.
func actAndMulF16(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	out, in := rt.bytes(args[0]), rt.bytes(args[1])
	d := argInt(args[2])
	const beta = float32(math.Sqrt2 * (2 / math.SqrtPi) * 0.5)
	for t := 0; t < int(grid.X); t++ {
		for j := 0; j < d; j++ {
			g, u := getF16(in, t*2*d+j), getF16(in, t*2*d+d+j)
			act := 0.5 * g * (1 + float32(math.Tanh(float64(beta*(g+0.044715*(g*g*g))))))
			setF16(out, t*d+j, act*u)
		}
	}
	return nil
}

// moeSumBF16 is moe_sum_bf16_kernel.
func moeSumBF16(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	out, in := rt.bytes(args[0]), rt.bytes(args[1])
	tokens, hidden, topk := argInt(args[2]), argInt(args[3]), argInt(args[4])
	for t := 0; t < tokens; t++ {
		for c := 0; c < hidden; c++ {
			var acc float32
			for s := 0; s < topk; s++ {
				acc += float32(verify.BF16ToF32(getU16(in, t*topk*hidden+s*hidden+c)))
			}
			setU16(out, t*hidden+c, verify.F32ToBF16(acc))
		}
	}
	return nil
}

// indexedRowCopy is indexed_row_copy_kernel<__half>.
func indexedRowCopy(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	src, dst, rows := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2])
	n, width := argInt(args[3]), int(args[4].Uint64())
	for idx := 0; idx < int(grid.X*block.X) && idx < n*width; idx++ {
		r, c := idx/width, idx%width
		setU16(dst, int(getU32(rows, r))*width+c, getU16(src, idx))
	}
	return nil
}

// toFP8 is dtype_to_fp8_kernel<T>: clamp in float, __float2half, then
// __nv_cvt_halfraw_to_fp8(SATFINITE, E4M3).
func toFP8(get func(b []byte, i int) float32) fakeKernel {
	return func(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
		in, out := rt.bytes(args[0]), rt.bytes(args[1])
		for i := 0; i < int(args[2].Uint64()); i++ {
			v := min(max(get(in, i), -448), 448)
			out[i] = verify.F64ToE4M3(verify.F16ToF64(verify.F32ToF16(v)), true)
		}
		return nil
	}
}

// fp8ToF16 is fp8_to_dtype_kernel<__half>.
func fp8ToF16(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	in, out := rt.bytes(args[0]), rt.bytes(args[1])
	for i := 0; i < int(args[2].Uint64()); i++ {
		setF16(out, i, float32(verify.E4M3ToF64(in[i])))
	}
	return nil
}

// updateScales is compute_and_update_scales_kernel<__half>: a block's
// grid-stride maxima, divided by 240, raise the scales (atomicMaxFloat).
// Without takeMax each block stores its own (a lost atomic).
func updateScales(takeMax bool) fakeKernel {
	return func(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
		k, v, n := rt.bytes(args[0]), rt.bytes(args[1]), int(args[2].Uint64())
		ks, vs := rt.bytes(args[3]), rt.bytes(args[4])
		raise := func(scale []byte, c float32) {
			if c > 0 && (!takeMax || c > getF32(scale, 0)) {
				setF32(scale, 0, c)
			}
		}
		stride := int(grid.X * block.X)
		for b := 0; b < int(grid.X); b++ {
			var mk, mv float32
			for tid := 0; tid < int(block.X); tid++ {
				for i := b*int(block.X) + tid; i < n; i += stride {
					mk = max(mk, float32(math.Abs(float64(getF16(k, i)))))
					mv = max(mv, float32(math.Abs(float64(getF16(v, i)))))
				}
			}
			raise(ks, mk/240)
			raise(vs, mv/240)
		}
		return nil
	}
}

// concatAndCacheMLA is concat_and_cache_mla_kernel<__half>.
func concatAndCacheMLA(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	ckv, kpe, ckvCache, kpeCache, slots := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2]), rt.bytes(args[3]), rt.bytes(args[4])
	ckvStride, kpeStride, rank, kpeDim, bs := argInt(args[5]), argInt(args[6]), argInt(args[7]), argInt(args[8]), argInt(args[9])
	for t := 0; t < int(grid.X); t++ {
		slot := int(getI64(slots, t))
		if slot < 0 {
			continue
		}
		bi, bo := slot/bs, slot%bs
		for i := 0; i < rank; i++ {
			setU16(ckvCache, bi*bs*rank+bo*rank+i, getU16(ckv, t*ckvStride+i))
		}
		for i := 0; i < kpeDim; i++ {
			setU16(kpeCache, bi*bs*kpeDim+bo*kpeDim+i, getU16(kpe, t*kpeStride+i))
		}
	}
	return nil
}

// gatherKVCache is vllm::gather_kv_cache_kernel<uint16_t, uint16_t, kAuto>,
// its binary search over cu_seq_lens included.
func gatherKVCache(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	kc, vc, kout, vout := rt.bytes(args[0]), rt.bytes(args[1]), rt.bytes(args[2]), rt.bytes(args[3])
	if args[4].Uint64() != 0 || args[5].Uint64() != 0 {
		panic("k_scale and v_scale are null")
	}
	table, cu := rt.bytes(args[6]), rt.bytes(args[7])
	tokens, seqs, bs, tstride := argInt(args[8]), argInt(args[9]), argInt(args[10]), argInt(args[11])
	heads, hs, x := argInt(args[12]), argInt(args[13]), argInt(args[14])
	cuAt := func(i int) int { return int(int32(getU32(cu, i))) }
	for t := 0; t < int(grid.X) && t < tokens; t++ {
		lo, hi := 0, seqs
		for lo < hi {
			if mid := (lo + hi + 1) / 2; cuAt(mid) <= t {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		off := t - cuAt(lo)
		blk := int(int32(getU32(table, lo*tstride+off/bs)))
		slot := off % bs
		for i := 0; i < heads*hs; i++ {
			h, d := i/hs, i%hs
			ki := blk*heads*(hs/x)*bs*x + h*(hs/x)*bs*x + d/x*bs*x + slot*x + d%x
			vi := blk*heads*hs*bs + h*hs*bs + d*bs + slot
			setU16(kout, t*heads*hs+i, getU16(kc, ki))
			setU16(vout, t*heads*hs+i, getU16(vc, vi))
		}
	}
	return nil
}

const gatherKVCacheSymbol = "_ZN4vllm22gather_kv_cache_kernelIttLNS_18Fp8KVCacheDataTypeE0EEEvPKT_S4_PT0_S6_PKfS8_PKiSA_iiiiiii"

// pack3bit is pack_3bit_kernel.
func pack3bit(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	in, out := rt.bytes(args[0]), rt.bytes(args[1])
	rows, width := int(args[2].Uint64()), int(args[3].Uint64())
	step := rows / 10
	for tid := 0; tid < int(grid.X*block.X) && tid < step*width; tid++ {
		r, c := tid/width, tid%width
		var packed int32
		for i := 0; i < 10; i++ {
			packed |= int32(getU32(in, (r+i*step)*width+c)&0x7) << (27 - 3*i)
		}
		setU32(out, r*width+c, uint32(packed))
	}
	return nil
}

func TestMistralrsSpecsAgainstTheirKernels(t *testing.T) {
	f := readSpec(t, filepath.Join("mistralrs", "kernels.toml"))
	kernels := map[string]map[string]fakeKernel{
		"rotary_gptj":              {"rotary_embedding_kernel<float, false>": rotaryGPTJ},
		"copy_blocks":              {"copy_blocks_kernel_f32": copyBlocks},
		"reshape_and_cache":        {"_ZN4vllm24reshape_and_cache_kernelIffLNS_18Fp8KVCacheDataTypeE0EEEvPKT_S4_PT0_S6_PKliiiiiiPKfSA_": reshapeAndCache},
		"quant_fp8_vector":         {"quant_fp8_vector_kernel<float>": quantFP8},
		"dequant_fp8_vector":       {"dequant_fp8_vector_kernel<float>": dequantFP8},
		"bitonic_argsort8":         {"bitonic_sort_kernel<float, true>": bitonicStage},
		"hunyuan_capacity_mask":    {"fill_f32_kernel": fillF32, "hunyuan_moe_capacity_mask_kernel": capacityMask},
		"gelu_tanh_and_mul_f16":    {"act_and_mul_kernel<__half, 0>": actAndMulF16},
		"moe_sum_bf16":             {"moe_sum_bf16_kernel": moeSumBF16},
		"indexed_row_copy_f16":     {"indexed_row_copy_kernel<__half>": indexedRowCopy},
		"f16_to_fp8":               {"dtype_to_fp8_kernel<__half>": toFP8(getF16)},
		"fp8_roundtrip_f32_f16":    {"dtype_to_fp8_kernel<float>": toFP8(getF32), "fp8_to_dtype_kernel<__half>": fp8ToF16},
		"update_kv_scales_f16":     {"compute_and_update_scales_kernel<__half>": updateScales(true)},
		"concat_and_cache_mla_f16": {"concat_and_cache_mla_kernel<__half>": concatAndCacheMLA},
		"gather_kv_cache_f16":      {gatherKVCacheSymbol: gatherKVCache},
		"hqq_pack_3bit":            {"pack_3bit_kernel": pack3bit},
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
		// Gate and up swapped: the activation applied to the second half.
		{"gelu_tanh_and_mul_f16", map[string]fakeKernel{"act_and_mul_kernel<__half, 0>": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			in, d := rt.bytes(args[1]), argInt(args[2])
			for t := 0; t < int(g.X); t++ {
				for j := 0; j < d; j++ {
					x, y := getU16(in, t*2*d+j), getU16(in, t*2*d+d+j)
					setU16(in, t*2*d+j, y)
					setU16(in, t*2*d+d+j, x)
				}
			}
			return actAndMulF16(rt, g, b, args)
		}}},
		// Only the first expert's output: topk read as 1.
		{"moe_sum_bf16", map[string]fakeKernel{"moe_sum_bf16_kernel": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			out, in := rt.bytes(args[0]), rt.bytes(args[1])
			tokens, hidden, topk := argInt(args[2]), argInt(args[3]), argInt(args[4])
			for t := 0; t < tokens; t++ {
				for c := 0; c < hidden; c++ {
					setU16(out, t*hidden+c, getU16(in, t*topk*hidden+c))
				}
			}
			return nil
		}}},
		// The row table ignored: row r copied to row r.
		{"indexed_row_copy_f16", map[string]fakeKernel{"indexed_row_copy_kernel<__half>": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			rows := rt.bytes(args[2])
			for r := 0; r < argInt(args[3]); r++ {
				setU32(rows, r, uint32(r))
			}
			return indexedRowCopy(rt, g, b, args)
		}}},
		// No clamp and __NV_NOSAT: out-of-range values become NaN.
		{"f16_to_fp8", map[string]fakeKernel{"dtype_to_fp8_kernel<__half>": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			in, out := rt.bytes(args[0]), rt.bytes(args[1])
			for i := 0; i < int(args[2].Uint64()); i++ {
				out[i] = verify.F64ToE4M3(float64(getF16(in, i)), false)
			}
			return nil
		}}},
		// float -> e4m3 directly, skipping the kernel's half step.
		{"fp8_roundtrip_f32_f16", map[string]fakeKernel{"dtype_to_fp8_kernel<float>": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			in, out := rt.bytes(args[0]), rt.bytes(args[1])
			for i := 0; i < int(args[2].Uint64()); i++ {
				out[i] = verify.F64ToE4M3(float64(getF32(in, i)), true)
			}
			return nil
		}, "fp8_to_dtype_kernel<__half>": fp8ToF16}},
		// A plain store where the kernel takes the maximum: the last block wins.
		{"update_kv_scales_f16", map[string]fakeKernel{"compute_and_update_scales_kernel<__half>": updateScales(false)}},
		// The source row stride taken as the row width.
		{"concat_and_cache_mla_f16", map[string]fakeKernel{"concat_and_cache_mla_kernel<__half>": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			args = append([]verify.Arg(nil), args...)
			args[5], args[6] = args[7], args[8]
			return concatAndCacheMLA(rt, g, b, args)
		}}},
		// The block table ignored: a sequence's blocks taken as 0, 1, ...
		{"gather_kv_cache_f16", map[string]fakeKernel{gatherKVCacheSymbol: func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			table := rt.bytes(args[6])
			for i := 0; i < verify.Len(verify.I32, table); i++ {
				setU32(table, i, uint32(i%argInt(args[11])))
			}
			return gatherKVCache(rt, g, b, args)
		}}},
		// The input not masked to its low 3 bits.
		{"hqq_pack_3bit", map[string]fakeKernel{"pack_3bit_kernel": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			in, out := rt.bytes(args[0]), rt.bytes(args[1])
			rows, width := int(args[2].Uint64()), int(args[3].Uint64())
			step := rows / 10
			for tid := 0; tid < step*width; tid++ {
				r, c := tid/width, tid%width
				var packed uint32
				for i := 0; i < 10; i++ {
					packed |= getU32(in, (r+i*step)*width+c) << (27 - 3*i)
				}
				setU32(out, r*width+c, packed)
			}
			return nil
		}}},
	} {
		s := spec(c.spec)
		res, _, err := runInline(t, s, c.kernels)
		require.NoError(t, err, c.spec)
		assert.False(t, res.OK, "%s: the bug is caught", c.spec)
	}
}
