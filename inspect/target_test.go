package inspect

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in      string
		want    string // canonical; "" when an error is expected
		wantErr string // substring of the error
	}{
		// good
		{"gfx90a", "gfx90a", ""},
		{"gfx90a:xnack+", "gfx90a:xnack+", ""},
		{"gfx90a:xnack-", "gfx90a:xnack-", ""},
		{"gfx908:sramecc+:xnack-", "gfx908:sramecc+:xnack-", ""},
		{"gfx908:xnack-:sramecc+", "gfx908:sramecc+:xnack-", ""}, // any order in input
		{"gfx942:xnack+:sramecc-", "gfx942:sramecc-:xnack+", ""},
		{"gfx906:sramecc-", "gfx906:sramecc-", ""},
		{"gfx900:xnack+", "gfx900:xnack+", ""},
		{"gfx1010:xnack-", "gfx1010:xnack-", ""},
		{"gfx801:xnack+", "gfx801:xnack+", ""},
		{"gfx1030", "gfx1030", ""},
		{"gfx1100", "gfx1100", ""},
		{"gfx1201", "gfx1201", ""},
		{"gfx950:sramecc+", "gfx950:sramecc+", ""},
		{"gfx600", "gfx600", ""},
		{"gfx940", "gfx940", ""},
		{"gfx11-generic", "gfx11-generic", ""},
		{"gfx9-generic:xnack+", "gfx9-generic:xnack+", ""},
		{"gfx9-4-generic:sramecc+:xnack-", "gfx9-4-generic:sramecc+:xnack-", ""},
		{"gfx10-3-generic", "gfx10-3-generic", ""},
		{"amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-", ""},
		{"amdgcn-amd-amdhsa--gfx1030", "gfx1030", ""},
		{"  GFX90A:XNACK+ ", "gfx90a:xnack+", ""},
		{"gfx90c", "gfx90c", ""},
		// bad: unknown processor, with suggestions
		{"gfx91", "", `"gfx91": unknown processor; did you mean`},
		{"gfx9000", "", `unknown processor; did you mean gfx900`},
		{"gfx1199", "", `"gfx1199": unknown processor`},
		{"sm_90", "", `an NVIDIA architecture`},
		{"", "", "empty target"},
		{":xnack+", "", "missing processor name"},
		{"gfx90a:", "", "empty feature"},
		{"gfx90a::xnack+", "", "empty feature"},
		{"nonsense", "", "unknown processor"},
		{"amdgcn-amd-amdhsa--", "", "empty target"},
		// bad: feature not supported by the processor (clang: invalid target ID)
		{"gfx1100:xnack+", "", `"xnack+": feature xnack not supported by processor gfx1100`},
		{"gfx1030:sramecc-", "", "feature sramecc not supported by processor gfx1030"},
		{"gfx900:sramecc+", "", "feature sramecc not supported by processor gfx900"},
		{"gfx803:xnack+", "", "feature xnack not supported by processor gfx803"},
		{"gfx11-generic:xnack+", "", "not supported by processor gfx11-generic"},
		// bad: unknown feature
		{"gfx90a:tgsplit+", "", "use the -mtgsplit"},
		{"gfx1030:wavefrontsize64+", "", "only xnack and sramecc"},
		{"gfx1030:cumode", "", "unknown feature"},
		{"gfx90a:foo+", "", `"foo+": unknown feature`},
		{"gfx90a:+", "", "unknown feature"},
		// bad: duplicate feature
		{"gfx90a:xnack+:xnack+", "", "duplicate feature xnack"},
		{"gfx90a:xnack+:xnack-", "", "duplicate feature xnack"},
		{"gfx908:sramecc-:xnack+:sramecc+", "", "duplicate feature sramecc"},
		// bad: missing +/-
		{"gfx90a:xnack", "", `"xnack": feature needs + or -`},
		{"gfx908:sramecc", "", "feature needs + or -"},
		{"gfx90a:xnack*", "", "unknown feature"},
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.in)
		if tt.wantErr != "" {
			if err == nil {
				t.Errorf("ParseTarget(%q) = %v, want error containing %q", tt.in, got, tt.wantErr)
				continue
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseTarget(%q) error = %q, want it to contain %q", tt.in, err, tt.wantErr)
			}
			if !errors.Is(err, ErrInvalidTarget) {
				t.Errorf("ParseTarget(%q) error does not wrap ErrInvalidTarget", tt.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTarget(%q) error: %v", tt.in, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("ParseTarget(%q) = %q, want %q", tt.in, got.String(), tt.want)
		}
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
}

func TestTargetFields(t *testing.T) {
	got := MustParseTarget("gfx908:xnack-:sramecc+")
	want := Target{Proc: "gfx908", SRAMECC: FeatureOn, XNACK: FeatureOff}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if p := got.Processor(); p.Name != "gfx908" || p.Mach != 0x30 {
		t.Fatalf("Processor() = %+v", p)
	}
	if p := (Target{Proc: "gfx999"}).Processor(); p.Known() {
		t.Fatalf("unknown processor gave %+v", p)
	}
	if s := (Target{Proc: "gfx90a", XNACK: FeatureOn}).String(); s != "gfx90a:xnack+" {
		t.Fatalf("String = %q", s)
	}
}

func TestTargetTextRoundTrip(t *testing.T) {
	var tg Target
	if err := tg.UnmarshalText([]byte("gfx90a:xnack+:sramecc-")); err != nil {
		t.Fatal(err)
	}
	b, _ := tg.MarshalText()
	if string(b) != "gfx90a:sramecc-:xnack+" {
		t.Fatalf("MarshalText = %s", b)
	}
	if err := tg.UnmarshalText([]byte("gfx1100:xnack+")); err == nil {
		t.Fatal("UnmarshalText accepted gfx1100:xnack+")
	}
}

func TestValidateTargets(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"gfx90a", ""},
		{"gfx90a:xnack- gfx90a:xnack+", ""},   // two objects: fine
		{"gfx90a gfx908 gfx1030 gfx1100", ""}, // different processors
		{"gfx90a gfx90a:xnack-", "invalid offload arch combinations"},
		{"gfx90a:xnack- gfx90a", "invalid offload arch combinations"},
		{"gfx908:sramecc+ gfx908:xnack+", "invalid offload arch combinations"},
		{"gfx908:sramecc+:xnack+ gfx908:sramecc-:xnack-", ""},
		{"gfx908:sramecc+:xnack+ gfx908:sramecc-", "invalid offload arch combinations"},
		{"gfx90a gfx90a", "duplicate target"},
		{"gfx90a:xnack+ gfx90a:xnack+", "duplicate target"},
		{"gfx90a gfx942:xnack+", ""}, // the rule is per processor
		{"", ""},
	}
	for _, tt := range tests {
		var ts []Target
		for _, f := range strings.Fields(tt.in) {
			ts = append(ts, MustParseTarget(f))
		}
		err := ValidateTargets(ts)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("ValidateTargets(%s) = %v, want nil", tt.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidTarget) {
			t.Errorf("ValidateTargets(%s) = %v, want %q", tt.in, err, tt.wantErr)
		}
	}
	if err := ValidateTargets([]Target{{Proc: "gfx1"}}); err == nil {
		t.Error("ValidateTargets accepted an unknown processor")
	}
}

func TestParseTargetList(t *testing.T) {
	for _, in := range []string{"gfx90a,gfx1100", "gfx90a;gfx1100", "gfx90a gfx1100", " gfx90a ;, gfx1100 "} {
		ts, err := ParseTargetList(in)
		if err != nil || len(ts) != 2 || ts[0].Proc != "gfx90a" || ts[1].Proc != "gfx1100" {
			t.Errorf("ParseTargetList(%q) = %v, %v", in, ts, err)
		}
	}
	if _, err := ParseTargetList("gfx90a,gfx90a:xnack+"); err == nil {
		t.Error("ParseTargetList accepted a bad combination")
	}
	if _, err := ParseTargetList("gfx90a,gfx91"); err == nil {
		t.Error("ParseTargetList accepted gfx91")
	}
}

func TestSortTargets(t *testing.T) {
	ts := []Target{MustParseTarget("gfx1100"), MustParseTarget("gfx90a:xnack+"), MustParseTarget("gfx908"),
		MustParseTarget("gfx90a:xnack-"), MustParseTarget("gfx940"), MustParseTarget("gfx1030")}
	SortTargets(ts)
	var got []string
	for _, x := range ts {
		got = append(got, x.String())
	}
	want := "gfx908 gfx90a:xnack+ gfx90a:xnack- gfx940 gfx1030 gfx1100"
	if strings.Join(got, " ") != want {
		t.Fatalf("SortTargets = %v, want %s", got, want)
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"gfx90a", "gfx908:xnack-:sramecc+", "gfx11-generic", "amdgcn-amd-amdhsa--gfx942:xnack+",
		"gfx1100:xnack+", "gfx90a::", "GFX90A", "gfx9-4-generic:sramecc-", ":", "gfx90a:xnack"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidTarget) {
				t.Fatalf("error %v does not wrap ErrInvalidTarget", err)
			}
			return
		}
		c := tg.String()
		tg2, err := ParseTarget(c)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", c, s, err)
		}
		if tg2 != tg || tg2.String() != c {
			t.Fatalf("round trip %q -> %q -> %q", s, c, tg2.String())
		}
		if !tg.Processor().Known() {
			t.Fatalf("parsed %q to unknown processor %q", s, tg.Proc)
		}
	})
}

// TestLLVMTargetIDs checks parsing against the target IDs LLVM itself
// prints (testdata/inspect/targets/llvm-target-ids.txt): each parses and
// prints back unchanged; a processor LLVM shows only without features
// rejects both xnack and sramecc.
func TestLLVMTargetIDs(t *testing.T) {
	b, err := os.ReadFile(factsPath("llvm-target-ids.txt"))
	if err != nil {
		t.Fatal(err)
	}
	withFeatures := map[string]bool{}
	var procs []string
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		tg, err := ParseTarget(TargetPrefix + line)
		if err != nil {
			t.Errorf("LLVM's %q: %v", line, err)
			continue
		}
		if tg.String() != line {
			t.Errorf("LLVM prints %q, we print %q", line, tg.String())
		}
		if tg.XNACK != FeatureAny || tg.SRAMECC != FeatureAny {
			withFeatures[tg.Proc] = true
		} else {
			procs = append(procs, tg.Proc)
		}
	}
	for _, p := range procs {
		if withFeatures[p] {
			continue
		}
		for _, f := range []string{":xnack+", ":sramecc-"} {
			if _, err := ParseTarget(p + f); err == nil {
				t.Errorf("%s%s accepted; LLVM shows %s without features", p, f, p)
			}
		}
	}
	if n < 90 {
		t.Fatalf("read only %d target IDs", n)
	}
}
