package ui

// The picker of `mcphost --resume` without an id: the saved chats, one a
// line, chosen with the arrow keys before the chat starts.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/chatlog"
)

// ErrNoChoice is PickSession's error when the person leaves the picker
// without choosing.
var ErrNoChoice = errors.New("no chat chosen")

// maxPick bounds the chats the picker lists.
const maxPick = 500

// Picker is the model of the session picker. Its rows come from untrusted
// files (a chat's first prompt is anything a person or a paste put there):
// every field is sanitized and cut to its column before it is drawn.
type Picker struct {
	items  []chatlog.Summary
	here   int // items[:here] were started in the working directory
	now    time.Time
	sel    int
	top    int
	width  int
	height int
	done   bool
	chosen bool
}

// NewPicker lists the readable sessions of list (newest first, as
// chatlog.List returns them) with those started in workDir first; now
// is the clock the ages are counted from.
func NewPicker(list []chatlog.Summary, workDir string, now time.Time) *Picker {
	p := &Picker{now: now, width: 80, height: 24}
	var elsewhere []chatlog.Summary
	for _, s := range list {
		switch {
		case s.Err != nil:
		case s.Dir == workDir:
			p.items = append(p.items, s)
		default:
			elsewhere = append(elsewhere, s)
		}
	}
	p.here = len(p.items)
	p.items = append(p.items, elsewhere...)
	p.items = p.items[:min(len(p.items), maxPick)]
	return p
}

// Len is the number of chats listed.
func (p *Picker) Len() int { return len(p.items) }

// Chosen returns the chat picked with Enter; false when none was.
func (p *Picker) Chosen() (chatlog.Summary, bool) {
	if !p.chosen {
		return chatlog.Summary{}, false
	}
	return p.items[p.sel], true
}

// Init implements tea.Model.
func (p *Picker) Init() tea.Cmd { return nil }

// Update implements tea.Model: ↑/↓ (k/j), PgUp/PgDn, Home/End move, Enter
// picks, Esc, q or Ctrl-C leave without a choice.
func (p *Picker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.width, p.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		switch msg.String() {
		case "up", "k", "ctrl+p":
			p.move(-1)
		case "down", "j", "ctrl+n":
			p.move(1)
		case "pgup":
			p.move(-p.rows())
		case "pgdown", "space":
			p.move(p.rows())
		case "home", "g":
			p.move(-len(p.items))
		case "end", "G":
			p.move(len(p.items))
		case "enter":
			p.done, p.chosen = true, len(p.items) > 0
			return p, tea.Quit
		case "esc", "q", "ctrl+c", "ctrl+d":
			p.done = true
			return p, tea.Quit
		}
	}
	return p, nil
}

func (p *Picker) move(d int) {
	p.sel = max(0, min(len(p.items)-1, p.sel+d))
	rows := p.rows()
	if p.sel < p.top {
		p.top = p.sel
	}
	if p.sel >= p.top+rows {
		p.top = p.sel - rows + 1
	}
}

// rows is how many chats fit under the two heading lines.
func (p *Picker) rows() int { return max(1, p.height-3) }

var (
	pickerSel  = lipgloss.NewStyle().Reverse(true)
	pickerDim  = lipgloss.NewStyle().Faint(true)
	pickerHead = lipgloss.NewStyle().Bold(true)
)

// View implements tea.Model.
func (p *Picker) View() tea.View {
	if p.done {
		return tea.NewView("")
	}
	w := max(p.width, 20)
	var b strings.Builder
	b.WriteString(trunc(pickerHead.Render("Resume which chat?")+pickerDim.Render("  ↑/↓ choose · Enter resume · Esc cancel"), w))
	b.WriteString("\n")
	cols := p.columns(w)
	b.WriteString(pickerDim.Render(trunc("  "+p.row(cols, "FIRST PROMPT", "DIRECTORY", "USED", "MODEL"), w)))
	end := min(len(p.items), p.top+p.rows())
	for i := p.top; i < end; i++ {
		s := p.items[i]
		prompt := cleanLine(s.First)
		if prompt == "" {
			prompt = "(no prompt)"
		}
		dir := cleanLine(s.Dir)
		if i < p.here {
			dir = "· " + dir // this directory
		}
		line := p.row(cols, prompt, dir, age(p.now, s.Updated), cleanLine(s.Model))
		b.WriteString("\n")
		if i == p.sel {
			b.WriteString(pickerSel.Render(fit("› "+line, w)))
		} else {
			b.WriteString("  " + line)
		}
	}
	v := tea.NewView(b.String())
	v.AltScreen = true
	return v
}

// pickCols are the widths of the picker's columns.
type pickCols struct{ prompt, dir, age, model int }

func (p *Picker) columns(w int) pickCols {
	c := pickCols{dir: 28, age: 8, model: 22}
	// The prompt takes what is left after the marker and three gaps; on a
	// narrow terminal the directory and the model give way first.
	for c.prompt = w - 2 - 6 - c.dir - c.age - c.model; c.prompt < 20 && (c.dir > 8 || c.model > 8); c.prompt = w - 2 - 6 - c.dir - c.age - c.model {
		c.dir, c.model = max(8, c.dir-4), max(8, c.model-4)
	}
	c.prompt = max(c.prompt, 8)
	return c
}

func (p *Picker) row(c pickCols, prompt, dir, age, model string) string {
	return fit(prompt, c.prompt) + "  " + fitLeft(dir, c.dir) + "  " + fit(age, c.age) + "  " + fit(model, c.model)
}

// fitLeft is fit keeping the end of s, the part of a path that tells
// directories apart.
func fitLeft(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return fit(s, width)
	}
	return "…" + ansi.TruncateLeft(s, ansi.StringWidth(s)-width+1, "")
}

// age says how long ago t was, briefly.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "-"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
	return t.Local().Format("2006-01-02")
}

// PickSession shows the picker on the terminal in and out and returns the
// chat the person picks. It fails with ErrNotTerminal off a terminal,
// with chatlog.ErrNotFound when there is nothing to pick, and with
// ErrNoChoice when the person leaves without picking.
func PickSession(ctx context.Context, in io.Reader, out io.Writer, list []chatlog.Summary, workDir string, now time.Time, noColor bool) (chatlog.Summary, error) {
	p := NewPicker(list, workDir, now)
	if p.Len() == 0 {
		return chatlog.Summary{}, fmt.Errorf("there are no saved chats to resume: %w", chatlog.ErrNotFound)
	}
	if !isTerminal(in) || !isTerminal(out) {
		return chatlog.Summary{}, ErrNotTerminal
	}
	opts := []tea.ProgramOption{tea.WithInput(in), tea.WithOutput(out), tea.WithoutSignalHandler()}
	if noColor {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	prog := tea.NewProgram(p, opts...)
	stop := context.AfterFunc(ctx, prog.Quit)
	defer stop()
	if _, err := prog.Run(); err != nil && !errors.Is(err, tea.ErrInterrupted) {
		return chatlog.Summary{}, fmt.Errorf("session picker: %w", err)
	}
	if s, ok := p.Chosen(); ok && ctx.Err() == nil {
		return s, nil
	}
	return chatlog.Summary{}, ErrNoChoice
}
