package program

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rocmk/rocmk/verify/outcmp"
)

// Stages: how far a program got; the last is its verdict.
const (
	StageBuildFailed = "build failed" // one side did not build
	StageNoGPU       = "no GPU"       // built, nothing can run here
	StageRunFailed   = "run failed"   // a side could not be run, or the original itself failed
	StageDiffer      = "differ"       // both ran: the results differ
	StageSame        = "same result"  // both ran: the same within the rules
	StageRecorded    = "recorded"     // --record: the original ran and was saved
)

// Errors Report.Err wraps, for the command's exit status.
var (
	ErrBuildFailed = errors.New("build failed")
	ErrRunFailed   = errors.New("run failed")
	ErrDiffer      = errors.New("results differ")
	ErrNoGPU       = errors.New("no GPU to run the program on")
)

// Report is port --run's result for one program.
type Report struct {
	Program     string          `json:"program"`
	Args        []string        `json:"args"`
	Platform    string          `json:"platform"` // "nvidia", "amd", "" (no GPU)
	Arch        string          `json:"arch,omitempty"`
	Device      string          `json:"device,omitempty"`
	Stage       string          `json:"verdict"` // one of the Stage constants
	Note        string          `json:"note,omitempty"`
	Replaced    int             `json:"replaced"` // hipify's replacements over the tree
	Unsupported []string        `json:"unsupported,omitempty"`
	Libraries   []Library       `json:"libraries"`
	Original    *Side           `json:"original,omitempty"`    // nil with --against
	Translation *Side           `json:"translation,omitempty"` // nil with --record
	Against     string          `json:"against,omitempty"`
	Reference   string          `json:"reference,omitempty"` // the recording, in words
	Recorded    string          `json:"recorded,omitempty"`
	GPU         string          `json:"gpu,omitempty"` // usable after the runs, or why not
	Verdict     *outcmp.Verdict `json:"comparison,omitempty"`
}

// Side is one version of the program: how it was built and how it ran.
type Side struct {
	Name       string        `json:"name"`      // "original", "translation"
	Toolchain  string        `json:"toolchain"` // "nvcc", "nvcc (HIP's NVIDIA platform)", "hipcc"
	BuildArgv  []string      `json:"build_argv,omitempty"`
	Built      bool          `json:"built"`
	BuildTime  time.Duration `json:"build_ns"`
	BuildError string        `json:"build_error,omitempty"`
	BuildLog   string        `json:"build_log,omitempty"` // the end of the compiler's output
	Binary     string        `json:"binary,omitempty"`
	Ran        bool          `json:"ran"`
	Status     string        `json:"status,omitempty"` // "exit 0", "139 (SIGSEGV)", "timed out after 60s"
	Elapsed    time.Duration `json:"elapsed_ns,omitempty"`
	RunError   string        `json:"run_error,omitempty"`
	Stored     string        `json:"stored_output,omitempty"` // --got-output
	Run        *outcmp.Run   `json:"run,omitempty"`
}

// built says whether a side is ready to run (a side not built at all, nil,
// is one the mode does without).
func (s *Side) built() bool { return s == nil || s.Built || s.Stored != "" }

// Err is the report as an error for the exit status: nil when the results
// are the same or the recording was written.
func (r *Report) Err() error {
	switch r.Stage {
	case StageSame, StageRecorded:
		return nil
	case StageBuildFailed:
		return fmt.Errorf("%s: %w", r.Program, ErrBuildFailed)
	case StageNoGPU:
		return fmt.Errorf("%s: %w", r.Program, ErrNoGPU)
	case StageDiffer:
		return fmt.Errorf("%s: %w", r.Program, ErrDiffer)
	}
	return fmt.Errorf("%s: %w", r.Program, ErrRunFailed)
}

// Headline is the verdict in one line.
func (r *Report) Headline() string {
	switch r.Stage {
	case StageSame:
		if r.Translation.Stored != "" {
			return "SAME RESULT: the stored output and the recording, " + r.Verdict.Reason
		}
		return fmt.Sprintf("SAME RESULT: both built, both ran (%s), %s", r.Verdict.GotStatus, r.Verdict.Reason)
	case StageDiffer:
		return "DIFFER: " + r.Verdict.Reason
	case StageRecorded:
		return fmt.Sprintf("RECORDED: the original ran (%s), saved to %s", r.Original.Status, r.Recorded)
	case StageBuildFailed:
		for _, s := range []*Side{r.Original, r.Translation} {
			if s != nil && !s.Built {
				return fmt.Sprintf("BUILD FAILED: the %s (%s): %s", s.Name, s.Toolchain, s.BuildError)
			}
		}
	case StageNoGPU:
		return "NOT RUN: " + r.Note
	}
	for _, s := range []*Side{r.Original, r.Translation} {
		if s != nil && s.RunError != "" {
			return fmt.Sprintf("RUN FAILED: the %s: %s", s.Name, s.RunError)
		}
	}
	return "RUN FAILED: " + r.Note
}

// WriteText writes the report for a person: the headline first.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Program, r.Headline())
	for _, l := range r.Libraries {
		fmt.Fprintf(&b, "  library %s (%s): original -l%s; translation %s\n", l.Name, l.Why, strings.Join(l.Original, " -l"), libWords(l.Translation))
		for _, m := range l.Missing {
			fmt.Fprintf(&b, "    missing: %s\n", m)
		}
	}
	if r.Reference != "" {
		fmt.Fprintf(&b, "  reference: recording %s\n", r.Reference)
	}
	for _, s := range []*Side{r.Original, r.Translation} {
		if s != nil {
			fmt.Fprintf(&b, "  %-12s %s\n", s.Name+":", s.words())
		}
	}
	if v := r.Verdict; v != nil {
		if !v.Pass && v.Line > 0 {
			fmt.Fprintf(&b, "  first difference, %s line %d: %s\n    want: %s\n    got:  %s\n", v.Stream, v.Line, v.Detail, v.Want, v.Got)
			for _, c := range v.Context {
				fmt.Fprintf(&b, "    %s\n", c)
			}
		}
		for _, f := range v.RulesFired {
			fmt.Fprintf(&b, "  rule %s fired on %d line(s), e.g. %s\n", f.Rule, f.Count, f.Example)
		}
	}
	if r.GPU != "" {
		fmt.Fprintf(&b, "  GPU %s\n", r.GPU)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func libWords(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return "-l" + strings.Join(l, " -l")
}

// words is a side in one line.
func (s *Side) words() string {
	out := s.Toolchain
	switch {
	case s.Stored != "":
		return "stored output " + s.Stored
	case !s.Built:
		return out + ", build failed: " + s.BuildError
	}
	out += fmt.Sprintf(", built in %s", s.BuildTime.Round(10*time.Millisecond))
	switch {
	case s.RunError != "":
		out += ", could not run: " + s.RunError
	case s.Ran:
		out += fmt.Sprintf(", ran: %s in %s", s.Status, s.Elapsed.Round(time.Millisecond))
	}
	return out
}
