// Package migrations holds the database schema as SQL files, applied in
// order by bun's migrator (`api migrate up|down|status|unlock`).
package migrations

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var files embed.FS

// NewMigrator returns a migrator over the embedded SQL files.
func NewMigrator(db *bun.DB) (*migrate.Migrator, error) {
	ms := migrate.NewMigrations()
	if err := ms.Discover(files); err != nil {
		return nil, err
	}
	// Mark a migration applied only once it has run: each file runs in one
	// transaction (.tx.), so a failure leaves nothing half-done.
	return migrate.NewMigrator(db, ms, migrate.WithMarkAppliedOnSuccess(true)), nil
}

// Fingerprint hashes every migration file, so test templates are rebuilt
// when the schema changes.
func Fingerprint() (string, error) {
	h := sha256.New()
	entries, err := files.ReadDir(".")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
