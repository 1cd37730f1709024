package verify

import (
	"runtime"
	"sync"
)

// Buffer is one kernel buffer of a Case: an input (Data set) or an output
// (Out set, Len elements, compared against the reference).
type Buffer struct {
	Name  string
	DType DType
	Data  []byte // input contents; nil for outputs
	Len   int    // element count of an output (inputs: len(Data)/size)
	Out   bool
	Tol   *Tolerance // outputs: nil means DefaultTolerance(DType)
	// Set names an input shared by several cases: inputs with the same Set
	// hold the same bytes, so Run neither recycles Data nor uploads it twice.
	Set string
	// Addrs, when set, makes the buffer a table of device addresses into
	// another buffer (filled when the plan is uploaded; Len elements).
	Addrs *AddrTable
}

// Elems is the buffer's element count.
func (b Buffer) Elems() int {
	if b.Data != nil {
		return len(b.Data) / b.DType.Size()
	}
	return b.Len
}

// Case is one kernel launch to verify.
type Case struct {
	Name   string // unique, e.g. "binary_add_f32"
	Family string // e.g. "binary"
	Module string // source file in the suite, e.g. "binary.hip"
	Kernel string // symbol
	DType  DType
	Grid   Dim3
	Block  Dim3
	Shared int
	// Args are the kernel's arguments; Buf(i) stands for buffer i.
	Args []Arg
	// Buffers, inputs and outputs, in the order Buf indexes them. Gen may
	// fill them in lazily (so a suite does not hold every input at once).
	Buffers []Buffer
	Gen     func(c *Case)
	// Ref returns the expected outputs, one per Out buffer in order, from
	// the buffers (outputs have nil Data). Computed once per input set.
	Ref func(bufs []Buffer) [][]byte
	// RefKey, when set, names the reference: cases with the same RefKey
	// expect the same outputs (an op on the same logical input, contiguous
	// or strided), so Run computes it once for all of them.
	RefKey string
	// Bytes is what a perfect kernel moves through memory (each input read
	// once, each output written once); Elems the logical element count.
	Bytes int64
	Elems int64
	// Note explains anything special (a looser tolerance, ...).
	Note string
	// Goal, when set, is what `verify --time` measures the case against.
	Goal *Goal
}

// Goal says what a case's timing is measured against in `verify --time`.
type Goal struct {
	Flops float64 // useful floating-point ops per launch (2*M*N*K for GEMM); 0: not compute-bound
	Bytes float64 // bytes a perfect kernel moves per launch (packed weights, KV read); 0: use Case.Bytes
	Peer  string  // name of a case (e.g. "blas_sgemm_f32_4096") whose time is 100%; "": the device's measured copy bandwidth
	Min   float64 // the goal as a fraction (0.6 of cuBLAS, 0.7 of copy bandwidth)
}

// Parallel runs f over [0, n) in chunks on every core (CPU references,
// input generation and comparisons use it so the CPU never dominates).
// Items may be elements, rows or generator chunks: n is split into up to
// 4 chunks per core whatever its size.
func Parallel(n int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	chunks := min(n, workers*4)
	if chunks <= 1 || workers == 1 {
		if n > 0 {
			f(0, n)
		}
		return
	}
	size := (n + chunks - 1) / chunks
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	for lo := 0; lo < n; lo += size {
		hi := min(lo+size, n)
		wg.Add(1)
		sem <- struct{}{}
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
			<-sem
		}(lo, hi)
	}
	wg.Wait()
}

// CompareParallel is Compare split across cores.
func CompareParallel(d DType, got, want []byte, t Tolerance) Comparison {
	n := min(Len(d, got), Len(d, want))
	if n < 1<<16 {
		return Compare(d, got, want, t)
	}
	var mu sync.Mutex
	parts := map[int]Comparison{}
	Parallel(n, func(lo, hi int) {
		c := compareRange(d, got, want, t, lo, hi)
		mu.Lock()
		parts[lo] = c
		mu.Unlock()
	})
	keys := make([]int, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sortInts(keys)
	ordered := make([]Comparison, len(keys))
	for i, k := range keys {
		ordered[i] = parts[k]
	}
	c := mergeComparisons(ordered)
	if Len(d, got) != Len(d, want) {
		c.Mismatches += abs(Len(d, got) - Len(d, want))
		if c.FirstBad < 0 {
			c.FirstBad = n
		}
	}
	return c
}
