package httpapi

import (
	"log/slog"
	"time"
)

func levelFor(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

func slogString(k, v string) slog.Attr                 { return slog.String(k, v) }
func slogInt(k string, v int) slog.Attr                { return slog.Int(k, v) }
func slogDuration(k string, v time.Duration) slog.Attr { return slog.Duration(k, v) }
