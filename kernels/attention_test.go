package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// naiveAttention is softmax(scale * Q K^T + mask) V as matrices: the score
// matrix whole, masked entries -Inf, each row normalised, then one product.
// q is [nq][hd], k and v [nk][hd]; visible(i, j) says whether query i sees
// key j.
func naiveAttention(q, k, v [][]float64, scale float64, visible func(i, j int) bool) [][]float64 {
	out := make([][]float64, len(q))
	for i := range q {
		s := make([]float64, len(k))
		for j := range k {
			s[j] = math.Inf(-1)
			if visible(i, j) {
				s[j] = 0
				for d := range q[i] {
					s[j] += q[i][d] * k[j][d]
				}
				s[j] *= scale
			}
		}
		m := math.Inf(-1)
		for _, x := range s {
			m = math.Max(m, x)
		}
		sum := 0.0
		for j := range s {
			s[j] = math.Exp(s[j] - m)
			sum += s[j]
		}
		out[i] = make([]float64, len(q[i]))
		for j := range k {
			for d := range out[i] {
				out[i][d] += s[j] / sum * v[j][d]
			}
		}
	}
	return out
}

func randRows(r *rand.Rand, n, hd int) [][]float64 {
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, hd)
		for d := range x[i] {
			x[i][d] = r.Float64()*4 - 2
		}
	}
	return x
}

func flat(x [][]float64) []float64 {
	var f []float64
	for _, r := range x {
		f = append(f, r...)
	}
	return f
}

func all(int, int) bool { return true }

func TestAttendMatchesNaiveSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 17, 300} {
		q, k, v := randRows(r, 1, 64), randRows(r, n, 64), randRows(r, n, 64)
		want := naiveAttention(q, k, v, 0.125, all)[0]
		got := make([]float64, 64)
		attend(q[0], flat(k), flat(v), n, 64, 0.125, got)
		assert.InDeltaSlice(t, want, got, 1e-12, "n=%d", n)
	}
	// one key: the output is that key's value whatever the score
	q, k, v := randRows(r, 1, 8), randRows(r, 1, 8), randRows(r, 1, 8)
	got := make([]float64, 8)
	attend(q[0], flat(k), flat(v), 1, 8, 100, got)
	assert.InDeltaSlice(t, v[0], got, 1e-15)
}

// The decode kernel's merge: per partition of attnPart tokens a (max, sum,
// unnormalised output), merged by rescaling to the global max, equals one
// softmax over the whole context (4097 tokens: 17 partitions, the last one
// token long).
func TestPartitionMergeEqualsWholeSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, hd := attnLongCtx, 16
	q, k, v := randRows(r, 1, hd), randRows(r, n, hd), randRows(r, n, hd)
	want := make([]float64, hd)
	attend(q[0], flat(k), flat(v), n, hd, 0.7, want)
	type partial struct {
		m, l float64
		acc  []float64
	}
	var parts []partial
	for t0 := 0; t0 < n; t0 += attnPart {
		t1 := min(t0+attnPart, n)
		p := partial{m: math.Inf(-1), acc: make([]float64, hd)}
		s := make([]float64, t1-t0)
		for j := t0; j < t1; j++ {
			for d := 0; d < hd; d++ {
				s[j-t0] += q[0][d] * k[j][d] * 0.7
			}
			p.m = math.Max(p.m, s[j-t0])
		}
		for j := t0; j < t1; j++ {
			e := math.Exp(s[j-t0] - p.m)
			p.l += e
			for d := range p.acc {
				p.acc[d] += e * v[j][d]
			}
		}
		parts = append(parts, p)
	}
	require.Len(t, parts, 17)
	M := math.Inf(-1)
	for _, p := range parts {
		M = math.Max(M, p.m)
	}
	L, got := 0.0, make([]float64, hd)
	for _, p := range parts {
		e := math.Exp(p.m - M)
		L += p.l * e
		for d := range got {
			got[d] += p.acc[d] * e
		}
	}
	for d := range got {
		got[d] /= L
	}
	assert.InDeltaSlice(t, want, got, 1e-12)
}

// decodeRef through block tables and GQA equals naive attention over each
// sequence's tokens gathered by hand, query head i reading KV head i/(h/kvh).
func TestDecodeRefPagedGQA(t *testing.T) {
	dt, hd, h, kvh := verify.F32, 8, 6, 2
	p := newPaged(4, 9)
	require.Equal(t, []int32{attnLongCtx, 1}, p.lens[:2])
	assert.Equal(t, int32(1), p.lens[0]%attnBlockSize, "the long sequence ends in a block holding one token")
	used := map[int32]bool{}
	for s, n := range p.lens {
		for b := 0; b < (int(n)+attnBlockSize-1)/attnBlockSize; b++ {
			id := p.tables[s*p.maxBlocks+b]
			require.False(t, used[id], "block %d shared", id)
			require.Less(t, int(id), p.numBlocks)
			used[id] = true
		}
	}
	cacheN := p.numBlocks * attnBlockSize * kvh * hd
	q := input(dt, len(p.lens)*h*hd, 1, finite)
	kc, vc := input(dt, cacheN, 2, finite), input(dt, cacheN, 3, finite)
	got := decodeRef(dt, q, kc, vc, p, h, kvh, hd, 0.3)
	dec := func(b []byte, i int) []float64 { x := make([]float64, hd); row(dt, b, i, hd, x); return x }
	for s, n := range p.lens {
		for hi := 0; hi < h; hi++ {
			kh := hi / (h / kvh)
			var K, V [][]float64
			for tk := 0; tk < int(n); tk++ {
				slot := int(p.tables[s*p.maxBlocks+tk/attnBlockSize])*attnBlockSize + tk%attnBlockSize
				K, V = append(K, dec(kc, slot*kvh+kh)), append(V, dec(vc, slot*kvh+kh))
			}
			want := naiveAttention([][]float64{dec(q, s*h+hi)}, K, V, 0.3, all)[0]
			assert.InDeltaSlice(t, want, decodeAll(dt, got)[(s*h+hi)*hd:(s*h+hi+1)*hd], 1e-5, "seq %d head %d", s, hi)
		}
	}
	// GQA by hand: each KV head duplicated for its query heads is plain MHA
	mha := paged{lens: p.lens, tables: p.tables, maxBlocks: p.maxBlocks, numBlocks: p.numBlocks}
	kx, vx := verify.NewBuffer(dt, cacheN*h/kvh), verify.NewBuffer(dt, cacheN*h/kvh)
	for slot := 0; slot < p.numBlocks*attnBlockSize; slot++ {
		for hi := 0; hi < h; hi++ {
			src, dst := (slot*kvh+hi/(h/kvh))*hd*4, (slot*h+hi)*hd*4
			copy(kx[dst:dst+hd*4], kc[src:src+hd*4])
			copy(vx[dst:dst+hd*4], vc[src:src+hd*4])
		}
	}
	assert.Equal(t, got, decodeRef(dt, q, kx, vx, mha, h, h, hd, 0.3))
}

// prefillRef: naive per-head attention with the causal mask; a causal row
// does not see later keys, and the last row sees every key.
func TestPrefillRefCausalGQA(t *testing.T) {
	dt, hd := verify.F32, 8
	for _, ps := range []prefillShape{{b: 2, t: 37, h: 4, kvh: 2, causal: true}, {b: 1, t: 5, h: 3, kvh: 3}, {b: 1, t: 1, h: 2, kvh: 1, causal: true}} {
		qn, kvn := ps.b*ps.t*ps.h*hd, ps.b*ps.t*ps.kvh*hd
		q, k, v := input(dt, qn, 4, finite), input(dt, kvn, 5, finite), input(dt, kvn, 6, finite)
		got := decodeAll(dt, prefillRef(dt, q, k, v, ps, hd, 0.25))
		dec := func(b []byte, i int) []float64 { x := make([]float64, hd); row(dt, b, i, hd, x); return x }
		for b := 0; b < ps.b; b++ {
			for hi := 0; hi < ps.h; hi++ {
				var Q, K, V [][]float64
				for i := 0; i < ps.t; i++ {
					Q = append(Q, dec(q, (b*ps.t+i)*ps.h+hi))
					K = append(K, dec(k, (b*ps.t+i)*ps.kvh+hi/(ps.h/ps.kvh)))
					V = append(V, dec(v, (b*ps.t+i)*ps.kvh+hi/(ps.h/ps.kvh)))
				}
				want := naiveAttention(Q, K, V, 0.25, func(i, j int) bool { return !ps.causal || j <= i })
				for i := range want {
					qi := (b*ps.t+i)*ps.h + hi
					assert.InDeltaSlice(t, want[i], got[qi*hd:(qi+1)*hd], 1e-5, "%+v b%d h%d row %d", ps, b, hi, i)
				}
			}
		}
	}
	// causal: changing the last key moves only the last row
	ps := prefillShape{b: 1, t: 9, h: 2, kvh: 1, causal: true}
	q, k, v := input(dt, 9*2*hd, 7, finite), input(dt, 9*hd, 8, finite), input(dt, 9*hd, 9, finite)
	a := decodeAll(dt, prefillRef(dt, q, k, v, ps, hd, 0.5))
	verify.Encode(dt, k, 8*hd, 3.5)
	verify.Encode(dt, v, 8*hd+1, -2.25)
	b := decodeAll(dt, prefillRef(dt, q, k, v, ps, hd, 0.5))
	assert.Equal(t, a[:8*2*hd], b[:8*2*hd], "rows 0..7 do not see key 8")
	assert.NotEqual(t, a[8*2*hd:], b[8*2*hd:], "row 8 sees it")
}

// The registered cases: the adversarial shapes are in, the launch covers
// them, and the references are finite convex combinations of V.
func TestAttentionCases(t *testing.T) {
	o := Options{Size: 1 << 12, Seed: 2}
	d := attnDecodeCase(verify.BF16, 128, o)
	assert.Equal(t, verify.Dim3{X: 17, Y: 8, Z: 2}, d.Grid, "17 partitions cover 4097 tokens; 8 KV heads; 2 sequences")
	require.NotNil(t, d.Goal)
	assert.Equal(t, 0.7, d.Goal.Min)
	assert.Equal(t, float64(2*(attnLongCtx+1)*8*128*2), d.Goal.Bytes, "K and V bytes of 4098 tokens")
	d.Gen(d)
	out := decodeAll(verify.BF16, d.Ref(d.Buffers)[0])
	require.Len(t, out, 2*32*128)
	for i, x := range out {
		require.False(t, math.IsNaN(x) || math.Abs(x) > 4, "out[%d] = %g", i, x)
	}
	// the one-token sequence's output is its token's V row (per KV head)
	p := newPaged(2, seedOf(o.Seed, "attn_decode_bf16_d128/tables"))
	v := decodeAll(verify.BF16, d.Buffers[2].Data)
	slot := int(p.tables[p.maxBlocks]) * attnBlockSize
	for hi := 0; hi < 32; hi++ {
		vr := v[(slot*8+hi/4)*128 : (slot*8+hi/4+1)*128]
		assert.Equal(t, vr, out[(32+hi)*128:(33+hi)*128], "head %d", hi)
	}
	// the _heads cases run the kernel's other path for each head dim: GQA 2
	// at head dim 64 (a partly filled group of ATT_GMAX), multi-head at 128
	seen := map[string]*verify.Case{}
	for _, sp := range Specs([]string{"attention"}, nil) {
		c := sp.Make(o)
		seen[c.Name] = c
	}
	for _, hd := range []int{64, 128} {
		c := seen[fmt.Sprintf("attn_decode_f16_d%d_heads", hd)]
		require.NotNil(t, c, "d%d", hd)
		assert.Equal(t, fmt.Sprintf("attn_decode_f16_d%d", hd), c.Kernel)
		assert.Nil(t, c.Goal, "timed only in the main case")
		h, kvh := attnOtherHeads(hd)
		main, other := seen[c.Kernel].Args, c.Args
		assert.NotEqual(t, [2]uint64{main[8].Uint64(), main[9].Uint64()}, [2]uint64{other[8].Uint64(), other[9].Uint64()}, "another head layout")
		assert.Equal(t, [2]uint64{uint64(h), uint64(kvh)}, [2]uint64{other[8].Uint64(), other[9].Uint64()})
		assert.Equal(t, verify.Dim3{X: 17, Y: uint32(kvh), Z: 2}, c.Grid, "one group of query heads a KV head")
	}
	pf := attnPrefillCase(verify.F16, 128, Options{Size: 1 << 24})
	assert.Equal(t, verify.Dim3{X: 33, Y: 8, Z: 2}, pf.Grid, "1025 tokens in 32-row tiles")
	assert.Equal(t, 4*1025.0*1025*128*8*2/2, pf.Goal.Flops)
	assert.Equal(t, attnLongCtx, prefillShapeOf(64, Options{Size: 1 << 24}).t)
}

// The attention kernels at their launch sizes on gfx90a and gfx942 (the
// CDNA targets an inference backend runs on): no scratch, no spills, read
// back with inspect from the real build (the budget file holds the rest).
func TestAttentionNoScratchNoSpills(t *testing.T) {
	suite := buildSuite(t)
	got := measure(t, suite)
	seen := 0
	for _, tg := range []string{"gfx90a", "gfx942"} {
		if _, ok := suite.objects[tg]; !ok {
			t.Logf("%s not built here (no toolchain for it)", tg)
			continue
		}
		kernels := map[string]bool{} // the _heads cases share their kernel with the main case
		for _, s := range Specs([]string{"attention"}, nil) {
			kernels[s.Make(Options{Size: 1 << 12}).Kernel] = true
		}
		require.Len(t, kernels, 8, "eight attention kernels")
		for k := range kernels {
			b, ok := got[tg+" "+k]
			if !assert.True(t, ok, "%s %s built", tg, k) {
				continue
			}
			seen++
			assert.Zero(t, b.Scratch, "%s %s scratch (%s)", tg, k, b)
			assert.Zero(t, b.Spills, "%s %s spills (%s)", tg, k, b)
			assert.GreaterOrEqual(t, b.Waves, 3, "%s %s waves per SIMD (%s)", tg, k, b)
		}
	}
	assert.Positive(t, seen)
}
