package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "123": 123, "123B": 123, "2GiB": 2 << 30, "2GB": 2e9, "2gb": 2e9, "2G": 2e9,
		"1.5GiB": 3 << 29, "500MB": 500e6, "500MiB": 500 << 20, "10 kB": 10e3, "10KiB": 10240, "1TiB": 1 << 40,
	} {
		got, err := ParseSize(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "GiB", "2XB", "-1GB", "1e3", "2..0GB", "99999999999999TiB"} {
		_, err := ParseSize(in)
		assert.Error(t, err, in)
	}
}

func TestFormatSize(t *testing.T) {
	assert.Equal(t, "0 B", FormatSize(0))
	assert.Equal(t, "1023 B", FormatSize(1023))
	assert.Equal(t, "1.0 KiB", FormatSize(1024))
	assert.Equal(t, "1.5 MiB", FormatSize(3<<19))
	assert.Equal(t, "2.0 GiB", FormatSize(2<<30))
	assert.Equal(t, "2048.0 TiB", FormatSize(2<<50))
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30d": 30 * day, "30": 30 * day, "12h": 12 * time.Hour, "90m": 90 * time.Minute,
		"1d12h": 36 * time.Hour, "45s": 45 * time.Second, "1h30m": 90 * time.Minute,
	} {
		got, err := ParseAge(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "d", "-3d", "3w", "1d-2h", "xd"} {
		_, err := ParseAge(in)
		assert.Error(t, err, in)
	}
}

func TestFormatAge(t *testing.T) {
	now := t0
	assert.Equal(t, "just now", FormatAge(now, now.Add(time.Hour)))
	assert.Equal(t, "just now", FormatAge(now, now.Add(-59*time.Second)))
	assert.Equal(t, "5m ago", FormatAge(now, now.Add(-5*time.Minute)))
	assert.Equal(t, "47h ago", FormatAge(now, now.Add(-47*time.Hour)))
	assert.Equal(t, "3d ago", FormatAge(now, now.Add(-3*day-time.Hour)))
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"2GiB", "1.5GB", "0", "12 kB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
	})
}

func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"30d", "1d12h", "90m", "7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAge(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseAge(%q) = %v", s, d)
		}
	})
}
