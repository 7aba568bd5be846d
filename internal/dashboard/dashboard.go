// Package dashboard serves the humans' web app (web/dashboard, a Vite +
// React build) from the api binary under /dashboard/. The build is
// embedded when present (`make dashboard` writes dist/app); without it the
// binary still compiles and serves a page saying how to build it.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// Path is where the app is served.
const Path = "/dashboard/"

//go:embed all:dist
var dist embed.FS

// csp allows the app's own scripts, styles and API calls, and the data:
// icons wallets register with; nothing inline, no framing.
const csp = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// notBuilt answers when the app was not built into this binary.
const notBuilt = `<!doctype html><meta charset="utf-8"><title>Agent Wallet</title>
<h1>The dashboard is not built into this binary</h1>
<p>Run <code>make dashboard</code> (or <code>make build</code>, <code>make dev</code>) and rebuild the api.</p>`

// Handler serves the app: hashed assets for a year, index.html (no-cache)
// for every other path under /dashboard/, so deep links work.
func Handler() http.Handler {
	app, err := fs.Sub(dist, "dist/app")
	if err != nil {
		panic(err) // the embed pattern guarantees dist exists
	}
	index, err := fs.ReadFile(app, "index.html")
	if err != nil {
		index = nil
	}
	files := http.FileServerFS(app)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rel := strings.TrimPrefix(path.Clean(r.URL.Path), strings.TrimSuffix(Path, "/"))
		if strings.HasPrefix(rel, "/assets/") {
			if _, err := fs.Stat(app, strings.TrimPrefix(rel, "/")); err == nil && index != nil {
				h.Set("Cache-Control", "public, max-age=31536000, immutable")
				r2 := r.Clone(r.Context())
				r2.URL.Path = rel
				files.ServeHTTP(w, r2)
				return
			}
			http.NotFound(w, r)
			return
		}
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Type", "text/html; charset=utf-8")
		if index == nil {
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(notBuilt))
			return
		}
		w.Write(index)
	})
}
