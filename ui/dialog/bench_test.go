package dialog

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkConfirmKey measures one key press and the frame after it, in the
// T3 name field (a letter, then backspace, so the field stays short) and on
// a T2 dialog's buttons (tab between them).
func BenchmarkConfirmKey(b *testing.B) {
	for _, tc := range []struct {
		name string
		call call
		keys []tea.KeyPressMsg
	}{
		{"t3_field", callT3, []tea.KeyPressMsg{press("d"), press("backspace")}},
		{"t2_buttons", callT2, []tea.KeyPressMsg{press("tab"), press("shift+tab")}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, _ := openConfirm(ask(b, tc.call), Options{Dark: true, Width: 120, Height: 40})
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				c.Update(tc.keys[i%len(tc.keys)])
				_ = c.View()
			}
			if _, done := c.Result(); done {
				b.Fatal("the keys decided the dialog")
			}
		})
	}
}
