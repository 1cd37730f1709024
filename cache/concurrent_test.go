package cache

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Helper processes: the test binary re-runs itself with ROCMK_CACHE_HELPER
// set to a mode, as os/exec's tests do.
func TestMain(m *testing.M) {
	if mode := os.Getenv("ROCMK_CACHE_HELPER"); mode != "" {
		os.Exit(helperMain(mode, os.Getenv("ROCMK_CACHE_HELPER_DIR")))
	}
	os.Exit(m.Run())
}

// content is the deterministic output for key k: sizes from 1 KiB to ~300 KiB.
func content(k int) []byte {
	n := 1024 + (k*7919)%(300<<10)
	b := make([]byte, n)
	r := rand.NewChaCha8(sha256.Sum256([]byte(fmt.Sprint("content ", k))))
	r.Read(b)
	return b
}

func keyFor(k int) ActionID { return aid(fmt.Sprint("key ", k)) }

func helperMain(mode, dir string) int {
	c, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	iters, _ := strconv.Atoi(os.Getenv("ROCMK_CACHE_HELPER_ITERS"))
	allowMiss := os.Getenv("ROCMK_CACHE_HELPER_ALLOW_MISS") == "1"
	switch mode {
	case "hammer":
		// Put and Get the same 8 keys as every other hammer process.
		hits, misses := 0, 0
		for i := range iters {
			k := i % 8
			if b, _, err := c.GetBytes(keyFor(k)); err == nil {
				if !bytes.Equal(b, content(k)) {
					fmt.Fprintf(os.Stderr, "helper: key %d: wrong bytes from Get\n", k)
					return 1
				}
				hits++
				continue
			} else if !errors.Is(err, ErrNotFound) {
				fmt.Fprintln(os.Stderr, "helper: get:", err)
				return 1
			}
			misses++
			if _, err := c.PutBytes(keyFor(k), content(k), Meta{Kind: "object", Source: fmt.Sprint(k)}); err != nil {
				fmt.Fprintln(os.Stderr, "helper: put:", err)
				return 1
			}
			b, _, err := c.GetBytes(keyFor(k))
			switch {
			case err == nil && !bytes.Equal(b, content(k)):
				fmt.Fprintf(os.Stderr, "helper: key %d: wrong bytes after Put\n", k)
				return 1
			case err != nil && !allowMiss:
				fmt.Fprintf(os.Stderr, "helper: key %d: miss right after Put: %v\n", k, err)
				return 1
			}
		}
		if err := c.AddStats(hits, misses); err != nil {
			fmt.Fprintln(os.Stderr, "helper: stats:", err)
			return 1
		}
		return 0
	case "prune":
		for i := range iters {
			p := Policy{All: true}
			if i%2 == 1 {
				p = Policy{MaxBytes: 400 << 10}
			}
			if _, err := c.Trim(p); err != nil {
				fmt.Fprintln(os.Stderr, "helper: trim:", err)
				return 1
			}
			time.Sleep(time.Millisecond)
		}
		return 0
	case "publish":
		// Publish the same 4 directories as every other publisher, and
		// read each back: whole, or gone (pruned) as a whole.
		replace := os.Getenv("ROCMK_CACHE_HELPER_REPLACE") == "1"
		for i := range iters {
			k := i % 4
			ok := func(d string) bool { return !(replace && i%2 == 1) && treeIsWhole(d, k) == nil }
			dir, err := c.Area("trees").Publish("t"+strconv.Itoa(k), ok, fillTree(k))
			if err != nil {
				fmt.Fprintln(os.Stderr, "helper: publish:", err)
				return 1
			}
			if err := treeIsWhole(dir, k); err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
				return 1
			}
		}
		return 0
	case "verify":
		// Verify without fixing while others publish and replace: a
		// directory is never reported for being moved while it is read.
		for range iters {
			r, err := c.Verify(false)
			if err != nil || !r.OK() {
				fmt.Fprintf(os.Stderr, "helper: verify: %v %+v\n", err, r.Problems)
				return 1
			}
		}
		return 0
	case "publishloop":
		// Publish until killed, replacing a directory half the time.
		fmt.Println("ready")
		for {
			k := rand.IntN(8)
			replace := rand.IntN(2) == 0
			if _, err := c.Area("trees").Publish("t"+strconv.Itoa(k), func(string) bool { return !replace }, fillTree(k)); err != nil {
				fmt.Fprintln(os.Stderr, "helper: publish:", err)
				return 1
			}
		}
	case "putloop":
		// Put big entries until killed. Each entry's Source names its
		// content so the parent can check it.
		fmt.Println("ready")
		for i := 0; ; i++ {
			k := 1000 + rand.IntN(1<<20)
			data := bytes.Repeat(content(k%64), 4) // up to ~1.2 MiB
			if _, err := c.PutBytes(keyFor(k), data, Meta{Source: strconv.Itoa(k)}); err != nil {
				fmt.Fprintln(os.Stderr, "helper: put:", err)
				return 1
			}
			if i%3 == 0 {
				c.AddStats(1, 1)
			}
		}
	}
	return 2
}

func helperCmd(t *testing.T, dir, mode string, iters int, extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		"ROCMK_CACHE_HELPER="+mode,
		"ROCMK_CACHE_HELPER_DIR="+dir,
		"ROCMK_CACHE_HELPER_ITERS="+strconv.Itoa(iters))
	cmd.Env = append(cmd.Env, extra...)
	return cmd
}

func runHelpers(t *testing.T, cmds ...*exec.Cmd) {
	t.Helper()
	outs := make([]bytes.Buffer, len(cmds))
	for i, cmd := range cmds {
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		require.NoError(t, cmd.Start())
	}
	for i, cmd := range cmds {
		assert.NoError(t, cmd.Wait(), "helper %d (%s): %s", i, cmd.Env[len(cmd.Env)-1], outs[i].String())
	}
}

func TestMultiProcessSameKeys(t *testing.T) {
	dir := t.TempDir()
	const procs, iters = 4, 60
	var cmds []*exec.Cmd
	for range procs {
		cmds = append(cmds, helperCmd(t, dir, "hammer", iters))
	}
	runHelpers(t, cmds...)

	c, err := Open(dir)
	require.NoError(t, err)
	for k := range 8 {
		b, _, err := c.GetBytes(keyFor(k))
		require.NoError(t, err, "key %d", k)
		assert.True(t, bytes.Equal(content(k), b), "key %d byte-identical", k)
	}
	r, err := c.Verify(false)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%+v", r.Problems)
	assert.Equal(t, 8, r.Entries)
	assert.Equal(t, 0, r.TempFiles)
	st, err := c.Stats()
	require.NoError(t, err)
	assert.Equal(t, int64(procs*iters), st.Hits+st.Misses, "no stats update lost across processes")
}

func TestMultiProcessPruneDuringPutGet(t *testing.T) {
	dir := t.TempDir()
	allow := "ROCMK_CACHE_HELPER_ALLOW_MISS=1"
	runHelpers(t,
		helperCmd(t, dir, "hammer", 150, allow),
		helperCmd(t, dir, "hammer", 150, allow),
		helperCmd(t, dir, "hammer", 150, allow),
		helperCmd(t, dir, "prune", 60))
	c, err := Open(dir)
	require.NoError(t, err)
	r, err := c.Verify(false)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%+v", r.Problems)
	ents, err := c.List()
	require.NoError(t, err)
	for _, e := range ents {
		k, _ := strconv.Atoi(e.Meta.Source)
		b, _, err := c.GetBytes(e.Action)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(content(k), b))
	}
}

func TestSIGKILLDuringPutLeavesCacheClean(t *testing.T) {
	dir := t.TempDir()
	kills := 12
	if testing.Short() {
		kills = 4
	}
	for i := range kills {
		cmd := helperCmd(t, dir, "putloop", 0)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("helper did not start: %q %v: %s", line, err, stderr.String())
		}
		// Waiting here is not a timing assertion: it only picks a
		// random point in the helper's stream of Puts to kill it at.
		time.Sleep(time.Duration(rand.IntN(40000)+1000*i) * time.Microsecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err = cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "helper ended on its own: %s", stderr.String())
	}

	c, err := Open(dir)
	require.NoError(t, err)
	r, err := c.Verify(false)
	require.NoError(t, err)
	assert.True(t, r.OK(), "a killed Put must never leave a corrupt entry: %+v", r.Problems)
	require.Greater(t, r.Entries, 0)
	t.Logf("%d entries, %d temporary files, %d unreferenced data files after %d kills", r.Entries, r.TempFiles, r.Unreferenced, kills)
	ents, err := c.List()
	require.NoError(t, err)
	for _, e := range ents {
		k, _ := strconv.Atoi(e.Meta.Source)
		b, _, err := c.GetBytes(e.Action)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(bytes.Repeat(content(k%64), 4), b), "entry %s", e.Meta.Source)
	}
	// Prune clears what the kills left behind; the cache keeps working.
	tr, err := c.Trim(Policy{})
	require.NoError(t, err)
	assert.Equal(t, r.TempFiles+r.Unreferenced, tr.Debris)
	r2, err := c.Verify(false)
	require.NoError(t, err)
	assert.True(t, r2.OK())
	assert.Equal(t, 0, r2.TempFiles)
	assert.Equal(t, r.Entries, r2.Entries)
	_, err = c.PutBytes(keyFor(1), content(1), Meta{})
	require.NoError(t, err)
}

// TestConcurrentGoroutines runs Put, Get, Trim and AddStats from many
// goroutines at once; run it with -race.
func TestConcurrentGoroutines(t *testing.T) {
	c, _ := openTest(t)
	c.SetClock(time.Now)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				k := (g + i) % 6
				switch {
				case g == 0 && i%4 == 0:
					if _, err := c.Trim(Policy{All: true}); err != nil {
						errs <- err
					}
				case g == 1 && i%4 == 0:
					if _, err := c.Trim(Policy{MaxBytes: 200 << 10}); err != nil {
						errs <- err
					}
				case i%2 == 0:
					if _, err := c.PutBytes(keyFor(k), content(k), Meta{Source: strconv.Itoa(k)}); err != nil {
						errs <- err
					}
				default:
					b, _, err := c.GetBytes(keyFor(k))
					if err == nil && !bytes.Equal(b, content(k)) {
						errs <- fmt.Errorf("key %d: wrong bytes", k)
					} else if err != nil && !errors.Is(err, ErrNotFound) {
						errs <- err
					}
				}
				if err := c.AddStats(1, 0); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := c.Stats()
	require.NoError(t, err)
	assert.Equal(t, int64(12*40), st.Hits)
	r, err := c.Verify(false)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%+v", r.Problems)
}
