package client

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxModelName is the longest tool name every provider accepts.
const MaxModelName = 64

// Names maps each tool to a name that every model provider accepts
// (characters [A-Za-z0-9_-], at most 64 of them) and back. The way back is a
// table lookup, never parsing: a model that invents a name gets nothing.
type Names struct {
	toModel map[string]string // "server/tool" -> model name
	toTool  map[string]*Tool
}

// BuildNames names every tool. The name is "server__tool" when that is
// already safe, short enough and unique; otherwise it is cut and suffixed
// with a short hash of "server/tool", so a tool's name does not depend on
// the order in which servers answered.
func BuildNames(tools []*Tool) *Names {
	n := &Names{toModel: make(map[string]string, len(tools)), toTool: make(map[string]*Tool, len(tools))}
	base := make([]string, len(tools))
	count := make(map[string]int, len(tools))
	for i, t := range tools {
		base[i] = t.Server + "__" + t.Name
		count[base[i]]++
	}
	for i, t := range tools {
		name := base[i]
		if count[name] > 1 || len(name) > MaxModelName || !safeName(name) {
			name = hashedName(t, 6)
			for l := 8; n.toTool[name] != nil && l <= 32; l += 2 {
				name = hashedName(t, l)
			}
		}
		n.toModel[t.Ref()] = name
		n.toTool[name] = t
	}
	return n
}

// Model returns the provider-safe name of the tool, or "" if it is not in
// the table.
func (n *Names) Model(t *Tool) string { return n.toModel[t.Ref()] }

// Lookup returns the tool a model-facing name stands for.
func (n *Names) Lookup(model string) (*Tool, bool) {
	t, ok := n.toTool[model]
	return t, ok
}

func hashedName(t *Tool, hexLen int) string {
	sum := sha256.Sum256([]byte(t.Ref()))
	suffix := "_" + hex.EncodeToString(sum[:])[:hexLen]
	s := sanitizeName(t.Server) + "__" + sanitizeName(t.Name)
	if max := MaxModelName - len(suffix); len(s) > max {
		s = s[:max]
	}
	return s + suffix
}

func safeName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			return false
		}
	}
	return s != ""
}

func safeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func sanitizeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if safeByte(s[i]) {
			b.WriteByte(s[i])
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
