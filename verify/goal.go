package verify

import (
	"fmt"
	"time"
)

// CopyBandwidth is what a Goal without a Peer and without Flops is a
// fraction of: the device's measured copy bandwidth.
const CopyBandwidth = "copy bandwidth"

// GoalResult is how a timed case did against its Goal.
type GoalResult struct {
	// TFlops (with Goal.Flops) or GBps is the case's rate; Unit says which
	// the ratio compares ("TFLOP/s" or "GB/s").
	TFlops float64 `json:"tflop_per_s,omitempty"`
	GBps   float64 `json:"gb_per_s,omitempty"`
	Unit   string  `json:"unit"`
	// Against is the peer case's name or CopyBandwidth; AgainstRate its
	// rate in Unit. Empty for a compute rate with no peer (a figure only).
	Against     string  `json:"against,omitempty"`
	AgainstRate float64 `json:"against_rate,omitempty"`
	Ratio       float64 `json:"ratio,omitempty"` // rate / AgainstRate
	Min         float64 `json:"min,omitempty"`
	Below       bool    `json:"below_goal"`
	// Missing says why there is no ratio (the peer did not run or time).
	Missing string `json:"missing,omitempty"`
}

// String is "61% of blas_sgemm_f32_4096 (30.2 of 49.5 TFLOP/s)", with
// ", BELOW GOAL 60%" under the goal.
func (g *GoalResult) String() string {
	rate := g.GBps
	if g.Unit == "TFLOP/s" {
		rate = g.TFlops
	}
	s := fmt.Sprintf("%.3g %s", rate, g.Unit)
	switch {
	case g.Missing != "":
		return s + " (" + g.Missing + ")"
	case g.Against == CopyBandwidth:
		s = fmt.Sprintf("%.0f%% of copy bandwidth %.2f TB/s (%.0f GB/s)", 100*g.Ratio, g.AgainstRate/1e3, g.GBps)
	case g.Against != "":
		s = fmt.Sprintf("%.0f%% of %s (%.3g of %.3g %s)", 100*g.Ratio, g.Against, rate, g.AgainstRate, g.Unit)
	}
	if g.Below {
		s += fmt.Sprintf(", BELOW GOAL %.0f%%", 100*g.Min)
	}
	return s
}

// goalRate is a timed case's rate in its goal's unit: TFLOP/s when the
// goal counts flops, else GB/s of goal.Bytes (or the case's own Bytes).
func goalRate(g *Goal, bytes int64, median time.Duration) *GoalResult {
	r := &GoalResult{Unit: "GB/s", Min: g.Min}
	if median <= 0 {
		return nil
	}
	b := g.Bytes
	if b == 0 {
		b = float64(bytes)
	}
	r.GBps = b / median.Seconds() / 1e9
	if g.Flops > 0 {
		r.Unit, r.TFlops = "TFLOP/s", g.Flops/median.Seconds()/1e12
	}
	return r
}

func (r *GoalResult) rate() float64 {
	if r.Unit == "TFLOP/s" {
		return r.TFlops
	}
	return r.GBps
}

// applyGoals rates every timed case with a goal and compares it with its
// peer (run in the same suite) or with the copy bandwidth (bytes/s; 0:
// not measured). goals and bytes are by case name.
func applyGoals(cases []CaseResult, goals map[string]*Goal, bytes map[string]int64, copyBW float64) {
	byName := map[string]*CaseResult{}
	for i := range cases {
		byName[cases[i].Name] = &cases[i]
	}
	for i := range cases {
		c := &cases[i]
		g := goals[c.Name]
		if g == nil || c.Time == nil || c.Status != StatusPass {
			continue
		}
		r := goalRate(g, bytes[c.Name], c.Time.Median)
		if r == nil {
			continue
		}
		c.Goal = r
		switch {
		case g.Peer != "":
			r.Against = g.Peer
			r.AgainstRate = peerRate(byName[g.Peer], goals[g.Peer], bytes[g.Peer], g, bytes[c.Name], r.Unit)
			if r.AgainstRate == 0 {
				r.Missing = "peer " + g.Peer + " did not run and pass with timing"
			}
		case g.Flops > 0: // a compute rate with no peer: the figure only
			continue
		default:
			r.Against, r.AgainstRate = CopyBandwidth, copyBW/1e9
			if copyBW <= 0 {
				r.Missing = "copy bandwidth not measured"
			}
		}
		if r.AgainstRate > 0 {
			r.Ratio = r.rate() / r.AgainstRate
			r.Below = r.Ratio < g.Min
		}
	}
}

// peerRate is the peer's rate in unit: from its own goal when it has one,
// else from the work of the case measured against it (the same problem).
func peerRate(peer *CaseResult, peerGoal *Goal, peerBytes int64, own *Goal, ownBytes int64, unit string) float64 {
	if peer == nil || peer.Time == nil || peer.Time.Median <= 0 || peer.Status != StatusPass {
		return 0
	}
	g, b := own, ownBytes
	if peerGoal != nil && (peerGoal.Flops > 0) == (own.Flops > 0) {
		g, b = peerGoal, peerBytes
	}
	r := goalRate(g, b, peer.Time.Median)
	if r == nil || r.Unit != unit {
		return 0
	}
	return r.rate()
}
