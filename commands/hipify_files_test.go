//go:build unix

package commands

import (
	"fmt"
	"github.com/rocmk/rocmk/compile"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 11 items 4 and 5: hipify never loses a file, never writes two
// inputs to one output, and writes special files without replacing them.

// readTree returns every file under dir with its content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[rel] = string(b)
		return err
	}))
	return m
}

func TestHipifyRefusesOutputsThatCollide(t *testing.T) {
	const cuh = "#pragma once\n__device__ float f(float x) { return __expf(x); }\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		args  []string // relative to the test's directory
		want  []string // in the error message
	}{
		{"rename onto a sibling input", map[string]string{"src/k.cu": cudaSrc, "src/k.cuh": cuh},
			[]string{"src", "-o", "src", "--rename", ".cuh=.cu"}, []string{"src/k.cuh", "src/k.cu", "also an input"}},
		{"two files, one name", map[string]string{"a/k.cu": cudaSrc, "b/k.cu": cudaSrc + "\n"},
			[]string{"a/k.cu", "b/k.cu", "-o", "out"}, []string{"a/k.cu", "b/k.cu", "out/k.cu"}},
		{"two trees, one name", map[string]string{"a/k.cu": cudaSrc, "b/k.cu": cudaSrc + "\n"},
			[]string{"a", "b", "-o", "out"}, []string{"a/k.cu", "b/k.cu", "out/k.cu"}},
		{"a tree onto itself", map[string]string{"t/k.cu": cudaSrc},
			[]string{"t", "-o", "t"}, []string{"t/k.cu", "also an input", "--in-place"}},
		{"a file onto itself", map[string]string{"k.cu": cudaSrc},
			[]string{"k.cu", "-o", "k.cu"}, []string{"k.cu", "also an input"}},
		{"one file twice in place", map[string]string{"src/k.cu": cudaSrc},
			[]string{"--in-place", "src", "src/k.cu"}, []string{"src/k.cu", "both"}},
		{"a backup onto an input", map[string]string{"src/k.cu": cudaSrc, "src/k.cuh": cuh},
			[]string{"--in-place", "--backup", "h", "src"}, []string{"src/k.cuh", "also an input"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, data := range c.files {
				writeFile(t, dir, n, data, 0o644)
			}
			t.Chdir(dir)
			before := readTree(t, dir)
			r := runHipifyCmd(t, append([]string{"-q"}, c.args...)...)
			assert.Equal(t, ExitUsage, r.code, r.stderr)
			for _, w := range c.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.Equal(t, before, readTree(t, dir), "nothing written")
		})
	}
}

func TestHipifyRefusesLinksToAnInput(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o644)
	hard := filepath.Join(dir, "hard.cu")
	require.NoError(t, os.Link(in, hard))
	soft := filepath.Join(dir, "soft.cu")
	require.NoError(t, os.Symlink("k.cu", soft))
	linkDir := filepath.Join(dir, "alias")
	require.NoError(t, os.Symlink(".", linkDir))
	for _, out := range []string{hard, soft, filepath.Join(linkDir, "k.cu")} {
		r := runHipifyCmd(t, "-q", in, "-o", out)
		assert.Equal(t, ExitUsage, r.code, out)
		assert.Contains(t, r.stderr, "also an input", out)
		b, _ := os.ReadFile(in)
		assert.Equal(t, cudaSrc, string(b), out)
	}
}

func TestHipifyOneRuleForReadOnlyOutputs(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "t/k.cu", cudaSrc, 0o644)
	ro := writeFile(t, dir, "out/k.cu", "keep me\n", 0o444)
	r := runHipifyCmd(t, "-q", filepath.Join(dir, "t"), "-o", filepath.Join(dir, "out"))
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, ro+": file is read-only; not modified")
	b, _ := os.ReadFile(ro)
	assert.Equal(t, "keep me\n", string(b))

	r = runHipifyCmd(t, "-q", src, "-o", ro)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, ro+": file is read-only; not modified")
	b, _ = os.ReadFile(ro)
	assert.Equal(t, "keep me\n", string(b))
}

func TestHipifyInPlaceKeepsSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := writeFile(t, dir, "real/k.cu", cudaSrc, 0o644)
	link := filepath.Join(dir, "k.cu")
	require.NoError(t, os.Symlink("real/k.cu", link))
	r := runHipifyCmd(t, "-q", "--in-place", "--backup", ".orig", link)
	require.Equal(t, 0, r.code, r.stderr)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&fs.ModeSymlink != 0, "the link is kept")
	b, _ := os.ReadFile(real)
	assert.Contains(t, string(b), "hipMalloc(&d, 4);", "its target is translated")
	b, _ = os.ReadFile(link + ".orig")
	assert.Equal(t, cudaSrc, string(b))
}

func TestHipifyWritesSpecialOutputsDirectly(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o644)

	fifo := filepath.Join(dir, "out.fifo")
	mkfifo(t, fifo)
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer reader.Close()
	r := runHipifyCmd(t, "-q", in, "-o", fifo)
	require.Equal(t, 0, r.code, r.stderr)
	b, _ := io.ReadAll(reader)
	assert.Contains(t, string(b), "hipMalloc(&d, 4);")
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&fs.ModeNamedPipe != 0, "the pipe is not replaced by a file")

	// -o >(cmd): bash passes /dev/fd/N
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	r = runHipifyCmd(t, "-q", in, "-o", fmt.Sprintf("/dev/fd/%d", pw.Fd()))
	pw.Close()
	require.Equal(t, 0, r.code, r.stderr)
	b, _ = io.ReadAll(pr)
	assert.Contains(t, string(b), "hipMalloc(&d, 4);")

	// a character device (as /dev/null), made here: as root the old code replaced it
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("mknod: %v (not root): character device case skipped", err)
	} else {
		r = runHipifyCmd(t, "-q", in, "-o", null)
		require.Equal(t, 0, r.code, r.stderr)
		fi, err = os.Lstat(null)
		require.NoError(t, err)
		assert.True(t, fi.Mode()&fs.ModeCharDevice != 0, "the device is not replaced by a file")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "temporary file %s left", e.Name())
	}
}

// Issue 11 item 6: inputs that never end.

func TestHipifyRefusesNamedPipeInput(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f.cu")
	mkfifo(t, fifo)
	inTime(t, 10*time.Second, func() {
		r := runHipifyCmd(t, fifo)
		assert.Equal(t, ExitFailure, r.code)
		assert.Contains(t, r.stderr, fifo+": not a regular file (a named pipe)")
	})
}

func TestHipifyInputLimits(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o644)
	env := testEnv(map[string]string{"ROCMK_MAX_INPUT": "100B", "ROCM_PATH": filepath.Join(dir, "none")})
	r := runRocmk(t, env, "hipify", in)
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stderr, fmt.Sprintf("%s: %d bytes, over the limit of 100", in, len(cudaSrc)))
	assert.Contains(t, r.Stderr, "ROCMK_MAX_INPUT")

	env.Stdin = strings.NewReader(strings.Repeat("int x;\n", 100))
	r = runRocmk(t, env, "hipify", "-")
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stderr, "<stdin>: more than 100 bytes")

	env = testEnv(map[string]string{"ROCMK_MAX_INPUT": "lots"})
	r = runRocmk(t, env, "hipify", in)
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "ROCMK_MAX_INPUT")
}

// TestFaultProcessSubstitutionOutput: bash's -o >(cmd) and -o /dev/fd/1
// with the built rocmk (the old code failed creating a temporary file
// under /dev/fd).
func TestFaultProcessSubstitutionOutput(t *testing.T) {
	skipShort(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := rocmkBinary(t)
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o644)
	out := filepath.Join(dir, "k.hip")
	script := `"$0" hipify -q "$1" -o >(cat > "$2") && wait && "$0" hipify -q "$1" -o /dev/fd/1 | cat > "$2.stdout"`
	msg, err := exec.Command(bash, "-c", script, bin, in, out).CombinedOutput()
	require.NoError(t, err, "%s", msg)
	// the substituted process may finish after bash's wait returns
	var b []byte
	for range 100 {
		if b, _ = os.ReadFile(out); len(b) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Contains(t, string(b), "hipMalloc(&d, 4);")
	b, _ = os.ReadFile(out + ".stdout")
	assert.Contains(t, string(b), "hipMalloc(&d, 4);")
}

// Issue 19 item 2: --in-place keeps the file's owner and group, and
// refuses a file with several hard links instead of breaking them.

func TestHipifyInPlaceRefusesHardLinks(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o644)
	link := filepath.Join(dir, "link.cu")
	require.NoError(t, os.Link(in, link))
	other := writeFile(t, dir, "other.cu", cudaSrc, 0o644)
	r := runHipifyCmd(t, "-q", "--in-place", "--backup", ".orig", in, other)
	assert.Equal(t, ExitFailure, r.code)
	assert.Equal(t, 1, strings.Count(r.stderr, in+": file has 2 hard links, which rewriting it in place would break"), r.stderr)
	for _, p := range []string{in, link} {
		b, _ := os.ReadFile(p)
		assert.Equal(t, cudaSrc, string(b), "%s: not modified", p)
	}
	a, _ := os.Stat(in)
	b, _ := os.Stat(link)
	assert.True(t, os.SameFile(a, b), "still one file")
	assert.NoFileExists(t, in+".orig", "refused before the backup")
	got, _ := os.ReadFile(other)
	assert.Contains(t, string(got), "hipMalloc(&d, 4);", "the other input is translated")
}

func TestHipifyInPlaceKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the file another owner")
	}
	dir := t.TempDir()
	in := writeFile(t, dir, "k.cu", cudaSrc, 0o640)
	const uid, gid = 4321, 8765
	require.NoError(t, os.Chown(in, uid, gid))
	r := runHipifyCmd(t, "-q", "--in-place", "--backup", ".orig", in)
	require.Equal(t, 0, r.code, r.stderr)
	for _, p := range []string{in, in + ".orig"} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		st := fi.Sys().(*syscall.Stat_t)
		assert.Equal(t, []int{uid, gid}, []int{int(st.Uid), int(st.Gid)}, "%s: owner and group kept", p)
		assert.Equal(t, fs.FileMode(0o640), fi.Mode().Perm(), p)
	}
	got, _ := os.ReadFile(in)
	assert.Contains(t, string(got), "hipMalloc(&d, 4);")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 2, "no temporary file left")
}

// TestDirectoryWalksShareOneLinkRule (issue 19): a dangling .cu link was
// skipped silently by `hipify dir/` but failed `build dir/`. Now every
// walk follows a link to a file and refuses one that leads nowhere, with
// the same message.
func TestDirectoryWalksShareOneLinkRule(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "sub", "k.cu"), []byte("__global__ void k(float* p) { p[0] = 1.0f; }\n"), 0o644))
	require.NoError(t, os.Symlink("sub/k.cu", filepath.Join(src, "linked.cu")))

	r := runRocmk(t, testEnv(nil), "hipify", src, "-o", filepath.Join(dir, "out"))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.FileExists(t, filepath.Join(dir, "out", "linked.cu"), "a link to a source is a source")
	units, err := compile.KernelDir(src)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(src, "linked.cu"), filepath.Join(src, "sub", "k.cu")}, units)

	require.NoError(t, os.Symlink("nowhere.cu", filepath.Join(src, "dangling.cu")))
	want := filepath.Join(src, "dangling.cu") + ": a symbolic link to nowhere.cu, which does not exist"
	r = runRocmk(t, testEnv(nil), "hipify", src, "-o", filepath.Join(dir, "out2"))
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stderr, want)
	assert.NoDirExists(t, filepath.Join(dir, "out2"), "refused before anything is written")
	_, err = compile.KernelDir(src)
	assert.EqualError(t, err, want)
}
