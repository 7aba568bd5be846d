package httpapi

import "log/slog"

// levelFor logs failures loudly and successes only at debug.
func levelFor(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}
