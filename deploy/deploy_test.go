package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/serve"
)

// cancelWait is how long serve, once the drain is over, waits for the calls
// it cancelled to record their outcomes, plus the moment it gives their
// answers: a grace period must cover the drain and this.
const cancelWait = serve.CancelledWait + serve.AnswerGrace

// docs reads every YAML document of path, refusing duplicate keys and
// anything that is not YAML.
func docs(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed YAML: %v", path, err)
		}
		if d != nil {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no YAML document", path)
	}
	return out
}

// at walks m by keys (a string for a map, an int for a list) and returns
// what is there, failing the test when a step is missing.
func at(t *testing.T, what string, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok || m[k] == nil {
				t.Fatalf("%s: no %q in %v", what, k, v)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || len(l) <= k {
				t.Fatalf("%s: no item %d in %v", what, k, v)
			}
			v = l[k]
		}
	}
	return v
}

func str(t *testing.T, what string, v any, path ...any) string {
	t.Helper()
	s, ok := at(t, what, v, path...).(string)
	if !ok {
		t.Fatalf("%s: %v at %v is not a string", what, at(t, what, v, path...), path)
	}
	return s
}

// flagValue is the value after flag in args.
func flagValue(t *testing.T, what string, args []any, flag string) string {
	t.Helper()
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1].(string)
		}
	}
	t.Fatalf("%s: no %s in %v", what, flag, args)
	return ""
}

// kube reads the Kubernetes manifests by kind, checking that each has its
// apiVersion, kind and name and that kustomization.yaml lists every file.
func kube(t *testing.T) map[string]map[string]any {
	t.Helper()
	dir := "kubernetes"
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]map[string]any{}
	var listed []any
	for _, f := range files {
		for _, d := range docs(t, f) {
			kind := str(t, f, d, "kind")
			str(t, f, d, "apiVersion")
			if kind == "Kustomization" {
				listed = at(t, f, d, "resources").([]any)
				continue
			}
			str(t, f, d, "metadata", "name")
			if byKind[kind] != nil {
				t.Fatalf("two %s manifests", kind)
			}
			byKind[kind] = d
		}
	}
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(listed, any(base)) {
			t.Errorf("kustomization.yaml does not list %s", base)
		}
	}
	for _, r := range listed {
		if _, err := os.Stat(filepath.Join(dir, r.(string))); err != nil {
			t.Errorf("kustomization.yaml lists %s: %v", r, err)
		}
	}
	for _, k := range []string{"Deployment", "Service", "Secret", "ConfigMap", "PodDisruptionBudget"} {
		if byKind[k] == nil {
			t.Fatalf("no %s manifest", k)
		}
	}
	return byKind
}

// The Kubernetes manifests are well-formed and agree with each other and
// with the code: the probes ask the paths serve answers, the grace period
// outlasts the drain, and every name one refers to exists.
func TestKubernetesManifests(t *testing.T) {
	k := kube(t)
	dep := k["Deployment"]
	if n := at(t, "Deployment", dep, "spec", "replicas"); n != 2 {
		t.Errorf("Deployment replicas = %v, want 2", n)
	}
	labels := at(t, "Deployment", dep, "spec", "template", "metadata", "labels").(map[string]any)
	for what, sel := range map[string]any{
		"Deployment selector": at(t, "Deployment", dep, "spec", "selector", "matchLabels"),
		"Service selector":    at(t, "Service", k["Service"], "spec", "selector"),
		"PDB selector":        at(t, "PodDisruptionBudget", k["PodDisruptionBudget"], "spec", "selector", "matchLabels"),
	} {
		for key, v := range sel.(map[string]any) {
			if labels[key] != v {
				t.Errorf("%s %s=%v selects no pod (pods have %v)", what, key, v, labels)
			}
		}
	}
	if at(t, "PDB", k["PodDisruptionBudget"], "spec", "minAvailable") != 1 {
		t.Errorf("the PodDisruptionBudget does not keep one replica")
	}

	pod := at(t, "Deployment", dep, "spec", "template", "spec")
	c := at(t, "Deployment", pod, "containers", 0)
	ports := map[string]int{}
	for _, p := range at(t, "container", c, "ports").([]any) {
		ports[str(t, "port", p, "name")] = at(t, "port", p, "containerPort").(int)
	}
	probes := map[string]string{"readinessProbe": serve.ReadyPath, "livenessProbe": serve.LivePath, "startupProbe": serve.LivePath}
	for probe, want := range probes {
		if got := str(t, probe, c, probe, "httpGet", "path"); got != want {
			t.Errorf("%s asks %s, but serve answers it at %s", probe, got, want)
		}
		if port := str(t, probe, c, probe, "httpGet", "port"); ports[port] == 0 {
			t.Errorf("%s's port %q names no container port", probe, port)
		}
	}
	args := at(t, "container", c, "args").([]any)
	if !slices.Contains(args, any("serve")) {
		t.Fatalf("the container does not run serve: %v", args)
	}
	listen := flagValue(t, "container", args, "--http")
	if !strings.HasSuffix(listen, ":"+strconv.Itoa(ports["mcp"])) {
		t.Errorf("serve listens on %s, the container port is %d", listen, ports["mcp"])
	}
	drain, err := time.ParseDuration(flagValue(t, "container", args, "--drain-timeout"))
	if err != nil || drain <= 0 {
		t.Fatalf("--drain-timeout: %v %v", drain, err)
	}
	grace := time.Duration(at(t, "pod", pod, "terminationGracePeriodSeconds").(int)) * time.Second
	if grace < drain+cancelWait {
		t.Errorf("terminationGracePeriodSeconds %v is shorter than the drain (%v) and serve's wait for cancelled calls (%v)", grace, drain, cancelWait)
	}

	// Every Secret key and ConfigMap the pod uses exists.
	secret, cm := k["Secret"], k["ConfigMap"]
	for _, e := range at(t, "container", c, "env").([]any) {
		ref := at(t, "env", e, "valueFrom", "secretKeyRef")
		if str(t, "secretKeyRef", ref, "name") != str(t, "Secret", secret, "metadata", "name") {
			t.Errorf("env %v refers to another Secret", e)
		}
		str(t, "Secret", secret, "stringData", str(t, "secretKeyRef", ref, "key"))
	}
	for _, v := range at(t, "pod", pod, "volumes").([]any) {
		if m, ok := v.(map[string]any)["configMap"]; ok && str(t, "volume", m, "name") != str(t, "ConfigMap", cm, "metadata", "name") {
			t.Errorf("volume %v mounts another ConfigMap", v)
		}
	}
	checkConfig(t, "the ConfigMap's config.json", str(t, "ConfigMap", cm, "data", "config.json"))
	if str(t, "Service", k["Service"], "spec", "ports", 0, "targetPort") != "mcp" {
		t.Errorf("the Service does not send to the mcp port")
	}
}

// composeVar is a variable compose interpolates: ${NAME}, ${NAME:-default}
// or ${NAME:?error}.
var composeVar = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)(?::([-?])([^}]*))?\}`)

// interpolate replaces the variables in text as compose does when .env
// gives them the values in env: a variable env lacks takes its default,
// and one with neither fails the test, naming it.
func interpolate(t *testing.T, text string, env map[string]string) string {
	t.Helper()
	return composeVar.ReplaceAllStringFunc(text, func(v string) string {
		m := composeVar.FindStringSubmatch(v)
		if val, ok := env[m[1]]; ok {
			return val
		}
		if m[2] == "-" {
			return m[3]
		}
		t.Fatalf("the compose file needs %s, which the test gives no value", m[1])
		return ""
	})
}

// checkConfig: config.json is a config mcphost loads as the user's own,
// with no warning, and names the issuer and audience of serve's OAuth and
// at least one server.
func checkConfig(t *testing.T, what, text string) {
	t.Helper()
	cfg, warns, err := config.Parse(what, []byte(text), config.SourceUser)
	if err != nil {
		t.Fatalf("%s does not load: %v", what, err)
	}
	if len(warns) > 0 {
		t.Errorf("%s loads with warnings: %v", what, warns)
	}
	if cfg.Serve == nil || cfg.Serve.Auth == nil || cfg.Serve.Auth.Issuer == "" || cfg.Serve.Auth.Audience == "" || len(cfg.Servers) == 0 {
		t.Errorf("%s lacks serve.auth's issuer or audience, or a server: %s", what, text)
	}
}

// The compose file is well-formed and agrees with the code and the load
// balancer: two replicas running serve --http with a drain shorter than
// their stop grace period, HAProxy checking the path serve answers
// readiness at and sending to the port serve listens on.
func TestComposeFile(t *testing.T) {
	d := docs(t, filepath.Join("compose", "compose.yaml"))[0]
	services := at(t, "compose", d, "services").(map[string]any)
	for _, s := range []string{"mcphost-a", "mcphost-b", "lb", "postgres"} {
		at(t, "compose", services, s)
	}
	var listens []string
	for _, name := range []string{"mcphost-a", "mcphost-b"} {
		svc := services[name]
		args := at(t, name, svc, "command").([]any)
		if !slices.Contains(args, any("serve")) {
			t.Fatalf("%s does not run serve: %v", name, args)
		}
		listens = append(listens, flagValue(t, name, args, "--http"))
		if !strings.HasPrefix(flagValue(t, name, args, "--store"), "postgres://") {
			t.Errorf("%s does not use the PostgreSQL store", name)
		}
		drain, err := time.ParseDuration(flagValue(t, name, args, "--drain-timeout"))
		if err != nil {
			t.Fatal(err)
		}
		grace, err := time.ParseDuration(str(t, name, svc, "stop_grace_period"))
		if err != nil || grace < drain+cancelWait {
			t.Errorf("%s: stop_grace_period %v (%v) is shorter than the drain (%v) and serve's wait for cancelled calls (%v)", name, grace, err, drain, cancelWait)
		}
		if src := str(t, name, svc, "configs", 0, "source"); at(t, "compose", d, "configs", src) == nil {
			t.Errorf("%s uses config %s, which is not defined", name, src)
		}
	}
	cfg := str(t, "compose", d, "configs", "mcphost-config", "content")
	checkConfig(t, "the compose file's config.json", interpolate(t, cfg, map[string]string{
		"OIDC_ISSUER":      "https://login.example.com/realms/team",
		"TASKS_SERVER_URL": "https://tasks.example.com/mcp",
	}))

	// HAProxy: its health check asks serve's readiness path, and its
	// servers are the replicas on the port they listen on.
	f, err := os.Open(filepath.Join("compose", "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var check string
	backends := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 4 && fields[0] == "option" && fields[1] == "httpchk":
			check = fields[3]
		case len(fields) >= 3 && fields[0] == "server":
			backends[fields[2]] = true
		}
	}
	if check != serve.ReadyPath {
		t.Errorf("HAProxy checks %q, but serve answers readiness at %s", check, serve.ReadyPath)
	}
	for i, name := range []string{"mcphost-a", "mcphost-b"} {
		_, port, _ := strings.Cut(listens[i], ":")
		if !backends[name+":"+port] {
			t.Errorf("HAProxy does not send to %s:%s (its servers: %v)", name, port, backends)
		}
	}
}
