package oauth_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/oauth"
)

func TestCheckVisitURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string // "" for accepted, else a part of the error
	}{
		{"https://example.com/login", ""},
		{"http://127.0.0.1:8080/cb", ""},
		{"http://localhost/cb", ""},
		{"http://[::1]:9/cb", ""},
		{"http://example.com/login", "plain http to example.com"},
		{"HTTP://example.com/login", "plain http"},
		{"http://10.0.0.1/", "plain http"},
		{"http://\u0430pple.com/", "plain http"},
		{"javascript:alert(1)", `scheme "javascript"`},
		{"file:///etc/passwd", `scheme "file"`},
		{"https://user:pw@example.com/", "credentials"},
		{"https://example.com/\u202e", "contains"},
		{"-https://example.com/", "starts with '-'"},
	} {
		_, err := oauth.CheckVisitURL(tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q refused: %v", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want an error with %q", tc.url, err, tc.want)
		}
	}
}

func TestHostNote(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://example.com/", ""},
		{"https://Example.COM/", ""},
		{"https://127.0.0.1:8/", ""},
		{"https://[::1]:8/", ""},
		{"https://\u0430pple.com/", "(the host name is xn--pple-43d.com in ASCII)"},
		{"https://\uff45xample.com/", "(the host name is example.com in ASCII)"},
		{"https://b\u00fccher.example/", "(the host name is xn--bcher-kva.example in ASCII)"},
		{"https://exa\u200dmple.com/", "(the host name is not a valid internationalized name)"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := oauth.HostNote(u); got != tc.want {
			t.Errorf("HostNote(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
