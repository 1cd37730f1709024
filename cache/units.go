package cache

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseSize parses a size as ccache spells it: a number and a unit, where
// kB/MB/GB/TB are decimal (1 GB = 10^9 bytes) and KiB/MiB/GiB/TiB are
// binary (1 GiB = 2^30 bytes); units are case-insensitive, a bare number
// is bytes, and "2G" means 2 GB.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("invalid size %q (want e.g. 500MB, 2GiB, 1.5GB)", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) || v*mult >= math.MaxInt64/2 {
		return 0, fmt.Errorf("invalid size %q (want e.g. 500MB, 2GiB, 1.5GB)", s)
	}
	return int64(math.Round(v * mult)), nil
}

// FormatSize prints n bytes with binary units: "512 B", "1.5 KiB", "2.0 GiB".
func FormatSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= 1024
		if f < 1024 || u == "TiB" {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	panic("unreachable")
}

const maxAgeDays = 100000

// ParseAge parses an age such as "30d", "12h", "90m", "1d12h" or any
// time.ParseDuration string; "d" is 24 hours and a bare number is days.
func ParseAge(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	bad := fmt.Errorf("invalid age %q (want e.g. 30d, 12h, 90m, 1d12h)", s)
	if t == "" {
		return 0, bad
	}
	if n, err := strconv.ParseUint(t, 10, 32); err == nil {
		if n > maxAgeDays {
			return 0, bad
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	var days time.Duration
	if i := strings.IndexByte(t, 'd'); i >= 0 {
		n, err := strconv.ParseUint(t[:i], 10, 32)
		if err != nil || n > maxAgeDays {
			return 0, bad
		}
		days = time.Duration(n) * 24 * time.Hour
		t = t[i+1:]
		if t == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 || days+d < 0 {
		return 0, bad
	}
	return days + d, nil
}

// FormatAge prints how long ago t was, relative to now: "just now", "5m ago",
// "3h ago", "12d ago" (hours up to two days).
func FormatAge(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
}
