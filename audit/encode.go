package audit

import (
	"encoding/json"
	"strconv"
)

// appendRecord appends r encoded exactly as json.Marshal encodes it, when
// every string in r is printable ASCII that JSON and HTML escaping leave
// as it is, and every raw value (Annotations, Args, Result) is valid JSON
// of such characters without white space, so that compacting it changes
// nothing. Otherwise ok is false and dst is returned unchanged: the caller
// uses json.Marshal. Encoding by reflection was about 7% of serve's
// processor time per read, and records are hashed as written, so a record
// must encode the same either way (TestAppendRecordIsMarshal).
func appendRecord(dst []byte, r *Record) (_ []byte, ok bool) {
	start := len(dst)
	fail := func() ([]byte, bool) { return dst[:start], false }
	u := r.Time.UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return fail() // json.Marshal reports it
	}
	e := encoder{b: dst, ok: true}
	e.b = append(e.b, `{"v":`...)
	e.b = strconv.AppendInt(e.b, int64(r.V), 10)
	e.b = append(e.b, `,"seq":`...)
	e.b = strconv.AppendUint(e.b, r.Seq, 10)
	e.b = append(e.b, `,"time":"`...)
	e.b = u.AppendFormat(e.b, stampLayout)
	e.b = append(e.b, '"')
	e.str(`,"kind":`, string(r.Kind))
	e.optStr(`,"sessionId":`, r.SessionID)
	e.optStr(`,"callId":`, r.CallID)
	if c := r.Client; c != nil {
		e.str(`,"client":{"name":`, c.Name)
		e.optStr(`,"version":`, c.Version)
		e.optStr(`,"session":`, c.Session)
		e.optStr(`,"id":`, c.ID)
		if p := c.Person; p != nil {
			e.str(`,"person":{"issuer":`, p.Issuer)
			e.str(`,"subject":`, p.Subject)
			e.optStr(`,"name":`, p.Name)
			e.optStr(`,"email":`, p.Email)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, '}')
	}
	e.optStr(`,"server":`, r.Server)
	e.optStr(`,"serverIdentity":`, r.ServerIdentity)
	e.b = append(e.b, `,"trusted":`...)
	e.b = strconv.AppendBool(e.b, r.Trusted)
	e.optStr(`,"tool":`, r.Tool)
	e.optStr(`,"defHash":`, r.DefHash)
	e.optRaw(`,"annotations":`, r.Annotations)
	e.optStr(`,"class":`, r.Class)
	e.optStr(`,"tier":`, r.Tier)
	e.optStr(`,"verdict":`, r.Verdict)
	e.optStr(`,"decidedBy":`, string(r.DecidedBy))
	e.optStr(`,"via":`, string(r.Via))
	if g := r.Grant; g != nil {
		e.str(`,"grant":{"scope":`, g.Scope)
		e.str(`,"via":`, string(g.Via))
		e.optStr(`,"callId":`, g.CallID)
		e.b = append(e.b, '}')
	}
	if len(r.Reasons) > 0 {
		e.b = append(e.b, `,"reasons":[`...)
		for i, s := range r.Reasons {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str("", s)
		}
		e.b = append(e.b, ']')
	}
	e.optStr(`,"argsHash":`, r.ArgsHash)
	e.optInt(`,"argsSize":`, r.ArgsSize)
	e.optStr(`,"taskId":`, r.TaskID)
	e.optStr(`,"approvalId":`, r.ApprovalID)
	e.optStr(`,"approvalState":`, r.ApprovalState)
	if p := r.Approver; p != nil {
		e.str(`,"approver":{"issuer":`, p.Issuer)
		e.str(`,"subject":`, p.Subject)
		e.optStr(`,"name":`, p.Name)
		e.optStr(`,"email":`, p.Email)
		e.b = append(e.b, '}')
	}
	if len(r.Attempts) > 0 {
		e.b = append(e.b, `,"attempts":[`...)
		for i, a := range r.Attempts {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, `{"n":`...)
			e.b = strconv.AppendInt(e.b, int64(a.N), 10)
			e.str(`,"outcome":`, string(a.Outcome))
			e.optStr(`,"detail":`, a.Detail)
			e.b = append(e.b, `,"durationMs":`...)
			e.b = strconv.AppendInt(e.b, a.DurationMS, 10)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.optStr(`,"status":`, string(r.Status))
	e.optInt(`,"durationMs":`, r.DurationMS)
	e.optStr(`,"resultHash":`, r.ResultHash)
	e.optInt(`,"resultSize":`, r.ResultSize)
	if r.Truncated {
		e.b = append(e.b, `,"truncated":true`...)
	}
	e.optRaw(`,"args":`, r.Args)
	e.optRaw(`,"result":`, r.Result)
	e.str(`,"prev":`, r.Prev)
	e.optStr(`,"hash":`, r.Hash)
	e.b = append(e.b, '}')
	if !e.ok {
		return fail()
	}
	return e.b, true
}

// encoder appends the members of a record; ok turns false at the first
// value it cannot write as json.Marshal would without escaping.
type encoder struct {
	b  []byte
	ok bool
}

func (e *encoder) str(key, s string) {
	if !plain(s) {
		e.ok = false
		return
	}
	e.b = append(e.b, key...)
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

func (e *encoder) optStr(key, s string) {
	if s != "" {
		e.str(key, s)
	}
}

func (e *encoder) optInt(key string, n int64) {
	if n != 0 {
		e.b = append(e.b, key...)
		e.b = strconv.AppendInt(e.b, n, 10)
	}
}

// optRaw writes raw as it is: json.Marshal compacts a json.RawMessage and
// escapes "<", ">" and "&" in it, which changes nothing in valid JSON of
// plain characters without white space.
func (e *encoder) optRaw(key string, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	for _, c := range raw {
		if c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			e.ok = false
			return
		}
	}
	if !json.Valid(raw) {
		e.ok = false
		return
	}
	e.b = append(e.b, key...)
	e.b = append(e.b, raw...)
}

// plain reports whether json.Marshal writes s between quotes as it is:
// printable ASCII but for the quote, the backslash and the characters it
// escapes for HTML.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
