package cache

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Bookkeeping are the entry kinds a build keeps for itself (header lists,
// tool identities, remembered nvcc failures): `rocmk cache ls` shows them
// only with --all.
var Bookkeeping = map[string]bool{"deps": true, "toolchain-id": true, "nvcc-failed": true}

// MarshalJSON writes an entry as `rocmk cache ls --json` and prune list
// it: hex keys, the Meta fields flat, times in UTC.
func (e Entry) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Key       string    `json:"key"`
		Output    string    `json:"output"`
		Kind      string    `json:"kind"`
		Source    string    `json:"source"`
		Target    string    `json:"target"`
		Toolchain string    `json:"toolchain"`
		ROCm      string    `json:"rocm"`
		Size      int64     `json:"size"`
		Created   time.Time `json:"created"`
		Used      time.Time `json:"used"`
	}{e.Action.String(), e.Output.String(), e.Meta.Kind, e.Meta.Source, e.Meta.Target, e.Meta.Toolchain, e.Meta.ROCm,
		e.Size, e.Created.UTC(), e.Used.UTC()})
}

// Select keeps the entries for target (all when ""; MatchTarget's rules)
// and, unless all, drops the bookkeeping ones, which it counts.
func Select(ents []Entry, target string, all bool) (kept []Entry, hidden int) {
	for _, e := range ents {
		switch {
		case target != "" && !MatchTarget(e.Meta.Target, target):
		case !all && Bookkeeping[e.Meta.Kind]:
			hidden++
		default:
			kept = append(kept, e)
		}
	}
	return kept, hidden
}

// SortEntries orders entries by "used" (most recent first), "size"
// (largest first), "created" (newest first) or "target" (then source),
// then by key.
func SortEntries(ents []Entry, by string) error {
	var f func(a, b Entry) int
	switch by {
	case "used":
		f = func(a, b Entry) int { return b.Used.Compare(a.Used) }
	case "created":
		f = func(a, b Entry) int { return b.Created.Compare(a.Created) }
	case "size":
		f = func(a, b Entry) int { return int(min(max(b.Size-a.Size, -1), 1)) }
	case "target":
		f = func(a, b Entry) int {
			if r := strings.Compare(a.Meta.Target, b.Meta.Target); r != 0 {
				return r
			}
			return strings.Compare(a.Meta.Source, b.Meta.Source)
		}
	default:
		return fmt.Errorf("sort %q: want used, size, created or target", by)
	}
	slices.SortStableFunc(ents, func(a, b Entry) int {
		if r := f(a, b); r != 0 {
			return r
		}
		return strings.Compare(a.Action.String(), b.Action.String())
	})
	return nil
}
