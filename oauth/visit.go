package oauth

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/internal/netcheck"
	"github.com/mcphost/mcphost/sanitize"
	"golang.org/x/net/idna"
)

// CheckVisitURL checks an address a server asks the person to visit (a
// URL-mode elicitation) as [CheckAuthorizationURL] does, and also refuses
// plain http to any host but this machine: what the person types there
// would cross the network in the clear.
func CheckVisitURL(raw string) (*url.URL, error) {
	u, err := checkBrowserURL(raw, "address")
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(u.Scheme, "http") && !netcheck.IsLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("address refused: plain http to %s, which is not this machine (only https is opened)", sanitize.Line(u.Hostname()))
	}
	return u, nil
}

// HostNote spells out an internationalized host name of u in ASCII
// (punycode), so that a look-alike domain shows for what it is: "(the host
// name is xn--… in ASCII)". It is "" when the host is ASCII already.
func HostNote(u *url.URL) string {
	host := u.Hostname()
	ascii := true
	for i := 0; i < len(host); i++ {
		ascii = ascii && host[i] < utf8.RuneSelf
	}
	if ascii {
		return ""
	}
	puny, err := idna.Lookup.ToASCII(host)
	if err != nil {
		// Not a name a browser would look up as written: say so rather than
		// show it as if it were one.
		return "(the host name is not a valid internationalized name)"
	}
	return "(the host name is " + sanitize.Line(puny) + " in ASCII)"
}
