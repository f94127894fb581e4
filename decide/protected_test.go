package decide

import "testing"

func TestProtected(t *testing.T) {
	p, err := Compile(nil, Options{ProtectedPaths: []string{"~/.config/mcphost", "/var/log/mcphost/audit.jsonl"}, Home: "/home/ann"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/home/ann/.config/mcphost", true},
		{"/home/ann/.config/mcphost/config.json", true},
		{"/home/ann/.config/mcphost/../mcphost/state.json", true},
		{"/HOME/ann/.config/MCPHOST/config.json", true}, // some file systems ignore case
		{"/var/log/mcphost/audit.jsonl", true},
		{"/home/ann/.config", false}, // a directory that holds one: reading it is not reading them
		{"/home/ann/.config/mcphost-old/x", false},
		{"/var/log/mcphost/other.log", false},
		{"relative/.config/mcphost", false},
		{"", false},
	} {
		if got := p.Protected(c.path); got != c.want {
			t.Errorf("Protected(%q) = %v, want %v", c.path, got, c.want)
		}
	}
	if (*Policy)(nil).Protected("/home/ann/.config/mcphost") {
		t.Error("a nil policy protects nothing")
	}
}
