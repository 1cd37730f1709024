package compile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/bundle"
)

// buildEmbeds runs a fake build of vadd.hip for gfx90a and gfx1030 with every
// embedding and returns the output directory.
func buildEmbeds(t *testing.T) (string, *fakeRunner) {
	fr := newFake(t)
	b, dir := fakeBuilder(t, fr, 2)
	out := filepath.Join(dir, "out")
	_, err := b.Build(context.Background(), Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx90a", "gfx1030"),
		OutDir: out, Bundle: true, Embed: []string{"rust", "go", "c"}, EmbedPackage: "kern"})
	require.NoError(t, err)
	return out, fr
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestManifestAndBundle(t *testing.T) {
	out, fr := buildEmbeds(t)
	var m Manifest
	data, err := os.ReadFile(filepath.Join(out, ManifestFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &m))
	assert.Equal(t, "rocmk.build-manifest/v1", m.Schema)
	assert.Equal(t, []string{"gfx90a", "gfx1030"}, m.Targets)
	require.Len(t, m.Objects, 2)
	assert.Equal(t, ManifestObject{Source: "vadd.hip", Target: "gfx90a", File: "vadd-gfx90a.hsaco", Size: len(fr.objects["gfx90a"]),
		SHA256: sum(fr.objects["gfx90a"]), Kernels: []string{"vadd"}}, m.Objects[0])
	require.Len(t, m.Bundles, 1)
	fatbin, err := os.ReadFile(filepath.Join(out, "vadd.hipfb"))
	require.NoError(t, err)
	assert.Equal(t, sum(fatbin), m.Bundles[0].SHA256)
	ids, err := bundle.ReadIDs(fatbin)
	require.NoError(t, err)
	assert.Equal(t, []string{"host-x86_64-unknown-linux", "hipv4-amdgcn-amd-amdhsa--gfx90a", "hipv4-amdgcn-amd-amdhsa--gfx1030"}, ids)
}

func TestEmbedGoCompilesAndLooksUp(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	out, fr := buildEmbeds(t)
	mod := t.TempDir()
	pkg := filepath.Join(mod, "kern")
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	for _, f := range []string{"hsaco_embed.go", "vadd-gfx90a.hsaco", "vadd-gfx1030.hsaco"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(pkg, f), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module m\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "main.go"), []byte(`package main

import (
	"crypto/sha256"
	"fmt"
	"m/kern"
)

func main() {
	for _, a := range []string{"gfx90a:sramecc+:xnack-", "gfx1030", "gfx1100"} {
		b, ok := kern.ForArch("vadd", a)
		fmt.Printf("%s %v %x\n", a, ok, sha256.Sum256(b))
	}
}
`), 0o644))
	cmd := exec.Command(goBin, "run", ".")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", got)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, "gfx90a:sramecc+:xnack- true "+sum(fr.objects["gfx90a"]), lines[0])
	assert.Equal(t, "gfx1030 true "+sum(fr.objects["gfx1030"]), lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "gfx1100 false "))
}

func TestEmbedCCompilesAndLooksUp(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	out, fr := buildEmbeds(t)
	main := filepath.Join(out, "main.c")
	require.NoError(t, os.WriteFile(main, []byte(`#include <stdio.h>
#include "hsaco.h"
int main(void) {
  const struct rocmk_hsaco *a = rocmk_hsaco_for_arch("vadd", "gfx90a:sramecc+:xnack-");
  const struct rocmk_hsaco *b = rocmk_hsaco_for_arch("vadd", "gfx1100");
  printf("%s %zu %d\n", a ? a->target : "none", a ? a->size : 0, b == 0);
  return 0;
}
`), 0o644))
	exe := filepath.Join(out, "main")
	b, err := exec.Command(cc, "-Wall", "-Werror", "-o", exe, main).CombinedOutput()
	require.NoError(t, err, "%s", b)
	got, err := exec.Command(exe).Output()
	require.NoError(t, err)
	assert.Equal(t, "gfx90a "+itoa(len(fr.objects["gfx90a"]))+" 1\n", string(got))
}

func TestEmbedRustCompilesAndLooksUp(t *testing.T) {
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		t.Skip("rustc not on PATH")
	}
	if testing.Short() {
		t.Skip("rustc is slow; skipped with -short")
	}
	out, fr := buildEmbeds(t)
	main := filepath.Join(out, "main.rs")
	require.NoError(t, os.WriteFile(main, []byte(`mod hsaco;
fn main() {
    let a = hsaco::vadd::for_arch("gfx90a:sramecc+:xnack-").map(|b| b.len()).unwrap_or(0);
    let b = hsaco::vadd::for_arch("gfx1030").map(|b| b.len()).unwrap_or(0);
    let c = hsaco::vadd::for_arch("gfx1100").is_none();
    println!("{} {} {}", a, b, c);
}
`), 0o644))
	exe := filepath.Join(out, "main")
	b, err := exec.Command(rustc, "--edition", "2021", "-o", exe, main).CombinedOutput()
	require.NoError(t, err, "%s", b)
	got, err := exec.Command(exe).Output()
	require.NoError(t, err)
	assert.Equal(t, itoa(len(fr.objects["gfx90a"]))+" "+itoa(len(fr.objects["gfx1030"]))+" true\n", string(got))
}

func itoa(n int) string { return fmtInt(n) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for n > 0 {
		d = append([]byte{byte('0' + n%10)}, d...)
		n /= 10
	}
	return string(d)
}

func TestLoadProject(t *testing.T) {
	p, err := LoadProject(testdata("project/rocmk.toml"))
	require.NoError(t, err)
	assert.Equal(t, []string{"gfx90a", "gfx1030"}, p.Targets)
	srcs, err := p.ExpandSources()
	require.NoError(t, err)
	require.Len(t, srcs, 2)
	assert.Equal(t, "axpy.hip", filepath.Base(srcs[0]))
	assert.Equal(t, "scale.hip", filepath.Base(srcs[1]))
	assert.Equal(t, []string{"-ffast-math", "-DBLOCK=256", "-DUSE_FMA"}, p.CompileFlags())
	assert.Equal(t, []string{filepath.Join(p.Dir, "include")}, p.IncludeDirs())
	assert.Equal(t, filepath.Join(p.Dir, "out"), p.OutDir())
	assert.True(t, p.Output.Bundle)
	assert.Equal(t, []string{"rust", "go", "c"}, p.Output.Embed)
	assert.Equal(t, "mykernels", p.Output.GoPackage)
	assert.Equal(t, filepath.Join(p.Dir, "out", "hipified"), p.HipifyDir())
}

// TestProjectKernelDir: a source glob that matches a directory builds the
// kernel sources under it (.cu and .hip, hidden directories left out); a
// directory with none is an error naming it.
func TestProjectKernelDir(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"kernels/a.cu": "", "kernels/sub/b.hip": "", "kernels/u.cuh": "", "kernels/host.cpp": "",
		"kernels/.cache/c.cu": "", "other/x.hip": "", "empty/readme.md": "",
		"rocmk.toml": "sources = [\"kernels\", \"other/*.hip\"]\n"})
	p, err := LoadProject(filepath.Join(dir, "rocmk.toml"))
	require.NoError(t, err)
	files, dirs, err := p.ExpandSourceDirs()
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "kernels", "a.cu"), filepath.Join(dir, "kernels", "sub", "b.hip"), filepath.Join(dir, "other", "x.hip")}, files)
	assert.Equal(t, []string{filepath.Join(dir, "kernels")}, dirs)
	_, err = KernelDir(filepath.Join(dir, "empty"))
	assert.ErrorContains(t, err, "empty: no kernel source")
}

func TestParseProjectErrors(t *testing.T) {
	_, err := ParseProject([]byte("sources = [\"a.hip\"]\n[output]\nembed = [\"java\"]\n"))
	assert.ErrorContains(t, err, `unknown kind "java"`)
	_, err = ParseProject([]byte("sources = \"a.hip\"\n"))
	assert.Error(t, err, "sources must be a list")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rocmk.toml"), []byte("sources = [\"src/*.hip\"]\ntargets = [\n"), 0o644))
	_, err = LoadProject(filepath.Join(dir, "rocmk.toml"))
	assert.ErrorContains(t, err, "rocmk.toml:")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rocmk.toml"), []byte("sources = [\"src/*.hip\"]\n"), 0o644))
	p, err := LoadProject(filepath.Join(dir, "rocmk.toml"))
	require.NoError(t, err)
	_, err = p.ExpandSources()
	assert.ErrorContains(t, err, `"src/*.hip" matches no file`)
}

func FuzzParseProject(f *testing.F) {
	b, _ := os.ReadFile(testdata("project/rocmk.toml"))
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseProject(b)
	})
}
