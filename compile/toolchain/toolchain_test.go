package toolchain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/inspect"
)

// fakeTree builds a file tree under a temporary root from "path" or
// "path=content" entries; paths under bin/ directories are executable.
func fakeTree(t *testing.T, entries ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, e := range entries {
		path, content, _ := strings.Cut(e, "=")
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.Contains(path, "/bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// bitcode returns device-lib entries for the given gfx names.
func bitcode(dir string, names ...string) []string {
	out := []string{dir + "/ocml.bc", dir + "/oclc_abi_version_500.bc"}
	for _, n := range names {
		out = append(out, dir+"/oclc_isa_version_"+strings.TrimPrefix(n, "gfx")+".bc")
	}
	return out
}

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// fakeClang answers `clang --version` with the version in the testdata
// (the first line of real clang output of that release).
func fakeClang(t *testing.T) func(argv ...string) ([]byte, error) {
	return func(argv ...string) ([]byte, error) {
		if len(argv) == 2 && argv[1] == "--version" {
			b, err := os.ReadFile(argv[0])
			if err != nil {
				return nil, err
			}
			return b, nil
		}
		return nil, errors.New("fake: not runnable")
	}
}

const (
	rocm6Clang = "opt/rocm-6.2.0/llvm/bin/clang++=AMD clang version 18.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-6.2.0 24292 26466ce804ac523b398608f17388eb6d605a3f09)\nTarget: x86_64-unknown-linux-gnu\n"
	rocm7Clang = "opt/rocm-7.0.1/lib/llvm/bin/clang++=AMD clang version 20.0.0git (https://github.com/ROCm/llvm-project.git roc-7.0.1 25314)\n"
	debClang15 = "usr/bin/clang++-15=Debian clang version 15.0.6\nTarget: x86_64-pc-linux-gnu\n"
)

func rocm6Tree() []string {
	e := []string{
		rocm6Clang,
		"opt/rocm-6.2.0/llvm/bin/clang-offload-bundler",
		"opt/rocm-6.2.0/bin/hipcc",
		"opt/rocm-6.2.0/.info/version=6.2.0-66\n",
		"opt/rocm-6.2.0/include/hip/hip_runtime.h",
		"opt/rocm-6.2.0/include/hip/hip_version.h=#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 2\n#define HIP_VERSION_PATCH 41133\n",
	}
	return append(e, bitcode("opt/rocm-6.2.0/amdgcn/bitcode", "gfx1100", "gfx90a", "gfx942", "gfx908", "gfx1030", "gfx11-generic")...)
}

func rocm7Tree() []string {
	e := []string{
		rocm7Clang,
		"opt/rocm-7.0.1/lib/llvm/bin/clang-offload-bundler",
		"opt/rocm-7.0.1/bin/hipcc",
		"opt/rocm-7.0.1/.info/version=7.0.1\n",
		"opt/rocm-7.0.1/include/hip/hip_runtime.h",
		"opt/rocm-7.0.1/include/hip/hip_version.h=#define HIP_VERSION_MAJOR 7\n#define HIP_VERSION_MINOR 0\n#define HIP_VERSION_PATCH 51831\n",
	}
	return append(e, bitcode("opt/rocm-7.0.1/lib/llvm/lib/clang/20/lib/amdgcn/bitcode", "gfx950", "gfx1201", "gfx942")...)
}

func debianTree() []string {
	e := []string{
		debClang15,
		"usr/bin/hipcc",
		"usr/lib/llvm-15/bin/clang-offload-bundler",
		"usr/include/hip/hip_runtime.h",
		"usr/include/hip/hip_version.h=#define HIP_VERSION_MAJOR 5\n#define HIP_VERSION_MINOR 2\n#define HIP_VERSION_PATCH 21153\n",
		"var/lib/dpkg/status=Package: hipcc\nStatus: install ok installed\nVersion: 5.2.3-8\n\nPackage: other\nStatus: install ok installed\nVersion: 1.0\n",
	}
	return append(e, bitcode("usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "gfx1030", "gfx900", "gfx90a")...)
}

func TestFindInstallationROCm6(t *testing.T) {
	root := fakeTree(t, rocm6Tree()...)
	in, err := FindInstallation(FindOptions{Root: root, Getenv: envOf(), Run: argvRunner(fakeClang(t))})
	if err != nil {
		t.Fatal(err)
	}
	want := &Installation{
		Root: "/opt/rocm-6.2.0", Layout: "rocm", LayoutDetail: "AMD ROCm 6 tree (llvm/bin/clang++)",
		DeviceLibFrom: "the older amdgcn/bitcode directory (ROCm 6.1 and before)",
		Clang:         "/opt/rocm-6.2.0/llvm/bin/clang++", ClangVersion: "18.0.0", ClangMajor: 18,
		HIPCC: "/opt/rocm-6.2.0/bin/hipcc", Bundler: "/opt/rocm-6.2.0/llvm/bin/clang-offload-bundler",
		LLVMBin: "/opt/rocm-6.2.0/llvm/bin", DeviceLibDir: "/opt/rocm-6.2.0/amdgcn/bitcode",
		DeviceLibTargets: []string{"gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx11-generic"},
		HIPInclude:       "/opt/rocm-6.2.0/include", HIPVersion: "6.2.41133",
		ROCmVersion: "6.2.0", ROCmVersionFrom: ".info/version", Source: "/opt/rocm-*",
	}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got  %+v\nwant %+v", in, want)
	}
	for tg, ok := range map[string]bool{"gfx90a": true, "gfx90a:xnack+": true, "gfx1100": true, "gfx1201": false, "gfx900": false, "gfx11-generic": false} {
		if got := in.CanCompile(inspect.MustParseTarget(tg)); got != ok {
			t.Errorf("CanCompile(%s) = %v, want %v (clang 18: no generic targets)", tg, got, ok)
		}
	}
}

func TestFindInstallationROCm7(t *testing.T) {
	root := fakeTree(t, rocm7Tree()...)
	in, err := FindInstallation(FindOptions{Root: root, Getenv: envOf("ROCMK_ROCM_VERSION", "7.0.2"), Run: argvRunner(fakeClang(t))})
	if err != nil {
		t.Fatal(err)
	}
	if in.Layout != "rocm" || in.Clang != "/opt/rocm-7.0.1/lib/llvm/bin/clang++" || in.ClangMajor != 20 ||
		in.DeviceLibDir != "/opt/rocm-7.0.1/lib/llvm/lib/clang/20/lib/amdgcn/bitcode" ||
		strings.Join(in.DeviceLibTargets, " ") != "gfx942 gfx950 gfx1201" ||
		in.Bundler != "/opt/rocm-7.0.1/lib/llvm/bin/clang-offload-bundler" || in.HIPVersion != "7.0.51831" {
		t.Errorf("got %+v", in)
	}
	assert.Equal(t, "AMD ROCm 7 tree (lib/llvm/bin/clang++)", in.LayoutDetail)
	assert.Equal(t, "AMD ROCm 6.2+/7: clang's resource directory", in.DeviceLibFrom)
	if in.ROCmVersion != "7.0.2" || in.ROCmVersionFrom != "ROCMK_ROCM_VERSION" {
		t.Errorf("override: %q from %q", in.ROCmVersion, in.ROCmVersionFrom)
	}
	in, _ = FindInstallation(FindOptions{Root: root, Getenv: envOf("CANDLE_ROCM_VERSION", "7.1"), Run: argvRunner(fakeClang(t))})
	if in.ROCmVersion != "7.1" || in.ROCmVersionFrom != "CANDLE_ROCM_VERSION" {
		t.Errorf("CANDLE alias: %q from %q", in.ROCmVersion, in.ROCmVersionFrom)
	}
}

// TestFindInstallationLayouts finds each current layout from its directory
// shape alone, and says which layout and which device-library place it is.
func TestFindInstallationLayouts(t *testing.T) {
	hipVersion := func(dir string, major, minor, patch int) string {
		return fmt.Sprintf("%s/include/hip/hip_version.h=#define HIP_VERSION_MAJOR %d\n#define HIP_VERSION_MINOR %d\n#define HIP_VERSION_PATCH %d\n", dir, major, minor, patch)
	}
	for _, c := range []struct {
		name   string
		tree   []string
		env    []string
		root   string
		clang  string
		layout string
		libs   string
		from   string
	}{
		{
			name: "Debian unstable's ROCm: clang's resource directory",
			tree: append([]string{"usr/bin/clang++-21=Debian clang version 21.1.8 (14)\n", "usr/bin/hipcc", "usr/include/hip/hip_runtime.h", hipVersion("usr", 6, 4, 43484)},
				bitcode("usr/lib/llvm-21/lib/clang/21/amdgcn/bitcode", "gfx950", "gfx1100", "gfx12-generic")...),
			root: "/usr", clang: "/usr/bin/clang++-21", layout: "Debian/Ubuntu packages (bin/clang++-21, lib/llvm-21)",
			libs: "/usr/lib/llvm-21/lib/clang/21/amdgcn/bitcode",
			from: "clang's resource directory, as Debian/Ubuntu's ROCm 6+ installs them",
		},
		{
			name: "AMD ROCm 7 in /opt/rocm: lib/llvm/bin/amdclang++",
			tree: append([]string{"opt/rocm/lib/llvm/bin/amdclang++=AMD clang version 20.0.0git (roc-7.1.0)\n", "opt/rocm/bin/hipcc",
				"opt/rocm/include/hip/hip_runtime.h", hipVersion("opt/rocm", 7, 1, 25424)},
				bitcode("opt/rocm/lib/llvm/lib/clang/20/lib/amdgcn/bitcode", "gfx942", "gfx950", "gfx1201")...),
			root: "/opt/rocm", clang: "/opt/rocm/lib/llvm/bin/amdclang++", layout: "AMD ROCm 7 tree (lib/llvm/bin/amdclang++)",
			libs: "/opt/rocm/lib/llvm/lib/clang/20/lib/amdgcn/bitcode",
			from: "AMD ROCm 6.2+/7: clang's resource directory",
		},
		{
			name: "HIP_PATH names a ROCm 6 tree with the older amdgcn/bitcode",
			tree: append([]string{"srv/rocm-6.1.3/llvm/bin/clang++=AMD clang version 17.0.0 (roc-6.1.3)\n",
				"srv/rocm-6.1.3/include/hip/hip_runtime.h", hipVersion("srv/rocm-6.1.3", 6, 1, 40093)},
				bitcode("srv/rocm-6.1.3/amdgcn/bitcode", "gfx90a", "gfx942")...),
			env:  []string{"HIP_PATH", "/srv/rocm-6.1.3"},
			root: "/srv/rocm-6.1.3", clang: "/srv/rocm-6.1.3/llvm/bin/clang++", layout: "AMD ROCm 6 tree (llvm/bin/clang++)",
			libs: "/srv/rocm-6.1.3/amdgcn/bitcode", from: "the older amdgcn/bitcode directory (ROCm 6.1 and before)",
		},
		{
			name: "ROCM_PATH and HIP_DEVICE_LIB_PATH",
			tree: append([]string{"srv/rocm/llvm/bin/clang++=AMD clang version 18.0.0git (roc-6.2.0)\n", "srv/rocm/include/hip/hip_runtime.h",
				hipVersion("srv/rocm", 6, 2, 41133)}, bitcode("srv/bitcode", "gfx90a")...),
			env:  []string{"ROCM_PATH", "/srv/rocm", "HIP_DEVICE_LIB_PATH", "/srv/bitcode"},
			root: "/srv/rocm", clang: "/srv/rocm/llvm/bin/clang++", layout: "AMD ROCm 6 tree (llvm/bin/clang++)",
			libs: "/srv/bitcode", from: "HIP_DEVICE_LIB_PATH",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := fakeTree(t, c.tree...)
			in, err := FindInstallation(FindOptions{Root: root, Getenv: envOf(c.env...), Run: argvRunner(fakeClang(t))})
			require.NoError(t, err)
			assert.Equal(t, c.root, in.Root)
			assert.Equal(t, c.clang, in.Clang)
			assert.Equal(t, c.layout, in.LayoutDetail)
			assert.Equal(t, c.libs, in.DeviceLibDir)
			assert.Equal(t, c.from, in.DeviceLibFrom)
		})
	}
}

func TestFindInstallationOrder(t *testing.T) {
	all := append(append(rocm6Tree(), rocm7Tree()...), debianTree()...)
	root := fakeTree(t, all...)
	find := func(o FindOptions) *Installation {
		t.Helper()
		o.Root, o.Run = root, argvRunner(fakeClang(t))
		if o.Getenv == nil {
			o.Getenv = envOf()
		}
		in, err := FindInstallation(o)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	// Newest /opt/rocm-* first.
	if in := find(FindOptions{}); in.Root != "/opt/rocm-7.0.1" || in.Source != "/opt/rocm-*" {
		t.Errorf("default: %s (%s)", in.Root, in.Source)
	}
	// ROCM_PATH beats /opt/rocm-*; it may name the Debian /usr layout.
	if in := find(FindOptions{Getenv: envOf("ROCM_PATH", "/usr")}); in.Root != "/usr" || in.Layout != "debian" || in.Source != "ROCM_PATH" {
		t.Errorf("ROCM_PATH: %s %s (%s)", in.Root, in.Layout, in.Source)
	}
	if in := find(FindOptions{Getenv: envOf("HIP_PATH", "/opt/rocm-6.2.0")}); in.Root != "/opt/rocm-6.2.0" || in.Source != "HIP_PATH" {
		t.Errorf("HIP_PATH: %s (%s)", in.Root, in.Source)
	}
	// --rocm-path beats ROCM_PATH.
	if in := find(FindOptions{ROCmPath: "/opt/rocm-6.2.0", Getenv: envOf("ROCM_PATH", "/usr")}); in.Root != "/opt/rocm-6.2.0" || in.Source != "--rocm-path" {
		t.Errorf("--rocm-path: %s (%s)", in.Root, in.Source)
	}
	// HIP_DEVICE_LIB_PATH overrides the bitcode directory.
	if in := find(FindOptions{Getenv: envOf("HIP_DEVICE_LIB_PATH", "/opt/rocm-6.2.0/amdgcn/bitcode")}); in.DeviceLibDir != "/opt/rocm-6.2.0/amdgcn/bitcode" {
		t.Errorf("HIP_DEVICE_LIB_PATH: %s", in.DeviceLibDir)
	}
	// /opt/rocm beats /opt/rocm-*.
	if err := os.Symlink(filepath.Join(root, "opt/rocm-6.2.0"), filepath.Join(root, "opt/rocm")); err != nil {
		t.Fatal(err)
	}
	if in := find(FindOptions{}); in.Root != "/opt/rocm" || in.Source != "/opt/rocm" || in.ROCmVersion != "6.2.0" {
		t.Errorf("/opt/rocm: %s (%s) %s", in.Root, in.Source, in.ROCmVersion)
	}
}

// On Debian the installation's clang is the one hipcc is built for (its
// package's Depends, else the clang++-N its script calls): a newer clang
// installed for another reason does not take its place. Without either,
// the newest.
func TestFindInstallationDebianPrefersHIPCCsClang(t *testing.T) {
	clang19 := "usr/bin/clang++-19=Debian clang version 19.1.7 (3+b1)\n"
	status := "var/lib/dpkg/status=Package: hipcc\nStatus: install ok installed\nVersion: 5.2.3-8\nDepends: clang-15, llvm-15, lld-15, rocm-device-libs\n\n"
	for _, c := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"dpkg Depends", []string{status}, "/usr/bin/clang++-15"},
		{"hipcc.pl", []string{"usr/bin/hipcc.pl=    $HIPCC=\"$HIP_CLANG_PATH/clang++-15\" . $execExtension;\n"}, "/usr/bin/clang++-15"},
		{"unknown", nil, "/usr/bin/clang++-19"},
	} {
		root := fakeTree(t, append(append(debianTree(), clang19), c.extra...)...)
		in, err := FindInstallation(FindOptions{Root: root, Getenv: envOf(), Run: argvRunner(fakeClang(t))})
		if err != nil {
			t.Fatal(err)
		}
		if in.Clang != c.want {
			t.Errorf("%s: clang %s, want %s", c.name, in.Clang, c.want)
		}
	}
}

func TestFindInstallationDebianFake(t *testing.T) {
	root := fakeTree(t, append(debianTree(), "usr/bin/clang++-14=Debian clang version 14.0.6\n")...)
	in, err := FindInstallation(FindOptions{Root: root, Getenv: envOf(), Run: argvRunner(fakeClang(t))})
	if err != nil {
		t.Fatal(err)
	}
	want := &Installation{
		Root: "/usr", Layout: "debian", LayoutDetail: "Debian/Ubuntu packages (bin/clang++-15, lib/llvm-15)",
		DeviceLibFrom: "Debian 12's rocm-device-libs",
		Clang:         "/usr/bin/clang++-15", ClangVersion: "15.0.6", ClangMajor: 15,
		HIPCC: "/usr/bin/hipcc", Bundler: "/usr/lib/llvm-15/bin/clang-offload-bundler", LLVMBin: "/usr/lib/llvm-15/bin",
		DeviceLibDir: "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", DeviceLibTargets: []string{"gfx900", "gfx90a", "gfx1030"},
		HIPInclude: "/usr/include", HIPVersion: "5.2.21153", ROCmVersion: "5.2.3", ROCmVersionFrom: "dpkg hipcc",
		Source: "debian /usr",
	}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got  %+v\nwant %+v", in, want)
	}
}

func TestFindInstallationErrors(t *testing.T) {
	empty := fakeTree(t, "usr/bin/ls")
	_, err := FindInstallation(FindOptions{Root: empty, Getenv: envOf()})
	if !errors.Is(err, ErrToolchainNotFound) {
		t.Fatalf("err = %v, want ErrToolchainNotFound", err)
	}
	for _, s := range []string{"apt-get install hipcc", "ROCM_PATH", "/opt/rocm", "debian /usr"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not mention %q:\n%v", s, err)
		}
	}
	// An explicit ROCM_PATH that holds nothing is an error naming it, not skipped.
	root := fakeTree(t, debianTree()...)
	_, err = FindInstallation(FindOptions{Root: root, Getenv: envOf("ROCM_PATH", "/opt/nothing"), Run: argvRunner(fakeClang(t))})
	if !errors.Is(err, ErrToolchainNotFound) || !strings.Contains(err.Error(), "ROCM_PATH=/opt/nothing") {
		t.Errorf("bad ROCM_PATH: %v", err)
	}
	// clang without device libraries says which package is missing.
	root = fakeTree(t, debClang15)
	_, err = FindInstallation(FindOptions{Root: root, Getenv: envOf(), Run: argvRunner(fakeClang(t))})
	if !errors.Is(err, ErrToolchainNotFound) || !strings.Contains(err.Error(), "rocm-device-libs") {
		t.Errorf("no device libs: %v", err)
	}
	// hipcc on PATH is the last resort.
	root = fakeTree(t, strings.Replace(rocm6Tree()[0], "opt/rocm-6.2.0", "srv/rocm", 1), "srv/rocm/bin/hipcc", "srv/rocm/amdgcn/bitcode/oclc_isa_version_90a.bc")
	in, err := FindInstallation(FindOptions{Root: root, Getenv: envOf(), Run: argvRunner(fakeClang(t)),
		LookPath: func(n string) (string, error) { return "/srv/rocm/bin/" + n, nil }})
	if err != nil || in.Source != "hipcc on PATH" || in.Root != "/srv/rocm" {
		t.Errorf("hipcc on PATH: %+v %v", in, err)
	}
	if len(in.Warnings) == 0 || !strings.Contains(strings.Join(in.Warnings, "\n"), "libamdhip64-dev") {
		t.Errorf("missing headers not warned: %v", in.Warnings)
	}
}

// TestFindInstallationThisMachine runs discovery on the real Debian ROCm
// install (hipcc, clang-15, rocm-device-libs 5.2.3).
func TestFindInstallationThisMachine(t *testing.T) {
	thisMachine(t)
	if _, err := os.Stat("/usr/bin/clang++-15"); err != nil {
		t.Skip("Debian's clang++-15 is not installed (scripts/install-sh installs it)")
	}
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"); err != nil {
		t.Skip("Debian's rocm-device-libs are not installed (scripts/install-sh installs them)")
	}
	in, err := FindInstallation(FindOptions{Getenv: envOf()})
	if err != nil {
		t.Fatal(err)
	}
	// hipcc's clang, whatever newer clang is installed beside it.
	if in.Layout != "debian" || in.Source != "debian /usr" || in.ClangMajor != 15 || in.Clang != "/usr/bin/clang++-15" {
		t.Errorf("got %+v", in)
	}
	if in.DeviceLibDir != "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode" {
		t.Errorf("device libs %s", in.DeviceLibDir)
	}
	{
		want := "gfx600 gfx601 gfx602 gfx700 gfx701 gfx702 gfx703 gfx704 gfx705 gfx801 gfx802 gfx803 gfx805 gfx810 " +
			"gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx940 " +
			"gfx1010 gfx1011 gfx1012 gfx1013 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036"
		if got := strings.Join(in.DeviceLibTargets, " "); got != want {
			t.Errorf("device-lib targets:\n got %s\nwant %s", got, want)
		}
		if in.ClangVersion != "15.0.6" || in.Bundler != "/usr/lib/llvm-15/bin/clang-offload-bundler" {
			t.Errorf("clang %s bundler %s", in.ClangVersion, in.Bundler)
		}
		if !in.CanCompile(inspect.MustParseTarget("gfx90a:xnack+")) || in.CanCompile(inspect.MustParseTarget("gfx1100")) {
			t.Error("CanCompile disagrees with the device libs (gfx90a yes, gfx1100 no)")
		}
	}
	if in.HIPVersion == "" || in.ROCmVersion == "" {
		t.Errorf("versions: HIP %q ROCm %q", in.HIPVersion, in.ROCmVersion)
	}
}

// BenchmarkFindInstallation measures discovery on the real machine
// (Debian: globbing /usr/bin, reading the device-lib dir and dpkg status,
// running clang++ --version once per call).
func BenchmarkFindInstallation(b *testing.B) {
	if _, err := FindInstallation(FindOptions{Getenv: envOf()}); err != nil {
		b.Skip("no toolchain on this machine:", err)
	}
	for b.Loop() {
		if _, err := FindInstallation(FindOptions{Getenv: envOf()}); err != nil {
			b.Fatal(err)
		}
	}
}
