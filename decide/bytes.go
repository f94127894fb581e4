package decide

import "bytes"

// hasByte reports whether c occurs in b.
func hasByte(b []byte, c byte) bool { return bytes.IndexByte(b, c) >= 0 }
