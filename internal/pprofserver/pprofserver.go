// Package pprofserver serves net/http/pprof on a listener of its own, for
// the api and the worker when PPROF_ADDR asks for it (off by default). It
// is never part of the API's handler: profiles show code paths and cost
// CPU while taken, so they stay on a loopback port (config checks it).
package pprofserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// Start listens on addr and serves /debug/pprof/ until ctx ends. It
// returns the bound address (addr may name port 0) and logs it as
// "pprof listening".
func Start(ctx context.Context, addr string, log *slog.Logger) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof server stopped", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { srv.Close() })
	bound := ln.Addr().String()
	log.Info("pprof listening", "addr", bound)
	return bound, nil
}
