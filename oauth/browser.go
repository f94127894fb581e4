package oauth

import (
	"errors"
	"os/exec"
	"runtime"
)

// ErrNoBrowser is returned by [OpenBrowser] when the system has no way to
// open a URL that mcphost knows of.
var ErrNoBrowser = errors.New("no program to open a browser with")

// OpenBrowser opens an authorization URL in the person's browser. The URL is
// checked with [CheckAuthorizationURL] first and passed to the system's
// opener as a single argument, never through a shell. It returns once the
// opener started.
func OpenBrowser(rawURL string) error {
	u, err := CheckAuthorizationURL(rawURL)
	if err != nil {
		return err
	}
	name, args := "xdg-open", []string{}
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return ErrNoBrowser
	}
	cmd := exec.Command(path, append(args, u.String())...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap it; whether the browser liked the URL is not ours to know
	return nil
}
