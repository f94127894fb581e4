package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/ui"
	"github.com/mcphost/mcphost/ui/dialog"
)

// consentKey is the key under which a person's consent to the project
// server srv is recorded: the project file's absolute path (config.Load
// resolves it) and the server's name. A server of the same name in another
// project has another key and asks again. Server names cannot contain '#',
// so the key splits unambiguously at its last '#'.
func consentKey(srv config.Server) string {
	return srv.File + "#" + srv.Name
}

// legacyStartTimeout is the start timeout the configuration used to fill in
// for an entry without one; consent hashes still count it in.
const legacyStartTimeout = 30 * time.Second

// consentHash covers everything a person approves when they consent to a
// project server: the whole parsed entry, every field of config.Server
// (command, arguments, environment, working directory, URL, headers, OAuth
// client, timeouts, protocol version, transport, ...), values read from the
// environment included. It hashes the entry's canonical JSON, so a field
// added to config.Server later is covered without a change here; only
// Consented, which says what this run's command line did rather than what
// the file says, is left out.
//
// The interactive consent dialog and the headless check both use the key
// and hash computed here (see setup.pending), so a choice made in one
// applies in the other.
func consentHash(srv config.Server) string {
	srv.Consented = false // notConsented
	if srv.StartTimeout == 0 {
		// An entry without "startTimeout" hashes as it did when the
		// configuration filled in 30s, so that consents given then hold.
		srv.StartTimeout = legacyStartTimeout
	}
	raw, err := json.Marshal(srv)
	if err != nil {
		// config.Server holds strings, numbers, booleans, slices and maps
		// of strings: it always encodes.
		panic(fmt.Sprintf("encoding a server entry for its consent hash: %v", err))
	}
	// Decoding into maps and encoding again sorts every object's keys: the
	// hash does not depend on the order of the struct's fields.
	var tree any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		panic(fmt.Sprintf("decoding a server entry for its consent hash: %v", err))
	}
	canon, err := json.Marshal(tree)
	if err != nil {
		panic(fmt.Sprintf("encoding a server entry for its consent hash: %v", err))
	}
	sum := sha256.Sum256(append([]byte("mcphost project consent v2\n"), canon...))
	return hex.EncodeToString(sum[:])
}

// notConsented names the one field of config.Server that consentHash
// leaves out, and so entryFields too: it says what this run's command line
// did, not what the file says.
const notConsented = "Consented"

// entryFields are the fields of srv that its consent hash covers, in
// config.Server's order, each named as the config file names it and
// written for a person to read. Like consentHash, it walks every exported
// field of the struct (every field but notConsented), so a field added to
// config.Server later is shown without a change here; only how its value
// reads may need teaching (see fieldValue). Secrets are shown as set,
// never in full: header values and an OAuth client secret.
func entryFields(srv config.Server) []dialog.Field {
	return structFields("", reflect.ValueOf(srv))
}

func structFields(prefix string, v reflect.Value) []dialog.Field {
	var out []dialog.Field
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || prefix == "" && f.Name == notConsented {
			continue
		}
		name := prefix + configKey(f.Name)
		fv := v.Field(i)
		if fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.Struct {
			if fv.IsNil() {
				out = append(out, dialog.Field{Name: name, Value: "(not set)"})
				continue
			}
			out = append(out, structFields(name+".", fv.Elem())...)
			continue
		}
		out = append(out, dialog.Field{Name: name, Value: fieldValue(name, fv)})
	}
	return out
}

// configKey is the config file's key for a config.Server field name.
func configKey(field string) string {
	switch field {
	case "OAuth":
		return "oauth"
	case "URL":
		return "url"
	case "ClientID":
		return "clientId"
	}
	return strings.ToLower(field[:1]) + field[1:]
}

// secretFields are the fields whose values stay hidden.
var secretFields = []string{"headers", "oauth.clientSecret"}

// fieldValue writes one field's value for a person: strings quoted, lists
// and maps in full (keys sorted), durations with their unit, and the zero
// value said in words.
func fieldValue(name string, v reflect.Value) string {
	secret := slices.Contains(secretFields, name)
	if d, ok := v.Interface().(time.Duration); ok {
		if d == 0 {
			return "(not set: mcphost's default)"
		}
		return d.String()
	}
	if st, ok := v.Interface().(fmt.Stringer); ok {
		return st.String()
	}
	switch v.Kind() {
	case reflect.String:
		switch {
		case v.Len() == 0:
			return "(not set)"
		case secret:
			return "(set, hidden)"
		}
		return strconv.Quote(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Slice:
		if v.Len() == 0 {
			return "(none)"
		}
		words := make([]string, v.Len())
		for i := range v.Len() {
			words[i] = strconv.Quote(fmt.Sprint(v.Index(i).Interface()))
		}
		return strings.Join(words, " ")
	case reflect.Map:
		if v.Len() == 0 {
			return "(none)"
		}
		var pairs []string
		for _, k := range v.MapKeys() {
			val := strconv.Quote(fmt.Sprint(v.MapIndex(k).Interface()))
			if secret {
				val = "(hidden)"
			}
			pairs = append(pairs, strconv.Quote(fmt.Sprint(k.Interface()))+"="+val)
		}
		sort.Strings(pairs)
		return strings.Join(pairs, " ")
	}
	return fmt.Sprint(v.Interface())
}

// dialogSections are the fields the consent dialog shows in sections of
// its own (the name and transport in its headline, the command line,
// working directory, environment, URL, header names, the file and the
// variables read); every other field goes to its list of the rest.
var dialogSections = []string{"name", "transport", "command", "args", "env", "cwd", "url", "headers", "file", "vars"}

// restOfEntry are srv's entry fields but those named in skip.
func restOfEntry(srv config.Server, skip []string) []dialog.Field {
	var out []dialog.Field
	for _, f := range entryFields(srv) {
		if !slices.Contains(skip, f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// logged hides, in fields of srv written where others may read them (a
// CI log, rather than the person's own terminal), what may hold the
// person's secrets: the values of "env" when the entry reads variables
// from their environment, and the query and userinfo of "url".
func logged(srv config.Server, fs []dialog.Field) []dialog.Field {
	out := slices.Clone(fs)
	for i, f := range out {
		switch {
		case f.Name == "env" && len(srv.Vars) > 0 && len(srv.Env) > 0:
			names := make([]string, 0, len(srv.Env))
			for k := range srv.Env {
				names = append(names, strconv.Quote(k))
			}
			sort.Strings(names)
			out[i].Value = strings.Join(names, " ") + " (values hidden here because the entry reads your environment; the interactive consent shows them)"
		case f.Name == "url" && srv.URL != "":
			out[i].Value = strconv.Quote(client.RedactURL(srv.URL))
		}
	}
	return out
}

// joinFields writes fields on one line: name value, name value.
func joinFields(fs []dialog.Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name + " " + f.Value
	}
	return strings.Join(parts, ", ")
}

// resolvedCommandLine is srv's command line as it would run, for a person
// to read: a relative command path, and each argument that is a relative
// path to something in the server's working directory or starts with "./"
// or "../", shown resolved against that directory. The server is still
// started with its arguments as written; only what is shown changes, so
// that `python3 linter.py srv` reads as the program it will run.
func resolvedCommandLine(srv config.Server) []string {
	if srv.Command == "" {
		return nil
	}
	dir := srv.Cwd
	words := []string{srv.Command}
	if dir != "" && !filepath.IsAbs(srv.Command) && strings.ContainsRune(srv.Command, filepath.Separator) {
		words[0] = filepath.Join(dir, srv.Command)
	}
	for _, a := range srv.Args {
		words = append(words, resolveArg(dir, a))
	}
	return words
}

func resolveArg(dir, a string) string {
	if dir == "" || a == "" || filepath.IsAbs(a) || strings.HasPrefix(a, "-") {
		return a
	}
	if strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
		return filepath.Join(dir, a)
	}
	p := filepath.Join(dir, a)
	if _, err := os.Lstat(p); err == nil {
		return p
	}
	return a
}

// callCeiling is a call's absolute limit unless client.Options says
// otherwise. loadSetup sets it in the options it starts servers with, so
// that the limit a project server is held to and the one the client
// enforces are the same value.
const callCeiling = 10 * time.Minute

// pendingServer is a project server held until a person consents to it.
// key and hash are what the consent is recorded under and checked
// against, by the headless check in loadSetup and by the interactive
// dialog alike (runTUI hands them over as they are).
type pendingServer struct {
	srv       config.Server
	spec      client.Spec // as it would start (its call timeout clamped)
	key, hash string
}

// needsConsent says why the server is held and what it would run.
//
// It is read by others than the person (serve's initialize instructions go
// to the client's model; headless messages land in logs), so it shows the
// entry as config.Server.Shown does: no value read from the environment.
func (ps pendingServer) needsConsent(changed bool) string {
	srv := ps.srv.Shown()
	var b strings.Builder
	fmt.Fprintf(&b, "defined in the project file %s", srv.File)
	skip := []string{"name", "file", "vars"}
	if words := resolvedCommandLine(srv); len(words) > 0 {
		fmt.Fprintf(&b, "; it would run %s in %s", strings.Join(quoteWords(words), " "), srv.Cwd)
		skip = append(skip, "command", "args", "cwd")
	}
	fmt.Fprintf(&b, "; the entry also sets: %s", joinFields(logged(srv, restOfEntry(srv, skip))))
	if len(srv.Vars) > 0 {
		fmt.Fprintf(&b, "; it reads ${%s} from your environment", strings.Join(srv.Vars, "}, ${"))
	}
	b.WriteString("; ")
	if changed {
		b.WriteString("its entry changed since you consented (any field counts: command, arguments, environment, timeouts, ...); ")
	}
	b.WriteString("it starts only after you consent to this entry of this project file: run mcphost interactively to see it and choose, or consent here with mcphost mcp consent " + srv.Name + " [--untrusted], or pass --trust " + srv.Name + " to start and trust it for this run")
	return b.String()
}

// quoteWords quotes the words that would not read back as one word.
func quoteWords(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n\"'\\$`") {
			w = strconv.Quote(w)
		}
		out[i] = w
	}
	return out
}

// projectCallTimeout is the call timeout a project server gets: its own,
// unless that is above the call ceiling, which a project file can never
// raise (the client lets a longer call timeout extend the ceiling, which
// is the person's choice in their own config, not a project's). A clamped
// timeout is warned about.
func projectCallTimeout(srv config.Server, ceiling time.Duration, s *streams) time.Duration {
	if srv.CallTimeout <= ceiling {
		return srv.CallTimeout
	}
	fmt.Fprintf(s.Err, "mcphost: warning: %s: server %q: \"callTimeout\" %s is above the %s call ceiling, which a project file cannot raise; %s is used\n",
		srv.File, srv.Name, srv.CallTimeout, ceiling, ceiling)
	return ceiling
}

// projectServers are the servers waiting for consent as the interactive
// interface asks about them: with the consent key and hash the headless
// check used, never recomputed.
func (st *setup) projectServers() []ui.ProjectServer {
	var out []ui.ProjectServer
	for _, ps := range st.pending {
		out = append(out, ui.ProjectServer{
			Name: ps.srv.Name, File: ps.srv.File, Vars: ps.srv.Vars, Spec: ps.spec,
			CommandLine: resolvedCommandLine(ps.srv),
			ConsentKey:  ps.key, ConsentHash: ps.hash,
			Fields: restOfEntry(ps.srv, dialogSections),
		})
	}
	return out
}
