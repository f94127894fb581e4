package audit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// fullRecord returns a record with every field of Record, and of the
// structs in it, set to a value that is not its zero value, so that a
// field appendRecord does not know shows up as a difference.
func fullRecord(t testing.TB) *Record {
	t.Helper()
	r := &Record{}
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch {
		case v.Type() == reflect.TypeFor[Timestamp]():
			v.Set(reflect.ValueOf(Timestamp{time.Date(2026, 3, 1, 9, 30, 0, 123456789, time.FixedZone("x", 3600))}))
		case v.Type() == reflect.TypeFor[json.RawMessage]():
			v.SetBytes([]byte(`{"a":[1,true,null,"b"],"d":{}}`))
		default:
			switch v.Kind() {
			case reflect.String:
				v.SetString("x-" + v.Type().Name())
			case reflect.Int, reflect.Int64:
				v.SetInt(42)
			case reflect.Uint64:
				v.SetUint(7)
			case reflect.Bool:
				v.SetBool(true)
			case reflect.Struct:
				for i := range v.NumField() {
					fill(v.Field(i))
				}
			case reflect.Pointer:
				v.Set(reflect.New(v.Type().Elem()))
				fill(v.Elem())
			case reflect.Slice:
				v.Set(reflect.MakeSlice(v.Type(), 2, 2))
				fill(v.Index(0))
				fill(v.Index(1))
			default:
				t.Fatalf("Record has a field of kind %s: teach appendRecord and this test about it", v.Kind())
			}
		}
	}
	fill(reflect.ValueOf(r).Elem())
	return r
}

// TestAppendRecordIsMarshal: records are hashed as written, so the
// hand-written encoding must be json.Marshal's byte for byte, for every
// field; anything it cannot write as json.Marshal does falls back to it.
func TestAppendRecordIsMarshal(t *testing.T) {
	check := func(name string, r *Record, wantFast bool) {
		t.Helper()
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: json.Marshal: %v", name, err)
		}
		got, ok := appendRecord([]byte("prefix"), r)
		if ok != wantFast {
			t.Errorf("%s: appendRecord ok = %v, want %v", name, ok, wantFast)
		}
		if ok && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%s: appendRecord wrote\n%s\njson.Marshal writes\n%s", name, got, want)
		}
		if !ok && string(got) != "prefix" {
			t.Errorf("%s: appendRecord left %q after falling back, want the prefix alone", name, got)
		}
		// appendLine hashes the record without its hash, and appends it.
		unhashed := *r
		unhashed.Hash = ""
		body, err := json.Marshal(&unhashed)
		if err != nil {
			t.Fatal(err)
		}
		line, err := appendLine(nil, r)
		if err != nil {
			t.Fatalf("%s: appendLine: %v", name, err)
		}
		if !bytes.HasPrefix(line, append(body[:len(body)-1:len(body)-1], hashPrefix...)) || r.Hash != HashBytes(body) {
			t.Errorf("%s: appendLine wrote\n%s\nwant json.Marshal's\n%s\nwith the hash of that", name, line, body)
		}
	}
	check("every field set", fullRecord(t), true)
	check("zero record", &Record{}, true)
	check("intent", intent("s1", "call-1"), true)
	check("outcome, its result with a space", outcome("s1", "call-1"), false)
	o := outcome("s1", "call-1")
	o.Result = nil // as Append stores it without Options.RecordData
	check("outcome", o, true)
	for _, s := range []string{`a"b`, `a\b`, "a<b", "a>b", "a&b", "a\nb", "a\x00b", "a\x7fb", "été", "a\u2028b", "\xff"} {
		r := fullRecord(t)
		r.Attempts[1].Detail = s
		check("detail "+s, r, false)
		r = fullRecord(t)
		r.Reasons[0] = s
		check("reason "+s, r, false)
		r = fullRecord(t)
		r.Client.Version = s
		check("client version "+s, r, false)
		r = fullRecord(t)
		r.Client.Person.Name = s
		check("person's name "+s, r, false)
		r = fullRecord(t)
		r.Approver.Email = s
		check("approver's email "+s, r, false)
	}
	for _, raw := range []string{`{"a": 1}`, "{\"a\":\n1}", `{"a":"<b>"}`, `{"a":"&"}`, `"é"`} {
		r := fullRecord(t)
		r.Annotations = json.RawMessage(raw)
		check("raw "+raw, r, false)
	}
	r := fullRecord(t)
	r.Result = json.RawMessage(`{"a":`)
	if _, ok := appendRecord(nil, r); ok {
		t.Error("appendRecord took invalid raw JSON")
	}
	if _, err := appendLine(nil, r); err == nil {
		t.Error("appendLine took invalid raw JSON")
	}
	r = fullRecord(t)
	r.Time = Timestamp{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, ok := appendRecord(nil, r); ok {
		t.Error("appendRecord took the year 10000")
	}
}

// FuzzAppendRecord: whatever the strings and raw values, appendRecord
// either writes what json.Marshal writes or leaves it to json.Marshal.
func FuzzAppendRecord(f *testing.F) {
	for _, seed := range []struct{ s, raw string }{
		{"plain", `{"a":1}`}, {`q"`, `[1,2]`}, {"é", `"x y"`}, {"<", `{"a":"<"}`}, {"", ""}, {"a\u2028", `nul`},
	} {
		f.Add(seed.s, []byte(seed.raw))
	}
	f.Fuzz(func(t *testing.T, s string, raw []byte) {
		r := fullRecord(t)
		r.Tool, r.Reasons[1], r.Attempts[0].Detail, r.Client.Name = s, s, s, s
		r.Args = raw
		want, err := json.Marshal(r)
		got, ok := appendRecord(nil, r)
		if ok && (err != nil || !bytes.Equal(got, want)) {
			t.Fatalf("appendRecord wrote\n%s\njson.Marshal writes\n%s (error %v)", got, want, err)
		}
	})
}
