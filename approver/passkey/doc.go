// Package passkey lets a person approve one tool call with a passkey or
// security key (WebAuthn), so that an approval shows that a person was there
// and not only that some process answered.
//
// # Contract
//
// An [RP] is the relying party of one approval page. [RP.BeginEnroll] and
// [RP.FinishEnroll] register a credential (user verification required, a
// discoverable credential preferred, attestation "none") and keep it in a
// file in mcphost's state directory ([Load] reads it). [RP.BeginAssert]
// makes a challenge for exactly one call: the SHA-256 of a canonical,
// length-prefixed encoding of its [Binding] (client, server, tool,
// definition hash, argument hash), a fresh 32-byte nonce and the ceremony's
// expiry. [RP.FinishAssert] returns nil only if all of these hold:
//
//   - the ceremony token is one this RP made, it has not expired (default
//     two minutes by the injected clock), and it was not used before — a
//     token is spent by its first FinishAssert, whatever that call's
//     outcome, also when several run at once;
//   - the binding given now equals the one the challenge was made for;
//   - the browser reports the page's own origin, and the authenticator
//     signed for the RP ID;
//   - the authenticator data has the user-verified flag;
//   - the signature verifies with the public key of an enrolled credential;
//   - the signature counter moved forward, or it is 0 and was 0 (many
//     passkeys keep no counter); a counter that goes back is refused as a
//     cloned authenticator.
//
// Each of these refusals wraps one of the package's Err values, so a caller
// can tell which check failed; a credential file that cannot be read is a
// *state.CorruptError or *state.VersionError instead.
//
// # What it proves, and what it does not
//
// A nil FinishAssert shows that someone holding an enrolled authenticator,
// present and verified by it (PIN or biometric), approved this call — this
// client, server, tool, definition and these arguments — in a browser at
// the page's origin, within the ceremony's lifetime, once. A process running
// as the same user cannot produce that alone: it can call the page, but it
// cannot make the authenticator sign without the person.
//
// It does not show that the person read or understood what the page
// showed, that the page showed the call truthfully (the page's job), or
// that the machine is free of malware with the person's privileges in the
// browser. Someone who can write the credential file can enroll their own
// key, as with every file in the state directory. Attestation is not
// verified: any authenticator that does WebAuthn may be enrolled, and the
// AAGUID it reports is recorded, not trusted.
package passkey
