package safefile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// within fails the test if f does not return in time (a read or write
// that blocks on a named pipe would hang the test binary otherwise).
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still blocked after %v", d)
	}
}

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "f.cu"))
	link := filepath.Join(dir, "zero.cu")
	require.NoError(t, os.Symlink("/dev/zero", link))
	for _, c := range []struct{ name, kind string }{
		{fifo, "a named pipe"}, {"/dev/zero", "a character device"}, {link, "a character device"}, {dir, "a directory"},
	} {
		within(t, 5*time.Second, func() {
			_, err := Read(c.name, 1<<20)
			require.ErrorIs(t, err, ErrNotRegular, c.name)
			assert.Equal(t, c.name+": not a regular file ("+c.kind+")", err.Error())
		})
	}
}

func TestReadLimits(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "k.cu")
	require.NoError(t, os.WriteFile(p, []byte("0123456789"), 0o644))
	b, err := Read(p, 10)
	require.NoError(t, err)
	assert.Equal(t, "0123456789", string(b))
	_, err = Read(p, 9)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Equal(t, p+": 10 bytes, over the limit of 9", err.Error())

	b, err = ReadAll("<stdin>", strings.NewReader("abc"), 3)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b))
	_, err = ReadAll("<stdin>", io.LimitReader(zeros{}, 1<<30), 1000)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Equal(t, "<stdin>: more than 1000 bytes, the limit", err.Error())
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

func TestWriteNewAndReplaced(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "dir", "k.hip")
	require.NoError(t, Write(p, []byte("one"), Options{Perm: 0o640}))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), fi.Mode().Perm())

	require.NoError(t, os.Chmod(p, 0o600))
	require.NoError(t, Write(p, []byte("two"), Options{Perm: 0o644, Sync: true}))
	b, _ := os.ReadFile(p)
	assert.Equal(t, "two", string(b))
	fi, _ = os.Stat(p)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "a replaced file keeps its permissions")
	left, _ := filepath.Glob(filepath.Join(dir, "sub", "dir", ".*"))
	assert.Empty(t, left, "no temporary file left")
}

func TestWriteSkipIfSameKeepsMtime(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.json")
	require.NoError(t, os.WriteFile(p, []byte("same"), 0o644))
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(p, old, old))
	require.NoError(t, Write(p, []byte("same"), Options{SkipIfSame: true}))
	fi, _ := os.Stat(p)
	assert.Equal(t, old, fi.ModTime())
	require.NoError(t, Write(p, []byte("diff"), Options{SkipIfSame: true}))
	b, _ := os.ReadFile(p)
	assert.Equal(t, "diff", string(b))
}

func TestWriteRefusesReadOnly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ro.cu")
	require.NoError(t, os.WriteFile(p, []byte("keep"), 0o444))
	err := Write(p, []byte("lost"), Options{})
	require.ErrorIs(t, err, ErrReadOnly)
	assert.Equal(t, p+": file is read-only; not modified", err.Error())
	assert.ErrorIs(t, CheckWritable(p), ErrReadOnly)
	b, _ := os.ReadFile(p)
	assert.Equal(t, "keep", string(b), "refused even as root")
}

func TestWriteFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real", "k.cu")
	require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	link := filepath.Join(dir, "k.cu")
	require.NoError(t, os.Symlink("real/k.cu", link))
	require.NoError(t, Write(link, []byte("new"), Options{}))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&fs.ModeSymlink != 0, "the link is kept")
	b, _ := os.ReadFile(target)
	assert.Equal(t, "new", string(b), "its target is written")

	dangling := filepath.Join(dir, "gen.hip")
	require.NoError(t, os.Symlink("out/gen.hip", dangling))
	require.NoError(t, Write(dangling, []byte("gen"), Options{}))
	b, _ = os.ReadFile(filepath.Join(dir, "out", "gen.hip"))
	assert.Equal(t, "gen", string(b), "a link to a file not yet written creates its target")
}

func TestWriteSpecialFilesDirectly(t *testing.T) {
	dir := t.TempDir()
	// a named pipe with a reader gets the data and stays a pipe
	fifo := mkfifo(t, filepath.Join(dir, "out.fifo"))
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer reader.Close()
	require.NoError(t, Write(fifo, []byte("through the pipe"), Options{}))
	b, err := io.ReadAll(reader)
	require.NoError(t, err)
	assert.Equal(t, "through the pipe", string(b))
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&fs.ModeNamedPipe != 0, "still a named pipe")

	// one with no reader is an error at once, not a wait
	lonely := mkfifo(t, filepath.Join(dir, "lonely.fifo"))
	within(t, 5*time.Second, func() {
		err := Write(lonely, []byte("x"), Options{})
		assert.EqualError(t, err, lonely+": named pipe has no reader")
	})

	// a character device is written, not replaced
	require.NoError(t, Write("/dev/null", []byte("discarded"), Options{}))
	fi, err = os.Stat("/dev/null")
	require.NoError(t, err)
	assert.True(t, fi.Mode()&fs.ModeCharDevice != 0)

	// /dev/fd/N, as bash's -o >(cmd) passes it
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	name := fmt.Sprintf("/dev/fd/%d", w.Fd())
	require.NoError(t, Write(name, []byte("via fd"), Options{}))
	w.Close()
	b, _ = io.ReadAll(r)
	assert.Equal(t, "via fd", string(b))
	left, _ := os.ReadDir(dir)
	assert.Len(t, left, 2, "nothing but the two pipes")
}

func TestWriteRefusesDirectory(t *testing.T) {
	err := Write(t.TempDir(), []byte("x"), Options{})
	assert.ErrorIs(t, err, syscall.EISDIR)
}

func TestRemoveTempsRemovesWritesInProgress(t *testing.T) {
	dir := t.TempDir()
	var s tempSet
	f, err := s.create(dir, ".k.hip.rocmk-")
	require.NoError(t, err)
	defer f.Close()
	assert.True(t, strings.HasPrefix(filepath.Base(f.Name()), ".k.hip.rocmk-"), f.Name())
	s.removeAll()
	_, err = os.Stat(f.Name())
	assert.ErrorIs(t, err, fs.ErrNotExist, "the temporary file is gone")
	_, err = s.create(dir, ".k2.hip.rocmk-")
	assert.ErrorIs(t, err, ErrInterrupted, "no write starts after the cleanup")
	left, _ := os.ReadDir(dir)
	assert.Empty(t, left)
}

func TestIDOfSeesHardLinks(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.cu")
	require.NoError(t, os.WriteFile(a, nil, 0o644))
	require.NoError(t, os.Link(a, filepath.Join(dir, "b.cu")))
	fa, _ := os.Stat(a)
	fb, _ := os.Stat(filepath.Join(dir, "b.cu"))
	ia, ok := IDOf(fa)
	require.True(t, ok)
	ib, _ := IDOf(fb)
	assert.Equal(t, ia, ib)
}

func TestWriteOwnedReplacesWhateverIsThere(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	link := filepath.Join(dir, "ab", "entry-a")
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
	require.NoError(t, os.Symlink(victim, link))
	mtime := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	o := Options{Owned: true, TempPrefix: ".tmp-", MTime: mtime}
	require.NoError(t, Write(link, []byte("entry"), o))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the link itself is replaced")
	assert.Equal(t, mtime, fi.ModTime().UTC())
	b, _ := os.ReadFile(victim)
	assert.Equal(t, "keep", string(b), "its target is not written")

	ro := filepath.Join(dir, "ab", "ro-d")
	require.NoError(t, os.WriteFile(ro, []byte("old"), 0o444))
	require.NoError(t, Write(ro, []byte("new"), o), "a read-only file rocmk owns is replaced")
	b, _ = os.ReadFile(ro)
	assert.Equal(t, "new", string(b))
}

func TestWriteFromFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "data-d")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	err := WriteFrom(p, Options{Owned: true, TempPrefix: ".tmp-"}, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return fmt.Errorf("hash mismatch")
	})
	assert.EqualError(t, err, "hash mismatch")
	b, _ := os.ReadFile(p)
	assert.Equal(t, "old", string(b))
	left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	assert.Empty(t, left, "no temporary file left")
}

// A command abandoned after a signal leaves no temporary directory: the
// builds' and images' work directories are removed with the writes' files.
func TestRemoveTempsRemovesWorkDirectories(t *testing.T) {
	var s tempSet
	dir, remove, err := s.mkdirTemp("rocmk-test-")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "obj.hsaco"), []byte("x"), 0o644))
	kept, removeKept, err := s.mkdirTemp("rocmk-test-")
	require.NoError(t, err)
	removeKept()
	_, err = os.Stat(kept)
	assert.ErrorIs(t, err, fs.ErrNotExist, "remove removes it")
	s.removeAll()
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, fs.ErrNotExist, "RemoveTemps removes a directory in use, with its files")
	remove() // the abandoned work finishing late is harmless
	_, _, err = s.mkdirTemp("rocmk-test-")
	assert.ErrorIs(t, err, ErrInterrupted)
}

// TestWalkedFile: the one rule for sources met in a directory walk.
func TestWalkedFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k.cu"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.cu"), 0o755))
	require.NoError(t, os.Symlink("k.cu", filepath.Join(dir, "link.cu")))
	require.NoError(t, os.Symlink("sub.cu", filepath.Join(dir, "dirlink.cu")))
	require.NoError(t, os.Symlink("nowhere.cu", filepath.Join(dir, "dangling.cu")))
	require.NoError(t, os.Symlink("/dev/null", filepath.Join(dir, "dev.cu")))
	got := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if p == dir {
			return nil
		}
		ok, err := WalkedFile(p, d)
		got[filepath.Base(p)] = fmt.Sprint(ok, " ", err)
		return nil
	}))
	assert.Equal(t, map[string]string{
		"k.cu": "true <nil>", "link.cu": "true <nil>", "sub.cu": "false <nil>", "dirlink.cu": "false <nil>",
		"dangling.cu": "false " + filepath.Join(dir, "dangling.cu") + ": a symbolic link to nowhere.cu, which does not exist",
		"dev.cu":      "false " + filepath.Join(dir, "dev.cu") + ": a symbolic link to /dev/null, which is not a regular file (a character device)",
	}, got)
}
