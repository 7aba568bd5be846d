package config

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Redis is how a process reaches Redis: the server REDIS_URL names, or,
// with REDIS_SENTINELS, whichever server those sentinels report as the
// master named REDIS_MASTER_NAME (a replica they promote when it fails).
// Every process makes its clients with Open, so none reaches Redis
// another way.
type Redis struct {
	// URL (REDIS_URL) is the server. With Sentinels its host is not used:
	// it gives the user, password, database number, TLS (rediss://) and
	// go-redis options (query) of the master's connections.
	URL string
	// Sentinels (REDIS_SENTINELS, host:port, comma separated) are asked
	// for the master's address at every new connection; empty connects to
	// URL's host directly.
	Sentinels []string
	// MasterName (REDIS_MASTER_NAME) is the name the sentinels monitor the
	// master under; required with Sentinels.
	MasterName string
	// SentinelUsername (REDIS_SENTINEL_USERNAME) and SentinelPassword
	// (REDIS_SENTINEL_PASSWORD) are what the sentinels ask: an ACL user
	// and its password, or only their requirepass; empty when they ask
	// none. The master's user and password are URL's.
	SentinelUsername string
	SentinelPassword Secret
}

// Open makes the process's Redis client, and asynq options for the same
// server for what takes options rather than a client (the queue UI). A
// timeout above 0 bounds each dial, read and write and makes every call
// honour its context's deadline (the API: an unreachable Redis answers
// 503 quickly, not after go-redis's defaults); 0 keeps go-redis's
// defaults (5 s dials, 3 s reads). Through sentinels, a failover drops
// the connections to the old master, and new ones go to the promoted
// replica.
func (r Redis) Open(timeout time.Duration) (*redis.Client, asynq.RedisConnOpt, error) {
	o, err := redis.ParseURL(r.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	if timeout > 0 {
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout
		o.ContextTimeoutEnabled = true
	}
	if len(r.Sentinels) == 0 {
		return redis.NewClient(o), asynq.RedisClientOpt{
			Network: o.Network, Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB,
			DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
			PoolSize: o.PoolSize, TLSConfig: o.TLSConfig,
		}, nil
	}
	if r.MasterName == "" {
		return nil, nil, fmt.Errorf("REDIS_MASTER_NAME: is required with REDIS_SENTINELS")
	}
	tlsConfig := o.TLSConfig
	if tlsConfig != nil {
		// Each sentinel and each master is verified against the address it
		// is dialed at, not REDIS_URL's host, which is not dialed.
		tlsConfig = tlsConfig.Clone()
		tlsConfig.ServerName = ""
	}
	f := &redis.FailoverOptions{
		MasterName:       r.MasterName,
		SentinelAddrs:    slices.Clone(r.Sentinels),
		SentinelUsername: r.SentinelUsername,
		SentinelPassword: r.SentinelPassword.Reveal(),
		ClientName:       o.ClientName,
		Protocol:         o.Protocol,
		Username:         o.Username,
		Password:         o.Password,
		DB:               o.DB,
		MaxRetries:       o.MaxRetries,
		MinRetryBackoff:  o.MinRetryBackoff,
		MaxRetryBackoff:  o.MaxRetryBackoff,
		DialTimeout:      o.DialTimeout,
		ReadTimeout:      o.ReadTimeout,
		WriteTimeout:     o.WriteTimeout,

		ContextTimeoutEnabled: o.ContextTimeoutEnabled,

		PoolFIFO:        o.PoolFIFO,
		PoolSize:        o.PoolSize,
		PoolTimeout:     o.PoolTimeout,
		MinIdleConns:    o.MinIdleConns,
		MaxIdleConns:    o.MaxIdleConns,
		MaxActiveConns:  o.MaxActiveConns,
		ConnMaxIdleTime: o.ConnMaxIdleTime,
		ConnMaxLifetime: o.ConnMaxLifetime,
		TLSConfig:       tlsConfig,
	}
	return redis.NewFailoverClient(f), asynq.RedisFailoverClientOpt{
		MasterName: f.MasterName, SentinelAddrs: slices.Clone(f.SentinelAddrs),
		SentinelUsername: f.SentinelUsername, SentinelPassword: f.SentinelPassword,
		Username: f.Username, Password: f.Password, DB: f.DB,
		DialTimeout: f.DialTimeout, ReadTimeout: f.ReadTimeout, WriteTimeout: f.WriteTimeout,
		PoolSize: f.PoolSize, TLSConfig: f.TLSConfig,
	}, nil
}

// redis reads REDIS_URL and the Sentinel settings, which go together:
// sentinels need a master name, and a master name or a sentinel password
// without sentinels would silently be ignored.
func (r *reader) redis() Redis {
	c := Redis{
		URL:              r.url("REDIS_URL", DefaultRedisURL, "redis", "rediss"),
		MasterName:       r.str("REDIS_MASTER_NAME", ""),
		SentinelUsername: r.str("REDIS_SENTINEL_USERNAME", ""),
		SentinelPassword: Secret(r.str("REDIS_SENTINEL_PASSWORD", "")),
	}
	if o, err := redis.ParseURL(c.URL); err != nil {
		r.fail("REDIS_URL", fmt.Sprintf("%q: %v", redact(c.URL), err))
	} else if o.Username != "" && o.Password == "" {
		// go-redis would connect as the default user, silently. Neither
		// is shown: a password written as redis://password@host is there.
		r.fail("REDIS_URL", "names a user but no password: write redis://user:password@host:port/db, or redis://:password@host:port/db for a password alone")
	}
	before := len(r.errs)
	for _, a := range strings.Split(r.str("REDIS_SENTINELS", ""), ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		host, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			r.fail("REDIS_SENTINELS", fmt.Sprintf("%q is not host:port (e.g. sentinel-1:26379)", a))
			continue
		}
		if slices.Contains(c.Sentinels, a) {
			r.fail("REDIS_SENTINELS", fmt.Sprintf("%q is listed twice", a))
			continue
		}
		c.Sentinels = append(c.Sentinels, a)
	}
	sentinels := r.str("REDIS_SENTINELS", "") != ""
	switch {
	case sentinels && len(c.Sentinels) == 0 && len(r.errs) == before:
		r.fail("REDIS_SENTINELS", "no host:port given")
	case sentinels && c.MasterName == "":
		r.fail("REDIS_MASTER_NAME", "is required with REDIS_SENTINELS (the name the sentinels monitor the master under)")
	case !sentinels && c.MasterName != "":
		r.fail("REDIS_MASTER_NAME", "is set without REDIS_SENTINELS (set both, or neither to use REDIS_URL's server)")
	case strings.ContainsFunc(c.MasterName, func(c rune) bool { return c <= ' ' || c == 0x7f }):
		r.fail("REDIS_MASTER_NAME", fmt.Sprintf("%q contains spaces or control characters", c.MasterName))
	}
	if !sentinels && c.SentinelPassword != "" {
		r.fail("REDIS_SENTINEL_PASSWORD", "is set without REDIS_SENTINELS")
	}
	switch {
	case !sentinels && c.SentinelUsername != "":
		r.fail("REDIS_SENTINEL_USERNAME", "is set without REDIS_SENTINELS")
	case c.SentinelUsername != "" && c.SentinelPassword == "":
		// go-redis would ask the sentinels as the default user, silently.
		r.fail("REDIS_SENTINEL_USERNAME", "is set without REDIS_SENTINEL_PASSWORD")
	}
	return c
}
