package deploy

import (
	"bufio"
	"context"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// requiredEnv are the variables docker-compose.yml refuses to load without.
var requiredEnv = map[string]string{
	"WALLET_PUBLIC_KEY": "test-public-key",
	"WALLET_MASTER_KEY": "test-master-key",
	"REDIS_PASSWORD":    "test-redis-password",
}

// Services that run one of the Go binaries, and the ones among them that
// talk to PostgreSQL and Redis.
var (
	allServices = []string{"postgres", "redis", "localnet", "migrate", "api", "worker", "scheduler"}
	appServices = []string{"migrate", "api", "worker", "scheduler"}
	binaries    = []string{"api", "worker", "scheduler"}
)

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// load parses and validates docker-compose.yml (schema, interpolation,
// consistency) with exactly env as the environment.
func load(t *testing.T, env map[string]string) (*types.Project, error) {
	t.Helper()
	return loadFiles(t, env, "docker-compose.yml")
}

// loadFiles is load of files merged in order, as `docker compose -f … -f …`
// does.
func loadFiles(t *testing.T, env map[string]string, files ...string) (*types.Project, error) {
	t.Helper()
	root := repoRoot(t)
	// The loader writes into the mapping (COMPOSE_PROJECT_NAME): give it a copy.
	env = maps.Clone(env)
	details := types.ConfigDetails{
		WorkingDir:  root,
		Environment: types.Mapping(env),
	}
	for _, f := range files {
		details.ConfigFiles = append(details.ConfigFiles, types.ConfigFile{Filename: filepath.Join(root, f)})
	}
	return loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("agentwallet", true)
	})
}

func mustLoad(t *testing.T) *types.Project {
	t.Helper()
	p, err := load(t, requiredEnv)
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatalf("service %s: %v", name, err)
	}
	return s
}

func env(s types.ServiceConfig, name string) (string, bool) {
	v, ok := s.Environment[name]
	if !ok || v == nil {
		return "", false
	}
	return *v, true
}

func TestComposeServicesExist(t *testing.T) {
	p := mustLoad(t)
	for _, name := range allServices {
		service(t, p, name)
	}
	if extra := slices.DeleteFunc(p.ServiceNames(), func(n string) bool { return slices.Contains(allServices, n) }); len(extra) > 0 {
		t.Logf("services beyond the expected ones: %v", extra)
	}
}

func TestComposeRequiresWalletKeys(t *testing.T) {
	for name := range requiredEnv {
		t.Run(name, func(t *testing.T) {
			e := map[string]string{}
			for k, v := range requiredEnv {
				if k != name {
					e[k] = v
				}
			}
			_, err := load(t, e)
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("loading without %s: got %v, want an error naming it", name, err)
			}
		})
	}
}

func TestComposeWorkerIsScalable(t *testing.T) {
	w := service(t, mustLoad(t), "worker")
	if w.ContainerName != "" {
		t.Errorf("worker has container_name %q: `--scale worker=N` needs none", w.ContainerName)
	}
	for _, port := range w.Ports {
		if port.Published != "" {
			t.Errorf("worker publishes host port %s: replicas would collide", port.Published)
		}
	}
	if len(w.Ports) > 0 {
		t.Errorf("worker has ports %v; it serves nothing", w.Ports)
	}
}

func TestComposeDependencies(t *testing.T) {
	p := mustLoad(t)
	want := map[string]map[string]string{
		"api": {
			"migrate":  types.ServiceConditionCompletedSuccessfully,
			"postgres": types.ServiceConditionHealthy,
			"redis":    types.ServiceConditionHealthy,
		},
		"worker": {
			"migrate":  types.ServiceConditionCompletedSuccessfully,
			"postgres": types.ServiceConditionHealthy,
			"redis":    types.ServiceConditionHealthy,
		},
		"scheduler": {"redis": types.ServiceConditionHealthy},
		"migrate":   {"postgres": types.ServiceConditionHealthy},
	}
	for svc, deps := range want {
		s := service(t, p, svc)
		for dep, cond := range deps {
			got, ok := s.DependsOn[dep]
			if !ok {
				t.Errorf("%s does not depend on %s", svc, dep)
				continue
			}
			if got.Condition != cond {
				t.Errorf("%s depends on %s with condition %q, want %q", svc, dep, got.Condition, cond)
			}
			if !got.Required {
				t.Errorf("%s's dependency on %s is not required", svc, dep)
			}
		}
	}
	// Conditions on health need health checks.
	for _, name := range []string{"postgres", "redis"} {
		s := service(t, p, name)
		if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) == 0 {
			t.Errorf("%s has no health check", name)
		}
	}
	if m := service(t, p, "migrate"); m.Restart != "" && m.Restart != types.RestartPolicyNo {
		t.Errorf("migrate has restart %q; a one-shot must not restart", m.Restart)
	}
}

func TestComposeConnectionURLs(t *testing.T) {
	p := mustLoad(t)
	for _, name := range appServices {
		s := service(t, p, name)
		for variable, host := range map[string]string{"DATABASE_URL": "postgres", "REDIS_URL": "redis"} {
			raw, ok := env(s, variable)
			if !ok {
				t.Errorf("%s has no %s", name, variable)
				continue
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Errorf("%s %s=%q: %v", name, variable, raw, err)
				continue
			}
			if u.Hostname() != host {
				t.Errorf("%s %s points at %q, want the %q service", name, variable, u.Hostname(), host)
			}
			if _, ok := p.Services[host]; !ok {
				t.Errorf("%s %s names service %q, which does not exist", name, variable, host)
			}
		}
		if name == "migrate" {
			continue
		}
		for _, variable := range []string{"SOLANA_RPC_URL_DEVNET", "SOLANA_RPC_URL_MAINNET"} {
			if name == "scheduler" {
				break
			}
			raw, ok := env(s, variable)
			if !ok {
				t.Errorf("%s has no %s", name, variable)
				continue
			}
			if u, err := url.Parse(raw); err != nil || u.Hostname() != "localnet" {
				t.Errorf("%s %s=%q, want the localnet service by default", name, variable, raw)
			}
		}
	}
}

func TestComposeAPIAndSecrets(t *testing.T) {
	p := mustLoad(t)
	api := service(t, p, "api")
	if v, _ := env(api, "HTTP_ADDR"); v != "0.0.0.0:8080" {
		t.Errorf("api HTTP_ADDR=%q, want 0.0.0.0:8080", v)
	}
	if !slices.ContainsFunc(api.Ports, func(p types.ServicePortConfig) bool { return p.Target == 8080 && p.Published != "" }) {
		t.Errorf("api does not publish container port 8080: %v", api.Ports)
	}
	// The api seals wallet secrets with the public key and must never be
	// able to open them; only the worker holds the master key.
	if v, _ := env(api, "WALLET_PUBLIC_KEY"); v != requiredEnv["WALLET_PUBLIC_KEY"] {
		t.Errorf("api WALLET_PUBLIC_KEY=%q, want it from the environment", v)
	}
	if w, _ := env(service(t, p, "worker"), "WALLET_MASTER_KEY"); w != requiredEnv["WALLET_MASTER_KEY"] {
		t.Errorf("worker WALLET_MASTER_KEY=%q, want it from the environment", w)
	}
	for _, name := range p.ServiceNames() {
		if name == "worker" {
			continue
		}
		if _, ok := env(service(t, p, name), "WALLET_MASTER_KEY"); ok {
			t.Errorf("%s gets WALLET_MASTER_KEY; only the worker may", name)
		}
	}
}

// dockerfileStages returns the names of the stages (`FROM image AS name`).
func dockerfileStages(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	from := regexp.MustCompile(`(?i)^\s*FROM\s+(?:--\S+\s+)*\S+\s+AS\s+(\S+)\s*$`)
	var stages []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := from.FindStringSubmatch(sc.Text()); m != nil {
			stages = append(stages, strings.ToLower(m[1]))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return stages
}

func TestComposeBuildTargetsExist(t *testing.T) {
	p := mustLoad(t)
	built := 0
	for _, name := range p.ServiceNames() {
		s := service(t, p, name)
		if s.Build == nil {
			continue
		}
		built++
		dockerfile := s.Build.Dockerfile
		if dockerfile == "" {
			dockerfile = "Dockerfile"
		}
		if !filepath.IsAbs(dockerfile) {
			dockerfile = filepath.Join(s.Build.Context, dockerfile)
		}
		if _, err := os.Stat(dockerfile); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Build.Target == "" {
			continue
		}
		if stages := dockerfileStages(t, dockerfile); !slices.Contains(stages, strings.ToLower(s.Build.Target)) {
			t.Errorf("%s builds target %q, not a stage of %s (stages: %v)", name, s.Build.Target, dockerfile, stages)
		}
	}
	for _, name := range append([]string{"localnet"}, appServices...) {
		if service(t, p, name).Build == nil {
			t.Errorf("%s has no build section", name)
		}
	}
	if built == 0 {
		t.Fatal("no service is built from the Dockerfile")
	}
}

func TestComposeCommandsChooseABinary(t *testing.T) {
	p := mustLoad(t)
	dockerfile, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range binaries {
		if !strings.Contains(string(dockerfile), "./cmd/"+bin) {
			t.Errorf("Dockerfile does not build ./cmd/%s", bin)
		}
	}
	if !strings.Contains(string(dockerfile), "CGO_ENABLED=0") {
		t.Error("Dockerfile does not build with CGO_ENABLED=0 (the runtime image has no libc)")
	}
	for _, name := range appServices {
		s := service(t, p, name)
		if len(s.Command) == 0 || !slices.Contains(binaries, s.Command[0]) {
			t.Errorf("%s command %q does not start with one of %v", name, s.Command, binaries)
		}
	}
	if cmd := service(t, p, "migrate").Command; !slices.Equal(cmd, types.ShellCommand{"api", "migrate", "up"}) {
		t.Errorf("migrate command %q, want [api migrate up]", cmd)
	}
}

func TestDockerignoreKeepsSecretsAndModulesOut(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for _, want := range []string{".env", ".dev", ".git", "localnet/node_modules"} {
		if !slices.Contains(lines, want) {
			t.Errorf(".dockerignore lacks %q", want)
		}
	}
}

// Redis asks REDIS_PASSWORD, and every process's REDIS_URL carries it;
// with the high-availability override the replica and the sentinels ask
// and give it too, and every process gives it to the sentinels.
func TestComposeRedisPassword(t *testing.T) {
	pw := requiredEnv["REDIS_PASSWORD"]
	checkServer := func(p *types.Project, name string, want ...string) {
		t.Helper()
		s := service(t, p, name)
		if v, _ := env(s, "REDIS_PASSWORD"); v != pw {
			t.Errorf("%s REDIS_PASSWORD=%q, want it from the environment", name, v)
		}
		for _, w := range want {
			if !strings.Contains(script(s), w) {
				t.Errorf("%s's command lacks %s: %s", name, w, script(s))
			}
		}
		if s.HealthCheck == nil || !strings.Contains(strings.Join(s.HealthCheck.Test, " "), `REDISCLI_AUTH="$REDIS_PASSWORD"`) {
			t.Errorf("%s's health check does not authenticate: %v", name, s.HealthCheck)
		}
	}
	p := mustLoad(t)
	checkServer(p, "redis", `--requirepass "$REDIS_PASSWORD"`)
	for _, name := range appServices {
		raw, _ := env(service(t, p, name), "REDIS_URL")
		u, err := url.Parse(raw)
		if got, _ := u.User.Password(); err != nil || got != pw || u.User.Username() != "" {
			t.Errorf("%s REDIS_URL=%q does not carry REDIS_PASSWORD", name, raw)
		}
	}
	ha := mustLoadHA(t)
	for _, name := range []string{"redis", "redis-replica"} {
		checkServer(ha, name, `--requirepass "$REDIS_PASSWORD"`, `--masterauth "$REDIS_PASSWORD"`)
	}
	for _, name := range sentinels {
		checkServer(ha, name, `echo "sentinel auth-pass agentwallet $REDIS_PASSWORD"`,
			`echo "sentinel sentinel-pass $REDIS_PASSWORD"`, `echo "requirepass $REDIS_PASSWORD"`)
	}
	for _, name := range binaries {
		if v, _ := env(service(t, ha, name), "REDIS_SENTINEL_PASSWORD"); v != pw {
			t.Errorf("%s REDIS_SENTINEL_PASSWORD=%q, want REDIS_PASSWORD", name, v)
		}
	}
}
