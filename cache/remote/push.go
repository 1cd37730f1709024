package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rocmk/rocmk/cache"
)

// PushReport is what Push did.
type PushReport struct {
	Entries  int   `json:"entries"`  // local entries of an uploaded kind
	Uploaded int   `json:"uploaded"` // sent to the server
	Present  int   `json:"present"`  // the server had them already
	TooBig   int   `json:"too_big"`  // over the size limit
	Corrupt  int   `json:"corrupt"`  // failed the local sha256 check (removed locally)
	Failed   int   `json:"failed"`   // the server failed (see Err)
	Bytes    int64 `json:"bytes"`    // uploaded bytes
	Err      error `json:"-"`        // the first failure
}

// ErrReadOnly is Push's error in read-only mode.
var ErrReadOnly = errors.New("the remote cache is read-only")

// Push uploads every local entry of a kind in Uploaded that the server does
// not have yet (seeding a fresh remote), jobs at a time; with a key, also
// those whose record there is not signed with it. Each output is
// read through the local cache's sha256 check first. A server that stops
// answering ends the push early through the circuit breaker; ctx cancels it.
func (t *Tier) Push(ctx context.Context, jobs int, progress func()) (PushReport, error) {
	var rep PushReport
	if !t.cfg.Mode.writes() {
		return rep, ErrReadOnly
	}
	ents, err := t.local.List()
	if err != nil {
		return rep, err
	}
	work := make(chan cache.Entry)
	var mu sync.Mutex
	var wg sync.WaitGroup
	count := func(f func()) {
		mu.Lock()
		f()
		mu.Unlock()
	}
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range work {
				t.pushOne(e, &rep, count)
				if progress != nil {
					progress()
				}
			}
		}()
	}
	for _, e := range ents {
		if !Uploaded[e.Meta.Kind] {
			continue
		}
		rep.Entries++
		if ctx.Err() == nil {
			work <- e
		}
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if rep.Failed > 0 {
		return rep, fmt.Errorf("remote cache %s: %d of %d uploads failed: %w", t.cfg.String(), rep.Failed, rep.Entries, rep.Err)
	}
	return rep, nil
}

func (t *Tier) pushOne(e cache.Entry, rep *PushReport, count func(func())) {
	if e.Size > t.cfg.MaxSize {
		count(func() { rep.TooBig++ })
		return
	}
	var present bool
	err := t.call(func(ctx context.Context) error {
		key := "ac/" + e.Action.String()
		if t.cfg.Key == nil {
			var err error
			present, err = t.be.has(ctx, key)
			return err
		}
		// With a key, only a record signed with it counts as there: an
		// unsigned or badly signed one is replaced.
		b, err := t.be.get(ctx, key, maxRecordSize)
		switch {
		case errors.Is(err, errNotFound) || errors.Is(err, errTooLong):
			return nil
		case err != nil:
			return err
		}
		_, perr := parseRecord(b, e.Action, t.cfg.Key)
		present = perr == nil
		return nil
	})
	if err == nil && present {
		count(func() { rep.Present++ })
		return
	}
	if err == nil {
		data, le, lerr := t.local.GetBytes(e.Action)
		if lerr != nil {
			count(func() { rep.Corrupt++ })
			return
		}
		if err = t.upload(le, data); err == nil {
			count(func() { rep.Uploaded++; rep.Bytes += le.Size })
			return
		}
	}
	t.failed(err)
	count(func() {
		rep.Failed++
		// the failure itself, not the breaker's refusals it caused
		if rep.Err == nil || errors.Is(rep.Err, errBreakerOpen) {
			rep.Err = err
		}
	})
}
