// Package keymaker has a worker do for the API what needs keys the API
// never holds: make a key in an HSM or a KMS (the API has no PIN, Vault
// token or KMS role), or seal an envelope wallet's secret to an owner's
// public key for an approved export (the API has no master key). The API
// pushes a request on a Redis list and blocks on its own reply list; a
// worker pops the request, does it, and pushes back a public key and a
// reference, or the sealed export: never a secret in the clear.
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
	// Export, when set, asks for wallet Export's secret sealed to
	// Recipient instead of a new key.
	Export    uuid.UUID `json:"export,omitzero"`
	Recipient []byte    `json:"recipient,omitempty"`
}

type reply struct {
	Public []byte `json:"public,omitempty"`
	Ref    string `json:"ref,omitempty"`
	Sealed []byte `json:"sealed,omitempty"`
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
	rep, err := c.ask(ctx, request{Backend: c.Backend, Name: name})
	if err != nil {
		return signer.Key{}, err
	}
	if len(rep.Public) != ed25519.PublicKeySize || rep.Ref == "" {
		return signer.Key{}, errors.New("make key: the worker's reply names no key")
	}
	return signer.Key{Public: rep.Public, Backend: c.Backend, Ref: rep.Ref}, nil
}

// Export asks a worker for envelope wallet id's secret sealed to
// recipient (signer.Keystore.Export).
func (c *Client) Export(ctx context.Context, id uuid.UUID, recipient []byte) ([]byte, error) {
	rep, err := c.ask(ctx, request{Backend: signer.Local, Export: id, Recipient: recipient})
	if err != nil {
		return nil, err
	}
	if len(rep.Sealed) == 0 {
		return nil, errors.New("export: the worker's reply holds nothing")
	}
	return rep.Sealed, nil
}

// ask queues req and waits for its reply.
func (c *Client) ask(ctx context.Context, req request) (reply, error) {
	wait := c.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	req.ID = uuid.New()
	req.Deadline, _ = ctx.Deadline()
	raw, err := json.Marshal(req)
	if err != nil {
		return reply{}, err
	}
	if err := c.Redis.LPush(ctx, Key, raw).Err(); err != nil {
		return reply{}, c.unavailable(req.Backend, "the request could not be queued", err)
	}
	res, err := c.Redis.BLPop(ctx, time.Until(req.Deadline), replyPrefix+req.ID.String()).Result()
	if err != nil {
		// redis.Nil: no worker answered in time.
		return reply{}, c.unavailable(req.Backend, "no worker answered in time", err)
	}
	var rep reply
	if err := json.Unmarshal([]byte(res[1]), &rep); err != nil {
		return reply{}, fmt.Errorf("worker's reply: %w", err)
	}
	switch {
	case rep.Unavailable != "":
		return reply{}, &signer.UnavailableError{Backend: req.Backend, Reason: rep.Unavailable}
	case rep.Error != "":
		return reply{}, &WorkerError{Msg: rep.Error}
	}
	return rep, nil
}

// WorkerError is a request the worker refused or failed, in its words.
type WorkerError struct{ Msg string }

func (e *WorkerError) Error() string { return e.Msg }

func (c *Client) unavailable(b signer.Backend, reason string, err error) error {
	return &signer.UnavailableError{Backend: b, Reason: reason, Err: err}
}

// ExportFunc seals envelope wallet id's secret to recipient: the worker's
// side of Client.Export.
type ExportFunc func(ctx context.Context, id uuid.UUID, recipient []byte) ([]byte, error)

// Serve answers the requests, making keys with the keepers of set and
// exports with export (nil: exports are unavailable), until ctx ends. Each
// request runs on its own goroutine: a slow backend does not hold the
// others.
func Serve(ctx context.Context, rdb *redis.Client, set *signer.Set, export ExportFunc, log *slog.Logger) {
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
		go serveOne(ctx, rdb, set, export, req, log)
	}
}

func serveOne(ctx context.Context, rdb *redis.Client, set *signer.Set, export ExportFunc, req request, log *slog.Logger) {
	if time.Now().After(req.Deadline) {
		return // its asker has stopped waiting
	}
	mctx, cancel := context.WithDeadline(ctx, req.Deadline)
	defer cancel()
	var rep reply
	var err error
	switch k, ok := set.Keeper(req.Backend); {
	case req.Export != uuid.Nil && export == nil:
		rep.Unavailable = "this worker does not export"
	case req.Export != uuid.Nil:
		rep.Sealed, err = export(mctx, req.Export, req.Recipient)
	case !ok:
		rep.Unavailable = "no worker is configured for this signer"
	default:
		var key signer.Key
		key, err = k.Make(mctx, req.Name)
		rep.Public, rep.Ref = key.Public, key.Ref
	}
	if u, ok := signer.Unavailable(err); ok {
		rep.Unavailable = u.Reason
	} else if err != nil {
		rep.Error = err.Error()
	}
	if err != nil && req.Export != uuid.Nil {
		log.WarnContext(ctx, "export not sealed", "wallet_id", req.Export, "err", err)
	} else if err != nil {
		log.WarnContext(ctx, "key not made", "backend", req.Backend, "name", req.Name, "err", err)
	}
	raw, _ := json.Marshal(rep)
	replyKey := replyPrefix + req.ID.String()
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, replyKey, raw)
		p.Expire(ctx, replyKey, time.Minute)
		return nil
	})
	if err != nil {
		log.ErrorContext(ctx, "key made but not reported", "backend", req.Backend, "name", req.Name, "err", err)
	}
}
