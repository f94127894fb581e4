package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// codexServer is a [mcp_servers.NAME] table of Codex's config.toml.
type codexServer struct {
	Command           string            `toml:"command"`
	Args              []string          `toml:"args"`
	Env               map[string]string `toml:"env"`
	EnvVars           []string          `toml:"env_vars"`
	Cwd               string            `toml:"cwd"`
	URL               string            `toml:"url"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
	BearerToken       string            `toml:"bearer_token"`
	HTTPHeaders       map[string]string `toml:"http_headers"`
	EnvHTTPHeaders    map[string]string `toml:"env_http_headers"`
	Enabled           *bool             `toml:"enabled"`
	StartupTimeoutSec *float64          `toml:"startup_timeout_sec"`
	ToolTimeoutSec    *float64          `toml:"tool_timeout_sec"`
	EnabledTools      []string          `toml:"enabled_tools"`
	DisabledTools     []string          `toml:"disabled_tools"`
}

// readCodex reads the [mcp_servers.NAME] tables of a Codex config.toml, in
// file order. Codex expands no ${...}, so "${" in a value is written as
// mcphost's literal "$${".
func readCodex(f ImportFile, data []byte) ([]Imported, error) {
	var doc struct {
		MCPServers map[string]toml.Primitive `toml:"mcp_servers"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{File: f.Path, Line: pe.Position.Line, Col: pe.Position.Col, Msg: pe.Message}
		}
		return nil, &Error{File: f.Path, Msg: err.Error(), Err: err}
	}
	// The servers in the order their tables appear.
	var names []string
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "mcp_servers" && !seen[k[1]] {
			if _, ok := doc.MCPServers[k[1]]; ok {
				seen[k[1]] = true
				names = append(names, k[1])
			}
		}
	}
	var out []Imported
	for _, name := range names {
		imp := Imported{Name: name, From: f.From, File: f.Path, Scope: f.Scope}
		var cs codexServer
		if err := md.PrimitiveDecode(doc.MCPServers[name], &cs); err != nil {
			imp.Skip = fmt.Sprintf("its table does not read as a Codex server: %v", err)
			out = append(out, imp)
			continue
		}
		convertCodex(&imp, cs)
		finish(&imp)
		out = append(out, imp)
	}
	return out, nil
}

func convertCodex(imp *Imported, cs codexServer) {
	e := &imp.Entry
	// Codex expands nothing: "${" in a field mcphost expands is literal.
	lit := func(s string) string { return strings.ReplaceAll(s, "${", "$${") }
	e.Command, e.Cwd, e.URL = cs.Command, cs.Cwd, lit(cs.URL)
	for _, a := range cs.Args {
		e.Args = append(e.Args, lit(a))
	}
	if len(cs.Env) > 0 {
		e.Env = map[string]string{}
		for k, v := range cs.Env {
			e.Env[k] = lit(v)
		}
	}
	e.Headers = map[string]string{}
	for k, v := range cs.HTTPHeaders {
		e.Headers[k] = lit(v)
	}
	// Headers whose values Codex reads from the environment become
	// references, which mcphost expands from the same environment.
	for h, v := range cs.EnvHTTPHeaders {
		if !validVarName(v) {
			imp.Notes = append(imp.Notes, fmt.Sprintf("header %q is left out: its variable name %q is not one mcphost can refer to", h, v))
			continue
		}
		e.Headers[h] = "${" + v + "}"
	}
	if cs.BearerTokenEnvVar != "" {
		if validVarName(cs.BearerTokenEnvVar) {
			e.Headers["Authorization"] = "Bearer ${" + cs.BearerTokenEnvVar + "}"
		} else {
			imp.Notes = append(imp.Notes, fmt.Sprintf("bearer_token_env_var %q is not a variable name mcphost can refer to; the token is left out", cs.BearerTokenEnvVar))
		}
	}
	if cs.BearerToken != "" {
		imp.Notes = append(imp.Notes, "bearer_token is left out: mcphost does not copy a token into its config; use bearer_token_env_var in Codex, or an \"Authorization\" header with ${NAME}")
	}
	if cs.Enabled != nil && !*cs.Enabled {
		e.Disabled = true
	}
	if cs.StartupTimeoutSec != nil && *cs.StartupTimeoutSec > 0 {
		e.StartTimeout = seconds(*cs.StartupTimeoutSec)
	}
	if cs.ToolTimeoutSec != nil && *cs.ToolTimeoutSec > 0 {
		e.CallTimeout = seconds(*cs.ToolTimeoutSec)
	}
	if len(cs.EnabledTools) > 0 || len(cs.DisabledTools) > 0 {
		imp.Notes = append(imp.Notes, "enabled_tools and disabled_tools are not imported: write \"permissions\" rules (deny) if you want to keep tools from running")
	}
}

func seconds(s float64) string {
	return strconv.FormatFloat(s, 'f', -1, 64) + "s"
}
