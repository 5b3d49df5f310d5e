package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/suregql/suregql/internal/config"
	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// CI has no cluster, no Docker and no kubeconform: these tests read the
// Kubernetes manifests under deploy/ and the Dockerfile, and check what
// production relies on, against each other and against the server's own
// configuration. .ci/run builds the Dockerfile's binary and runs it.

// The parts of the manifests these tests read. The Deployment is decoded
// strictly: a field missing from these types fails the test, so that a
// misspelt field (readOnlyRootFileSystem…) cannot pass unnoticed; add a
// new field here when the manifest gains one.
type (
	objectMeta struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]any    `yaml:"annotations"` // any: a bare true is no string
	}
	labelSelector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	deployment struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   objectMeta `yaml:"metadata"`
		Spec       struct {
			Replicas int           `yaml:"replicas"`
			Selector labelSelector `yaml:"selector"`
			Strategy struct {
				Type          string `yaml:"type"`
				RollingUpdate struct {
					MaxUnavailable any `yaml:"maxUnavailable"`
					MaxSurge       any `yaml:"maxSurge"`
				} `yaml:"rollingUpdate"`
			} `yaml:"strategy"`
			Template struct {
				Metadata objectMeta `yaml:"metadata"`
				Spec     podSpec    `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	podSpec struct {
		AutomountServiceAccountToken  *bool `yaml:"automountServiceAccountToken"`
		TerminationGracePeriodSeconds int   `yaml:"terminationGracePeriodSeconds"`
		SecurityContext               struct {
			RunAsNonRoot   *bool  `yaml:"runAsNonRoot"`
			RunAsUser      *int64 `yaml:"runAsUser"`
			RunAsGroup     *int64 `yaml:"runAsGroup"`
			SeccompProfile struct {
				Type string `yaml:"type"`
			} `yaml:"seccompProfile"`
		} `yaml:"securityContext"`
		TopologySpreadConstraints []struct {
			MaxSkew           int           `yaml:"maxSkew"`
			TopologyKey       string        `yaml:"topologyKey"`
			WhenUnsatisfiable string        `yaml:"whenUnsatisfiable"`
			LabelSelector     labelSelector `yaml:"labelSelector"`
		} `yaml:"topologySpreadConstraints"`
		Containers []container `yaml:"containers"`
	}
	container struct {
		Name  string     `yaml:"name"`
		Image string     `yaml:"image"`
		Ports []portSpec `yaml:"ports"`
		Env   []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom any    `yaml:"valueFrom"`
		} `yaml:"env"`
		LivenessProbe  probe `yaml:"livenessProbe"`
		ReadinessProbe probe `yaml:"readinessProbe"`
		Lifecycle      struct {
			PreStop struct {
				Sleep *struct {
					Seconds int `yaml:"seconds"`
				} `yaml:"sleep"`
			} `yaml:"preStop"`
		} `yaml:"lifecycle"`
		Resources struct {
			Requests map[string]string `yaml:"requests"`
			Limits   map[string]string `yaml:"limits"`
		} `yaml:"resources"`
		SecurityContext struct {
			RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
			ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
			Capabilities             struct {
				Drop []string `yaml:"drop"`
			} `yaml:"capabilities"`
		} `yaml:"securityContext"`
	}
	portSpec struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	}
	probe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
			Port any    `yaml:"port"`
		} `yaml:"httpGet"`
		PeriodSeconds    int `yaml:"periodSeconds"`
		TimeoutSeconds   int `yaml:"timeoutSeconds"`
		FailureThreshold int `yaml:"failureThreshold"`
	}
	service struct {
		Kind     string     `yaml:"kind"`
		Metadata objectMeta `yaml:"metadata"`
		Spec     struct {
			Selector map[string]string `yaml:"selector"`
			Ports    []struct {
				Name       string `yaml:"name"`
				Port       int    `yaml:"port"`
				TargetPort any    `yaml:"targetPort"`
			} `yaml:"ports"`
		} `yaml:"spec"`
	}
	// object is what every manifest has.
	object struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   objectMeta `yaml:"metadata"`
		Spec       struct {
			Selector labelSelector `yaml:"selector"` // a PodDisruptionBudget's
		} `yaml:"spec"`
		Resources []string `yaml:"resources"` // a Kustomization's
	}
)

// manifests holds every document of every file under deploy/.
type manifests struct {
	files      map[string][]object // file name → its documents
	deployment deployment
	service    service
}

func readManifests(t *testing.T) manifests {
	t.Helper()
	m := manifests{files: map[string][]object{}}
	paths, err := filepath.Glob("deploy/*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no files under deploy/ (%v)", err)
	}
	var deployments, services int
	for _, p := range paths {
		name := filepath.Base(p)
		if ext := filepath.Ext(name); ext != ".yaml" && ext != ".yml" {
			t.Errorf("deploy/%s: not a .yaml file", name)
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var o object
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("deploy/%s: %v", name, err)
			}
			if o.APIVersion == "" || o.Kind == "" {
				t.Errorf("deploy/%s: a document without apiVersion or kind", name)
			}
			if o.Kind != "Kustomization" && o.Metadata.Name != "suregql" {
				t.Errorf("deploy/%s: %s is named %q, want suregql", name, o.Kind, o.Metadata.Name)
			}
			m.files[name] = append(m.files[name], o)
			switch o.Kind {
			case "Deployment":
				deployments++
				if err := yaml.UnmarshalWithOptions(data, &m.deployment, yaml.DisallowUnknownField()); err != nil {
					t.Fatalf("deploy/%s: %v", name, err)
				}
			case "Service":
				services++
				if err := yaml.Unmarshal(data, &m.service); err != nil {
					t.Fatalf("deploy/%s: %v", name, err)
				}
			}
		}
	}
	if deployments != 1 || services != 1 {
		t.Fatalf("deploy/ has %d Deployments and %d Services, want one of each (in files of their own)", deployments, services)
	}
	return m
}

func TestDeploy_Kustomization(t *testing.T) {
	m := readManifests(t)
	k, ok := m.files["kustomization.yaml"]
	if !ok || len(k) != 1 || k[0].Kind != "Kustomization" {
		t.Fatal("deploy/kustomization.yaml: want one Kustomization")
	}
	var want []string
	for name := range m.files {
		if name != "kustomization.yaml" {
			want = append(want, name)
		}
	}
	got := slices.Sorted(slices.Values(k[0].Resources))
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("kustomization.yaml resources = %v, want every other file: %v", got, want)
	}
}

func TestDeploy_Deployment(t *testing.T) {
	d := readManifests(t).deployment
	spec := d.Spec.Template.Spec
	if d.Spec.Replicas < 2 {
		t.Errorf("replicas = %d, want 2 or more", d.Spec.Replicas)
	}
	podLabels := d.Spec.Template.Metadata.Labels
	if len(d.Spec.Selector.MatchLabels) == 0 || !subset(d.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("selector %v does not select the pod labels %v", d.Spec.Selector.MatchLabels, podLabels)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]

	port := containerPort(t, c)
	if port != 8080 {
		t.Errorf("containerPort = %d, want 8080 (the Dockerfile's EXPOSE and the server's default -addr)", port)
	}
	for _, p := range []struct {
		name string
		got  probe
		want string
	}{
		{"livenessProbe", c.LivenessProbe, "/healthz"},
		{"readinessProbe", c.ReadinessProbe, "/readyz"},
	} {
		if p.got.HTTPGet.Path != p.want {
			t.Errorf("%s path = %q, want %q", p.name, p.got.HTTPGet.Path, p.want)
		}
		if !samePort(p.got.HTTPGet.Port, c) {
			t.Errorf("%s port = %v, want the container's port", p.name, p.got.HTTPGet.Port)
		}
	}
	// A kubelet gives up on a probe after timeoutSeconds (1 by default):
	// /readyz answers at once, but /readyz?verbose (which an operator may
	// point a probe at to log details) waits for one upstream probe, up to
	// facade.ReadinessTimeout.
	if got := time.Duration(c.ReadinessProbe.TimeoutSeconds) * time.Second; got <= facade.ReadinessTimeout {
		t.Errorf("readinessProbe timeoutSeconds = %d, want more than the facade's probe timeout %s", c.ReadinessProbe.TimeoutSeconds, facade.ReadinessTimeout)
	}

	for _, r := range []string{"cpu", "memory"} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req == "" || lim == "" {
			t.Errorf("resources: %s request %q, limit %q, want both", r, req, lim)
			continue
		}
		if quantity(t, req) > quantity(t, lim) {
			t.Errorf("resources: %s request %s is above its limit %s", r, req, lim)
		}
	}

	if !isTrue(spec.SecurityContext.RunAsNonRoot) || !isTrue(c.SecurityContext.RunAsNonRoot) {
		t.Error("securityContext: runAsNonRoot is not true for the pod and the container")
	}
	if !isTrue(c.SecurityContext.ReadOnlyRootFilesystem) {
		t.Error("securityContext: readOnlyRootFilesystem is not true")
	}
	if c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Error("securityContext: allowPrivilegeEscalation is not false")
	}
	if !slices.Equal(c.SecurityContext.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("securityContext: capabilities.drop = %v, want [ALL]", c.SecurityContext.Capabilities.Drop)
	}

}

// /metrics is served on a port of its own (METRICS_ADDR), named
// "metrics", which Prometheus's annotations name and the Service does not
// publish: the operation names and traffic stay off the public port.
func TestDeploy_MetricsOnTheirOwnPort(t *testing.T) {
	m := readManifests(t)
	d := m.deployment
	c := d.Spec.Template.Spec.Containers[0]
	metricsPort := namedPort(t, c, "metrics")
	if metricsPort == containerPort(t, c) {
		t.Fatalf("the metrics port is the main port %d", metricsPort)
	}
	var addr string
	for _, e := range c.Env {
		if e.Name == "METRICS_ADDR" {
			addr = e.Value
		}
	}
	cfg, err := config.Parse(nil, func(k string) string {
		if k == "METRICS_ADDR" {
			return addr
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, port, err := net.SplitHostPort(cfg.MetricsAddr); err != nil || port != strconv.Itoa(metricsPort) {
		t.Errorf("METRICS_ADDR = %q, want the port named metrics (%d)", addr, metricsPort)
	}
	ann := d.Spec.Template.Metadata.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" ||
		ann["prometheus.io/port"] != strconv.Itoa(metricsPort) {
		t.Errorf("pod annotations %v: want prometheus.io/scrape \"true\", path /metrics, port %q", ann, strconv.Itoa(metricsPort))
	}
	for _, p := range m.service.Spec.Ports {
		if fmt.Sprint(p.TargetPort) == "metrics" || fmt.Sprint(p.TargetPort) == strconv.Itoa(metricsPort) {
			t.Errorf("the Service publishes the metrics port: %+v", p)
		}
	}
}

// GOMEMLIMIT is about 90 % of the container's memory limit: the heap's
// cap leaves room for what is not heap before the kernel kills the
// container at the limit.
func TestDeploy_GOMEMLIMIT(t *testing.T) {
	c := readManifests(t).deployment.Spec.Template.Spec.Containers[0]
	var limit string
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			limit = e.Value
		}
	}
	m := regexp.MustCompile(`^([0-9]+)(B|KiB|MiB|GiB)$`).FindStringSubmatch(limit)
	if m == nil {
		t.Fatalf("GOMEMLIMIT = %q, want a value the Go runtime reads (e.g. 230MiB)", limit)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	n <<= map[string]int{"B": 0, "KiB": 10, "MiB": 20, "GiB": 30}[m[2]]
	memory := quantity(t, c.Resources.Limits["memory"]) / 1000 // bytes
	if ratio := float64(n) / float64(memory); ratio < 0.85 || ratio > 0.95 {
		t.Errorf("GOMEMLIMIT %s is %.0f %% of the memory limit %s, want about 90 %%", limit, 100*ratio, c.Resources.Limits["memory"])
	}
}

// The Deployment's environment is one the server accepts, names only
// variables README.md documents, and sets the upstream.
func TestDeploy_EnvironmentIsTheServersConfiguration(t *testing.T) {
	d := readManifests(t).deployment
	c := d.Spec.Template.Spec.Containers[0]
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "GO") { // the Go runtime's (GOMEMLIMIT)
			continue
		}
		if e.ValueFrom != nil {
			t.Errorf("env %s: valueFrom is not checked here; give a value", e.Name)
		}
		env[e.Name] = e.Value
		if !regexp.MustCompile("\\| `-[a-z-]+` \\| `" + regexp.QuoteMeta(e.Name) + "` \\|").Match(readme) {
			t.Errorf("env %s is not in README.md's configuration table", e.Name)
		}
	}
	cfg, err := config.Parse(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the server refuses the Deployment's environment: %v", err)
	}
	if cfg.Upstream == "" {
		t.Error("UPSTREAM_URL is not set: the replicas would serve the demo upstream")
	}
	_, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil || port != strconv.Itoa(containerPort(t, c)) {
		t.Errorf("the server listens on %q, the container exposes %d", cfg.Addr, containerPort(t, c))
	}
}

func TestDeploy_ServiceReachesTheContainers(t *testing.T) {
	m := readManifests(t)
	d, s := m.deployment, m.service
	c := d.Spec.Template.Spec.Containers[0]
	podLabels := d.Spec.Template.Metadata.Labels
	if len(s.Spec.Selector) == 0 || !subset(s.Spec.Selector, podLabels) {
		t.Errorf("the Service's selector %v does not select the pod labels %v", s.Spec.Selector, podLabels)
	}
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 80 || !samePort(s.Spec.Ports[0].TargetPort, c) {
		t.Errorf("the Service's ports = %+v, want 80 to the container's port", s.Spec.Ports)
	}
	for name, docs := range m.files {
		for _, o := range docs {
			if o.Kind == "PodDisruptionBudget" && !subset(o.Spec.Selector.MatchLabels, podLabels) {
				t.Errorf("deploy/%s: the PodDisruptionBudget's selector does not select the pods", name)
			}
		}
	}
}

// The image runs as the user the pods require, exposes the container port
// and builds with go.mod's Go.
func TestDockerfile(t *testing.T) {
	d := readManifests(t).deployment
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if goVersion == nil {
		t.Fatal("go.mod has no go line")
	}
	sc := d.Spec.Template.Spec.SecurityContext
	if sc.RunAsUser == nil || sc.RunAsGroup == nil {
		t.Fatal("the pod's securityContext sets no runAsUser and runAsGroup")
	}
	port := containerPort(t, d.Spec.Template.Spec.Containers[0])
	for _, want := range []string{
		"ARG GO_VERSION=" + string(goVersion[1]),
		"FROM gcr.io/distroless/static-debian12:nonroot",
		"USER " + strconv.FormatInt(*sc.RunAsUser, 10) + ":" + strconv.FormatInt(*sc.RunAsGroup, 10),
		"EXPOSE " + strconv.Itoa(port),
		`ENTRYPOINT ["/suregql"]`,
		"ARG VERSION=",
		"ARG REVISION=",
	} {
		if !slices.Contains(strings.Split(string(df), "\n"), want) {
			t.Errorf("the Dockerfile has no line %q", want)
		}
	}
	// The build arguments stamp the variables -version prints
	// (TestRun_StampedVersion; .ci/run builds the binary so and runs it).
	for _, want := range []string{"-X main.version=${VERSION}", "-X main.revision=${REVISION}"} {
		if !regexp.MustCompile(`(?m)go build .*-ldflags="[^"]*` + regexp.QuoteMeta(want)).Match(df) {
			t.Errorf("the Dockerfile's go build does not stamp %s", want)
		}
	}
}

// The probes' paths answer 200 through the production handler, and the
// readiness probe spends no key's quota.
func TestDeploy_ProbePathsAnswer(t *testing.T) {
	c := readManifests(t).deployment.Spec.Template.Spec.Containers[0]
	fake := restclienttest.New()
	up := httptest.NewServer(fake)
	defer up.Close()
	upstream, err := restclient.New(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	h := facade.New(facade.Config{Upstream: upstream, Log: slog.New(slog.DiscardHandler)})
	for _, path := range []string{c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: status %d, want 200: %s", path, rec.Code, rec.Body)
		}
	}
	for _, r := range fake.Requests() {
		if r.APIKey != "" {
			t.Errorf("the probes sent a request with a key: %+v", r)
		}
	}
}

// containerPort returns the container's main port, named "http".
func containerPort(t *testing.T, c container) int {
	t.Helper()
	return namedPort(t, c, "http")
}

// namedPort returns the container's port of that name.
func namedPort(t *testing.T, c container, name string) int {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named %s: %+v", c.Name, name, c.Ports)
	return 0
}

// samePort reports whether a probe's or Service's port (a number or a port
// name) is the container's main port ("http").
func samePort(p any, c container) bool {
	i := slices.IndexFunc(c.Ports, func(p portSpec) bool { return p.Name == "http" })
	if i < 0 {
		return false
	}
	want := c.Ports[i]
	switch v := p.(type) {
	case string:
		return v == want.Name || v == strconv.Itoa(want.ContainerPort)
	case uint64:
		return v == uint64(want.ContainerPort)
	case int64:
		return v == int64(want.ContainerPort)
	case int:
		return v == want.ContainerPort
	}
	return false
}

func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func isTrue(b *bool) bool { return b != nil && *b }

// quantity parses the Kubernetes quantities the manifests use (500m, 64Mi,
// 1Gi, 2) into thousandths of a unit.
func quantity(t *testing.T, q string) int64 {
	t.Helper()
	mult := int64(1000)
	for _, s := range []struct {
		suffix string
		mult   int64
	}{{"m", 1}, {"Ki", 1000 << 10}, {"Mi", 1000 << 20}, {"Gi", 1000 << 30}} {
		if n, ok := strings.CutSuffix(q, s.suffix); ok {
			q, mult = n, s.mult
			break
		}
	}
	n, err := strconv.ParseInt(q, 10, 64)
	if err != nil {
		t.Fatalf("quantity %q: %v", q, err)
	}
	return n * mult
}

// A rolling update drops no request: the pod sleeps in preStop as long as
// the server's shutdown delay, and its grace period covers the sleep, the
// delay and the drain (the operation timeout and 5 s), whatever the
// Deployment's environment sets them to.
func TestDeploy_GracefulShutdown(t *testing.T) {
	d := readManifests(t).deployment
	c := d.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	cfg, err := config.Parse(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	sleep := c.Lifecycle.PreStop.Sleep
	if sleep == nil || time.Duration(sleep.Seconds)*time.Second != cfg.ShutdownDelay || cfg.ShutdownDelay <= 0 {
		t.Fatalf("preStop sleep %+v, want one of the server's shutdown delay %s (SHUTDOWN_DELAY), above 0", sleep, cfg.ShutdownDelay)
	}
	need := 2*cfg.ShutdownDelay + cfg.OperationTimeout + 5*time.Second
	if got := time.Duration(d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second; got < need {
		t.Errorf("terminationGracePeriodSeconds %s, want at least the preStop sleep, the shutdown delay and the drain: %s", got, need)
	}
}
