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
	for name, fix := range tableFixes {
		e, ok := table[name]
		if !ok {
			e = &Entry{CUDA: name, Family: "device", Type: fix.typ}
			table[name] = e
		}
		e.HIP, e.HIPAdded = fix.hip, fix.added
	}
}

// tableFixes correct HIPIFY's tables where HIP itself says otherwise
// (checked by compiling against HIP's headers): names HIP has that the
// tables list as missing, and CUDA aliases the tables do not list.
var tableFixes = map[string]struct {
	hip   string
	added Version
	typ   bool
}{
	"make_half2": {"make_half2", Version{1, 6, 0}, false}, // amd_hip_fp16.h has it (HIP 5.2 too)
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
}
