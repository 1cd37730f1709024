package hipify

import (
	"strconv"
	"strings"
	"sync"
)

// Entry is one CUDA name from HIPIFY's tables.
type Entry struct {
	CUDA   string
	Family string // runtime, driver, device, rtc, complex, blas, rand, fft, sparse, solver, dnn, cub
	Type   bool   // a type, enum or define (not a function)

	CUDAAdded, CUDADeprecated, CUDARemoved string

	HIP                                 string // "" when HIP has no equivalent
	HIPAdded, HIPDeprecated, HIPRemoved Version
	HIPExperimental                     bool

	Alt             string // roc* (rocBLAS, rocSPARSE, ...) or MIOpen name, "" if none
	AltAdded        Version
	AltRemoved      Version
	AltExperimental bool

	// Next is the same CUDA name in another family's table (e.g. cudaStream_t
	// in the cuDNN table, where MIOpen has its own name), or nil.
	Next *Entry
}

// Version is a HIP version (major, minor, patch); the zero Version means "none".
type Version struct{ Major, Minor, Patch int }

// ParseVersion parses "6.3", "6.3.0" or "5". It returns false on anything else.
func ParseVersion(s string) (Version, bool) {
	var v Version
	if s == "" {
		return v, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return v, false
	}
	dst := []*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Version{}, false
		}
		*dst[i] = n
	}
	return v, true
}

// IsZero reports whether v is the zero Version.
func (v Version) IsZero() bool { return v == Version{} }

// Less reports whether v < w.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

func (v Version) String() string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
}

var (
	tableOnce sync.Once
	table     map[string]*Entry
)

// Lookup returns the table entry for a CUDA name.
func Lookup(name string) (*Entry, bool) {
	tableOnce.Do(loadTable)
	e, ok := table[name]
	return e, ok
}

// Entries returns the number of CUDA names in the mapping tables.
func Entries() int {
	tableOnce.Do(loadTable)
	return len(table)
}

// Each calls f with every table entry (each family's, in no set order).
func Each(f func(*Entry)) {
	tableOnce.Do(loadTable)
	for _, e := range table {
		for ; e != nil; e = e.Next {
			f(e)
		}
	}
}

func loadTable() {
	table = make(map[string]*Entry, 9500)
	data := mapData
	entries := make([]Entry, strings.Count(data, "\n"))
	i := 0
	for len(data) > 0 {
		nl := strings.IndexByte(data, '\n')
		line := data[:nl]
		data = data[nl+1:]
		var f [15]string
		for k := 0; k < 14; k++ {
			t := strings.IndexByte(line, '\t')
			f[k] = line[:t]
			line = line[t+1:]
		}
		f[14] = line
		v := func(s string) Version { x, _ := ParseVersion(s); return x }
		e := &entries[i]
		i++
		*e = Entry{CUDA: f[0], Family: f[1], Type: f[2] == "T", CUDAAdded: f[3], CUDADeprecated: f[4], CUDARemoved: f[5],
			HIP: f[6], HIPAdded: v(f[7]), HIPDeprecated: v(f[8]), HIPRemoved: v(f[9]), HIPExperimental: f[10] != "",
			Alt: f[11], AltAdded: v(f[12]), AltRemoved: v(f[13]), AltExperimental: f[14] != ""}
		if first, ok := table[e.CUDA]; ok {
			p := first
			for p.Next != nil {
				p = p.Next
			}
			p.Next = e
			continue
		}
		table[e.CUDA] = e
	}
	for name, e := range extraEntries {
		if _, ok := table[name]; !ok {
			table[name] = e
		}
	}
	for name := range compatByName["bf16"].idents {
		// HIP 6's hip_bf16.h has CUDA's bf16 functions under CUDA's names
		if e, ok := table[name]; ok && e.HIP == "" && !e.Type && !strings.HasPrefix(name, "__nv") {
			e.HIP, e.HIPAdded = name, Version{Major: 6}
		}
	}
	for _, fixes := range []struct {
		family string // of a name the tables lack
		names  map[string]nameFix
	}{{"device", tableFixes}, {"fft", cufftXtFixes}} {
		for name, fix := range fixes.names {
			e, ok := table[name]
			if !ok {
				e = &Entry{CUDA: name, Family: fixes.family, Type: fix.typ}
				table[name] = e
			}
			e.HIP, e.HIPAdded = fix.hip, fix.added
		}
	}
}

// hipStructTags are HIP types whose name is a typedef of a struct with
// another tag (hip_runtime_api.h, the same in HIP 5.2 and 6.4): CUDA code
// that writes "struct cudaGraphicsResource *r" gets HIP's tag there, since
// "struct hipGraphicsResource" does not compile.
var hipStructTags = map[string]string{
	"hipGraphicsResource":              "_hipGraphicsResource",
	"hipLaunchParams":                  "hipLaunchParams_t",
	"hipExternalMemoryHandleDesc":      "hipExternalMemoryHandleDesc_st",
	"hipExternalMemoryBufferDesc":      "hipExternalMemoryBufferDesc_st",
	"hipExternalSemaphoreHandleDesc":   "hipExternalSemaphoreHandleDesc_st",
	"hipExternalSemaphoreSignalParams": "hipExternalSemaphoreSignalParams_st",
	"hipExternalSemaphoreWaitParams":   "hipExternalSemaphoreWaitParams_st",
}

// HIPStructTag returns the struct tag of the HIP type hip where its name
// is a typedef of a struct tagged otherwise (hipStructTags).
func HIPStructTag(hip string) (string, bool) {
	tag, ok := hipStructTags[hip]
	return tag, ok
}

// nameFix is a CUDA name's HIP counterpart, from the HIP version that
// added it; typ: a type, enum or define.
type nameFix struct {
	hip   string
	added Version
	typ   bool
}

// cufftXtFixes: cuFFT's extended and multi-GPU API, which hipFFT has
// under hipfftXt.h and hiplibxt.h (the plan and exec calls from ROCm 5.6,
// descriptors and multi-GPU from 6.0) and the tables' snapshot lists as
// missing or not at all. Checked against HIP 6.4's headers by
// TestLibraryUsesCompile's cufftXt case.
var cufftXtFixes = func() map[string]nameFix {
	out := map[string]nameFix{}
	add := func(added Version, typ bool, pairs ...string) {
		for i := 0; i < len(pairs); i += 2 {
			out[pairs[i]] = nameFix{pairs[i+1], added, typ}
		}
	}
	v56, v60 := Version{5, 6, 0}, Version{6, 0, 0}
	add(v56, false, "cufftXtMakePlanMany", "hipfftXtMakePlanMany", "cufftXtGetSizeMany", "hipfftXtGetSizeMany",
		"cufftXtExec", "hipfftXtExec")
	add(v60, false, "cufftXtSetGPUs", "hipfftXtSetGPUs", "cufftXtMalloc", "hipfftXtMalloc", "cufftXtMemcpy", "hipfftXtMemcpy",
		"cufftXtFree", "hipfftXtFree", "cufftXtExecDescriptor", "hipfftXtExecDescriptor")
	for _, k := range []string{"C2C", "R2C", "C2R", "Z2Z", "D2Z", "Z2D"} {
		add(v60, false, "cufftXtExecDescriptor"+k, "hipfftXtExecDescriptor"+k)
	}
	add(v60, true, "cufftXtCopyType", "hipfftXtCopyType", "cufftXtCopyType_t", "hipfftXtCopyType_t",
		"CUFFT_COPY_HOST_TO_DEVICE", "HIPFFT_COPY_HOST_TO_DEVICE", "CUFFT_COPY_DEVICE_TO_HOST", "HIPFFT_COPY_DEVICE_TO_HOST",
		"CUFFT_COPY_DEVICE_TO_DEVICE", "HIPFFT_COPY_DEVICE_TO_DEVICE", "CUFFT_COPY_UNDEFINED", "HIPFFT_COPY_UNDEFINED",
		"cufftXtSubFormat", "hipfftXtSubFormat", "cufftXtSubFormat_t", "hipfftXtSubFormat_t",
		"CUFFT_XT_FORMAT_INPUT", "HIPFFT_XT_FORMAT_INPUT", "CUFFT_XT_FORMAT_OUTPUT", "HIPFFT_XT_FORMAT_OUTPUT",
		"CUFFT_XT_FORMAT_INPLACE", "HIPFFT_XT_FORMAT_INPLACE", "CUFFT_XT_FORMAT_INPLACE_SHUFFLED", "HIPFFT_XT_FORMAT_INPLACE_SHUFFLED",
		"CUFFT_XT_FORMAT_1D_INPUT_SHUFFLED", "HIPFFT_XT_FORMAT_1D_INPUT_SHUFFLED", "CUFFT_FORMAT_UNDEFINED", "HIPFFT_FORMAT_UNDEFINED",
		// cudalibxt.h, which cufftXt.h includes
		"cudaXtDesc", "hipXtDesc", "cudaXtDesc_t", "hipXtDesc_t", "cudaLibXtDesc", "hipLibXtDesc", "cudaLibXtDesc_t", "hipLibXtDesc_t",
		"cudaLibFormat", "hiplibFormat", "cudaLibFormat_t", "hiplibFormat_t", "CUDA_LIB_FORMAT_CUFFT", "HIPLIB_FORMAT_HIPFFT",
		"CUDA_LIB_FORMAT_UNDEFINED", "HIPLIB_FORMAT_UNDEFINED", "MAX_CUDA_DESCRIPTOR_GPUS", "MAX_HIP_DESCRIPTOR_GPUS")
	return out
}()

// tableFixes correct HIPIFY's tables where HIP itself says otherwise
// (checked by compiling against HIP's headers): names HIP has that the
// tables list as missing, and CUDA aliases the tables do not list.
var tableFixes = map[string]nameFix{
	"make_half2": {"make_half2", Version{1, 6, 0}, false}, // amd_hip_fp16.h has it (HIP 5.2 too)
	// cudaGraphicsMapFlags values, which CUDA code passes as register flags
	// (cudaGraphicsGLRegisterBuffer(&r, vbo, cudaGraphicsMapFlagsWriteDiscard)):
	// the same values as the register flags HIP has (0, 1, 2)
	"cudaGraphicsMapFlagsNone":         {"hipGraphicsRegisterFlagsNone", Version{4, 4, 0}, true},
	"cudaGraphicsMapFlagsReadOnly":     {"hipGraphicsRegisterFlagsReadOnly", Version{4, 4, 0}, true},
	"cudaGraphicsMapFlagsWriteDiscard": {"hipGraphicsRegisterFlagsWriteDiscard", Version{4, 4, 0}, true},
	// CUDA 10.2's name for CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED
	// (same value, 102; deprecated in 11.2, still in cuda.h and the samples)
	"CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED": {"hipDeviceAttributeVirtualMemoryManagementSupported", Version{5, 3, 0}, true},
	// hipBLAS has cuBLAS 11.4's status string under its own name (hipblas.h of
	// ROCm 6.x: const char* hipblasStatusToString(hipblasStatus_t)); the tables list none
	"cublasGetStatusString": {"hipblasStatusToString", Version{Major: 6}, false},
	// HIP 6's bf16 type, which rocmk_hip_compat.h provides before HIP 6
	// (as hip_bfloat16): one translation for every HIP (hip_bfloat16 is
	// not in HIP 6's hip_bf16.h, which cuda_bf16.h becomes there).
	"__nv_bfloat16":      {"__hip_bfloat16", Version{Major: 6}, true},
	"nv_bfloat16":        {"__hip_bfloat16", Version{Major: 6}, true}, // typedef of __nv_bfloat16
	"__nv_bfloat162":     {"__hip_bfloat162", Version{Major: 6}, true},
	"nv_bfloat162":       {"__hip_bfloat162", Version{Major: 6}, true},
	"__nv_bfloat16_raw":  {"__hip_bfloat16_raw", Version{Major: 6}, true},
	"__nv_bfloat162_raw": {"__hip_bfloat162_raw", Version{Major: 6}, true},
}

// extraEntries are names hipify-clang translates that the published tables
// do not list.
var extraEntries = map[string]*Entry{
	// Caffe2 (hipify-clang's CUDA2HIP_Caffe2 maps)
	"REGISTER_CUDA_OPERATOR":         {CUDA: "REGISTER_CUDA_OPERATOR", Family: "caffe2", HIP: "REGISTER_HIP_OPERATOR"},
	"REGISTER_CUDA_OPERATOR_CREATOR": {CUDA: "REGISTER_CUDA_OPERATOR_CREATOR", Family: "caffe2", HIP: "REGISTER_HIP_OPERATOR_CREATOR"},
	"CUDAContext":                    {CUDA: "CUDAContext", Family: "caffe2", Type: true, HIP: "HIPContext"},
	// cufftResult values of CUDA 12.x that hipFFT has no value for (the
	// samples' helper_cuda.h names each in a case label)
	"CUFFT_MISSING_DEPENDENCY": {CUDA: "CUFFT_MISSING_DEPENDENCY", Family: "fft", Type: true, CUDAAdded: "12.5"},
	"CUFFT_NVRTC_FAILURE":      {CUDA: "CUFFT_NVRTC_FAILURE", Family: "fft", Type: true, CUDAAdded: "12.5"},
	"CUFFT_NVJITLINK_FAILURE":  {CUDA: "CUFFT_NVJITLINK_FAILURE", Family: "fft", Type: true, CUDAAdded: "12.5"},
	"CUFFT_NVSHMEM_FAILURE":    {CUDA: "CUFFT_NVSHMEM_FAILURE", Family: "fft", Type: true, CUDAAdded: "12.5"},
}
