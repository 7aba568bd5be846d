package ratelimit

import (
	"context"
	"sync"
)

// InFlight bounds how many requests of one key run at once in this
// process: Acquire waits for a free slot. The zero value allows one at a
// time per key.
type InFlight struct {
	// Max is the number of requests of one key that may run at once; 0
	// means 1.
	Max int

	mu   sync.Mutex
	keys map[string]*slots
}

// slots are one key's: sem holds a token per running request; users
// counts the holders and waiters, so an idle key is forgotten.
type slots struct {
	sem   chan struct{}
	users int
}

// Acquire takes one of key's slots, waiting while they are all held,
// until ctx ends (then its error). release gives the slot back; call it
// once.
func (f *InFlight) Acquire(ctx context.Context, key string) (release func(), err error) {
	f.mu.Lock()
	if f.keys == nil {
		f.keys = map[string]*slots{}
	}
	s := f.keys[key]
	if s == nil {
		s = &slots{sem: make(chan struct{}, max(f.Max, 1))}
		f.keys[key] = s
	}
	s.users++
	f.mu.Unlock()
	leave := func() {
		f.mu.Lock()
		if s.users--; s.users == 0 {
			delete(f.keys, key)
		}
		f.mu.Unlock()
	}
	select {
	case s.sem <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-s.sem; leave() }) }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}
