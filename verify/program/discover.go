package program

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/hipify"
)

// Discover finds the GPU (the first one: AMD before NVIDIA, as
// toolchain.DetectGPUs lists them), nvcc and hipcc. Nothing found is not an
// error: the report says what could not be built or run. hipInclude is
// --hip-include (NVIDIA: HIP's own headers).
func Discover(o toolchain.FindOptions, hipInclude string) Toolchains {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	t := Toolchains{HIPInclude: hipInclude}
	if gpus, _ := toolchain.DetectGPUs(o); len(gpus) > 0 {
		g := gpus[0]
		t.Arch, t.Device = g.Arch, g.Name
		if !strings.HasPrefix(g.Name, g.Vendor) {
			t.Device = g.Vendor + " " + g.Name
		}
		t.Platform = PlatformNVIDIA
		if g.Vendor == "AMD" {
			t.Platform = PlatformAMD
		}
	}
	t.NVCC = findNVCC(o, getenv)
	root := ""
	if in, err := toolchain.FindInstallation(o); err == nil {
		t.HIPCC, root = in.HIPCC, in.Root
		parts := strings.SplitN(in.HIPVersion, ".", 3)
		if len(parts) >= 2 {
			t.HIP, _ = hipify.ParseVersion(parts[0] + "." + parts[1])
		}
	}
	t.CUDALibDirs = CUDALibDirs(t.NVCC, getenv)
	t.HIPLibDirs = HIPLibDirs(root)
	return t
}

// findNVCC is nvcc from $CUDA_PATH, $CUDA_HOME, PATH or /usr/local/cuda.
func findNVCC(o toolchain.FindOptions, getenv func(string) string) string {
	var cands []string
	for _, v := range []string{"CUDA_PATH", "CUDA_HOME"} {
		if r := getenv(v); r != "" {
			cands = append(cands, filepath.Join(r, "bin", "nvcc"))
		}
	}
	look := o.LookPath
	if look == nil && o.Root == "" {
		look = exec.LookPath
	}
	if look != nil {
		if p, err := look("nvcc"); err == nil {
			cands = append(cands, p)
		}
	}
	cands = append(cands, filepath.Join(o.Root, "/usr/local/cuda/bin/nvcc"))
	for _, p := range cands {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
