package client

import (
	"net/url"
	"strings"
)

// Redacted stands in for a secret taken out of a URL.
const Redacted = "REDACTED"

// RedactURL returns raw with everything that may be a credential replaced by
// REDACTED: the userinfo, every query value (keys stay, so a person can tell
// which parameter was set) and the fragment. Scheme, host, port and path are
// kept. It is the form in which a server's URL is shown or put into an error:
// a configuration such as "https://host/mcp?token=${TOKEN}" must not print the
// token. A string that does not parse as a URL keeps only what comes before
// any "?", "#" or userinfo.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactUnparsed(raw)
	}
	if u.User != nil {
		u.User = url.User(Redacted)
	}
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery = redactQuery(u.RawQuery)
	}
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment = Redacted, ""
	}
	if u.Opaque != "" {
		// "host:port?…" and similar parse with an opaque part that may hold
		// anything: keep none of it.
		u.Opaque = Redacted
	}
	return u.String()
}

// redactQuery keeps the keys of a query and replaces each value. A bare
// element without "=" may itself be the secret and is replaced whole.
func redactQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		switch {
		case p == "":
		case ok:
			parts[i] = k + "=" + Redacted
		default:
			parts[i] = Redacted
		}
	}
	return strings.Join(parts, "&")
}

// redactUnparsed cuts a string url.Parse refused at the first character that
// could start a query, a fragment or end a userinfo.
func redactUnparsed(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i] + "?" + Redacted
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = Redacted + rest[at:]
	}
	if ok {
		return scheme + "://" + rest
	}
	return rest
}
