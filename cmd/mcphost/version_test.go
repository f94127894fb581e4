package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildVersion: --version reports what the build knows, never a
// made-up "dev".
func TestBuildVersion(t *testing.T) {
	vcs := func(kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/mcphost/mcphost", Version: "(devel)"}}
		for i := 0; i < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	for _, tc := range []struct {
		name   string
		linked string
		bi     *debug.BuildInfo
		want   string
	}{
		{"linked", "1.4.0", vcs("vcs.revision", "0123456789abcdef0123"), "1.4.0"},
		{"go install module@version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "v0.3.1"},
		{"built in a checkout", "dev", vcs("vcs.revision", "0123456789abcdef0123", "vcs.modified", "false"), "devel-0123456789ab"},
		{"built with changes", "dev", vcs("vcs.revision", "0123456789abcdef0123", "vcs.modified", "true"), "devel-0123456789ab+dirty"},
		{"no information", "dev", vcs(), "devel"},
		{"no build info", "dev", nil, "devel"},
	} {
		if got := buildVersion(tc.linked, tc.bi); got != tc.want {
			t.Errorf("%s: buildVersion = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestBannerAndVersionAgree: the summary mcphost prints without a terminal
// names the same version as --version.
func TestBannerAndVersionAgree(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": dir + "/state", "XDG_CONFIG_HOME": dir + "/config"}
	runOut := func(args ...string) string {
		var out, errOut bytes.Buffer
		s := &streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		run(context.Background(), args, s)
		return out.String()
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(runOut("--version")), "mcphost version ")
	if !ok || v == "" {
		t.Fatalf("--version printed %q, want \"mcphost version V\"", runOut("--version"))
	}
	if banner := runOut("--demo"); !strings.HasPrefix(banner, "mcphost "+v+": ") {
		t.Errorf("the banner is %q, want it to start with %q (as --version says)", strings.SplitN(banner, "\n", 2)[0], "mcphost "+v+": ")
	}
}
