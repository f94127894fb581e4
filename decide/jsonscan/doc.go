// Package jsonscan is mcphost's one JSON scanner: it validates JSON text as
// strictly as encoding/json.Valid, walks valid text by byte offsets, decodes
// strings, and writes the two canonical forms that stored hashes are bound
// to. It is pure (standard library only, no I/O) and, once a caller's
// buffers have grown, does not allocate, which is why it exists at all:
// package decide looks into every call's arguments and package client
// hashes every listed tool, and encoding/json does neither without
// allocating.
//
// It lives under decide because decide imports nothing of the house but
// itself; client uses it from here.
//
// # The two canonical forms
//
// Two hashes that users' state files hold are computed over canonical JSON,
// and each form must stay byte for byte as it is, or stored pins and
// grants would stop matching:
//
//   - ArgsForm is the form of Canonical and of decide.ArgsHash, which Args
//     and Once grants are bound to. Object members are sorted by decoded key,
//     members with equal keys all kept in document order; strings are
//     re-encoded escaping only '"', '\\' and control characters.
//   - DefinitionForm is the form of the definition hash (client.Tool.Hash),
//     which every pin is bound to. It is what json.Marshal writes for what
//     decoding with UseNumber gives: the last of equal keys wins, and strings
//     also escape '<', '>', '&', U+2028 and U+2029. Package client walks
//     objects over its scanned tree and writes strings with AppendString.
//
// In both, numbers, true, false and null keep their written form, there is
// no insignificant whitespace, and invalid UTF-8 becomes U+FFFD.
package jsonscan
