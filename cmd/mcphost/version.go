package main

import "runtime/debug"

func init() {
	bi, _ := debug.ReadBuildInfo()
	version = buildVersion(version, bi)
}

// buildVersion is the version mcphost reports (--version, and to servers
// as its client version): the one set at link time (-ldflags "-X
// main.version=…"), else the module version of an installed release, else
// the commit it was built from (with "+dirty" for uncommitted changes),
// else "devel".
func buildVersion(linked string, bi *debug.BuildInfo) string {
	if linked != "" && linked != "dev" {
		return linked
	}
	if bi == nil {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "+dirty"
	}
	return "devel-" + rev
}
