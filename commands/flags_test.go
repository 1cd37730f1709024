package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

func TestFlagsFirst(t *testing.T) {
	app := New(testEnv(nil))
	for _, c := range []struct{ in, want string }{
		{"build --arch gfx90a k.hip -o out", "build --arch gfx90a -o out -- k.hip"},
		{"build k.hip -X -ffast-math -n", "build -X -ffast-math -n -- k.hip"},
		{"-j 2 --cache-dir c build k.hip -a=gfx90a", "-j 2 --cache-dir c build -a=gfx90a -- k.hip"},
		{"hipify a.cu -roc -o=b.hip b.cu", "hipify -roc -o=b.hip -- a.cu b.cu"},
		{"hipify - -o out", "hipify -o out -- -"},
		{"inspect a.co -- --kernel b.co", "inspect -- a.co --kernel b.co"},
		{"inspect a.co --bogus b.co", "inspect --bogus -- a.co b.co"},
		{"cache --json ls --sort size", "cache --json ls --sort size"},
		{"cache prune x --all", "cache prune --all -- x"},
		{"nosuch a -v", "nosuch a -v"},
		{"help build -v", "help build -v"},
		{"inspect a.co --generate-bash-completion", "inspect a.co --generate-bash-completion"},
		{"inspect", "inspect"},
	} {
		got := flagsFirst(app, append([]string{"rocmk"}, strings.Fields(c.in)...))
		assert.Equal(t, "rocmk "+c.want, strings.Join(got, " "), c.in)
	}
}

// Every command takes its flags after its arguments too; what follows "--"
// stays an argument.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	cu := filepath.Join(dir, "k.cu")
	require.NoError(t, os.WriteFile(cu, []byte("__global__ void k(float *p) { p[threadIdx.x] = 1; }\nint main() { cudaDeviceSynchronize(); }\n"), 0o644))

	r := runRocmk(t, testEnv(nil), "hipify", cu, "-o", filepath.Join(dir, "k.hip"), "--quiet-warnings")
	require.Equal(t, 0, r.Code, r.Stderr)
	b, err := os.ReadFile(filepath.Join(dir, "k.hip"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "hipDeviceSynchronize")

	out := filepath.Join(dir, "out")
	r = runRocmk(t, fakeMachine(t, nil), "build", "--arch", "gfx90a", compileTestdata("vadd.hip"), "-o", out, "-n")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, filepath.Join(out, "vadd-gfx90a.hsaco"))

	r = runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": t.TempDir()}), "cache", "ls", "--sort", "size", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"schema": "rocmk.cache.ls/v1"`)
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": t.TempDir()}), "cache", "prune", "old", "--all")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "cache prune takes no arguments")

	r = runRocmk(t, testEnv(nil), "inspect", corpusPath("co/vadd.gfx90a.co"), "--kernel", "saxpy", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"name": "saxpy"`)
	assert.NotContains(t, r.Stdout, `"name": "vadd"`)

	r = runRocmk(t, testEnv(nil), "verify", "extra", "--list")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "verify takes no arguments")

	r = runRocmk(t, portFakeEnv(t, openPortFake), "port", filepath.Join(portData, "elementwise.cu"), "--spec", filepath.Join(portData, "elementwise.toml"), "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"schema": "rocmk.port/v1"`)

	r = runRocmk(t, fakeMachine(t, nil), "targets", "gfx90a", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var targets struct{ Targets []struct{ Name string } }
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &targets))
	require.Len(t, targets.Targets, 1)
	assert.Equal(t, "gfx90a", targets.Targets[0].Name)

	r = runRocmk(t, fakeMachine(t, nil), "doctor", "--arch", "gfx90a", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"schema": "rocmk.doctor/v1"`)

	r = runRocmk(t, testEnv(nil), "completion", "bash", "--quiet")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "complete")

	// A usage error after the arguments is still exit 2.
	r = runRocmk(t, testEnv(nil), "build", compileTestdata("vadd.hip"), "--bogus")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "flag provided but not defined: -bogus")
}

func TestDoubleDashEndsFlags(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(corpusPath("co/vadd.gfx90a.co"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "-k.co"), b, 0o644))
	t.Chdir(dir)
	r := runRocmk(t, testEnv(nil), "inspect", "--json", "--", "-k.co")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"file": "-k.co"`)
	r = runRocmk(t, testEnv(nil), "inspect", "-k.co")
	assert.Equal(t, ExitUsage, r.Code, "without --, -k.co reads as a flag")
}

// Numeric flags out of range are usage errors (exit 2), not accepted or exit 1.
func TestNumericFlagsValidated(t *testing.T) {
	verifyEnv := fakeVerifyEnv(t, verify.NewFakeRuntime())
	for _, c := range []struct {
		env  Env
		args []string
		msg  string
	}{
		{verifyEnv, []string{"verify", "--device", "-1", "--kernel", "unary_copy_f32"}, "--device -1: want 0 or more"},
		{verifyEnv, []string{"verify", "--timeout", "-1s", "--kernel", "unary_copy_f32"}, "--timeout -1s: want a duration above 0"},
		{verifyEnv, []string{"verify", "--timeout", "0", "--list"}, "--timeout 0s"},
		{verifyEnv, []string{"verify", "--size", "-5", "--list"}, "--size -5: want 1 or more"},
		{verifyEnv, []string{"verify", "--repeats", "-1", "--list"}, "--repeats -1"},
		{verifyEnv, []string{"verify", "--warmup", "-1", "--list"}, "--warmup -1"},
		{verifyEnv, []string{"verify", "--max-ulp", "-2", "--list"}, "--max-ulp -2"},
		{verifyEnv, []string{"verify", "--rtol", "-0.1", "--list"}, "--rtol -0.1"},
		{verifyEnv, []string{"verify", "--atol", "NaN", "--list"}, "--atol NaN"},
		{portEnv(t), []string{"port", filepath.Join(portData, "scalar.cu"), "--spec", filepath.Join(portData, "scalar.toml"), "--device", "-1"}, "--device -1"},
		{testEnv(nil), []string{"-j", "0", "inspect", corpusPath("co/vadd.gfx90a.co")}, "--jobs 0: want 1 or more"},
		{testEnv(nil), []string{"inspect", corpusPath("co/vadd.gfx90a.co"), "-j", "-3"}, "--jobs -3"},
		{testEnv(nil), []string{"inspect", "--block", "99999999999", corpusPath("co/vadd.gfx90a.co")}, "--block 99999999999: a workgroup has 1 to 1024 work-items"},
		{testEnv(nil), []string{"inspect", "--block", "2048", corpusPath("co/vadd.gfx90a.co")}, "--block 2048"},
		{testEnv(nil), []string{"inspect", "--lds", "9223372036854775807", corpusPath("co/vadd.gfx90a.co")}, "--lds 9223372036854775807: want 0 to 327680 bytes"},
		{testEnv(nil), []string{"inspect", "--max-decompress", "0", corpusPath("co/vadd.gfx90a.co")}, "--max-decompress: must be more than 0"},
		{testEnv(map[string]string{"ROCMK_MAX_DECOMPRESS": "lots"}), []string{"inspect", corpusPath("co/vadd.gfx90a.co")}, `ROCMK_MAX_DECOMPRESS: invalid size "lots"`},
		{testEnv(nil), []string{"inspect", "--max-extract-ratio", "0", corpusPath("co/vadd.gfx90a.co")}, "--max-extract-ratio 0"},
	} {
		r := runRocmk(t, c.env, c.args...)
		assert.Equal(t, ExitUsage, r.Code, "%v: %s", c.args, r.Stderr)
		assert.Contains(t, r.Stderr, c.msg, c.args)
	}
}

// The --go-package name is written into hsaco_embed.go as is: only a Go
// identifier passes, from the flag or from rocmk.toml.
func TestGoPackageMustBeIdentifier(t *testing.T) {
	for _, name := range []string{"x; func init() { panic(1) }", "func", "_", "9lives", ""} {
		r := runRocmk(t, fakeMachine(t, nil), "build", "-n", "--arch", "gfx90a", "--embed", "go", "--go-package", name, compileTestdata("vadd.hip"))
		assert.Equal(t, ExitUsage, r.Code, "%q: %s", name, r.Stderr)
		assert.Contains(t, r.Stderr, "want a Go package name", name)
	}
	dir := t.TempDir()
	toml := "sources = [\"vadd.hip\"]\ntargets = [\"gfx90a\"]\n[output]\nembed = [\"go\"]\ngo_package = \"p\\nimport _ \\\"os/exec\\\"\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rocmk.toml"), []byte(toml), 0o644))
	b, err := os.ReadFile(compileTestdata("vadd.hip"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vadd.hip"), b, 0o644))
	r := runRocmk(t, fakeMachine(t, nil), "build", "-n", "--project", filepath.Join(dir, "rocmk.toml"))
	assert.Equal(t, ExitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "rocmk.toml: output.go_package")
	r = runRocmk(t, fakeMachine(t, nil), "build", "-n", "--arch", "gfx90a", "--embed", "go", "--go-package", "kernels_v2", compileTestdata("vadd.hip"))
	assert.Equal(t, 0, r.Code, r.Stderr)
}

// Names from files and file systems reach the terminal escaped: tables,
// inspect's text and error messages.
func TestControlCharactersEscaped(t *testing.T) {
	dir := t.TempDir()
	evil := filepath.Join(dir, "evil\x1b]0;owned\x07.co")
	co, err := os.ReadFile(corpusPath("co/vadd.gfx90a.co"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(evil, co, 0o644))
	r := runRocmk(t, testEnv(nil), "inspect", evil, filepath.Join(dir, "missing\x1b[2J.co"))
	assert.Equal(t, 1, r.Code)
	assert.NotContains(t, r.Stdout+r.Stderr, "\x1b")
	assert.Contains(t, r.Stdout, `evil\x1b]0;owned\x07.co: code-object`)
	assert.Contains(t, r.Stderr, `missing\x1b[2J.co`)
}
