package config

import "path/filepath"

// place is where a project file is, in the form a consent is bound to.
type place struct {
	file string // the project file's absolute path, symbolic links resolved
	dir  string // the working directory its servers start in, absolute
}

// projectPlace locates the project file path found in workDir. A consent
// to a project server is bound to its file (so the same entry in another
// project asks again) and to the directory its relative paths resolve in
// (so a project file that is a symbolic link to a consented one does not
// start the linking project's own programs unasked). Symbolic links are
// resolved where they exist; a path that cannot be resolved is kept
// absolute and clean, which can only make a consent ask again.
func projectPlace(workDir, file string) place {
	return place{file: realPath(file), dir: realPath(workDir)}
}

// place fixes s's File and, for a stdio server, makes its Cwd absolute:
// the project's working directory when the entry sets none, or the
// entry's "cwd" resolved against it. The server then starts in the same
// directory whatever mcphost's own working directory is, and a consent
// prompt can show exactly where.
func (p place) place(s *Server) {
	s.File = p.file
	if s.Transport != TransportStdio {
		return
	}
	switch {
	case s.Cwd == "":
		s.Cwd = p.dir
	case !filepath.IsAbs(s.Cwd):
		s.Cwd = realPath(filepath.Join(p.dir, s.Cwd))
	default:
		s.Cwd = realPath(s.Cwd)
	}
}

// realPath returns path absolute and clean, with symbolic links resolved
// when it exists.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}
