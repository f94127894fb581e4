//go:build !unix

package config

// managedPermWarnings checks nothing where Unix ownership does not apply;
// on Windows the administrator sets the file's ACL.
func managedPermWarnings(string) []Warning { return nil }
