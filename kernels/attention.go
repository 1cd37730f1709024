package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rocmk/rocmk/verify"
)

// Attention (attention.hip): decode over a paged KV cache and flash-style
// prefill, f16/bf16 storage with f32 math on the device, float64 here.
// Layouts are documented at the top of src/attention.hip.in.

// attnDTypes are the storage types of the attention kernels (no f32: KV
// caches are half precision).
var attnDTypes = []verify.DType{verify.F16, verify.BF16}

// Decode geometry: the paging and partition sizes the kernel assumes.
const (
	attnBlockSize = 16  // tokens per KV cache block
	attnPart      = 256 // ATT_PART: tokens per decode block
	attnThreads   = 256 // ATT_THREADS
	attnGMax      = 4   // ATT_GMAX: query heads per decode block
	attnLongCtx   = 4097
	pfRows        = 32 // PF_ROWS
)

// attnHeads are (query heads, KV heads) per head dim: head dim 128 is GQA
// with 4 query heads per KV head (Llama-3-8B's 32/8), head dim 64 is plain
// multi-head attention (ratio 1).
func attnHeads(hd int) (h, kvh int) {
	if hd == 128 {
		return 32, 8
	}
	return 8, 8
}

// attnTol is the outputs' tolerance: each is a convex combination of V
// values computed in f32, then rounded once to the storage type, so one unit
// in the last place relative (the f32 result can sit on the other side of a
// rounding boundary) plus an absolute floor for outputs that cancel to near
// zero, scaled to |V| <= 4.
func attnTol(dt verify.DType) *verify.Tolerance {
	if dt == verify.BF16 {
		return &verify.Tolerance{RTol: 1.6e-2, ATol: 1.6e-2}
	}
	return &verify.Tolerance{RTol: 2e-3, ATol: 2e-3}
}

// attnScale is the softmax scale 1/sqrt(hd) as the kernel receives it.
func attnScale(hd int) float32 { return float32(1 / math.Sqrt(float64(hd))) }

// paged is one paged KV cache geometry: per sequence its context length and
// block table.
type paged struct {
	lens      []int32
	tables    []int32 // [seqs][maxBlocks], physical block ids
	maxBlocks int
	numBlocks int
}

// newPaged lays out seqs sequences: the first is attnLongCtx tokens long,
// the second one token, the rest random in [1, 2048] (most end in a
// partially filled block); physical blocks are shuffled so that no
// sequence's blocks are contiguous.
func newPaged(seqs int, seed uint64) paged {
	r := rand.New(rand.NewPCG(seed, 1))
	p := paged{lens: make([]int32, seqs), maxBlocks: (attnLongCtx + attnBlockSize - 1) / attnBlockSize}
	for s := range p.lens {
		switch s {
		case 0:
			p.lens[s] = attnLongCtx
		case 1:
			p.lens[s] = 1
		default:
			p.lens[s] = int32(1 + r.IntN(2048))
		}
		p.numBlocks += (int(p.lens[s]) + attnBlockSize - 1) / attnBlockSize
	}
	p.numBlocks += 3 // blocks no sequence uses
	perm := r.Perm(p.numBlocks)
	p.tables = make([]int32, seqs*p.maxBlocks)
	next := 0
	for s, n := range p.lens {
		for b := 0; b < (int(n)+attnBlockSize-1)/attnBlockSize; b++ {
			p.tables[s*p.maxBlocks+b] = int32(perm[next])
			next++
		}
	}
	return p
}

func (p paged) tokens() (n int64) {
	for _, l := range p.lens {
		n += int64(l)
	}
	return n
}

func i32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// attnSeqs is the decode batch: 32 sequences at the default size, two (the
// 4097-token one and the one-token one) at the smallest.
func attnSeqs(o Options) int { return min(max(o.Size>>19, 2), 256) }

func attnDecodeCase(dt verify.DType, hd int, o Options) *verify.Case {
	h, kvh := attnHeads(hd)
	return attnDecodeHeadsCase(dt, hd, h, kvh, attnSeqs(o), "", o)
}

// attnOtherHeads are the head layouts of the _heads cases, the other path
// of the kernel for each head dim (attn_decode_g's GM): head dim 64 with GQA
// 2 (a block's query-head group partly filled), head dim 128 multi-head.
func attnOtherHeads(hd int) (h, kvh int) {
	if hd == 128 {
		return 8, 8
	}
	return 8, 4
}

// attnDecodeHeadsCase is the decode case for h query and kvh KV heads over
// seqs sequences, named with suffix; only the main case has a goal.
func attnDecodeHeadsCase(dt verify.DType, hd, h, kvh, seqs int, suffix string, o Options) *verify.Case {
	o = o.withDefaults()
	// grid.y: per KV head, its query heads in groups of attnGMax
	gy := kvh * ((h/kvh + attnGMax - 1) / attnGMax)
	name := fmt.Sprintf("attn_decode_%s_d%d%s", dt, hd, suffix)
	p := newPaged(seqs, seedOf(o.Seed, name+"/tables"))
	maxParts := (attnLongCtx + attnPart - 1) / attnPart
	cacheN := p.numBlocks * attnBlockSize * kvh * hd
	c := &verify.Case{Name: name, Kernel: fmt.Sprintf("attn_decode_%s_d%d", dt, hd), Family: "attention", Module: "attention.hip", DType: dt}
	c.Grid, c.Block = verify.Dim3{X: uint32(maxParts), Y: uint32(gy), Z: uint32(seqs)}, verify.D1(attnThreads)
	c.Buffers = []verify.Buffer{{Name: "q", DType: dt}, {Name: "k_cache", DType: dt}, {Name: "v_cache", DType: dt},
		{Name: "block_tables", DType: verify.I32}, {Name: "context_lens", DType: verify.I32},
		{Name: "out", DType: dt, Len: seqs * h * hd, Out: true, Tol: attnTol(dt)},
		{Name: "ws", DType: verify.F32}, {Name: "counters", DType: verify.U32}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Buf(3), verify.Buf(4), verify.Buf(5), verify.Buf(6),
		verify.Buf(7), verify.Int32(int32(h)), verify.Int32(int32(kvh)), verify.Int32(attnBlockSize), verify.Int32(int32(p.maxBlocks)),
		verify.Int32(int32(maxParts)), verify.Float32(attnScale(hd))}
	kvBytes := 2 * p.tokens() * int64(kvh*hd) * sz(dt)
	c.Elems = int64(seqs * h * hd)
	c.Bytes = kvBytes + 2*c.Elems*sz(dt) + int64(4*(len(p.tables)+seqs))
	if suffix == "" {
		c.Goal = &verify.Goal{Bytes: float64(kvBytes), Min: 0.7}
	}
	c.Note = fmt.Sprintf("%d seqs (%d..%d tokens), %d/%d heads, KV bytes against copy bandwidth", seqs, 1, attnLongCtx, h, kvh)
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = input(dt, seqs*h*hd, seedOf(o.Seed, name+"/q"), finite)
		c.Buffers[1].Data = input(dt, cacheN, seedOf(o.Seed, name+"/k"), finite)
		c.Buffers[2].Data = input(dt, cacheN, seedOf(o.Seed, name+"/v"), finite)
		c.Buffers[3].Data, c.Buffers[4].Data = i32Bytes(p.tables), i32Bytes(p.lens)
		c.Buffers[6].Data = verify.NewBuffer(verify.F32, seqs*gy*maxParts*attnGMax*(hd+2))
		c.Buffers[7].Data = verify.NewBuffer(verify.U32, seqs*gy)
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		return [][]byte{decodeRef(dt, b[0].Data, b[1].Data, b[2].Data, p, h, kvh, hd, float64(attnScale(hd)))}
	}
	return c
}

// decodeRef is paged decode attention in float64: for sequence s and query
// head i, softmax(scale * q.K^T) V over the sequence's tokens of KV head
// i / (h / kvh).
func decodeRef(dt verify.DType, q, kc, vc []byte, p paged, h, kvh, hd int, scale float64) []byte {
	seqs, g := len(p.lens), h/kvh
	out := verify.AllocBuffer(dt, seqs*h*hd)
	verify.Parallel(seqs*kvh, func(lo, hi int) {
		qr, o := make([]float64, hd), make([]float64, hd)
		for sk := lo; sk < hi; sk++ {
			s, kh := sk/kvh, sk%kvh
			n := int(p.lens[s])
			K, V := make([]float64, n*hd), make([]float64, n*hd)
			for t := 0; t < n; t++ {
				slot := int(p.tables[s*p.maxBlocks+t/attnBlockSize])*attnBlockSize + t%attnBlockSize
				row(dt, kc, slot*kvh+kh, hd, K[t*hd:])
				row(dt, vc, slot*kvh+kh, hd, V[t*hd:])
			}
			for j := 0; j < g; j++ {
				qi := s*h + kh*g + j
				row(dt, q, qi, hd, qr)
				attend(qr, K, V, n, hd, scale, o)
				encodeRow(dt, out, qi, o)
			}
		}
	})
	return out
}

// attend writes softmax(scale * q.K^T) V over the first n rows of K and V
// (n x hd, row-major) to out, in float64.
func attend(q, K, V []float64, n, hd int, scale float64, out []float64) {
	s := make([]float64, n)
	m := math.Inf(-1)
	for t := 0; t < n; t++ {
		d := 0.0
		for i, x := range q[:hd] {
			d += x * K[t*hd+i]
		}
		s[t] = d * scale
		m = math.Max(m, s[t])
	}
	clear(out[:hd])
	l := 0.0
	for t := 0; t < n; t++ {
		e := math.Exp(s[t] - m)
		l += e
		for i := range out[:hd] {
			out[i] += e * V[t*hd+i]
		}
	}
	for i := range out[:hd] {
		out[i] /= l
	}
}

// prefillShape is a prefill case's geometry: batch, tokens, heads, KV
// heads, causal.
type prefillShape struct {
	b, t, h, kvh int
	causal       bool
}

// prefillShapeOf: head dim 128 is causal GQA (8 query heads on 2 KV heads)
// over 1025 tokens per sequence at the default size (not a multiple of the
// 32-row tile; 1 at the smallest); head dim 64 is non-causal multi-head
// attention over 4097 tokens (33 below a 1M-element size, to keep the
// float64 reference of small runs cheap).
func prefillShapeOf(hd int, o Options) prefillShape {
	if hd == 128 {
		return prefillShape{b: 2, t: o.Size>>14 + 1, h: 8, kvh: 2, causal: true}
	}
	t := 33
	if o.Size >= 1<<20 {
		t = attnLongCtx
	}
	return prefillShape{b: 1, t: t, h: 4, kvh: 4}
}

func attnPrefillCase(dt verify.DType, hd int, o Options) *verify.Case {
	o = o.withDefaults()
	ps := prefillShapeOf(hd, o)
	name := fmt.Sprintf("attn_prefill_%s_d%d", dt, hd)
	qn, kvn := ps.b*ps.t*ps.h*hd, ps.b*ps.t*ps.kvh*hd
	c := &verify.Case{Name: name, Kernel: name, Family: "attention", Module: "attention.hip", DType: dt}
	c.Grid = verify.Dim3{X: uint32((ps.t + pfRows - 1) / pfRows), Y: uint32(ps.h), Z: uint32(ps.b)}
	c.Block = verify.D1(pfRows * 8)
	c.Buffers = []verify.Buffer{{Name: "q", DType: dt}, {Name: "k", DType: dt}, {Name: "v", DType: dt},
		{Name: "out", DType: dt, Len: qn, Out: true, Tol: attnTol(dt)}}
	causal := int32(0)
	if ps.causal {
		causal = 1
	}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Buf(3), verify.Int32(int32(ps.t)),
		verify.Int32(int32(ps.h)), verify.Int32(int32(ps.kvh)), verify.Float32(attnScale(hd)), verify.Int32(causal)}
	c.Elems, c.Bytes = int64(qn), int64(2*qn+2*kvn)*sz(dt)
	flops := 4 * float64(ps.t) * float64(ps.t) * float64(hd) * float64(ps.h) * float64(ps.b)
	if ps.causal {
		flops /= 2
	}
	c.Goal = &verify.Goal{Flops: flops}
	c.Note = fmt.Sprintf("batch %d x %d tokens, %d/%d heads, causal=%v; TFLOP/s only", ps.b, ps.t, ps.h, ps.kvh, ps.causal)
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = input(dt, qn, seedOf(o.Seed, name+"/q"), finite)
		c.Buffers[1].Data = input(dt, kvn, seedOf(o.Seed, name+"/k"), finite)
		c.Buffers[2].Data = input(dt, kvn, seedOf(o.Seed, name+"/v"), finite)
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		return [][]byte{prefillRef(dt, b[0].Data, b[1].Data, b[2].Data, ps, hd, float64(attnScale(hd)))}
	}
	return c
}

// prefillRef is prefill attention in float64: query i of head h attends the
// keys of KV head h / (h / kvh) of its sequence, all of them or (causal)
// those at positions <= i.
func prefillRef(dt verify.DType, q, k, v []byte, ps prefillShape, hd int, scale float64) []byte {
	out := verify.AllocBuffer(dt, ps.b*ps.t*ps.h*hd)
	kv := make([][2][]float64, ps.b*ps.kvh) // decoded K and V per (batch, KV head)
	verify.Parallel(len(kv), func(lo, hi int) {
		for x := lo; x < hi; x++ {
			b, kh := x/ps.kvh, x%ps.kvh
			K, V := make([]float64, ps.t*hd), make([]float64, ps.t*hd)
			for t := 0; t < ps.t; t++ {
				row(dt, k, (b*ps.t+t)*ps.kvh+kh, hd, K[t*hd:])
				row(dt, v, (b*ps.t+t)*ps.kvh+kh, hd, V[t*hd:])
			}
			kv[x] = [2][]float64{K, V}
		}
	})
	g := ps.h / ps.kvh
	verify.Parallel(ps.b*ps.t*ps.h, func(lo, hi int) {
		qr, o := make([]float64, hd), make([]float64, hd)
		for qi := lo; qi < hi; qi++ { // qi = (b*T + i)*H + head
			head, i, b := qi%ps.h, qi/ps.h%ps.t, qi/ps.h/ps.t
			n := ps.t
			if ps.causal {
				n = i + 1
			}
			row(dt, q, qi, hd, qr)
			x := kv[b*ps.kvh+head/g]
			attend(qr, x[0], x[1], n, hd, scale, o)
			encodeRow(dt, out, qi, o)
		}
	})
	return out
}
