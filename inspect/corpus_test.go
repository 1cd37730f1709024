package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var corpusDir = filepath.Join("..", "testdata", "inspect", "corpus")

type summaryDoc struct {
	Entries []summaryEntry `json:"entries"`
}

type summaryEntry struct {
	Path        string           `json:"path"`
	Kind        string           `json:"kind"`
	ExpectError bool             `json:"expect_error"`
	Target      *string          `json:"target"`
	Version     *int             `json:"code_object_version"`
	EFlags      *string          `json:"e_flags"`
	IDs         []string         `json:"ids"`
	Kernels     []map[string]any `json:"kernels"`
	Arch        string           `json:"arch"`
}

func loadSummary(t testing.TB) []summaryEntry {
	b, err := os.ReadFile(filepath.Join(corpusDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s summaryDoc
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s.Entries
}

// corpusFiles lists the top-level files of the corpus (summary paths without '#' or '!').
func corpusFiles(t testing.TB) []summaryEntry {
	var out []summaryEntry
	for _, e := range loadSummary(t) {
		if !strings.ContainsAny(e.Path, "#!") {
			out = append(out, e)
		}
	}
	return out
}

// TestCorpusSummary checks every file of the corpus against summary.json:
// container kind, bundle IDs, targets, code object versions, e_flags and
// every recorded field of every kernel.
func TestCorpusSummary(t *testing.T) {
	entries := loadSummary(t)
	files := map[string]*File{}
	fileErr := map[string]error{}
	for _, e := range corpusFiles(t) {
		f, err := Open(filepath.Join(corpusDir, e.Path))
		files[e.Path], fileErr[e.Path] = f, err
		if e.ExpectError {
			if err == nil {
				t.Errorf("%s: expected an error, got none", e.Path)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", e.Path, err)
		}
	}
	// Index every code object by its location.
	objs := map[string]*CodeObject{}
	for path, f := range files {
		if f == nil {
			continue
		}
		for _, co := range f.Objects {
			loc := co.Location(path)
			if objs[loc] != nil {
				t.Errorf("duplicate code object location %s", loc)
			}
			objs[loc] = co
		}
	}
	nKernels, nObjects, seen := 0, 0, map[string]bool{}
	for _, e := range entries {
		switch {
		case e.Kind == "code-object":
			if e.ExpectError {
				continue // checked above: the file failed
			}
			co := objs[e.Path]
			if co == nil {
				t.Errorf("%s: code object not found", e.Path)
				continue
			}
			seen[e.Path] = true
			nObjects++
			checkObject(t, e, co)
			nKernels += len(e.Kernels)
		case e.Kind == "bundle" || e.Kind == "compressed-bundle":
			if e.IDs == nil {
				continue
			}
			file, container, _ := strings.Cut(e.Path, "!")
			f := files[file]
			if f == nil {
				t.Errorf("%s: file not parsed (%v)", e.Path, fileErr[file])
				continue
			}
			var got []string
			for _, b := range f.Bundles {
				if b.Container == container || (container == "__CLANG_OFFLOAD_BUNDLE__" && strings.HasPrefix(b.Container, container)) {
					if e.Kind == "compressed-bundle" && b.Compressed == nil {
						t.Errorf("%s: not reported as compressed", e.Path)
					}
					for _, en := range b.Entries {
						got = append(got, en.ID)
					}
				}
			}
			want := append([]string(nil), e.IDs...)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("%s: bundle IDs %v, want %v", e.Path, got, want)
			}
			if container == "" && f.Kind != e.Kind {
				t.Errorf("%s: kind %q, want %q", e.Path, f.Kind, e.Kind)
			}
		case e.Kind == "llvm ir":
			file, _, _ := strings.Cut(e.Path, "!")
			f := files[file]
			if f == nil {
				t.Errorf("%s: file not parsed", e.Path)
				continue
			}
			found := false
			for _, im := range f.Images {
				if im.Arch == e.Arch && im.Kind == "llvm-bitcode" {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no bitcode image for %s in %+v", e.Path, e.Arch, f.Images)
			}
			if !hasNote(f, NoteBitcode) {
				t.Errorf("%s: missing note %q", e.Path, NoteBitcode)
			}
		case e.Kind == "host-elf":
			f := files[e.Path]
			if f == nil || !strings.HasPrefix(f.Kind, "host-") && f.Kind != "rdc-object" {
				t.Errorf("%s: kind %v", e.Path, f)
			}
		}
	}
	// Every code object we found is in the summary (nothing invented).
	for loc := range objs {
		if !seen[loc] && !strings.HasPrefix(loc, "broken/") {
			t.Errorf("code object %s is not in summary.json", loc)
		}
	}
	t.Logf("%d code objects, %d kernels checked", nObjects, nKernels)
	if nKernels < 176 {
		t.Errorf("only %d kernels checked", nKernels)
	}
	// The plain code object files alone hold the 176 kernels of the issue.
	plain := 0
	for _, e := range entries {
		if e.Kind == "code-object" && !strings.ContainsAny(e.Path, "#!") && !e.ExpectError {
			plain += len(e.Kernels)
		}
	}
	if plain != 176 {
		t.Errorf("plain code objects hold %d kernels, want 176", plain)
	}
}

func hasNote(f *File, n string) bool {
	for _, s := range f.Notes {
		if s == n {
			return true
		}
	}
	return false
}

func checkObject(t *testing.T, e summaryEntry, co *CodeObject) {
	t.Helper()
	if e.Version != nil && co.Version != *e.Version {
		t.Errorf("%s: version %d, want %d", e.Path, co.Version, *e.Version)
	}
	if e.EFlags != nil {
		if got := fmt.Sprintf("0x%x", co.Flags); got != *e.EFlags {
			t.Errorf("%s: e_flags %s, want %s", e.Path, got, *e.EFlags)
		}
	}
	if e.Target != nil {
		if co.MetaTarget != *e.Target {
			t.Errorf("%s: metadata target %q, want %q", e.Path, co.MetaTarget, *e.Target)
		}
		// From v4 on, the e_flags decode must give the same target ID.
		if co.Version >= 4 {
			if got := TargetPrefix + co.Target.String(); got != *e.Target {
				t.Errorf("%s: e_flags target %q, want %q", e.Path, got, *e.Target)
			}
		}
	} else if co.MetaTarget != "" {
		t.Errorf("%s: metadata target %q, want none", e.Path, co.MetaTarget)
	}
	if len(co.Kernels) != len(e.Kernels) {
		t.Errorf("%s: %d kernels, want %d", e.Path, len(co.Kernels), len(e.Kernels))
		return
	}
	for i, want := range e.Kernels {
		k := co.Kernels[i]
		got := map[string]any{
			"name": k.Name, "lds_bytes": int(k.LDS), "scratch_bytes": int(k.Scratch),
			"sgpr_count": k.SGPRs, "vgpr_count": k.VGPRs, "agpr_count": k.AGPRs,
			"sgpr_spill_count": k.SGPRSpills, "vgpr_spill_count": k.VGPRSpills,
			"wavefront_size": k.Wavefront, "uses_dynamic_stack": k.DynamicStack,
		}
		for key, w := range want {
			g, ok := got[key]
			if !ok {
				t.Errorf("%s: kernel field %s not checked", e.Path, key)
				continue
			}
			if f, isNum := w.(float64); isNum {
				w = int(f)
			}
			if g != w {
				t.Errorf("%s: kernel %s: %s = %v, want %v", e.Path, k.Name, key, g, w)
			}
		}
		if _, ok := want["agpr_count"]; ok != k.HasAGPRCount() {
			t.Errorf("%s: kernel %s: agpr_count present %v, want %v", e.Path, k.Name, k.HasAGPRCount(), ok)
		}
	}
	if len(co.Warnings) > 0 {
		t.Errorf("%s: unexpected warnings %q", e.Path, co.Warnings)
	}
}

// manifest.json: descriptors, arguments and symbols.
type manifestKernel struct {
	Name      string           `json:"name"`
	Symbol    string           `json:"symbol"`
	Kernarg   int              `json:"kernarg_segment_size"`
	MaxWG     int              `json:"max_flat_workgroup_size"`
	Args      []map[string]any `json:"args"`
	KDRaw     map[string]any   `json:"kd_raw"`
	KDObjdump map[string]any   `json:"kd_objdump"`
	Demangled string           `json:"demangled"`
}

type manifestFile struct {
	Path    string           `json:"path"`
	Kind    string           `json:"kind"`
	Kernels []manifestKernel `json:"kernels"`
	Symbols struct {
		Descriptors []string `json:"kernel_descriptors"`
		Entries     []string `json:"kernel_entries"`
	} `json:"symbols"`
	Derived map[string]any `json:"derived"`
	Expect  bool           `json:"expect_error"`
}

func hexOrNum(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case string:
		n, err := strconv.ParseInt(strings.TrimPrefix(x, "0x"), 16, 64)
		if err != nil {
			return -1
		}
		return n
	}
	return -1
}

// TestCorpusManifest checks kernel descriptors, argument layouts, max
// workgroup sizes and kernel symbols of every plain code object against
// manifest.json (llvm-readelf and llvm-objdump-22 output).
func TestCorpusManifest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(corpusDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Files []manifestFile `json:"files"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	nkd := 0
	for _, mf := range m.Files {
		if mf.Kind != "code-object" || mf.Expect {
			continue
		}
		f, err := Open(filepath.Join(corpusDir, mf.Path))
		if err != nil {
			t.Errorf("%s: %v", mf.Path, err)
			continue
		}
		co := f.Objects[0]
		if gv, ok := mf.Derived["generic_version"].(float64); ok && int(gv) != co.GenericVersion() {
			t.Errorf("%s: generic version %d, want %v", mf.Path, co.GenericVersion(), gv)
		}
		for i, mk := range mf.Kernels {
			k := co.Kernels[i]
			if k.Symbol != mk.Symbol || int(k.KernargSize) != mk.Kernarg || k.MaxWorkgroupSize != mk.MaxWG {
				t.Errorf("%s: %s: symbol/kernarg/maxwg %s %d %d, want %s %d %d", mf.Path, k.Name, k.Symbol, k.KernargSize, k.MaxWorkgroupSize, mk.Symbol, mk.Kernarg, mk.MaxWG)
			}
			if len(k.Args) != len(mk.Args) {
				t.Errorf("%s: %s: %d args, want %d", mf.Path, k.Name, len(k.Args), len(mk.Args))
			} else if co.Version >= 3 {
				for j, ma := range mk.Args {
					a := k.Args[j]
					want := fmt.Sprintf("%v/%v/%v/%v/%v/%v/%v", ma["name"], ma["value_kind"], ma["address_space"], ma["access"], ma["offset"], ma["size"], ma["type_name"])
					got := fmt.Sprintf("%v/%v/%v/%v/%v/%v/%v", nilIfEmpty(a.Name), a.ValueKind, nilIfEmpty(a.AddressSpace), nilIfEmpty(a.Access), a.Offset, a.Size, nilIfEmpty(a.TypeName))
					if got != want {
						t.Errorf("%s: %s arg %d: %s, want %s", mf.Path, k.Name, j, got, want)
					}
				}
			}
			if mk.KDRaw == nil {
				if k.KD != nil && co.Version >= 3 {
					t.Errorf("%s: %s: descriptor decoded but manifest has none", mf.Path, k.Name)
				}
				continue
			}
			if k.KD == nil {
				t.Errorf("%s: %s: no descriptor", mf.Path, k.Name)
				continue
			}
			kd := k.KD
			nkd++
			checks := map[string]int64{
				"compute_pgm_rsrc1": int64(kd.Rsrc1), "compute_pgm_rsrc2": int64(kd.Rsrc2), "compute_pgm_rsrc3": int64(kd.Rsrc3),
				"kernel_code_properties": int64(kd.Properties), "kernarg_preload": int64(kd.KernargPreload),
				"kernel_code_entry_byte_offset": kd.EntryOffset, "granulated_workitem_vgpr_count": int64(kd.GranulatedVGPRs),
				"granulated_wavefront_sgpr_count": int64(kd.GranulatedSGPRs), "user_sgpr_count": int64(kd.UserSGPRs),
				"wavefront_size32": b2i(kd.Wave32), "uses_dynamic_stack": b2i(kd.DynamicStack), "enable_private_segment": b2i(kd.PrivateEnabled),
				"group_segment_fixed_size": int64(kd.GroupSegment), "private_segment_fixed_size": int64(kd.PrivateSegment), "kernarg_size": int64(kd.KernargSize),
			}
			for key, v := range mk.KDRaw {
				g, ok := checks[key]
				if !ok {
					t.Errorf("kd field %s not checked", key)
					continue
				}
				if w := hexOrNum(v); g != w {
					t.Errorf("%s: %s: kd %s = %d, want %d", mf.Path, k.Name, key, g, w)
				}
			}
			// objdump's decode: allocated VGPRs (next_free_vgpr is rounded to the
			// granule), SGPRs on GFX6-9, accum_offset on gfx90a+.
			if v, ok := mk.KDObjdump["next_free_vgpr"].(float64); ok && int(v) != kd.VGPRs {
				t.Errorf("%s: %s: allocated VGPRs %d, objdump next_free_vgpr %v", mf.Path, k.Name, kd.VGPRs, v)
			}
			if v, ok := mk.KDObjdump["next_free_sgpr"].(float64); ok && kd.SGPRs != 0 && int(v) != kd.SGPRs {
				t.Errorf("%s: %s: allocated SGPRs %d, objdump next_free_sgpr %v", mf.Path, k.Name, kd.SGPRs, v)
			}
			if v, ok := mk.KDObjdump["accum_offset"].(float64); ok && int(v) != kd.AccumOffset {
				t.Errorf("%s: %s: accum_offset %d, want %v", mf.Path, k.Name, kd.AccumOffset, v)
			}
		}
		// Kernel entries and descriptors, nm style.
		var entries, kds []string
		for _, s := range co.Symbols {
			if s.Type == "FUNC" && s.Bind == "GLOBAL" {
				entries = append(entries, s.Name)
				if s.Kind != "T" {
					t.Errorf("%s: kernel entry %s has nm kind %s, want T", mf.Path, s.Name, s.Kind)
				}
			}
			if strings.HasSuffix(s.Name, ".kd") && s.Type == "OBJECT" {
				kds = append(kds, s.Name)
			}
		}
		if strings.Join(entries, ",") != strings.Join(mf.Symbols.Entries, ",") || strings.Join(kds, ",") != strings.Join(mf.Symbols.Descriptors, ",") {
			t.Errorf("%s: symbols %v %v, want %v %v", mf.Path, entries, kds, mf.Symbols.Entries, mf.Symbols.Descriptors)
		}
	}
	if nkd < 150 {
		t.Errorf("only %d descriptors checked", nkd)
	}
	t.Logf("%d kernel descriptors checked", nkd)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestBrokenInputs: the broken corpus files, truncations and random bytes
// give errors that say where, and never panic.
func TestBrokenInputs(t *testing.T) {
	cases := map[string]string{
		"broken/truncated.co":     "past the end of the file",
		"broken/bad-msgpack.co":   "not valid MessagePack",
		"broken/bad-offset.hipfb": "runs past the end of the bundle",
		"broken/bad-hash.ccob":    "hash mismatch",
	}
	for name, want := range cases {
		_, err := Open(filepath.Join(corpusDir, name))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the file and containing %q", name, err, want)
		}
	}
	var hm *HashMismatchError
	f, err := Open(filepath.Join(corpusDir, "broken/bad-hash.ccob"))
	if !errors.As(err, &hm) || hm.Want != 0x0123456789abcdef || f == nil || len(f.Objects) != 6 {
		t.Errorf("bad-hash: %v %+v", err, hm)
	}

	// Every prefix of a few real files of each kind.
	for _, name := range []string{"co/vadd.gfx90a.co", "bundle/reduce.multi.ccob-v1-zlib.hipfb", "newllvm/raw.multi.ccob-v3.hipfb", "host/vadd.host.o", "bundle/vadd.gfx90a-xnack_pm.hipfb"} {
		data, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			t.Fatal(err)
		}
		step := 1
		if testing.Short() {
			step = 97
		}
		for n := 0; n < len(data); n += step {
			f, err := Parse(name, data[:n])
			if err == nil && f != nil && len(f.Objects) > 0 && n < len(data)/2 {
				// A bundle cut inside padding may still be whole; a cut far
				// inside must fail.
				t.Errorf("%s cut at %d: no error", name, n)
			}
		}
	}
	// Random bytes behind each magic.
	seed := uint64(1)
	for i := 0; i < 2000; i++ {
		buf := make([]byte, 64+i%700)
		for j := range buf {
			seed = seed*6364136223846793005 + 1442695040888963407
			buf[j] = byte(seed >> 56)
		}
		for _, magic := range []string{"", "\x7fELF\x02\x01\x01\x40", bundleMagic, "CCOB\x02\x00\x00\x00", "CCOB\x03\x00\x01\x00", offloadMagic} {
			b := append([]byte(magic), buf...)
			if _, err := Parse("random", b); err == nil && magic == "" {
				t.Errorf("random bytes accepted")
			}
		}
	}
}
