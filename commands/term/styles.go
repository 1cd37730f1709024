package term

import "github.com/charmbracelet/lipgloss"

// Styles holds every style rocmk prints with. Each stream gets its own
// renderer, so colour follows that stream's TTY state and NO_COLOR,
// CLICOLOR_FORCE and CI (termenv's rules).
type Styles struct {
	OK, Warn, Err, Dim, Header, Target, Kernel, Size lipgloss.Style
}

var (
	colorOK     = lipgloss.AdaptiveColor{Light: "#047857", Dark: "#34D399"}
	colorWarn   = lipgloss.AdaptiveColor{Light: "#B45309", Dark: "#FBBF24"}
	colorErr    = lipgloss.AdaptiveColor{Light: "#B91C1C", Dark: "#F87171"}
	colorDim    = lipgloss.AdaptiveColor{Light: "#6B7280", Dark: "#9CA3AF"}
	colorAccent = lipgloss.AdaptiveColor{Light: "#1D4ED8", Dark: "#93C5FD"}
	colorKernel = lipgloss.AdaptiveColor{Light: "#7C3AED", Dark: "#C4B5FD"}
)

// NewStyles builds the styles for one renderer.
func NewStyles(r *lipgloss.Renderer) *Styles {
	base := r.NewStyle()
	return &Styles{
		OK:     base.Foreground(colorOK),
		Warn:   base.Foreground(colorWarn).Bold(true),
		Err:    base.Foreground(colorErr).Bold(true),
		Dim:    base.Foreground(colorDim),
		Header: base.Bold(true),
		Target: base.Foreground(colorAccent),
		Kernel: base.Foreground(colorKernel),
		Size:   base,
	}
}
