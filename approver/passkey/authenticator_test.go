package passkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// Authenticator data flags (WebAuthn §6.1).
const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

var b64 = base64.RawURLEncoding

// softKey is a software authenticator holding one ECDSA P-256 credential,
// enough to answer navigator.credentials.create and .get the way a browser
// relays an authenticator's answer.
type softKey struct {
	key    *ecdsa.PrivateKey
	id     []byte
	handle []byte // user.id from the creation options
	aaguid [16]byte
}

func newSoftKey(t testing.TB) *softKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &softKey{key: k, id: id, aaguid: [16]byte{0xad, 0xce, 0x00, 0x02}}
}

// ceremony is what a test reads from the options JSON.
type ceremony struct {
	Challenge string `json:"challenge"`
	RP        struct {
		ID string `json:"id"`
	} `json:"rp"`
	RPID string `json:"rpId"`
	User struct {
		ID string `json:"id"`
	} `json:"user"`
}

func parseOptions(t testing.TB, options []byte) ceremony {
	t.Helper()
	var c ceremony
	if err := json.Unmarshal(options, &c); err != nil {
		t.Fatalf("options are not JSON: %v\n%s", err, options)
	}
	if c.Challenge == "" {
		t.Fatalf("options have no challenge:\n%s", options)
	}
	return c
}

func clientData(t testing.TB, typ, challenge, origin string) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func authData(rpID string, flags byte, counter uint32) []byte {
	h := sha256.Sum256([]byte(rpID))
	d := append(h[:], flags)
	return binary.BigEndian.AppendUint32(d, counter)
}

// create answers BeginEnroll's options. rpID "" means the options' own.
func (k *softKey) create(t testing.TB, options []byte, origin, rpID string, flags byte) []byte {
	t.Helper()
	o := parseOptions(t, options)
	if rpID == "" {
		rpID = o.RP.ID
	}
	handle, err := b64.DecodeString(o.User.ID)
	if err != nil {
		t.Fatalf("user.id %q: %v", o.User.ID, err)
	}
	k.handle = handle
	pub, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         1, // P-256
		XCoord:        k.key.X.FillBytes(make([]byte, 32)),
		YCoord:        k.key.Y.FillBytes(make([]byte, 32)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ad := authData(rpID, flags|flagAT, 0)
	ad = append(ad, k.aaguid[:]...)
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(k.id)))
	ad = append(ad, k.id...)
	ad = append(ad, pub...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	if err != nil {
		t.Fatal(err)
	}
	return k.marshal(t, map[string]any{
		"clientDataJSON":    b64.EncodeToString(clientData(t, "webauthn.create", o.Challenge, origin)),
		"attestationObject": b64.EncodeToString(att),
		"transports":        []string{"internal"},
	})
}

// get answers BeginAssert's options, signing with the given counter.
func (k *softKey) get(t testing.TB, options []byte, origin, rpID string, flags byte, counter uint32) []byte {
	t.Helper()
	o := parseOptions(t, options)
	if rpID == "" {
		rpID = o.RPID
	}
	cd := clientData(t, "webauthn.get", o.Challenge, origin)
	ad := authData(rpID, flags, counter)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return k.marshal(t, map[string]any{
		"clientDataJSON":    b64.EncodeToString(cd),
		"authenticatorData": b64.EncodeToString(ad),
		"signature":         b64.EncodeToString(sig),
		"userHandle":        b64.EncodeToString(k.handle),
	})
}

func (k *softKey) marshal(t testing.TB, response map[string]any) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"id":                      b64.EncodeToString(k.id),
		"rawId":                   b64.EncodeToString(k.id),
		"type":                    "public-key",
		"authenticatorAttachment": "platform",
		"response":                response,
		"clientExtensionResults":  map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}
