package httpapi

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Pages default to DefaultPageSize items; `limit` asks for 1 to MaxPageSize.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// Cursors are opaque to clients: base64url of "<micros since epoch>_<uuid>"
// (a time-ordered list) or of a sequence number (the audit log). A page
// continues strictly after its cursor, so rows added meanwhile never
// shift it.
func timeCursor(at time.Time, id uuid.UUID) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixMicro(), 10) + "_" + id.String()))
}

// maxCursorMicros is the end of year 9999, the last time Postgres and
// RFC 3339 both represent.
const maxCursorMicros = 253402300799999999

func parseTimeCursor(s string) (time.Time, uuid.UUID, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, uuid.Nil, errBadCursor
	}
	micros, rawID, ok := strings.Cut(string(raw), "_")
	us, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil || us < 0 || us > maxCursorMicros {
		return time.Time{}, uuid.Nil, errBadCursor
	}
	id, err := uuid.Parse(rawID)
	if err != nil {
		return time.Time{}, uuid.Nil, errBadCursor
	}
	return time.UnixMicro(us).UTC(), id, nil
}

func seqCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(seq, 10)))
}

func parseSeqCursor(s string) (int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, errBadCursor
	}
	seq, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || seq <= 0 {
		return 0, errBadCursor
	}
	return seq, nil
}

var errBadCursor = &Error{status: http.StatusBadRequest, Message: "cursor: not a cursor this API returned",
	Details: []ErrorDetail{{Location: "query.cursor", Message: "not a cursor this API returned"}}}

// page cuts rows, read with one row more than n, to n rows, and when
// there was more returns the cursor after the last row kept.
func page[T any](rows []T, n int, cursor func(*T) string) ([]T, *string) {
	if len(rows) <= n {
		return rows, nil
	}
	rows = rows[:n]
	c := cursor(&rows[n-1])
	return rows, &c
}

// PageQuery is the query of a paginated list (embedded in list inputs).
type PageQuery struct {
	Cursor string `query:"cursor" maxLength:"200" doc:"Where to continue: the next_cursor of the previous page. Omit for the first page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100." example:"50"`
}

func (q PageQuery) size() int {
	if q.Limit <= 0 {
		return DefaultPageSize
	}
	return q.Limit
}
