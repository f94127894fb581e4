// Package pgtest runs a real, throwaway PostgreSQL for tests: a cluster
// made with initdb in a temporary directory, served by postgres on a Unix
// socket in that directory (no TCP port, trust authentication), one
// database per test, stopped by its pid when the test ends.
//
// The binaries come from Debian's postgresql package (scripts/test.sh
// installs it): initdb and postgres on PATH, else the newest
// /usr/lib/postgresql/N/bin. Without them a test skips, saying so, unless
// CI is set: there it fails. PostgreSQL refuses to run as root, so under
// root the cluster belongs to, and runs as, the user nobody.
package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options configure a cluster.
type Options struct {
	// Durable keeps fsync on, as a production server has it: for
	// benchmarks. Tests run without it, for speed: a test never crashes
	// the machine.
	Durable bool
}

// Cluster is a running PostgreSQL server.
type Cluster struct {
	dir  string // holds data/ and the socket
	cmd  *exec.Cmd
	done chan struct{} // closed when postgres exited
	log  *logBuffer
	dbs  atomic.Int64
}

// binaries returns the directory of initdb and postgres.
func binaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no initdb and postgres on PATH nor in /usr/lib/postgresql/*/bin: install PostgreSQL (apt-get install postgresql, or run scripts/test.sh)")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initialises a cluster in a new temporary directory and starts
// postgres on it; the test's cleanup stops it and removes the directory.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	bin, err := binaries()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL is needed under CI: %v", err)
		}
		t.Skipf("PostgreSQL is not installed: %v", err)
	}
	// A short path of its own, not t.TempDir(): the socket's path must fit
	// in 107 bytes, and under root the directory is handed to nobody, which
	// t.TempDir's parent (mode 0700) would keep out.
	if len(os.TempDir()) > 70 {
		t.Fatalf("the temporary directory %s is too long a path for postgres's Unix socket (107 bytes with its name): set TMPDIR to a shorter one", os.TempDir())
	}
	dir, err := os.MkdirTemp("", "mcphost-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cred, err := runAs(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	args := []string{"-D", data, "-k", dir, "-c", "listen_addresses=", "-c", "max_connections=100"}
	if !o.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	c := &Cluster{dir: dir, done: make(chan struct{}), log: &logBuffer{}}
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	ready := make(chan struct{})
	go c.read(stderr, ready)
	go func() { c.cmd.Wait(); close(c.done) }()
	t.Cleanup(c.stop)
	select {
	case <-ready:
	case <-c.done:
		t.Fatalf("postgres exited before it was ready:\n%s", c.log)
	case <-time.After(60 * time.Second):
		t.Fatalf("postgres was not ready after a minute:\n%s", c.log)
	}
	return c
}

// runAs returns who the cluster runs as: this user, or nobody under root,
// with dir handed to them.
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL does not run as root, and there is no user nobody to run it as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// read keeps postgres's log and closes ready at its first "ready to
// accept connections".
func (c *Cluster) read(r io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(r)
	once := false
	for sc.Scan() {
		line := sc.Text()
		c.log.add(line)
		if !once && strings.Contains(line, "ready to accept connections") {
			once = true
			close(ready)
		}
	}
}

// stop ends postgres with a fast shutdown (SIGINT to its pid) and waits
// for it; a server that does not stop in time is killed.
func (c *Cluster) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	}
}

// URL returns the address of database db on the cluster.
func (c *Cluster) URL(db string) string {
	q := url.Values{"host": {c.dir}}
	return "postgres://postgres@/" + db + "?" + q.Encode()
}

// NewDB creates an empty database and returns its address.
func (c *Cluster) NewDB(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test%d", c.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatalf("connect to the test cluster: %v\n%s", err, c.log)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return c.URL(name)
}

// DB starts a cluster for the test and returns the address of a new
// database on it.
func DB(t testing.TB) string {
	t.Helper()
	return Start(t, Options{}).NewDB(t)
}

// Log returns what postgres logged so far.
func (c *Cluster) Log() string { return c.log.String() }

// logBuffer keeps the last lines postgres logged.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.lines) >= 200 {
		b.lines = b.lines[1:]
	}
	b.lines = append(b.lines, line)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}
