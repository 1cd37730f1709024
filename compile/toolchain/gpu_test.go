package toolchain

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// kfdTree is a KFD topology as amdgpu exposes it: a CPU node (version 0)
// and GPU nodes; values from real MI250X/RX 7900 machines' properties files.
func kfdTree(t *testing.T, versions ...string) string {
	var e []string
	for i, v := range versions {
		n := filepath.Join("sys/class/kfd/kfd/topology/nodes", string(rune('0'+i)))
		e = append(e, n+"/properties=cpu_cores_count 0\nsimd_count 440\ngfx_target_version "+v+"\nunique_id 1234567890"+string(rune('0'+i))+"\nvendor_id 4098\n")
		if v != "0" {
			e = append(e, n+"/name=ip discovery\n")
		}
	}
	return fakeTree(t, e...)
}

func archs(gs []GPU) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.Arch)
	}
	return strings.Join(s, " ")
}

func TestDecodeGfxTargetVersion(t *testing.T) {
	for v, want := range map[int]string{90010: "gfx90a", 90402: "gfx942", 110000: "gfx1100", 100300: "gfx1030", 90000: "gfx900",
		90012: "gfx90c", 120001: "gfx1201", 110501: "gfx1151", 90500: "gfx950", 80003: "gfx803"} {
		if got := decodeGfxTargetVersion(v); got != want {
			t.Errorf("decode(%d) = %s, want %s", v, got, want)
		}
	}
}

func TestDetectGPUsKFD(t *testing.T) {
	root := kfdTree(t, "0", "90010", "110000", "90010")
	o := FindOptions{Root: root, Getenv: envOf()}
	gs, err := DetectGPUs(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []GPU{
		{Vendor: "AMD", Name: "AMD gfx90a", Arch: "gfx90a", Source: "kfd", Index: 0, Node: 1},
		{Vendor: "AMD", Name: "AMD gfx1100", Arch: "gfx1100", Source: "kfd", Index: 1, Node: 2},
		{Vendor: "AMD", Name: "AMD gfx90a", Arch: "gfx90a", Source: "kfd", Index: 2, Node: 3},
	}
	if !reflect.DeepEqual(gs, want) {
		t.Errorf("got  %+v\nwant %+v", gs, want)
	}
	if ts := AMDTargets(gs); len(ts) != 2 || ts[0].String() != "gfx90a" || ts[1].String() != "gfx1100" {
		t.Errorf("AMDTargets = %v", ts)
	}

	cases := []struct {
		env     []string
		want    string
		wantErr string
	}{
		{[]string{"ROCR_VISIBLE_DEVICES", "1"}, "gfx1100", ""},
		{[]string{"ROCR_VISIBLE_DEVICES", "2,0"}, "gfx90a gfx90a", ""},
		{[]string{"ROCR_VISIBLE_DEVICES", "GPU-00000002dfdc1c36"}, "gfx1100", ""}, // unique_id 12345678902
		{[]string{"HIP_VISIBLE_DEVICES", "1"}, "gfx1100", ""},
		{[]string{"CUDA_VISIBLE_DEVICES", "0"}, "gfx90a", ""},
		{[]string{"HIP_VISIBLE_DEVICES", "1", "CUDA_VISIBLE_DEVICES", "0"}, "gfx1100", ""},   // HIP wins
		{[]string{"ROCR_VISIBLE_DEVICES", "1,2", "HIP_VISIBLE_DEVICES", "0"}, "gfx1100", ""}, // ROCR first, then HIP
		{[]string{"ROCR_VISIBLE_DEVICES", "0,7,1"}, "gfx90a", ""},                            // out of range ends the list
		{[]string{"ROCR_VISIBLE_DEVICES", "0,x,1"}, "gfx90a", `entry "x" does not name a GPU`},
		{[]string{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}, "gfx1030 gfx1030 gfx1030", ""},
		{[]string{"HSA_OVERRIDE_GFX_VERSION_1", "11.0.0", "HSA_OVERRIDE_GFX_VERSION", "9.0.10"}, "gfx90a gfx1100 gfx90a", ""},
		{[]string{"HSA_OVERRIDE_GFX_VERSION", "11"}, "gfx90a gfx1100 gfx90a", "want major.minor.stepping"},
		{[]string{"HSA_OVERRIDE_GFX_VERSION", "9.9.9"}, "gfx90a gfx1100 gfx90a", "gfx999 is not a known processor"},
	}
	for _, c := range cases {
		gs, err := DetectGPUs(FindOptions{Root: root, Getenv: envOf(c.env...)})
		if got := archs(gs); got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%v: err %v, want %q", c.env, err, c.wantErr)
		}
		for i, g := range gs {
			if g.Index != i {
				t.Errorf("%v: GPU %d has index %d", c.env, i, g.Index)
			}
		}
	}
	gs, _ = DetectGPUs(FindOptions{Root: root, Getenv: envOf("HSA_OVERRIDE_GFX_VERSION", "10.3.0")})
	if gs[0].Source != "kfd+HSA_OVERRIDE_GFX_VERSION" {
		t.Errorf("override source %q", gs[0].Source)
	}
}

func TestDetectGPUsNone(t *testing.T) {
	root := kfdTree(t, "0")
	gs, err := DetectGPUs(FindOptions{Root: root, Getenv: envOf()})
	if err != nil || len(gs) != 0 {
		t.Errorf("CPU-only KFD: %v %v", gs, err)
	}
	gs, err = DetectGPUs(FindOptions{Root: t.TempDir(), Getenv: envOf()})
	if err != nil || gs == nil && len(gs) != 0 {
		t.Errorf("no KFD: %v %v", gs, err)
	}
}

// fakeTools is a LookPath/Run pair that knows the given outputs.
func fakeTools(outputs map[string]string) (func(string) (string, error), func(...string) ([]byte, error)) {
	look := func(n string) (string, error) {
		if _, ok := outputs[n]; ok {
			return "/usr/bin/" + n, nil
		}
		return "", exec.ErrNotFound
	}
	run := func(argv ...string) ([]byte, error) {
		out, ok := outputs[filepath.Base(argv[0])]
		if !ok {
			return nil, errors.New("not found")
		}
		if out == "FAIL" {
			return nil, errors.New("exit status 1")
		}
		return []byte(out), nil
	}
	return look, run
}

func TestDetectGPUsTools(t *testing.T) {
	rocminfo, err := os.ReadFile(filepath.Join("..", "..", "testdata", "toolchain", "rocminfo-mi210.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tools map[string]string
		env   []string
		want  []GPU
	}{
		{map[string]string{"amdgpu-arch": "gfx1100\ngfx1030\n", "rocminfo": "FAIL"}, nil,
			[]GPU{{Vendor: "AMD", Name: "AMD gfx1100", Arch: "gfx1100", Source: "amdgpu-arch"}, {Vendor: "AMD", Name: "AMD gfx1030", Arch: "gfx1030", Source: "amdgpu-arch", Index: 1}}},
		{map[string]string{"amdgpu-arch": "", "rocminfo": string(rocminfo)}, nil,
			[]GPU{{Vendor: "AMD", Name: "AMD Instinct MI210", Arch: "gfx90a", Source: "rocminfo"}}},
		{map[string]string{"rocminfo": "FAIL"}, nil, nil},
		{map[string]string{"nvidia-smi": "0, NVIDIA H100 80GB HBM3, 9.0\n1, NVIDIA GeForce RTX 4090, 8.9\n"}, nil,
			[]GPU{{Vendor: "NVIDIA", Name: "NVIDIA H100 80GB HBM3", Arch: "sm_90", Source: "nvidia-smi"}, {Vendor: "NVIDIA", Name: "NVIDIA GeForce RTX 4090", Arch: "sm_89", Source: "nvidia-smi", Index: 1}}},
		{map[string]string{"nvidia-smi": "0, NVIDIA H100 80GB HBM3, 9.0\n1, NVIDIA GeForce RTX 4090, 8.9\n"}, []string{"CUDA_VISIBLE_DEVICES", "1"},
			[]GPU{{Vendor: "NVIDIA", Name: "NVIDIA GeForce RTX 4090", Arch: "sm_89", Source: "nvidia-smi"}}},
	}
	for i, c := range cases {
		look, run := fakeTools(c.tools)
		gs, err := DetectGPUs(FindOptions{Root: t.TempDir(), Getenv: envOf(c.env...), LookPath: look, Run: argvRunner(run)})
		if err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(gs, c.want) {
			t.Errorf("case %d:\n got %+v\nwant %+v", i, gs, c.want)
		}
	}
	// amdgpu-arch in /opt/rocm/llvm/bin is found without being on PATH.
	root := fakeTree(t, "opt/rocm/llvm/bin/amdgpu-arch")
	_, run := fakeTools(map[string]string{"amdgpu-arch": "gfx942\n"})
	gs, err := DetectGPUs(FindOptions{Root: root, Getenv: envOf(), Run: argvRunner(run)})
	if err != nil || archs(gs) != "gfx942" || gs[0].Source != "amdgpu-arch" {
		t.Errorf("amdgpu-arch in /opt/rocm/llvm/bin: %+v %v", gs, err)
	}

	look, run := fakeTools(map[string]string{"nvidia-smi": "garbage"})
	if _, err := DetectGPUs(FindOptions{Root: t.TempDir(), Getenv: envOf(), LookPath: look, Run: argvRunner(run)}); err == nil {
		t.Error("bad nvidia-smi output gave no error")
	}
}

// TestDetectGPUsThisMachine runs detection for real. On the Debian build
// machine (no GPU) it must find none; where nvidia-smi runs, it must agree
// with it.
func TestDetectGPUsThisMachine(t *testing.T) {
	thisMachine(t)
	gs, err := DetectGPUs(FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	smi, smiErr := exec.Command("nvidia-smi", "--query-gpu=index,name,compute_cap", "--format=csv,noheader").Output()
	_, kfdErr := os.Stat(kfdNodes)
	switch {
	case smiErr == nil:
		want, _ := parseNvidiaSMI(smi)
		if len(want) == 0 {
			t.Fatalf("nvidia-smi printed no GPU: %q", smi)
		}
		var nv []GPU
		for _, g := range gs {
			if g.Vendor == "NVIDIA" {
				nv = append(nv, g)
			}
		}
		if os.Getenv("CUDA_VISIBLE_DEVICES") == "" && os.Getenv("HIP_VISIBLE_DEVICES") == "" && !reflect.DeepEqual(nv, want) {
			t.Errorf("got %+v, nvidia-smi says %+v", nv, want)
		}
		for _, g := range nv {
			if !strings.HasPrefix(g.Arch, "sm_") || len(g.Arch) < 5 {
				t.Errorf("arch %q", g.Arch)
			}
		}
		t.Logf("GPUs: %+v", gs)
	case kfdErr != nil:
		if len(gs) != 0 {
			t.Errorf("no KFD, no nvidia-smi, but found %+v", gs)
		}
	}
}

// BenchmarkDetectGPUsKFD measures reading an 8-GPU KFD topology.
func BenchmarkDetectGPUsKFD(b *testing.B) {
	root := b.TempDir()
	for i := 0; i <= 8; i++ {
		v := "90402"
		if i == 0 {
			v = "0"
		}
		dir := filepath.Join(root, kfdNodes, string(rune('0'+i)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "properties"), []byte("simd_count 1216\ngfx_target_version "+v+"\nunique_id 42\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	o := FindOptions{Root: root, Getenv: envOf()}
	for b.Loop() {
		gs, err := DetectGPUs(o)
		if err != nil || len(gs) != 8 {
			b.Fatal(gs, err)
		}
	}
}
