package httpapi

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
)

// RequestIDHeader carries a request's id: taken from the request when it
// is a sane one, else made here, and echoed on every answer.
const RequestIDHeader = "X-Request-Id"

type requestIDKey struct{}

// RequestID is the id of the request ctx serves, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestIDFrom keeps a caller's id of 1 to 128 characters from
// [A-Za-z0-9._:-] (it goes into headers and logs verbatim); anything else
// is replaced by a new one.
func requestIDFrom(h string) string {
	if len(h) == 0 || len(h) > 128 {
		return uuid.NewString()
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return uuid.NewString()
		}
	}
	return h
}

// requestIDHandler adds request_id to every log record whose context
// carries one, so every line a request causes can be found by its id.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
