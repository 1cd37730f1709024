// Package term is rocmk's terminal: results on stdout and messages on
// stderr (UI), styles per stream that follow the TTY, NO_COLOR,
// CLICOLOR_FORCE and CI (Styles), progress bars only on a TTY, aligned
// tables and escaping of names from files (Table, Printable). The commands
// print through it; nothing else imports lipgloss, termenv or progressbar.
package term

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/schollz/progressbar/v3"
	xterm "golang.org/x/term"
)

// UI is how commands talk to the user: results on stdout, everything else on
// stderr. It is safe for concurrent use.
//
// In JSON mode stdout receives exactly one document (Result) and nothing
// else; messages still go to stderr, progress is off.
type UI struct {
	Out, Err      io.Writer
	OutS, ErrS    *Styles // styles rendered for stdout and stderr
	JSON          bool
	Quiet         bool
	Verbosity     int
	progressOnTTY bool
	mu            sync.Mutex
	resultPrinted bool
}

// Options are one command run's streams, environment and output mode.
type Options struct {
	Stdout, Stderr io.Writer
	Env            termenv.Environ // NO_COLOR, CLICOLOR_FORCE, CI, TERM...
	JSON, Quiet    bool
	Verbosity      int // -v count
}

// New builds the UI for one command run.
func New(o Options) *UI {
	return &UI{
		Out:           o.Stdout,
		Err:           o.Stderr,
		OutS:          NewStyles(NewRenderer(o.Stdout, o.Env)),
		ErrS:          NewStyles(NewRenderer(o.Stderr, o.Env)),
		JSON:          o.JSON,
		Quiet:         o.Quiet,
		Verbosity:     o.Verbosity,
		progressOnTTY: isTTY(o.Stderr) && !o.JSON && !o.Quiet,
	}
}

// NewRenderer makes a lipgloss renderer whose colour profile follows the
// stream (TTY or not) and env (NO_COLOR, CLICOLOR_FORCE).
func NewRenderer(w io.Writer, env termenv.Environ) *lipgloss.Renderer {
	return lipgloss.NewRenderer(w, termenv.WithEnvironment(env), termenv.WithColorCache(true))
}

func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && xterm.IsTerminal(int(f.Fd()))
}

// Infof prints a message on stderr unless -q or --json.
func (u *UI) Infof(format string, a ...any) {
	if u.Quiet || u.JSON {
		return
	}
	u.Println(u.Err, Printable(fmt.Sprintf(format, a...), "\n\t"))
}

// Infof, Verbosef and Warnf write their messages through Printable: they
// name files, and a name must not move the cursor or recolour the terminal.

// Verbosef prints on stderr when -v was given at least level times.
func (u *UI) Verbosef(level int, format string, a ...any) {
	if u.JSON || u.Verbosity < level {
		return
	}
	u.Println(u.Err, u.ErrS.Dim.Render(Printable(fmt.Sprintf(format, a...), "\n\t")))
}

// Warnf prints a warning on stderr (also in JSON mode: stdout stays clean).
func (u *UI) Warnf(format string, a ...any) {
	if u.Quiet {
		return
	}
	u.Println(u.Err, u.ErrS.Warn.Render("warning:")+" "+Printable(fmt.Sprintf(format, a...), "\n\t"))
}

// Println prints s on w (stdout or stderr) under the UI's lock.
func (u *UI) Println(w io.Writer, s string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	fmt.Fprintln(w, strings.TrimRight(s, "\n"))
}

// Result prints the command's result: in JSON mode doc, as one document with
// "schema": "rocmk.<schema>/v1" first; otherwise whatever text writes.
// text runs under the UI's lock: it writes to w and must not call other UI
// methods (print messages after Result returns).
func (u *UI) Result(schema string, doc any, text func(w io.Writer, s *Styles) error) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.JSON {
		if u.resultPrinted {
			return fmt.Errorf("internal error: second JSON result for %s", schema)
		}
		u.resultPrinted = true
		b, err := MarshalDoc(schema, doc)
		if err != nil {
			return err
		}
		_, err = u.Out.Write(b)
		return err
	}
	if text == nil {
		return nil
	}
	return text(u.Out, u.OutS)
}

// MarshalDoc encodes doc (a struct or map that encodes as a JSON object) with
// a leading "schema" member, indented, newline-terminated.
func MarshalDoc(schema string, doc any) ([]byte, error) {
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"schema":%q`, "rocmk."+schema+"/v1")
	inner := bytes.TrimSpace(body)
	if len(inner) < 2 || inner[0] != '{' {
		return nil, fmt.Errorf("internal error: %s result is not a JSON object", schema)
	}
	if len(inner) > 2 {
		buf.WriteByte(',')
		buf.Write(inner[1 : len(inner)-1])
	}
	buf.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Progress is a progress bar on stderr; it draws only on a TTY outside
// --json and -q, and is a no-op otherwise.
type Progress interface {
	Add(n int)
	Describe(s string)
	Finish()
}

// NewProgress returns a bar over total steps.
func (u *UI) NewProgress(total int, desc string) Progress {
	if !u.progressOnTTY || total <= 0 {
		return NopProgress{}
	}
	return &barProgress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(u.Err),
		progressbar.OptionSetVisibility(true),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(80*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	)}
}

// NopProgress draws nothing.
type NopProgress struct{}

func (NopProgress) Add(int)         {}
func (NopProgress) Describe(string) {}
func (NopProgress) Finish()         {}

type barProgress struct{ bar *progressbar.ProgressBar }

func (p *barProgress) Add(n int)         { _ = p.bar.Add(n) }
func (p *barProgress) Describe(s string) { p.bar.Describe(s) }
func (p *barProgress) Finish()           { _ = p.bar.Finish() }

// PadRight pads plain text to width before styling, so escape codes never
// disturb column alignment.
func PadRight(s string, width int) string {
	if n := lipgloss.Width(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// Table renders rows with a header, padding plain cells before styling.
// style(col, row) may return nil for no style. Rows are printed as given.
type Table struct {
	Header []string
	Rows   [][]string
	// Style picks the style of a body cell; nil means plain.
	Style func(col int, row []string) *lipgloss.Style
	// Right marks columns to right-align (numbers).
	Right map[int]bool
}

// Render writes the table with two spaces between columns. Control
// characters in cells are escaped (Printable).
func (t Table) Render(w io.Writer, s *Styles) error {
	t.Rows = append([][]string(nil), t.Rows...)
	for i, r := range t.Rows {
		r = append([]string(nil), r...)
		for j := range r {
			r[j] = Printable(r[j], "")
		}
		t.Rows[i] = r
	}
	widths := make([]int, len(t.Header))
	for i, h := range t.Header {
		widths[i] = lipgloss.Width(h)
	}
	for _, r := range t.Rows {
		for i := range r {
			if i < len(widths) && lipgloss.Width(r[i]) > widths[i] {
				widths[i] = lipgloss.Width(r[i])
			}
		}
	}
	var b strings.Builder
	line := func(cells []string, header bool, row []string) {
		for i, c := range cells {
			if i >= len(widths) {
				break
			}
			var cell string
			if t.Right[i] {
				cell = strings.Repeat(" ", max(0, widths[i]-lipgloss.Width(c))) + c
			} else if i == len(cells)-1 {
				cell = c
			} else {
				cell = PadRight(c, widths[i])
			}
			switch {
			case header:
				cell = s.Header.Render(cell)
			case t.Style != nil:
				if st := t.Style(i, row); st != nil {
					cell = st.Render(cell)
				}
			}
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(cell)
		}
		b.WriteString("\n")
	}
	line(t.Header, true, nil)
	for _, r := range t.Rows {
		line(r, false, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Printable returns s with control characters (C0, DEL, C1), bidirectional
// text controls and invalid UTF-8 written as Go escapes (\x1b, \u202e), so
// that a name taken from a file or a file system cannot move the cursor,
// recolour the terminal, reorder text or break a table's columns. keep lists
// the controls to leave alone ("\n\t" in multi-line messages).
func Printable(s, keep string) string {
	escape := func(r rune) bool {
		return (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) && !strings.ContainsRune(keep, r)
	}
	if utf8.ValidString(s) && !strings.ContainsFunc(s, escape) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case escape(r) && r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case escape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Plural is one for n == 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OrDash is s, or "-" for an empty table cell.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
