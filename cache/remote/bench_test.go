package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"testing"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/remote/remotetest"
)

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// benchSize is a typical code object for one target (10-200 KiB).
const benchSize = 64 << 10

// benchRemoteHit is the per-object cost of a remote hit on a fresh machine:
// local miss, record and output fetched from a real server on 127.0.0.1,
// sha256 checked, stored in the local cache. A new local cache is made
// (outside the timer) whenever every entry has been fetched once.
func benchRemoteHit(b *testing.B, url string) {
	cfg, err := Resolve(url, "read-write", Settings{}, envOf(nil))
	if err != nil {
		b.Fatal(err)
	}
	const n = 256
	ids := make([]cache.ActionID, n)
	seed, err := cache.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	a, err := Open(seed, cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range ids {
		ids[i] = cache.ActionID(sha256.Sum256([]byte(fmt.Sprint("bench ", i))))
		data := bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), benchSize/8)
		if _, err := a.PutBytes(ids[i], data, cache.Meta{Kind: "object", Target: "gfx90a"}); err != nil {
			b.Fatal(err)
		}
	}
	if err := a.Close(context.Background()); err != nil || a.Counters().Uploads != n {
		b.Fatalf("seeding: %v, %d uploads", err, a.Counters().Uploads)
	}
	var t *Tier
	b.SetBytes(benchSize)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%n == 0 {
			b.StopTimer()
			if t != nil {
				t.Close(context.Background())
			}
			local, err := cache.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			if t, err = Open(local, cfg, Options{}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, _, err := t.GetBytes(ids[i%n]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if c := t.Counters(); c.Errors > 0 || c.Misses > 0 {
		b.Fatalf("%+v", c)
	}
	t.Close(context.Background())
}

func BenchmarkRemoteHitNginx(b *testing.B) {
	benchRemoteHit(b, startNginx(b, remotetest.DAVLocation).srv.URL)
}

func BenchmarkRemoteHitRedis(b *testing.B) {
	benchRemoteHit(b, startRedis(b).srv.URL)
}

// BenchmarkLocalHit is the same lookup once the object is local: the tier
// adds nothing to a local hit.
func BenchmarkLocalHit(b *testing.B) {
	local, err := cache.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	t, err := Open(local, &Config{URL: mustURL("http://127.0.0.1:9"), Mode: ReadWrite, Timeout: DefaultTimeout, MaxSize: DefaultMaxSize, QueueLen: 1}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close(context.Background())
	id := cache.ActionID{1}
	if _, err := local.PutBytes(id, bytes.Repeat([]byte("x"), benchSize), cache.Meta{Kind: "object"}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchSize)
	for b.Loop() {
		if _, _, err := t.GetBytes(id); err != nil {
			b.Fatal(err)
		}
	}
}
