package hipify

import "strings"

// ptxAdvice names, per PTX instruction family, why AMD has no exact
// counterpart (or which HIP code computes the same), for the reports of
// PTX that stays. Longest prefix wins.
var ptxAdvice = []struct{ prefix, msg string }{
	{"mma.sync", "a 32-lane warp matrix multiply-accumulate: on wave64 CDNA no instruction has its fragment layout (rocWMMA, or __builtin_amdgcn_mfma_* with the project's own AMD tile layout); on wave32 RDNA3 __builtin_amdgcn_wmma_*"},
	{"wgmma", "Hopper's warpgroup matrix multiply: no AMD counterpart (rocWMMA or __builtin_amdgcn_mfma_*)"},
	{"ldmatrix", "loads the 8x8 fragments mma.sync expects: no AMD counterpart on its own (load each lane's elements from shared memory in the layout of the MFMA/WMMA that consumes them)"},
	{"stmatrix", "stores mma.sync's fragments: no AMD counterpart on its own (store each lane's elements to shared memory)"},
	{"movmatrix", "transposes an 8x8 fragment across a 32-lane warp: __shfl within 32-lane groups computes the same"},
	{"cp.async.bulk", "a tensor-memory-accelerator copy (Hopper): a plain global load and shared store per thread"},
	{"cp.async", "an asynchronous global-to-shared copy: a plain load and store (zero fill for a short src-size; __builtin_amdgcn_global_load_lds on gfx90a and later)"},
	{"mbarrier", "Hopper's transaction barriers: __syncthreads for a block-wide wait"},
	{"lop3", "a three-input logic operation: the same C expression of &, |, ^ and ~"},
	{"prmt", "a byte permute: __byte_perm"},
	{"fence", "a memory fence: __threadfence (gpu), __threadfence_block (cta), __threadfence_system (sys)"},
	{"red.", "a reduction to memory: atomicAdd and the other atomics (__hip_atomic_fetch_* with a memory order and scope)"},
	{"atom.", "an atomic: atomicAdd/atomicCAS... (__hip_atomic_* with a memory order and scope)"},
	{"bar.", "a barrier: __syncthreads, or __builtin_amdgcn_s_barrier"},
	{"shfl", "a warp shuffle: __shfl, __shfl_xor... with a width of 32 where the code assumes 32 lanes"},
	{"vote", "a warp vote: __ballot, __any, __all (64-bit masks on wave64)"},
	{"mov", "a move, of a special register where it names one: __lane_id() for %laneid, threadIdx/blockIdx for %tid/%ctaid, __builtin_amdgcn_s_memtime or clock64() for %clock64"},
}

// ptxAlternative says what HIP offers for the instruction ins.
func ptxAlternative(ins string) string {
	best := ""
	for _, a := range ptxAdvice {
		if strings.HasPrefix(ins, a.prefix) && len(a.prefix) > len(best) {
			best = a.prefix
		}
	}
	for _, a := range ptxAdvice {
		if a.prefix == best && best != "" {
			return a.msg
		}
	}
	return "an instruction rocmk has no rule for: rewrite it with HIP intrinsics or builtins"
}

// asmHazard is the message for inline asm that stays PTX: the instructions
// it holds and, for the first, what HIP has instead.
func (f *file) asmHazard(i int) string {
	msg := "inline PTX assembly does not compile for AMD GPUs"
	st, ok := f.parseAsm(i)
	if !ok {
		return msg + ": rewrite it with HIP intrinsics or builtins"
	}
	ins := ptxInstructions(st.template)
	if len(ins) == 0 {
		return msg + ": rewrite it with HIP intrinsics or builtins"
	}
	return msg + ": `" + strings.Join(ins, "`; `") + "`; " + ins[0] + ": " + ptxAlternative(ins[0])
}
