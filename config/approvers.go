package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// ApproverRoute is one entry of the managed policy's "approvers": the
// calls it matches — of these tiers, on a server whose name matches
// Server, of a tool whose raw name matches Tool ('*' matches any run of
// characters; an empty pattern or list matches every call) — are approved
// on serve's team page only by a member of Group, the group the approver's
// login names in its "groups" claim; with FourEyes, never by the person
// whose call it is.
type ApproverRoute struct {
	Tiers    []string
	Server   string
	Tool     string
	Group    string
	FourEyes bool
	At       string // "FILE:LINE:COL" of the entry
}

// Matches reports whether the route takes a call of tool on server
// decided at tier ("T3").
func (r *ApproverRoute) Matches(server, tool, tier string) bool {
	if len(r.Tiers) > 0 && !slices.Contains(r.Tiers, tier) {
		return false
	}
	if r.Server != "" && !starMatch(r.Server, server) {
		return false
	}
	return r.Tool == "" || starMatch(r.Tool, tool)
}

// ApproverRoute returns the first route of the managed "approvers" that
// takes the call, nil when none does (the caller approves their own
// call). Safe on a nil *Managed.
func (m *Managed) ApproverRoute(server, tool, tier string) *ApproverRoute {
	if m == nil {
		return nil
	}
	for i := range m.Approvers {
		if m.Approvers[i].Matches(server, tool, tier) {
			return &m.Approvers[i]
		}
	}
	return nil
}

// maxGroup bounds a group name in "approvers".
const maxGroup = 128

var managedApproverKeys = []string{"tiers", "server", "tool", "group", "fourEyes"}

// approvers reads the managed "approvers": a list of routes.
func (p *parser) approvers(f member) ([]ApproverRoute, error) {
	v := f.val
	if v.kind != kindArray {
		return nil, p.errorf(v.start, `expected an array for "approvers", got %s; write [{"tiers": ["T3"], "server": "prod-*", "group": "owners", "fourEyes": true}]`, v.kind)
	}
	out := []ApproverRoute{}
	for i, e := range v.elems {
		where := fmt.Sprintf(`in "approvers"[%d]`, i)
		if e.kind != kindObject {
			return nil, p.errorf(e.start, `expected an object %s, got %s; write {"server": "prod-*", "group": "owners"}`, where, e.kind)
		}
		r := ApproverRoute{At: p.at(e.start)}
		for _, g := range p.uniq(e, where) {
			var err error
			switch g.key {
			case "tiers":
				r.Tiers, err = p.strList(g.val, `"tiers"`, where)
				for j, t := range r.Tiers {
					if err == nil && !slices.Contains(AskTiers, t) {
						err = p.errorf(g.val.elems[j].start, `unknown tier %q %s; expected some of %s (T0 never asks)`, short(t), where, strings.Join(AskTiers, ", "))
					}
				}
			case "server":
				r.Server, err = p.str(g.val, `"server"`, where)
			case "tool":
				r.Tool, err = p.str(g.val, `"tool"`, where)
			case "group":
				r.Group, err = p.str(g.val, `"group"`, where)
				if err == nil && (r.Group == "" || len(r.Group) > maxGroup || strings.IndexFunc(r.Group, func(c rune) bool { return !unicode.IsPrint(c) }) >= 0) {
					err = p.errorf(g.val.start, `"group" %s must be a group name as the issuer writes it in its "groups" claim (printable, at most %d bytes), got %q`, where, maxGroup, short(r.Group))
				}
			case "fourEyes":
				r.FourEyes, err = p.boolean(g.val, `"fourEyes"`, where)
			default:
				err = p.strictKey(g, where, managedApproverKeys)
			}
			if err != nil {
				return nil, err
			}
		}
		if r.Group == "" {
			return nil, p.errorf(e.start, `"approvers"[%d] needs a "group": the approver group (a value of the login's "groups" claim) whose members approve the calls it matches`, i)
		}
		out = append(out, r)
	}
	return out, nil
}
