package config

// ManagedPath is where the managed policy is read from on this system:
// /etc/mcphost/managed.json on Linux and other Unix systems,
// /Library/Application Support/mcphost/managed.json on macOS, and
// C:\ProgramData\mcphost\managed.json on Windows.
//
// It is a constant on purpose. No flag, environment variable or user file
// can point mcphost at another policy (or at none), which is what makes it
// a policy users cannot loosen; on Windows that is why it is not read from
// %ProgramData%, which any user can set. Tests reach a policy elsewhere
// only by calling LoadManaged with their own path from a _test.go file;
// the released binary has no other way in.
const ManagedPath = managedPath
