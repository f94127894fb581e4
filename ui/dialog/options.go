package dialog

import "time"

// Options configure a dialog.
type Options struct {
	// Now is the clock the grace period is measured with; nil means
	// time.Now.
	Now func() time.Time
	// Grace is how long after the dialog opens key presses are ignored; each
	// ignored key restarts it, so the dialog listens once typing pauses.
	// 0 selects 600ms; a negative value turns it off.
	Grace time.Duration
	// Dark selects colours for a dark background; NoColor drops colour and
	// text attributes altogether.
	Dark, NoColor bool
	// Width and Height are the size of the whole box, border included.
	// 0 selects 80×24.
	Width, Height int
	// Position and Of say which of several pending dialogs this is ("2 of
	// 3"); nothing is shown unless Of > 1.
	Position, Of int
}

// DefaultGrace is the grace period when Options.Grace is 0.
const DefaultGrace = 600 * time.Millisecond

const (
	defaultWidth  = 80
	defaultHeight = 24
	minWidth      = 24 // smaller sizes are drawn at this size
	minHeight     = 8
)

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.Width == 0 {
		o.Width = defaultWidth
	}
	if o.Height == 0 {
		o.Height = defaultHeight
	}
	o.Width, o.Height = max(o.Width, minWidth), max(o.Height, minHeight)
	return o
}

// grace ignores keys until typing pauses.
type grace struct {
	now   func() time.Time
	d     time.Duration
	until time.Time
}

func newGrace(o Options) grace {
	return grace{now: o.Now, d: o.Grace, until: o.Now().Add(o.Grace)}
}

// holds reports whether a key press arriving now must be ignored, and if
// so restarts the period.
func (g *grace) holds() bool {
	if g.d <= 0 {
		return false
	}
	t := g.now()
	if t.Before(g.until) {
		g.until = t.Add(g.d)
		return true
	}
	return false
}
