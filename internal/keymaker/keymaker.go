// Package keymaker has the worker make keys in an HSM or a KMS for the API.
// The API holds no signer credentials (no PIN, no Vault token, no KMS
// role), so when new wallets' keys live in such a backend it asks a worker:
// it pushes a request on a Redis list and blocks on its own reply list; a
// worker pops the request, makes the key in the backend, and pushes back
// the public key and the backend's reference, never a secret.
//
// A request no worker answers in time is unavailable (503): no wallet is
// created. A worker skips requests whose asker has stopped waiting, so it
// makes no key nobody will use; one it made just as the asker gave up is
// a key no wallet names, which signs nothing.
package keymaker

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// Key is the Redis list of key requests.
const Key = "agentwallet:keys:make"

// replyPrefix names each request's reply list.
const replyPrefix = "agentwallet:keys:made:"

// DefaultWait bounds how long the API waits for a worker to make a key.
const DefaultWait = 5 * time.Second

type request struct {
	ID       uuid.UUID      `json:"id"`
	Backend  signer.Backend `json:"backend"`
	Name     string         `json:"name"`
	Deadline time.Time      `json:"deadline"`
}

type reply struct {
	Public []byte `json:"public,omitempty"`
	Ref    string `json:"ref,omitempty"`
	// Unavailable is the backend's reason when it could not make the key
	// now; Error any other failure.
	Unavailable string `json:"unavailable,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Client asks a worker to make keys in Backend; it is the API's
// signer.Maker when new wallets' keys do not live in the envelope.
type Client struct {
	Redis   *redis.Client
	Backend signer.Backend
	Wait    time.Duration // 0: DefaultWait
}

// Make asks a worker for a new key named name and waits for it.
func (c *Client) Make(ctx context.Context, name string) (signer.Key, error) {
	wait := c.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	deadline, _ := ctx.Deadline()
	req := request{ID: uuid.New(), Backend: c.Backend, Name: name, Deadline: deadline}
	raw, err := json.Marshal(req)
	if err != nil {
		return signer.Key{}, err
	}
	if err := c.Redis.LPush(ctx, Key, raw).Err(); err != nil {
		return signer.Key{}, c.unavailable("the key request could not be queued", err)
	}
	res, err := c.Redis.BLPop(ctx, time.Until(deadline), replyPrefix+req.ID.String()).Result()
	if err != nil {
		// redis.Nil: no worker answered in time.
		return signer.Key{}, c.unavailable("no worker made the key in time", err)
	}
	var rep reply
	if err := json.Unmarshal([]byte(res[1]), &rep); err != nil {
		return signer.Key{}, fmt.Errorf("key reply: %w", err)
	}
	switch {
	case rep.Unavailable != "":
		return signer.Key{}, &signer.UnavailableError{Backend: c.Backend, Reason: rep.Unavailable}
	case rep.Error != "":
		return signer.Key{}, fmt.Errorf("make %s key: %s", c.Backend, rep.Error)
	case len(rep.Public) != ed25519.PublicKeySize || rep.Ref == "":
		return signer.Key{}, errors.New("make key: the worker's reply names no key")
	}
	return signer.Key{Public: rep.Public, Backend: c.Backend, Ref: rep.Ref}, nil
}

func (c *Client) unavailable(reason string, err error) error {
	return &signer.UnavailableError{Backend: c.Backend, Reason: reason, Err: err}
}

// Serve makes the keys asked for, with the keepers of set, until ctx ends.
// Each request is made on its own goroutine: a slow backend does not hold
// the others.
func Serve(ctx context.Context, rdb *redis.Client, set *signer.Set, log *slog.Logger) {
	for ctx.Err() == nil {
		res, err := rdb.BRPop(ctx, time.Second, Key).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				log.WarnContext(ctx, "key requests not read", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		var req request
		if err := json.Unmarshal([]byte(res[1]), &req); err != nil {
			log.ErrorContext(ctx, "key request not understood; dropped", "err", err)
			continue
		}
		go serveOne(ctx, rdb, set, req, log)
	}
}

func serveOne(ctx context.Context, rdb *redis.Client, set *signer.Set, req request, log *slog.Logger) {
	if time.Now().After(req.Deadline) {
		return // its asker has stopped waiting
	}
	mctx, cancel := context.WithDeadline(ctx, req.Deadline)
	defer cancel()
	var rep reply
	k, ok := set.Keeper(req.Backend)
	if !ok {
		rep.Unavailable = "no worker is configured for this signer"
	} else if key, err := k.Make(mctx, req.Name); err != nil {
		if u, ok := signer.Unavailable(err); ok {
			rep.Unavailable = u.Reason
		} else {
			rep.Error = err.Error()
		}
		log.WarnContext(ctx, "key not made", "backend", req.Backend, "name", req.Name, "err", err)
	} else {
		rep.Public, rep.Ref = key.Public, key.Ref
	}
	raw, _ := json.Marshal(rep)
	replyKey := replyPrefix + req.ID.String()
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, replyKey, raw)
		p.Expire(ctx, replyKey, time.Minute)
		return nil
	})
	if err != nil {
		log.ErrorContext(ctx, "key made but not reported", "backend", req.Backend, "name", req.Name, "err", err)
	}
}
