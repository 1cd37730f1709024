package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"
)

// CheckResult is what `rocmk doctor` reports about the remote cache.
type CheckResult struct {
	URL        string  `json:"url"`
	Mode       Mode    `json:"mode"`
	Reachable  bool    `json:"reachable"`
	Authorized bool    `json:"authorized"`         // a lookup was answered (hit or miss)
	Writable   *bool   `json:"writable,omitempty"` // an upload was accepted (modes that write)
	RTTms      float64 `json:"rtt_ms"`             // one lookup on an open connection
	Error      string  `json:"error,omitempty"`
	Signed     bool    `json:"signed"` // a key is set: only entries signed with it are used
}

// probe is what Check uploads: content-addressed, so storing it twice or
// next to real entries is harmless.
var probe = []byte("rocmk remote cache probe\n")

// Check contacts the server: a lookup of an action no one stores (reachable,
// authorised, round-trip time) and, when the mode writes, an upload of a
// small content-addressed probe.
func Check(ctx context.Context, cfg *Config) CheckResult {
	r := CheckResult{URL: cfg.String(), Mode: cfg.Mode, Signed: cfg.Key != nil}
	be, err := newBackend(cfg)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer be.close()
	key := "ac/" + strings.Repeat("0", 64)
	look := func() (time.Duration, error) {
		ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		t0 := time.Now()
		_, err := be.has(ctx, key)
		return time.Since(t0), err
	}
	if _, err = look(); err == nil { // the first one also connects
		var rtt time.Duration
		rtt, err = look()
		r.RTTms = float64(rtt.Microseconds()) / 1000
	}
	if err != nil {
		r.Reachable = isAnswer(err)
		r.Error = err.Error()
		return r
	}
	r.Reachable, r.Authorized = true, true
	if cfg.Mode.writes() {
		sum := sha256.Sum256(probe)
		ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		err := be.put(ctx, "cas/"+hex.EncodeToString(sum[:]), probe)
		ok := err == nil
		r.Writable = &ok
		if err != nil {
			r.Error = err.Error()
		}
	}
	return r
}

// isAnswer reports whether err is the server's answer (a status or an
// authentication refusal), as opposed to no answer at all.
func isAnswer(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOPERM")
}
