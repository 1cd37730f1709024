package toolchain

import (
	"errors"
	"strings"
	"testing"

	"github.com/rocmk/rocmk/inspect"
)

func TestResolveTargets(t *testing.T) {
	gpus := []GPU{
		{Vendor: "AMD", Arch: "gfx1100", Source: "kfd"},
		{Vendor: "NVIDIA", Arch: "sm_90", Source: "nvidia-smi", Index: 0},
		{Vendor: "AMD", Arch: "gfx90a", Source: "kfd", Index: 1},
		{Vendor: "AMD", Arch: "gfx90a", Source: "kfd", Index: 2},
	}
	cases := []struct {
		name      string
		flag, man []string
		env       []string
		gpus      []GPU
		want      string
		source    string
		wantErr   string
	}{
		{"flag wins", []string{"gfx942"}, []string{"gfx908"}, []string{"ROCMK_ARCH", "gfx1030"}, gpus, "gfx942", "--arch", ""},
		{"flag list", []string{"gfx90a:xnack+,gfx90a:xnack-", "gfx1100"}, nil, nil, nil, "gfx90a:xnack+ gfx90a:xnack- gfx1100", "--arch", ""},
		{"flag native", []string{"native", "gfx942"}, nil, nil, gpus, "gfx90a gfx1100 gfx942", "--arch", ""},
		{"flag native no gpu", []string{"native"}, nil, nil, nil, "", "--arch", "no AMD GPU was found"},
		{"flag bad", []string{"gfx91"}, nil, nil, gpus, "", "--arch", `--arch: invalid target ID "gfx91"`},
		{"flag combination", []string{"gfx90a,gfx90a:xnack-"}, nil, nil, nil, "", "--arch", "invalid offload arch combinations"},
		{"manifest", nil, []string{"gfx908", "gfx1030"}, []string{"ROCMK_ARCH", "gfx1100"}, gpus, "gfx908 gfx1030", "rocmk.toml", ""},
		{"ROCMK_ARCH", nil, nil, []string{"ROCMK_ARCH", "gfx1201", "PYTORCH_ROCM_ARCH", "gfx90a"}, gpus, "gfx1201", "ROCMK_ARCH", ""},
		{"PYTORCH_ROCM_ARCH ;", nil, nil, []string{"PYTORCH_ROCM_ARCH", "gfx90a;gfx942", "GPU_TARGETS", "gfx1100"}, gpus, "gfx90a gfx942", "PYTORCH_ROCM_ARCH", ""},
		{"PYTORCH_ROCM_ARCH space", nil, nil, []string{"PYTORCH_ROCM_ARCH", "gfx90a gfx942"}, nil, "gfx90a gfx942", "PYTORCH_ROCM_ARCH", ""},
		{"GPU_TARGETS", nil, nil, []string{"GPU_TARGETS", "gfx1100,gfx1101", "CANDLE_ROCM_ARCH", "gfx90a"}, nil, "gfx1100 gfx1101", "GPU_TARGETS", ""},
		{"AMDGPU_TARGETS", nil, nil, []string{"AMDGPU_TARGETS", "gfx906"}, nil, "gfx906", "AMDGPU_TARGETS", ""},
		{"CANDLE_ROCM_ARCH", nil, nil, []string{"CANDLE_ROCM_ARCH", "gfx1030"}, gpus, "gfx1030", "CANDLE_ROCM_ARCH", ""},
		{"env bad", nil, nil, []string{"GPU_TARGETS", "gfx1100:xnack+"}, nil, "", "GPU_TARGETS", "GPU_TARGETS: invalid target ID"},
		{"detected", nil, nil, nil, gpus, "gfx90a gfx1100", "detected GPUs", ""},
		{"blank env ignored", nil, nil, []string{"ROCMK_ARCH", "  "}, gpus, "gfx90a gfx1100", "detected GPUs", ""},
		{"nvidia only", nil, nil, nil, gpus[1:2], "", "", "pass --arch"},
		{"nothing", nil, nil, nil, nil, "", "", "no AMD GPU detected"},
		{"empty flag list", []string{" ,;"}, nil, nil, gpus, "", "--arch", "--arch names no target"},
		{"empty env list", nil, nil, []string{"GPU_TARGETS", ";"}, gpus, "", "GPU_TARGETS", "GPU_TARGETS names no target"},
	}
	for _, c := range cases {
		gpus := c.gpus
		res, err := ResolveTargets(TargetRequest{Flag: c.flag, Manifest: c.man, Getenv: envOf(c.env...), GPUs: func() []GPU { return gpus }})
		ts, src := res.List, res.From
		var got []string
		for _, t := range ts {
			got = append(got, t.String())
		}
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.wantErr)
			}
			if strings.Contains(c.wantErr, "--arch") || strings.Contains(c.wantErr, "GPU") {
				if !errors.Is(err, ErrNoTargets) && !errors.Is(err, inspect.ErrInvalidTarget) {
					t.Errorf("%s: err %v wraps neither ErrNoTargets nor ErrInvalidTarget", c.name, err)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if strings.Join(got, " ") != c.want || src != c.source {
			t.Errorf("%s: %v from %q, want %s from %q", c.name, got, src, c.want, c.source)
		}
	}
	if _, err := ResolveTargets(TargetRequest{}); !errors.Is(err, ErrNoTargets) {
		t.Errorf("nil getenv, nothing: %v", err)
	}
}

// With nothing named: detected GPUs first, then the request's default
// (build: the toolchain's; port: none), and GPUs are detected only when
// they can matter.
func TestResolveTargetsDefaultAndDetection(t *testing.T) {
	detections := 0
	gpus := func() []GPU {
		detections++
		return []GPU{{Vendor: "AMD", Arch: "gfx1030"}}
	}
	res, err := ResolveTargets(TargetRequest{Flag: []string{"gfx90a"}, GPUs: gpus})
	if err != nil || res.String() != "gfx90a" || detections != 0 {
		t.Errorf("named: %v %v, %d detections", res, err, detections)
	}
	res, err = ResolveTargets(TargetRequest{GPUs: gpus, Default: func() []inspect.Target { return nil }})
	if err != nil || res.String() != "gfx1030" || res.From != "detected GPUs" || detections != 1 {
		t.Errorf("detected: %v %v, %d detections", res, err, detections)
	}
	def := func() []inspect.Target { return []inspect.Target{inspect.MustParseTarget("gfx942")} }
	res, err = ResolveTargets(TargetRequest{Default: def})
	if err != nil || res.String() != "gfx942" || res.From != "default" {
		t.Errorf("default: %v %v", res, err)
	}
	res, err = ResolveTargets(TargetRequest{Default: func() []inspect.Target { return nil }})
	if err != nil || len(res.List) != 0 || res.From != "" {
		t.Errorf("no default: %v %v", res, err)
	}
	res, err = ResolveTargets(TargetRequest{Manifest: []string{"gfx908"}, ManifestName: "proj/rocmk.toml"})
	if err != nil || res.From != "proj/rocmk.toml" {
		t.Errorf("manifest name: %v %v", res, err)
	}
}

// FuzzResolveTargets: whatever the variables hold, ResolveTargets returns
// valid targets or an error wrapping ErrNoTargets or inspect.ErrInvalidTarget.
func FuzzResolveTargets(f *testing.F) {
	for _, s := range []string{"gfx90a;gfx942", "gfx90a gfx90a:xnack-", "native", "", " ,;", "gfx1100:xnack+", "sm_90"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, flag, env string) {
		gpus := []GPU{{Vendor: "AMD", Arch: "gfx1030"}}
		var fl []string
		if flag != "" {
			fl = []string{flag}
		}
		res, err := ResolveTargets(TargetRequest{Flag: fl, Getenv: envOf("PYTORCH_ROCM_ARCH", env), GPUs: func() []GPU { return gpus }})
		ts := res.List
		if err != nil {
			if !errors.Is(err, ErrNoTargets) && !errors.Is(err, inspect.ErrInvalidTarget) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if len(ts) == 0 {
			t.Fatal("no targets and no error")
		}
		if err := inspect.ValidateTargets(ts); err != nil {
			t.Fatalf("returned invalid targets %v: %v", ts, err)
		}
	})
}
