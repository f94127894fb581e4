package audit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedact(t *testing.T) {
	const R = `"[REDACTED]"`
	tests := []struct {
		name, in, want string
	}{
		// Secret keys, any value, any depth.
		{"token", `{"token":"abc"}`, `{"token":` + R + `}`},
		{"access_token", `{"access_token":"abc","n":1}`, `{"access_token":` + R + `,"n":1}`},
		{"accessToken", `{"accessToken":"abc"}`, `{"accessToken":` + R + `}`},
		{"X-Auth-Token header", `{"X-Auth-Token":"abc"}`, `{"X-Auth-Token":` + R + `}`},
		{"secret object", `{"client_secret":{"v":"abc","n":[1,2]}}`, `{"client_secret":` + R + `}`},
		{"password number", `{"password":12345}`, `{"password":` + R + `}`},
		{"PASSWORD", `{"DB_PASSWORD":"x"}`, `{"DB_PASSWORD":` + R + `}`},
		{"passwd", `{"passwd":"x"}`, `{"passwd":` + R + `}`},
		{"passphrase", `{"passphrase":"x"}`, `{"passphrase":` + R + `}`},
		{"Authorization", `{"headers":{"Authorization":"Basic eDp5"}}`, `{"headers":{"Authorization":` + R + `}}`},
		{"api_key", `{"api_key":"x"}`, `{"api_key":` + R + `}`},
		{"apiKey", `{"apiKey":"x"}`, `{"apiKey":` + R + `}`},
		{"APIKey", `{"APIKey":"x"}`, `{"APIKey":` + R + `}`},
		{"x-api-key", `{"x-api-key":"x"}`, `{"x-api-key":` + R + `}`},
		{"APIKEY", `{"OPENAI_APIKEY":"x"}`, `{"OPENAI_APIKEY":` + R + `}`},
		{"key", `{"key":"x"}`, `{"key":` + R + `}`},
		{"private_key", `{"private_key":"x"}`, `{"private_key":` + R + `}`},
		{"aws secret", `{"aws_secret_access_key":"x"}`, `{"aws_secret_access_key":` + R + `}`},
		{"cookie", `{"Cookie":"a=b"}`, `{"Cookie":` + R + `}`},
		{"Set-Cookie list", `{"Set-Cookie":["a=b","c=d"]}`, `{"Set-Cookie":` + R + `}`},
		{"session", `{"session":"x"}`, `{"session":` + R + `}`},
		{"sessionId", `{"sessionId":"x"}`, `{"sessionId":` + R + `}`},
		{"credentials", `{"credentials":{"user":"u"}}`, `{"credentials":` + R + `}`},
		{"nested in arrays", `[{"a":[{"secret":"x"}]},{"token":null}]`, `[{"a":[{"secret":` + R + `}]},{"token":` + R + `}]`},
		{"escaped key", `{"pass\u0077ord":"x"}`, `{"pass\u0077ord":` + R + `}`},

		// Secret-looking values under innocent keys.
		{"bearer header", `{"h":"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc"}`, `{"h":` + R + `}`},
		{"bearer in text", `{"msg":"sent Authorization: Bearer abcdef0123456789xyz ok"}`, `{"msg":"sent Authorization: [REDACTED] ok"}`},
		{"jwt", `["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl"]`, `[` + R + `]`},
		{"openai key", `{"v":"sk-proj-abcdefghijklmnopqrstuvwxyz"}`, `{"v":` + R + `}`},
		{"github token", `{"v":"use ghp_abcdefghijklmnopqrstuvwxyz0123456789"}`, `{"v":"use [REDACTED]"}`},
		{"aws key id", `{"v":"AKIAIOSFODNN7EXAMPLE"}`, `{"v":` + R + `}`},
		{"slack", `{"v":"xoxb-1234-5678-abcdefgh"}`, `{"v":` + R + `}`},
		{"url password", `{"dsn":"postgres://admin:hunter2@db:5432/x"}`, `{"dsn":"[REDACTED]db:5432/x"}`},
		{"pem", `{"v":"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----\n"}`, `{"v":"[REDACTED]\n"}`},
		{"json inside a string", `{"text":"{\"token\":\"abc\",\"n\":1}"}`, `{"text":"{\"token\":\"[REDACTED]\",\"n\":1}"}`},

		// Untouched, byte for byte.
		{"plain", `{"path":"docs/x.md","n":1.50,"ok":true,"tags":["a","b"],"none":null}`, ""},
		{"whitespace and order", "{ \"z\" : 1 ,\n \"a\" : [ 1 , 2 ] }", ""},
		{"innocent keys", `{"keyword":"k","author":"a","monkey":1,"passenger":2,"title":"token economy"}`, ""},
		{"short bearer", `{"msg":"a bearer of news"}`, ""},
		{"url without password", `{"u":"https://user@example.com/x"}`, ""},
		{"escapes kept", `{"s":"a\u00e9\n\"q\""}`, ""},
		{"scalar", `42`, ""},
		{"empty", `{}`, ""},

		// Not JSON: nothing can be kept.
		{"invalid", `{"token":`, `"[REDACTED: not valid JSON]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			got := Redact(json.RawMessage(tt.in))
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("Redact(%s) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if !json.Valid(got) {
				t.Errorf("Redact(%s) = %s, not valid JSON", tt.in, got)
			}
		})
	}
	if got := Redact(nil); got != nil {
		t.Errorf("Redact(nil) = %q, want nil", got)
	}
}

func TestKeyWords(t *testing.T) {
	for in, want := range map[string]string{
		"apiKey":        "api key",
		"APIKey":        "api key",
		"X-APIKey":      "x api key",
		"access_token":  "access token",
		"OAuth2Token":   "o auth2 token",
		"sessionID":     "session id",
		"  weird..key ": "weird key",
		"":              "",
	} {
		if got := strings.Join(keyWords(in), " "); got != want {
			t.Errorf("keyWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{`{"token":"x"}`, `[1,"Bearer abcdefghijklmnop1234"]`, `{"a":{"b":[{"password":{}}]}}`, `"{\"key\":1}"`, ` 1 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := Redact(in)
		if !json.Valid(out) {
			t.Fatalf("Redact(%q) = %q, not valid JSON", in, out)
		}
		if again := Redact(out); string(again) != string(out) {
			t.Fatalf("Redact is not idempotent: %q then %q", out, again)
		}
	})
}
