package compile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
)

func TestArgvGolden(t *testing.T) {
	debian := fakeClangTC()
	debian.Driver, debian.Clang = "/usr/bin/clang++-15", "/usr/bin/clang++-15"
	debian.DeviceLibDir = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode" // argv only: nothing is read
	rocm := &toolchain.Clang{Layout: toolchain.LayoutClang, Driver: "/opt/rocm-6.2.0/llvm/bin/clang++", Clang: "/opt/rocm-6.2.0/llvm/bin/clang++",
		RocmPath: "/opt/rocm-6.2.0", DeviceLibDir: "/opt/rocm-6.2.0/amdgcn/bitcode"}
	noHIPRoot := &toolchain.Clang{Layout: toolchain.LayoutClang, Driver: "/usr/bin/clang++-19", Clang: "/usr/bin/clang++-19",
		DeviceLibDir: "/usr/lib/llvm-19/lib/clang/19/lib/amdgcn/bitcode", HIPInclude: "/opt/hip/include"}
	hipcc := &toolchain.Clang{Layout: toolchain.LayoutHIPCC, Driver: "/usr/bin/hipcc", Clang: "/usr/bin/clang++-15", RocmPath: "/usr",
		DeviceLibDir: "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"}
	amd := &toolchain.Clang{Layout: toolchain.LayoutAMDClang, Driver: "/opt/rocm/llvm/bin/amdclang++", Clang: "/opt/rocm/llvm/bin/clang", RocmPath: "/opt/rocm",
		DeviceLibDir: "/opt/rocm/amdgcn/bitcode"}
	cases := []struct {
		name string
		tc   *toolchain.Clang
		job  toolchain.Job
	}{
		{"debian-gfx90a", debian, toolchain.Job{Src: "vadd.hip", Target: targets("gfx90a")[0], Out: "/tmp/w/0-vadd-gfx90a.hsaco", DepFile: "/tmp/w/0-vadd-gfx90a.hsaco.d"}},
		{"debian-gfx90a-xnack-flags", debian, toolchain.Job{Src: "vadd.hip", Target: targets("gfx90a:xnack+")[0],
			Flags: []string{"-DBLOCK=256", "-I/src/include", "-ffast-math"}, Out: "/tmp/w/1.hsaco", DepFile: "/tmp/w/1.hsaco.d"}},
		{"rocm-gfx942", rocm, toolchain.Job{Src: "gemm.hip", Target: targets("gfx942:sramecc+:xnack-")[0], Out: "/tmp/w/2.hsaco", DepFile: "/tmp/w/2.d"}},
		{"nohiproot-gfx1100", noHIPRoot, toolchain.Job{Src: "vadd.hip", Target: targets("gfx1100")[0], Out: "/tmp/w/3.hsaco"}},
		{"hipcc-gfx1030", hipcc, toolchain.Job{Src: "vadd.hip", Target: targets("gfx1030")[0], Flags: []string{"-O2"}, Out: "/tmp/w/4.hsaco", DepFile: "/tmp/w/4.d"}},
		{"amdclang-gfx90a", amd, toolchain.Job{Src: "k.hip", Target: targets("gfx90a")[0], Out: "/tmp/w/5.hsaco", DepFile: "/tmp/w/5.d"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			argv := c.tc.Argv(c.job)
			// Pure: the same job gives the same argv, and nothing in the job is mutated.
			assert.Equal(t, argv, c.tc.Argv(c.job))
			goldenFile(t, c.name+".argv.golden", []byte(strings.Join(argv, "\n")+"\n"))
		})
	}
}

func TestCmdStringQuotes(t *testing.T) {
	s := runner.CmdString(runner.Cmd{Dir: "/a b", Argv: []string{"clang", "-DX=a b", "it's", "--offload-arch=gfx90a:xnack+"}})
	assert.Equal(t, `cd '/a b' && clang '-DX=a b' 'it'\''s' --offload-arch=gfx90a:xnack+`, s)
}

func TestParseDepFile(t *testing.T) {
	in := "/tmp/w/0.hsaco: vadd.hip /usr/include/hip/hip_runtime.h \\\n  scale.h my\\ dir/x.h \\\r\n  /usr/include/stdint.h scale.h\n\nother.o: a.h\n"
	got, err := toolchain.ParseDepFile([]byte(in))
	assert.NoError(t, err)
	assert.Equal(t, []string{"vadd.hip", "/usr/include/hip/hip_runtime.h", "scale.h", "my dir/x.h", "/usr/include/stdint.h", "a.h"}, got)
	_, err = toolchain.ParseDepFile([]byte("no rule here\n"))
	assert.Error(t, err)
}

func FuzzParseDepFile(f *testing.F) {
	f.Add([]byte("a.o: b.h c\\ d.h \\\n e.h\n"))
	f.Add([]byte("x: $$y\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := toolchain.ParseDepFile(b)
		if err == nil {
			for _, p := range list {
				if p == "" {
					t.Fatalf("empty name from %q", b)
				}
			}
		}
	})
}
