//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// serverKind is one MCP server program the sets are made of.
type serverKind struct {
	Label    string // for the table
	Prefix   string // server names are Prefix1, Prefix2, …
	ReadTool string // the read-only tool the model and the floor call
}

var (
	memoryServer = &serverKind{Label: "server-memory (npm)", Prefix: "mem", ReadTool: "read_graph"}
	tasksServer  = &serverKind{Label: "tasks fixture", Prefix: "tasks", ReadTool: "list_tasks"}
)

// serverSet is N copies of one server, each with its own state.
type serverSet struct {
	Name string
	Kind *serverKind
	N    int
}

var allSets = []serverSet{
	{"mem1", memoryServer, 1},
	{"mem10", memoryServer, 10},
	{"tasks1", tasksServer, 1},
	{"tasks10", tasksServer, 10},
	{"tasks50", tasksServer, 50},
}

func setNames() []string {
	var names []string
	for _, s := range allSets {
		names = append(names, s.Name)
	}
	return names
}

// ratioTarget is the paired ratio mcphost/floor the set should stay under;
// zero when the issue sets none.
func (s serverSet) ratioTarget() float64 {
	switch s.N {
	case 1:
		return 1.10
	case 10:
		return 1.05
	}
	return 0
}

// rssTargetMiB is the peak resident set mcphost itself should stay under.
const rssTargetMiB = 30

// serverSpec is one server as both sides start it.
type serverSpec struct {
	Name    string            `json:"name"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// servers returns the specs of the set's servers; state lives under dir.
func (e *benchEnv) servers(s serverSet, dir string) ([]serverSpec, error) {
	specs := make([]serverSpec, s.N)
	for i := range specs {
		name := s.Kind.Prefix + strconv.Itoa(i+1)
		switch s.Kind {
		case memoryServer:
			memDir := filepath.Join(dir, "memory")
			if err := os.MkdirAll(memDir, 0o755); err != nil {
				return nil, err
			}
			specs[i] = serverSpec{
				Name: name, Command: e.node, Args: []string{e.memoryServer},
				Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(memDir, name+".jsonl")},
			}
		case tasksServer:
			specs[i] = serverSpec{Name: name, Command: e.fixture, Args: []string{"tasks"}}
		default:
			return nil, fmt.Errorf("set %s: unknown server kind", s.Name)
		}
	}
	return specs, nil
}
