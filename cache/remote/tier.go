// Package remote puts a shared cache server behind rocmk's local build
// cache: an HTTP server speaking Bazel's remote-cache protocol (GET, PUT
// and HEAD of /ac/<sha256> and /cas/<sha256>: bazel-remote, nginx or
// Apache with WebDAV) or Redis.
//
// A Tier has the local cache's GetBytes/PutBytes: lookups try the local
// cache first, then the server; a remote hit is checked against its sha256
// before it is stored locally or returned. Stores go to the local cache at
// once and to the server in the background, through a bounded queue that
// Close flushes with a deadline. The server can never fail a build or
// produce a wrong output: every remote failure is a miss, the first one is
// reported once (Options.Warn), and a circuit breaker stops asking a server
// that keeps failing, or that did not answer once.
//
// With a key (Config.Key) uploaded action records are signed and fetched
// ones must be signed with it; any other record is refused: a miss,
// counted, and reported once (sign.go).
package remote

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/rocmk/rocmk/cache"
)

// Uploaded lists the entry kinds that travel to the server: code objects
// and the header manifests ("deps") that lead to them. Toolchain IDs are
// per machine (they are keyed by the compiler binary's inode).
var Uploaded = map[string]bool{"object": true, "deps": true}

// Uploadable counts the entries of ents that Push would consider.
func Uploadable(ents []cache.Entry) int {
	n := 0
	for _, e := range ents {
		if Uploaded[e.Meta.Kind] {
			n++
		}
	}
	return n
}

// Options are a Tier's callbacks.
type Options struct {
	// Warn receives the one warning a Tier prints: its first remote failure.
	Warn func(msg string)
	// Verbose receives details for -v (the breaker opening, skipped uploads).
	Verbose func(msg string)
}

// Tier is a local cache with a remote one behind it. It is safe for
// concurrent use.
type Tier struct {
	local *cache.Cache
	be    backend
	cfg   Config
	opt   Options
	cb    *gobreaker.CircuitBreaker[struct{}]
	hung  atomic.Bool // a request timed out: the server is not asked again

	ctx    context.Context // cancelled when Close gives up on the queue
	cancel context.CancelFunc

	queue       chan upload
	queuedBytes atomic.Int64
	pending     atomic.Int64 // uploads queued or in flight
	workers     sync.WaitGroup
	closeOnce   sync.Once
	warnOnce    sync.Once
	skipOnce    sync.Once
	refuseOnce  sync.Once

	refused atomic.Int64 // records refused as unsigned or badly signed

	hits, misses, errs, down, up, uploads atomic.Int64
}

type upload struct {
	e    cache.Entry
	data []byte
}

// contentError is a remote answer that arrived but is wrong (a bad record,
// a short or corrupt body): a miss and an error, but not a sign of a dead
// server for the breaker.
type contentError struct{ err error }

func (e *contentError) Error() string { return e.err.Error() }
func (e *contentError) Unwrap() error { return e.err }

// uploadWorkers is how many uploads run at once.
const uploadWorkers = 2

// Breaker settings: after breakerTrips consecutive failures the server is
// not asked for cfg.RetryAfter, then one request probes it. A timeout stops
// the requests at once and for good (Tier.hung).
const breakerTrips = 3

// DefaultRetryAfter is how long the breaker keeps a failing server unasked.
const DefaultRetryAfter = 30 * time.Second

// Open puts the server cfg names behind local. It does not contact the
// server (Check does).
func Open(local *cache.Cache, cfg *Config, o Options) (*Tier, error) {
	be, err := newBackend(cfg)
	if err != nil {
		return nil, err
	}
	return newTier(local, be, cfg, o), nil
}

func newBackend(cfg *Config) (backend, error) {
	switch cfg.URL.Scheme {
	case "redis", "rediss":
		return newRedisBackend(cfg)
	}
	return newHTTPBackend(cfg)
}

func newTier(local *cache.Cache, be backend, cfg *Config, o Options) *Tier {
	t := &Tier{local: local, be: be, cfg: *cfg, opt: o}
	if t.cfg.RetryAfter <= 0 {
		t.cfg.RetryAfter = DefaultRetryAfter
	}
	if t.cfg.QueueLen <= 0 {
		t.cfg.QueueLen = 1
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.cb = gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        cfg.String(),
		MaxRequests: 1,
		Timeout:     t.cfg.RetryAfter,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= breakerTrips },
		IsSuccessful: func(err error) bool {
			var ce *contentError
			return err == nil || errors.Is(err, errNotFound) || errors.As(err, &ce)
		},
		IsExcluded: func(err error) bool { return t.ctx.Err() != nil },
		OnStateChange: func(_ string, _, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				t.verbose("remote cache %s: %d failures in a row: not asking it for %s", cfg, breakerTrips, t.cfg.RetryAfter)
			}
		},
	})
	t.queue = make(chan upload, t.cfg.QueueLen)
	for range uploadWorkers {
		t.workers.Add(1)
		go t.uploader()
	}
	return t
}

// Config returns the tier's configuration.
func (t *Tier) Config() Config { return t.cfg }

// Local returns the local cache.
func (t *Tier) Local() *cache.Cache { return t.local }

// errBreakerOpen is call's error while the breaker keeps the server unasked.
var errBreakerOpen = errors.New("not asked: the server failed before (circuit breaker open)")

// call runs f with a per-request timeout through the circuit breaker.
func (t *Tier) call(f func(ctx context.Context) error) error {
	if t.hung.Load() {
		return errBreakerOpen
	}
	_, err := t.cb.Execute(func() (struct{}, error) {
		ctx, cancel := context.WithTimeout(t.ctx, t.cfg.Timeout)
		defer cancel()
		return struct{}{}, f(ctx)
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return errBreakerOpen
	}
	var ne net.Error
	if err != nil && t.ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
		// the transport's header timeout and the request's deadline race:
		// one wording whichever fires first
		err = fmt.Errorf("no answer within %v (remote timeout): %w", t.cfg.Timeout, err)
		// A hung server costs a full timeout per request, and a compiled job
		// makes several (its lookups, its group's, its upload): the first
		// timeout is the only one it gets in this process.
		if !t.hung.Swap(true) {
			t.verbose("remote cache %s: no answer within %v: not asking it again in this run", t.cfg.String(), t.cfg.Timeout)
		}
	}
	return err
}

// failed records a remote failure: counted, and the first one reported.
// Requests refused by the open breaker and those abandoned by Close are
// neither.
func (t *Tier) failed(err error) {
	if errors.Is(err, errBreakerOpen) || t.ctx.Err() != nil {
		return
	}
	t.errs.Add(1)
	t.warnOnce.Do(func() {
		if t.opt.Warn != nil {
			t.opt.Warn(fmt.Sprintf("remote cache %s: %v (the build goes on with the local cache; further remote errors are only counted: rocmk cache stats)", t.cfg.String(), err))
		}
	})
}

func (t *Tier) verbose(format string, a ...any) {
	if t.opt.Verbose != nil {
		t.opt.Verbose(fmt.Sprintf(format, a...))
	}
}

// GetBytes looks id up in the local cache, then (unless the mode is
// write-only) on the server. A remote hit (Entry.Remote) is stored in the local cache;
// its bytes match the sha256 its record names, and the local cache checks
// them again. Every remote failure is a miss: the error returned is then
// the local cache's (wrapping cache.ErrNotFound).
func (t *Tier) GetBytes(id cache.ActionID) ([]byte, cache.Entry, error) {
	data, e, err := t.local.GetBytes(id)
	if err == nil || !t.cfg.Mode.reads() {
		return data, e, err
	}
	rec, rdata, rerr := t.fetch(id)
	switch {
	case rerr == nil:
	case errors.Is(rerr, errNotFound):
		t.misses.Add(1)
		return nil, cache.Entry{}, err
	case errors.Is(rerr, errRefused):
		// Not the key's signature: a miss (the job compiles), not a server
		// failure, with a warning of its own.
		t.misses.Add(1)
		t.refuse(rerr)
		return nil, cache.Entry{}, err
	default:
		t.failed(rerr)
		return nil, cache.Entry{}, err
	}
	t.hits.Add(1)
	if le, perr := t.local.PutBytes(id, rdata, rec.Meta); perr == nil {
		le.Remote = true
		return rdata, le, nil
	}
	// The bytes are verified; a local store that failed (disk full) only
	// means the next build fetches them again.
	return rdata, cache.Entry{Action: id, Output: rec.Output, Size: rec.Size, Meta: rec.Meta, Remote: true}, nil
}

// refuse counts a refused record; -v names each, and the first one of a
// run is a warning (that never shows the key).
func (t *Tier) refuse(err error) {
	t.refused.Add(1)
	t.verbose("remote cache %s: %v (a miss)", t.cfg.String(), err)
	t.refuseOnce.Do(func() {
		if t.opt.Warn != nil {
			t.opt.Warn(fmt.Sprintf("remote cache %s: action entries refused as unsigned or badly signed (only entries signed with the key of %s are used; the jobs compile locally; -v names them)",
				t.cfg.String(), t.cfg.KeyFrom))
		}
	})
}

// Refused is how many records this Tier refused as unsigned or badly signed.
func (t *Tier) Refused() int64 { return t.refused.Load() }

// fetch reads id's record and the output it names, and checks the output.
func (t *Tier) fetch(id cache.ActionID) (record, []byte, error) {
	var rec record
	var data []byte
	err := t.call(func(ctx context.Context) error {
		b, err := t.be.get(ctx, "ac/"+id.String(), maxRecordSize)
		if errors.Is(err, errTooLong) {
			return &contentError{err}
		} else if err != nil {
			return err
		}
		t.down.Add(int64(len(b)))
		if rec, err = parseRecord(b, id, t.cfg.Key); err != nil {
			return &contentError{fmt.Errorf("ac/%s: %w", id.String()[:12], err)}
		}
		if rec.Size > t.cfg.MaxSize {
			return fmt.Errorf("ac/%s: output of %d bytes is over the %d-byte limit: %w", id.String()[:12], rec.Size, t.cfg.MaxSize, errNotFound)
		}
		key := "cas/" + rec.Output.String()
		if data, err = t.be.get(ctx, key, rec.Size); errors.Is(err, errTooLong) {
			return &contentError{err}
		} else if err != nil {
			return err
		}
		t.down.Add(int64(len(data)))
		if int64(len(data)) != rec.Size {
			return &contentError{fmt.Errorf("%s: short body: %d of %d bytes", shortKey(key), len(data), rec.Size)}
		}
		if cache.OutputID(sha256.Sum256(data)) != rec.Output {
			return &contentError{fmt.Errorf("%s: content does not match its sha256 (corrupt)", shortKey(key))}
		}
		return nil
	})
	return rec, data, err
}

// PutBytes stores an output in the local cache and, unless the mode is
// read-only, queues it for upload when its kind is in Uploaded and it is
// not bigger than the size limit. Callers store only successful compiles.
func (t *Tier) PutBytes(id cache.ActionID, data []byte, m cache.Meta) (cache.Entry, error) {
	e, err := t.local.PutBytes(id, data, m)
	if err != nil || !t.cfg.Mode.writes() || !Uploaded[m.Kind] {
		return e, err
	}
	t.enqueue(upload{e: e, data: data})
	return e, nil
}

func (t *Tier) enqueue(u upload) {
	if u.e.Size > t.cfg.MaxSize {
		t.skipped("%s [%s] not uploaded: %s is over the %s limit", u.e.Meta.Source, u.e.Meta.Target, cache.FormatSize(u.e.Size), cache.FormatSize(t.cfg.MaxSize))
		return
	}
	if t.queuedBytes.Add(u.e.Size) > t.cfg.QueueBytes {
		t.queuedBytes.Add(-u.e.Size)
		t.skipped("upload queue full (%s waiting): some outputs are not uploaded", cache.FormatSize(t.cfg.QueueBytes))
		return
	}
	t.pending.Add(1)
	select {
	case t.queue <- u:
	default:
		t.pending.Add(-1)
		t.queuedBytes.Add(-u.e.Size)
		t.skipped("upload queue full (%d waiting): some outputs are not uploaded", t.cfg.QueueLen)
	}
}

func (t *Tier) skipped(format string, a ...any) {
	t.skipOnce.Do(func() { t.verbose("remote cache: "+format, a...) })
}

func (t *Tier) uploader() {
	defer t.workers.Done()
	for u := range t.queue {
		t.queuedBytes.Add(-u.e.Size)
		if err := t.upload(u.e, u.data); err != nil {
			t.failed(err)
		}
		t.pending.Add(-1)
	}
}

// upload puts the output, then the record that names it (a reader that
// finds the record finds the output, as bazel-remote's validation wants).
func (t *Tier) upload(e cache.Entry, data []byte) error {
	rec := record{Action: e.Action, Output: e.Output, Size: e.Size, Meta: e.Meta}.marshalSigned(t.cfg.Key)
	return t.call(func(ctx context.Context) error {
		if err := t.be.put(ctx, "cas/"+e.Output.String(), data); err != nil {
			return err
		}
		t.up.Add(int64(len(data)))
		if err := t.be.put(ctx, "ac/"+e.Action.String(), rec); err != nil {
			return err
		}
		t.up.Add(int64(len(rec)))
		t.uploads.Add(1)
		return nil
	})
}

// Counters returns what this Tier did so far.
func (t *Tier) Counters() cache.RemoteStats {
	return cache.RemoteStats{Hits: t.hits.Load(), Misses: t.misses.Load(), Errors: t.errs.Load(),
		BytesDown: t.down.Load(), BytesUp: t.up.Load(), Uploads: t.uploads.Load()}
}

// Close waits for queued uploads, at most cfg.FlushTimeout and only while
// ctx is not done (an interrupted build does not wait), then abandons the
// rest and closes the connection. It returns an error saying how many
// uploads were abandoned, if any. Call it after the last Put.
func (t *Tier) Close(ctx context.Context) error {
	var err error
	t.closeOnce.Do(func() {
		close(t.queue)
		done := make(chan struct{})
		go func() { t.workers.Wait(); close(done) }()
		timer := time.NewTimer(t.cfg.FlushTimeout)
		defer timer.Stop()
		abandon := func(why string) {
			left := t.pending.Load()
			t.cancel()
			<-done
			if left > 0 {
				err = fmt.Errorf("remote cache %s: %d uploads abandoned %s", t.cfg.String(), left, why)
			}
		}
		select {
		case <-done:
		case <-timer.C:
			abandon("after " + t.cfg.FlushTimeout.String())
		case <-ctx.Done():
			abandon("(interrupted)")
		}
		t.cancel()
		t.be.close()
		if n := t.refused.Load(); n > 0 {
			t.verbose("remote cache %s: %d action entries refused as unsigned or badly signed", t.cfg.String(), n)
		}
	})
	return err
}
