package deploy

import (
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// haFiles are docker-compose.yml with the high-availability override, as
// docs/deploy.md runs them.
var haFiles = []string{"docker-compose.yml", "docker-compose.ha.yml"}

var sentinels = []string{"sentinel-1", "sentinel-2", "sentinel-3"}

func mustLoadHA(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadFiles(t, requiredEnv, haFiles...)
	if err != nil {
		t.Fatalf("%v: %v", haFiles, err)
	}
	return p
}

// script is a service's command as one string (a shell script's text).
func script(s types.ServiceConfig) string { return strings.Join(s.Command, " ") }

func TestHAServicesAndScaling(t *testing.T) {
	p := mustLoadHA(t)
	for _, name := range append(slices.Clone(allServices), append([]string{"redis-replica", "proxy"}, sentinels...)...) {
		service(t, p, name)
	}
	for _, name := range []string{"api", "worker"} {
		s := service(t, p, name)
		if s.ContainerName != "" || len(s.Ports) > 0 {
			t.Errorf("%s has container_name %q or ports %v: its replicas would collide", name, s.ContainerName, s.Ports)
		}
		if s.Deploy == nil || s.Deploy.Replicas == nil || *s.Deploy.Replicas < 2 {
			t.Errorf("%s does not run replicas by default", name)
		}
	}
	proxy := service(t, p, "proxy")
	if !slices.ContainsFunc(proxy.Ports, func(p types.ServicePortConfig) bool { return p.Target == 8080 && p.Published != "" }) {
		t.Errorf("proxy does not publish 8080: %v", proxy.Ports)
	}
	caddyfile := p.Configs["caddyfile"].Content
	if !strings.Contains(caddyfile, "dynamic a api 8080") || !slices.ContainsFunc(proxy.Configs, func(c types.ServiceConfigObjConfig) bool {
		return c.Source == "caddyfile" && c.Target == "/etc/caddy/Caddyfile"
	}) {
		t.Errorf("proxy does not balance over the api service's port 8080: %v %q", proxy.Configs, caddyfile)
	}
	if v, _ := env(service(t, p, "api"), "HTTP_ADDR"); v != "0.0.0.0:8080" {
		t.Errorf("api HTTP_ADDR=%q, the proxy dials 8080", v)
	}
}

// Every process that uses Redis names the three sentinels and the master
// they monitor, waits for them, and its configuration loads; the APIs
// trust the proxy's network and nothing else.
func TestHARedisThroughSentinel(t *testing.T) {
	p := mustLoadHA(t)
	monitor := regexp.MustCompile(`sentinel monitor (\S+) (\S+) 6379 (\d+)`)
	var master string
	for _, name := range sentinels {
		s := service(t, p, name)
		m := monitor.FindStringSubmatch(script(s))
		if m == nil || !strings.Contains(script(s), "--sentinel") {
			t.Fatalf("%s does not run a sentinel monitoring a master: %q", name, script(s))
		}
		if master == "" {
			master = m[1]
		}
		if m[1] != master || m[2] != "redis" || m[3] != fmt.Sprint(len(sentinels)/2+1) {
			t.Errorf("%s monitors %s at %s with quorum %s; want %s at redis, quorum a majority", name, m[1], m[2], m[3], master)
		}
		if a, _ := env(s, "ANNOUNCE"); a != name {
			t.Errorf("%s announces itself as %q", name, a)
		}
		if s.HealthCheck == nil || len(s.HealthCheck.Test) == 0 {
			t.Errorf("%s has no health check", name)
		}
	}
	if r, _ := env(service(t, p, "redis-replica"), "REPLICA_OF"); r != "redis" {
		t.Errorf("redis-replica replicates %q, want redis", r)
	}

	subnet := p.Networks["default"].Ipam.Config
	if len(subnet) != 1 {
		t.Fatalf("default network's subnets %v", subnet)
	}
	priv, pub, _ := signer.GenerateMasterKey()
	for _, name := range binaries {
		s := service(t, p, name)
		addrs, _ := env(s, "REDIS_SENTINELS")
		want := make([]string, len(sentinels))
		for i, n := range sentinels {
			want[i] = net.JoinHostPort(n, "26379")
		}
		if got := strings.Split(addrs, ","); !slices.Equal(got, want) {
			t.Errorf("%s REDIS_SENTINELS=%q, want %v", name, addrs, want)
		}
		if m, _ := env(s, "REDIS_MASTER_NAME"); m != master {
			t.Errorf("%s REDIS_MASTER_NAME=%q, the sentinels monitor %q", name, m, master)
		}
		for _, n := range sentinels {
			if d, ok := s.DependsOn[n]; !ok || d.Condition != types.ServiceConditionHealthy {
				t.Errorf("%s does not wait for %s to be healthy", name, n)
			}
		}
		vars := map[string]string{}
		for k, v := range s.Environment {
			if v != nil {
				vars[k] = *v
			}
		}
		vars["WALLET_PUBLIC_KEY"], vars["WALLET_MASTER_KEY"] = pub, priv
		getenv := func(k string) string { return vars[k] }
		var err error
		var redis config.Redis
		switch name {
		case "api":
			var c config.API
			c, err = config.LoadAPI(getenv)
			redis = c.Redis
			if tp, _ := env(s, "TRUSTED_PROXIES"); tp != subnet[0].Subnet {
				t.Errorf("api TRUSTED_PROXIES=%q, want the network's subnet %s (where the proxy is)", tp, subnet[0].Subnet)
			}
		case "worker":
			var c config.Worker
			c, err = config.LoadWorker(getenv)
			redis = c.Redis
		case "scheduler":
			var c config.Scheduler
			c, err = config.LoadScheduler(getenv)
			redis = c.Redis
		}
		if err != nil {
			t.Errorf("%s's environment does not load: %v (%v)", name, err, slices.Sorted(maps.Keys(vars)))
		} else if len(redis.Sentinels) != len(sentinels) || redis.MasterName != master {
			t.Errorf("%s loads Redis as %+v", name, redis)
		}
	}
}
