package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/remote/remotetest"
	"github.com/rocmk/rocmk/compile/toolchain"
)

// remoteProject copies testdata/compile/project (2 sources x 2 targets, a
// shared header) to a fresh directory whose rocmk.toml has a [cache] table
// naming url.
func remoteProject(t *testing.T, url string) string {
	t.Helper()
	dir := copyCompileFiles(t, "project/rocmk.toml", "project/include/common.h", "project/src/axpy.hip", "project/src/scale.hip")
	toml := filepath.Join(dir, "project", "rocmk.toml")
	b, err := os.ReadFile(toml)
	require.NoError(t, err)
	// [cache] must come before the [[verify]] array of tables.
	b = []byte(strings.Replace(string(b), "[output]", "[cache]\nremote = \""+url+"\"\n\n[output]", 1))
	require.NoError(t, os.WriteFile(toml, b, 0o644))
	return toml
}

type remoteBuildDoc struct {
	Summary buildSummary
	Remote  cache.RemoteStats
	Jobs    []struct{ Source, Target, Status, Cache, Sha256 string }
}

// buildOn runs `rocmk build --json` of project on a machine (a cache
// directory) with extra arguments; it returns the document and stderr.
func buildOn(t *testing.T, cacheDir, project, out string, extra ...string) (remoteBuildDoc, string) {
	t.Helper()
	return buildWith(t, map[string]string{"ROCMK_CACHE_DIR": cacheDir}, project, out, extra...)
}

// buildWith is buildOn with the machine's environment variables.
func buildWith(t *testing.T, vars map[string]string, project, out string, extra ...string) (remoteBuildDoc, string) {
	t.Helper()
	env := testEnv(vars)
	r := runRocmk(t, env, append([]string{"build", "--json", "-j", "2", "--project", project, "-o", out}, extra...)...)
	require.Equal(t, 0, r.Code, "the remote never fails a build: %s", r.Stderr)
	var doc remoteBuildDoc
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	return doc, r.Stderr
}

// objects reads the code objects and bundles of an output directory.
func objects(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, pat := range []string{"*.hsaco", "*.hipfb"} {
		files, err := filepath.Glob(filepath.Join(dir, pat))
		require.NoError(t, err)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			m[filepath.Base(f)] = b
		}
	}
	require.Len(t, m, 6)
	return m
}

func warningLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "warning:") {
			out = append(out, l)
		}
	}
	return out
}

// Machine A builds cold and fills nginx; machine B, with an empty local
// cache, builds the same project with zero compiles and byte-identical
// outputs; then a server answering 500 and a corrupt object planted in the
// server's files each cost a local compile, one warning and nothing wrong.
func TestBuildRemoteHTTP(t *testing.T) {
	requireToolchain(t)
	srv := remotetest.StartNginx(t, remotetest.DAVLocation)
	project := remoteProject(t, srv.URL)
	outA := t.TempDir()
	docA, stderr := buildOn(t, t.TempDir(), project, outA, "--remote-upload")
	assert.Equal(t, 4, docA.Summary.Compiled)
	assert.Empty(t, warningLines(stderr))
	// The two sources include the same headers, so their jobs share one
	// group of system-header records (docs/cache.md, "Shared groups").
	assert.Equal(t, int64(9), docA.Remote.Uploads, "4 objects, their 4 deps entries and 1 shared group")
	want := objects(t, outA)

	cacheB, outB := t.TempDir(), t.TempDir()
	docB, stderr := buildOn(t, cacheB, project, outB)
	assert.Equal(t, buildSummary{Jobs: 4, Hits: 4, Remote: 4}, withoutTimes(docB.Summary), stderr)
	for _, j := range docB.Jobs {
		assert.Equal(t, "remote", j.Cache, j.Source)
	}
	assert.Equal(t, int64(9), docB.Remote.Hits)
	assert.Equal(t, want, objects(t, outB), "byte-identical outputs")
	assert.Empty(t, warningLines(stderr))

	// -v says per job where the object came from: remote on a fresh
	// machine, then local.
	r := runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": t.TempDir()}), "build", "-v", "--project", project, "-o", t.TempDir())
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `\nremote +\S*/scale\.hip \[gfx1030\]`, r.Stderr)
	assert.Contains(t, r.Stdout, "4 jobs: 4 cached (4 remote), 0 compiled")
	env := testEnv(map[string]string{"ROCMK_CACHE_DIR": cacheB})
	r = runRocmk(t, env, "build", "-v", "--project", project, "-o", outB)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "4 jobs: 4 cached (0 remote), 0 compiled")
	assert.Regexp(t, `\nhit +\S*/axpy\.hip \[gfx90a\]`, r.Stderr)
	assert.Contains(t, r.Stderr, "remote cache: "+srv.URL+" (read-only, the default: --remote-upload to upload; no key: unsigned entries trusted)")
	r = runRocmk(t, env, "cache", "stats")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `remote hits +9\n`, r.Stdout)
	assert.Regexp(t, `remote errors +0\n`, r.Stdout)
	r = runRocmk(t, env, "cache", "verify")
	assert.Equal(t, 0, r.Code, r.Stdout)

	// Corrupt one object on the server: machine C fetches three, compiles
	// the fourth, stores nothing wrong, and warns once.
	var victim string
	for _, j := range docB.Jobs {
		if strings.HasSuffix(j.Source, "scale.hip") && j.Target == "gfx1030" {
			victim = j.Sha256
		}
	}
	require.NotEmpty(t, victim)
	casFile := filepath.Join(srv.Root, "cas", victim)
	b, err := os.ReadFile(casFile)
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(casFile, b, 0o644))
	cacheC, outC := t.TempDir(), t.TempDir()
	docC, stderr := buildOn(t, cacheC, project, outC)
	assert.Equal(t, buildSummary{Jobs: 4, Hits: 3, Remote: 3, Compiled: 1}, withoutTimes(docC.Summary))
	assert.Equal(t, want, objects(t, outC))
	w := warningLines(stderr)
	require.Len(t, w, 1, stderr)
	assert.Contains(t, w[0], "cas/"+victim[:12]+": content does not match its sha256")
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": cacheC}), "cache", "verify")
	assert.Equal(t, 0, r.Code, "nothing wrong stored locally: %s", r.Stdout)

	// A server answering 500 to everything: machine D compiles it all.
	bad := remotetest.StartNginx(t, "return 500;")
	outD := t.TempDir()
	docD, stderr := buildOn(t, t.TempDir(), project, outD, "--remote-cache", bad.URL)
	assert.Equal(t, 4, docD.Summary.Compiled)
	assert.Equal(t, want, objects(t, outD))
	w = warningLines(stderr)
	require.Len(t, w, 1, stderr)
	assert.Contains(t, w[0], "HTTP 500 Internal Server Error")
}

// Redis is seeded by `rocmk cache push` from a machine that built without
// a remote; a machine with an empty cache then builds with zero compiles.
// A Redis server SIGKILLed while a build uploads costs one warning.
func TestBuildRemoteRedisPushAndKill(t *testing.T) {
	requireToolchain(t)
	srv := remotetest.StartRedis(t)
	project := remoteProject(t, "off")
	cacheA, outA := t.TempDir(), t.TempDir()
	docA, _ := buildOn(t, cacheA, project, outA)
	require.Equal(t, 4, docA.Summary.Compiled)
	want := objects(t, outA)

	env := testEnv(map[string]string{"ROCMK_CACHE_DIR": cacheA, "ROCMK_REMOTE_CACHE": srv.URL})
	r := runRocmk(t, env, "cache", "push", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var push struct{ Entries, Uploaded, Present int }
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &push))
	assert.Equal(t, 9, push.Entries, "objects, deps entries and the shared group, not the toolchain ID")
	assert.Equal(t, 9, push.Uploaded)
	r = runRocmk(t, env, "cache", "push")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "pushed 0 entries (0 B) to "+srv.URL+"; 9 already there")
	r = runRocmk(t, env, "cache", "push", "--remote-cache-mode", "read-only")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "the remote cache is read-only (--remote-cache-mode)")
	r = runRocmk(t, env, "cache", "push", "--remote-upload", "--remote-cache-mode", "write-only")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "--remote-upload and --remote-cache-mode write-only")
	r = runRocmk(t, env, "cache", "push", "--remote-cache", "ftp://h/")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, `--remote-cache: URL scheme "ftp"`)
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": cacheA}), "cache", "push")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "no remote cache")

	outB := t.TempDir()
	docB, stderr := buildOn(t, t.TempDir(), project, outB, "--remote-cache", srv.URL)
	assert.Equal(t, buildSummary{Jobs: 4, Hits: 4, Remote: 4}, withoutTimes(docB.Summary), stderr)
	assert.Equal(t, want, objects(t, outB))

	// A fresh server, killed once the first upload of a cold build lands.
	dying := remotetest.StartRedis(t)
	killed := make(chan struct{})
	var landed int64 // keys the server held when it was killed
	watch := redis.NewClient(&redis.Options{Addr: dying.Addr})
	defer watch.Close()
	go func() {
		defer close(killed)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if n, err := watch.DBSize(context.Background()).Result(); err == nil && n > 0 {
				landed = n
				dying.Kill()
				return
			}
		}
	}()
	outC := t.TempDir()
	docC, stderr := buildOn(t, t.TempDir(), project, outC, "--remote-cache", dying.URL, "--remote-upload")
	<-killed
	assert.Equal(t, 4, docC.Summary.Compiled)
	assert.Equal(t, want, objects(t, outC))
	// The server's count, not the client's: the first upload can land and
	// the server die before its reply, which the client counts an error.
	assert.Greater(t, landed, int64(0), "uploads landed before the kill")
	assert.Greater(t, docC.Remote.Errors, int64(0), "and failed after it")
	w := warningLines(stderr)
	require.Len(t, w, 1, stderr)
	assert.Regexp(t, "connection refused|EOF|reset", w[0])
}

// doctor reports the remote: reachable, authorised, writable and the round
// trip; a refused or dead one is a problem, and no credential is printed.
func TestDoctorRemote(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users")
	require.NoError(t, os.WriteFile(users, []byte("ci:{PLAIN}pa55word-x\n"), 0o644))
	srv := remotetest.StartNginx(t, remotetest.DAVLocation+"\n      auth_basic cache;\n      auth_basic_user_file "+users+";")
	type doc struct {
		RemoteCache *struct {
			URL                   string
			Reachable, Authorized bool
			Writable              *bool
			RTT                   float64 `json:"rtt_ms"`
		} `json:"remote_cache"`
		Problems []string
	}
	doctor := func(vars map[string]string, args ...string) (doc, result) {
		r := runRocmk(t, testEnv(vars), append([]string{"doctor", "--json"}, args...)...)
		var d doc
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &d), r.Stdout)
		return d, r
	}
	creds := map[string]string{"ROCMK_REMOTE_CACHE": srv.URL, "ROCMK_REMOTE_CACHE_USER": "ci", "ROCMK_REMOTE_CACHE_PASSWORD": "pa55word-x"}
	d, r := doctor(creds)
	require.NotNil(t, d.RemoteCache)
	assert.True(t, d.RemoteCache.Reachable && d.RemoteCache.Authorized)
	assert.Nil(t, d.RemoteCache.Writable, "read-only by default: no upload probe")
	d, r = doctor(creds, "--remote-upload")
	require.NotNil(t, d.RemoteCache)
	assert.True(t, d.RemoteCache.Reachable && d.RemoteCache.Authorized)
	require.NotNil(t, d.RemoteCache.Writable)
	assert.True(t, *d.RemoteCache.Writable)
	assert.Greater(t, d.RemoteCache.RTT, 0.0)
	assert.NotContains(t, r.Stdout+r.Stderr, "pa55word-x")

	d, r = doctor(map[string]string{"ROCMK_REMOTE_CACHE_PASSWORD": "wrong-pa55"}, "--remote-cache", srv.URL)
	assert.False(t, d.RemoteCache.Authorized)
	assert.Contains(t, strings.Join(d.Problems, "\n"), "remote cache "+srv.URL+" refused a lookup")
	assert.NotContains(t, r.Stdout+r.Stderr, "wrong-pa55")

	srv.Kill()
	d, _ = doctor(nil, "--remote-cache", srv.URL)
	assert.False(t, d.RemoteCache.Reachable)
	assert.Contains(t, strings.Join(d.Problems, "\n"), "unreachable")

	d, r = doctor(nil, "--remote-cache", "https://u:pa55@h/")
	assert.Nil(t, d.RemoteCache)
	assert.Contains(t, strings.Join(d.Problems, "\n"), "credentials in the URL are not accepted")
	assert.NotContains(t, r.Stdout+r.Stderr, "pa55")

	r = runRocmk(t, testEnv(map[string]string{"ROCMK_REMOTE_CACHE": srv.URL}), "doctor")
	assert.Contains(t, r.Stdout, "remote         "+srv.URL+" (read-only)")
	assert.Contains(t, r.Stdout, "unreachable")
}

// BenchmarkBuildSuiteRemote is machine B's build of the bundled suite (13
// modules) for four targets with an empty local cache against a warm nginx
// on 127.0.0.1, per op; "cold-s" is the same build compiled from scratch
// (once, -j 2) and "x-faster" their ratio.
//
//	go test ./commands/ -run '^$' -bench BuildSuiteRemote -benchtime 5x
func BenchmarkBuildSuiteRemote(b *testing.B) {
	if _, err := toolchain.FindInstallation(toolchain.FindOptions{}); err != nil {
		b.Skipf("no ROCm toolchain: %v", err)
	}
	srv := remotetest.StartNginx(b, remotetest.DAVLocation)
	args := []string{"build", "-q", "-j", "2", "--arch", "gfx90a,gfx908,gfx906,gfx1030", "--remote-cache", srv.URL}
	build := func(cacheDir string, extra ...string) time.Duration {
		env := testEnv(map[string]string{"ROCMK_CACHE_DIR": cacheDir})
		var out, errb strings.Builder
		env.Stdout, env.Stderr = &out, &errb
		t0 := time.Now()
		if code := run(append([]string{"rocmk"}, append(append(args, extra...), "-o", b.TempDir())...), env); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		if strings.Contains(errb.String(), "warning") {
			b.Fatal(errb.String())
		}
		return time.Since(t0)
	}
	cold := build(b.TempDir(), "--remote-upload") // CI fills the server
	var warm time.Duration
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		b.StartTimer()
		warm += build(dir)
	}
	b.ReportMetric(cold.Seconds(), "cold-s")
	b.ReportMetric(cold.Seconds()/(warm.Seconds()/float64(b.N)), "x-faster")
}

// runProject runs the rocmk binary in dir (the project's root: its base
// directory) with a cache directory; it returns stdout, and fails the test
// on a non-zero exit.
func runProject(t *testing.T, dir, cacheDir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(rocmkBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "ROCMK_CACHE_DIR=" + cacheDir}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "rocmk %s: %s", strings.Join(args, " "), stderr.String())
	return stdout.String()
}

// Two machines, two cache directories and two copies of the project at
// different paths (base-relative keys, content-based toolchain identity):
// machine B pulls what machine A's build uploaded, then builds offline with
// zero compiles and byte-identical outputs; machine C builds straight from
// the server. A target nobody built is missing from the pull.
func TestRemoteTwoMachinesTwoProjectPaths(t *testing.T) {
	requireToolchain(t)
	srv := remotetest.StartNginx(t, remotetest.DAVLocation)
	projA := filepath.Dir(remoteProject(t, srv.URL))
	projB := filepath.Dir(remoteProject(t, srv.URL))
	projC := filepath.Dir(remoteProject(t, srv.URL))
	require.NotEqual(t, projA, projB)
	var doc remoteBuildDoc
	require.NoError(t, json.Unmarshal([]byte(runProject(t, projA, t.TempDir(), "build", "--json", "-j", "2", "--remote-upload")), &doc))
	assert.Equal(t, 4, doc.Summary.Compiled)
	want := objects(t, filepath.Join(projA, "out"))

	cacheB := t.TempDir()
	var pull struct {
		Local, Remote, Missing int
		Jobs                   []struct{ Status, Cache string }
	}
	require.NoError(t, json.Unmarshal([]byte(runProject(t, projB, cacheB, "cache", "pull", "--json")), &pull))
	assert.Equal(t, 4, pull.Remote, "every job fetched")
	assert.Zero(t, pull.Missing)
	assert.NoDirExists(t, filepath.Join(projB, "out"), "a pull writes no output")
	require.NoError(t, json.Unmarshal([]byte(runProject(t, projB, cacheB, "build", "--json", "--remote-cache", "off")), &doc))
	assert.Equal(t, buildSummary{Jobs: 4, Hits: 4}, withoutTimes(doc.Summary), "offline after the pull: all local hits")
	assert.Equal(t, want, objects(t, filepath.Join(projB, "out")), "byte-identical outputs")

	require.NoError(t, json.Unmarshal([]byte(runProject(t, projC, t.TempDir(), "build", "--json")), &doc))
	assert.Equal(t, buildSummary{Jobs: 4, Hits: 4, Remote: 4}, withoutTimes(doc.Summary), "zero compiles on machine C")
	assert.Equal(t, want, objects(t, filepath.Join(projC, "out")))

	require.NoError(t, json.Unmarshal([]byte(runProject(t, projB, t.TempDir(), "cache", "pull", "--json", "--arch", "gfx90a,gfx908")), &pull))
	assert.Equal(t, 2, pull.Remote)
	assert.Equal(t, 2, pull.Missing, "gfx908 was never built")
}

// acStore is a real cache server with a way to read and rewrite its action
// entries behind rocmk's back: nginx's files, Redis through a client.
type acStore struct {
	name, url string
	entries   func(t *testing.T) map[string][]byte // action (hex) -> record
	put       func(t *testing.T, action string, record []byte)
}

func nginxStore(t *testing.T) acStore {
	srv := remotetest.StartNginx(t, remotetest.DAVLocation)
	return acStore{"nginx", srv.URL,
		func(t *testing.T) map[string][]byte {
			m := map[string][]byte{}
			for _, f := range srv.Files(t) {
				if a, ok := strings.CutPrefix(f, "ac/"); ok {
					b, err := os.ReadFile(filepath.Join(srv.Root, f))
					require.NoError(t, err)
					m[a] = b
				}
			}
			return m
		},
		func(t *testing.T, action string, b []byte) {
			require.NoError(t, os.WriteFile(filepath.Join(srv.Root, "ac", action), b, 0o644))
		}}
}

func redisStore(t *testing.T) acStore {
	srv := remotetest.StartRedis(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	return acStore{"redis", srv.URL,
		func(t *testing.T) map[string][]byte {
			keys, err := c.Keys(ctx, "rocmk:ac/*").Result()
			require.NoError(t, err)
			m := map[string][]byte{}
			for _, k := range keys {
				b, err := c.Get(ctx, k).Bytes()
				require.NoError(t, err)
				m[strings.TrimPrefix(k, "rocmk:ac/")] = b
			}
			return m
		},
		func(t *testing.T, action string, b []byte) {
			require.NoError(t, c.Set(ctx, "rocmk:ac/"+action, b, 0).Err())
		}}
}

// objectRecord finds the object record of source's job for target among a
// server's action entries (the record holds kind, source and target as
// plain strings: docs/cache.md, "What is stored").
func objectRecord(t *testing.T, entries map[string][]byte, source, target string) (string, []byte) {
	t.Helper()
	var found []string
	for a, b := range entries {
		// Entry.kind (field 3, 6 bytes) "object"
		if bytes.Contains(b, []byte("\x1a\x06object")) && bytes.Contains(b, []byte(source)) && bytes.Contains(b, []byte(target)) {
			found = append(found, a)
		}
	}
	require.Len(t, found, 1, "object records of %s [%s]", source, target)
	return found[0], entries[found[0]]
}

// The trust model of issue 19, with the real servers and real compiles. CI
// (machine A: its own cache, --remote-upload and the key) builds and
// uploads signed entries to nginx, and pushes them to Redis; machine B (an
// empty cache and the key) builds from either. A reader with another key,
// a record rewritten on the server to point at another valid object, and
// entries uploaded without the key are each refused: a local compile, exit
// 0, the objects of a --no-cache build, one warning that never shows the
// key, and the refusals at -v. Builds are read-only by default: the reader
// that compiles uploads nothing.
func TestRemoteSignedEntries(t *testing.T) {
	requireToolchain(t)
	const key, otherKey = "ci-signing-key-0123456789abcdef", "not-the-ci-key-0123456789abcdef"
	project := remoteProject(t, "off")
	ref := t.TempDir()
	buildOn(t, t.TempDir(), project, ref, "--no-cache")
	want := objects(t, ref)
	// machine is a fresh cache directory with the key k ("" = none).
	machine := func(k string) map[string]string {
		m := map[string]string{"ROCMK_CACHE_DIR": t.TempDir()}
		if k != "" {
			m["ROCMK_REMOTE_CACHE_KEY"] = k
		}
		return m
	}
	oneRefusalWarning := func(t *testing.T, stderr string) {
		t.Helper()
		w := warningLines(stderr)
		require.Len(t, w, 1, stderr)
		assert.Contains(t, w[0], "action entries refused as unsigned or badly signed")
		assert.Contains(t, w[0], "ROCMK_REMOTE_CACHE_KEY")
		assert.NotContains(t, stderr, key)
		assert.NotContains(t, stderr, otherKey)
	}
	// push uploads CI's cache to url, with the key k ("" = none).
	ci := machine(key)
	push := func(t *testing.T, url, k string) {
		t.Helper()
		vars := map[string]string{"ROCMK_CACHE_DIR": ci["ROCMK_CACHE_DIR"]}
		if k != "" {
			vars["ROCMK_REMOTE_CACHE_KEY"] = k
		}
		r := runRocmk(t, testEnv(vars), "cache", "push", "--remote-cache", url)
		require.Equal(t, 0, r.Code, r.Stderr)
		assert.Contains(t, r.Stdout, "pushed 9 entries")
	}
	nginx, rds := nginxStore(t), redisStore(t)
	docA, stderr := buildWith(t, ci, project, t.TempDir(), "--remote-cache", nginx.url, "--remote-upload")
	assert.Equal(t, 4, docA.Summary.Compiled)
	assert.Equal(t, int64(9), docA.Remote.Uploads)
	assert.Empty(t, warningLines(stderr))
	push(t, rds.url, key)

	for _, st := range []acStore{nginx, rds} {
		t.Run(st.name, func(t *testing.T) {
			outB := t.TempDir()
			docB, stderr := buildWith(t, machine(key), project, outB, "--remote-cache", st.url)
			assert.Equal(t, buildSummary{Jobs: 4, Hits: 4, Remote: 4}, withoutTimes(docB.Summary), stderr)
			assert.Equal(t, want, objects(t, outB))
			assert.Empty(t, warningLines(stderr))

			// axpy.hip [gfx90a]'s object record replaced by scale.hip
			// [gfx90a]'s (a valid object of the same target), its action
			// rewritten to match.
			before := st.entries(t)
			victim, _ := objectRecord(t, before, "axpy.hip", "gfx90a")
			donorAction, donor := objectRecord(t, before, "scale.hip", "gfx90a")
			st.put(t, victim, bytes.Replace(donor, []byte(donorAction), []byte(victim), 1))
			outC := t.TempDir()
			docC, stderr := buildWith(t, machine(key), project, outC, "--remote-cache", st.url)
			assert.Equal(t, buildSummary{Jobs: 4, Hits: 3, Remote: 3, Compiled: 1}, withoutTimes(docC.Summary), stderr)
			assert.Equal(t, want, objects(t, outC))
			oneRefusalWarning(t, stderr)
			// Without a key the same record is taken: the wrong object, what
			// the key is for.
			outN := t.TempDir()
			docN, _ := buildWith(t, machine(""), project, outN, "--remote-cache", st.url)
			assert.Equal(t, 4, docN.Summary.Remote)
			assert.NotEqual(t, want, objects(t, outN))
		})
	}

	// Another key: everything refused and compiled; -v names the refusals
	// and counts them.
	before := rds.entries(t)
	outW := t.TempDir()
	r := runRocmk(t, testEnv(machine(otherKey)), "build", "-v", "-j", "2", "--project", project, "-o", outW, "--remote-cache", rds.url)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "4 jobs: 0 cached (0 remote), 4 compiled")
	assert.Equal(t, want, objects(t, outW))
	oneRefusalWarning(t, r.Stderr)
	assert.Contains(t, r.Stderr, "signed entries only, key from ROCMK_REMOTE_CACHE_KEY")
	assert.Regexp(t, `ac/[0-9a-f]{12}: action entry refused: bad signature`, r.Stderr)
	assert.Regexp(t, `: \d+ action entries refused as unsigned or badly signed\n`, r.Stderr)
	assert.Equal(t, before, rds.entries(t), "read-only by default: nothing uploaded")

	// Entries uploaded without the key: CI's cache pushed to a fresh
	// server by a machine without it.
	fresh := nginxStore(t)
	push(t, fresh.url, "")
	outU := t.TempDir()
	r = runRocmk(t, testEnv(machine(key)), "build", "-v", "-j", "2", "--project", project, "-o", outU, "--remote-cache", fresh.url)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "4 jobs: 0 cached (0 remote), 4 compiled")
	assert.Equal(t, want, objects(t, outU))
	oneRefusalWarning(t, r.Stderr)
	assert.Regexp(t, `ac/[0-9a-f]{12}: action entry refused: unsigned`, r.Stderr)
	// Pushed again with the key, the unsigned records are replaced.
	push(t, fresh.url, key)
	docU, stderr := buildWith(t, machine(key), project, t.TempDir(), "--remote-cache", fresh.url)
	assert.Equal(t, buildSummary{Jobs: 4, Hits: 4, Remote: 4}, withoutTimes(docU.Summary), stderr)
}

// A key file that cannot be used is an error naming it (exit 2), never a
// build without the checks the user asked for.
func TestRemoteKeyFileErrors(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.key")
	require.NoError(t, os.WriteFile(short, []byte("tiny\n"), 0o600))
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.key"), "missing.key: no such file"},
		{dir, dir + ": not a regular file (a directory)"},
		{short, short + ": the key has 4 characters, want at least 16"},
	} {
		r := runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": t.TempDir(), "ROCMK_REMOTE_CACHE_KEY_FILE": tc.file}),
			"build", "--remote-cache", "http://127.0.0.1:9", "-o", t.TempDir(), "k.hip")
		assert.Equal(t, ExitUsage, r.Code, r.Stderr)
		assert.Contains(t, r.Stderr, "ROCMK_REMOTE_CACHE_KEY_FILE")
		assert.Contains(t, r.Stderr, tc.want)
		assert.NotContains(t, r.Stderr, "tiny")
	}
}
