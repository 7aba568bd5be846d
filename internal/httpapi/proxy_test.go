package httpapi_test

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// proxy stands between the API and one of its dependencies, so a test
// can take the dependency away in the two ways networks fail: refused
// (nothing listens: every dial fails at once) and blackholed (connections
// open, nothing ever comes back).
type proxy struct {
	t      testing.TB
	target string
	addr   string

	mu       sync.Mutex
	ln       net.Listener
	mode     proxyMode
	clients  map[net.Conn]struct{}
	upstream map[net.Conn]struct{}
}

type proxyMode int

const (
	proxyUp proxyMode = iota
	proxyRefuse
	proxyBlackhole
)

func newProxy(t testing.TB, target string) *proxy {
	p := &proxy{t: t, target: target, clients: map[net.Conn]struct{}{}, upstream: map[net.Conn]struct{}{}}
	p.listen("127.0.0.1:0")
	t.Cleanup(func() { p.set(proxyRefuse) })
	return p
}

// via rewrites rawURL's host to the proxy's.
func (p *proxy) via(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		p.t.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

func (p *proxy) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.ln, p.addr = ln, ln.Addr().String()
	go p.serve(ln)
}

func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		mode := p.mode
		p.clients[c] = struct{}{}
		p.mu.Unlock()
		if mode == proxyBlackhole {
			// Take what the client writes; answer nothing.
			go func() { _, _ = io.Copy(io.Discard, c) }()
			continue
		}
		go p.pipe(c)
	}
}

func (p *proxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.mode != proxyUp {
		p.mu.Unlock()
		up.Close()
		return
	}
	p.upstream[up] = struct{}{}
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.upstream, up)
	if p.mode != proxyBlackhole {
		c.Close()
		delete(p.clients, c)
	}
}

// set changes the mode. Refuse closes every connection and the listener
// (the dependency went away); blackhole cuts only the upstream side, so
// clients' connections stay open and silent; up closes what blackhole
// left open, as a network that heals does, and clients reconnect.
func (p *proxy) set(m proxyMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == m {
		return
	}
	prev := p.mode
	p.mode = m
	for c := range p.upstream {
		c.Close()
		delete(p.upstream, c)
	}
	if m != proxyBlackhole {
		for c := range p.clients {
			c.Close()
			delete(p.clients, c)
		}
	}
	switch {
	case m == proxyRefuse:
		p.ln.Close()
	case prev == proxyRefuse:
		p.listen(p.addr)
	}
}
