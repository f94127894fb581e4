package client

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var providerSafe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestBuildNames(t *testing.T) {
	tools := []*Tool{
		{Server: "tasks", Name: "list_tasks"},
		{Server: "fs", Name: "read.file"},
		{Server: "fs", Name: "read_file"},
		{Server: "a__b", Name: "c"},
		{Server: "a", Name: "b__c"},
		{Server: "long", Name: strings.Repeat("x", 80)},
		{Server: "long", Name: strings.Repeat("x", 81)},
		{Server: "evil", Name: "\x1b[2J日本"},
	}
	n := BuildNames(tools)
	seen := map[string]bool{}
	for _, tl := range tools {
		name := n.Model(tl)
		if !providerSafe.MatchString(name) {
			t.Errorf("%s: model name %q is not provider-safe", tl.Ref(), name)
		}
		if seen[name] {
			t.Errorf("%s: model name %q is not unique", tl.Ref(), name)
		}
		seen[name] = true
		if got, ok := n.Lookup(name); !ok || got != tl {
			t.Errorf("Lookup(%q) = %v, want %s", name, got, tl.Ref())
		}
	}
	if got := n.Model(tools[0]); got != "tasks__list_tasks" {
		t.Errorf("a safe, unique name should be kept readable: got %q", got)
	}
	if got := n.Model(tools[2]); got != "fs__read_file" {
		t.Errorf("got %q, want fs__read_file", got)
	}
	if a, b := n.Model(tools[3]), n.Model(tools[4]); a == "a__b__c" || b == "a__b__c" {
		t.Errorf("clashing names must both be disambiguated, got %q and %q", a, b)
	}
	if _, ok := n.Lookup("tasks__delete_everything"); ok {
		t.Error("an invented name must not resolve")
	}
	// Names are a function of the tool, not of listing order.
	rev := make([]*Tool, len(tools))
	for i, tl := range tools {
		rev[len(tools)-1-i] = tl
	}
	n2 := BuildNames(rev)
	for _, tl := range tools {
		if n.Model(tl) != n2.Model(tl) {
			t.Errorf("%s named %q then %q depending on order", tl.Ref(), n.Model(tl), n2.Model(tl))
		}
	}
}

func TestIdentity(t *testing.T) {
	a := Spec{Name: "a", Transport: TransportStdio, Command: "srv", Args: []string{"--x"}}
	b := a
	b.Name = "b"
	if a.Identity() != b.Identity() {
		t.Error("renaming a server in the config must not change what it is")
	}
	c := a
	c.Args = []string{"--y"}
	if a.Identity() == c.Identity() {
		t.Error("a different command line is a different server")
	}
	d := a
	d.Env = map[string]string{"TOKEN": "new"}
	if a.Identity() != d.Identity() {
		t.Error("environment values belong to consent, not identity")
	}
	dial := func(context.Context) (mcp.Transport, error) { return nil, nil }
	p1 := Spec{Name: "tasks", Transport: TransportInMemory, Dial: dial}
	p2 := Spec{Name: "bare", Transport: TransportInMemory, Dial: dial}
	if p1.Identity() == p2.Identity() {
		t.Error("two in-process servers must not share an identity")
	}
}
