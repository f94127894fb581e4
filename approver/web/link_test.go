package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestABrowserWithoutTheLinkIsToldToOpenIt: a browser sent to the page
// without having opened the printed link (a host opening the page at a
// held call names it without the secret) is refused, and the refusal
// tells the person to open the printed link; it shows no call.
func TestABrowserWithoutTheLinkIsToldToOpenIt(t *testing.T) {
	h := start(t, Options{})
	h.p.Apply(question("q-1"))
	for _, path := range []string{"/", "/cards"} {
		resp, body := h.get(path, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s without the link's cookie: %s, want 403", path, resp.Status)
		}
		if !strings.Contains(body, "This browser has not opened the page") || !strings.Contains(body, "Open the link mcphost printed when the page started") {
			t.Errorf("GET %s without the link's cookie does not tell the person to open the printed link:\n%s", path, body)
		}
		if strings.Contains(body, "delete_task") || strings.Contains(body, h.p.secret) {
			t.Errorf("GET %s without the link's cookie shows the call or the secret:\n%s", path, body)
		}
	}
}

// TestTheLinksSecretIsMadeAnewAtEachStart: each start of the page makes
// its own secret (256 random bits), so a link printed at one start opens
// no page of another; the refusal says the link changes at each start.
func TestTheLinksSecretIsMadeAnewAtEachStart(t *testing.T) {
	first, second := start(t, Options{}), start(t, Options{})
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, p := range []*Page{first.p, second.p} {
		k, _ := url.Parse(p.Link())
		if got := k.Query().Get("k"); got != p.secret || !hex64.MatchString(got) {
			t.Fatalf("the link %s carries %q, want the page's secret of 64 hex digits", p.Link(), got)
		}
	}
	if first.p.secret == second.p.secret {
		t.Fatalf("two starts made the same secret %q", first.p.secret)
	}
	resp, body := second.do(mustReq(t, "GET", "http://"+second.p.Addr()+"/open?k="+first.p.secret, ""))
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 || !strings.Contains(body, "changes each time it starts") {
		t.Fatalf("the first start's secret at the second page: %s, cookies %v:\n%s\nwant 403, no cookie, saying the link changes at each start", resp.Status, resp.Cookies(), body)
	}
	if resp, _ := second.do(mustReq(t, "GET", second.p.Link(), "")); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the second page's own link: %s, want 303", resp.Status)
	}
}
