package httpapi

import (
	"encoding/base64"
	"encoding/json"
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

// MaxPageBytes bounds the JSON body of one page of any list: a page ends
// early, with a next_cursor, before the item that would take it past.
// One item alone may pass it (a page always holds one, or the list could
// not go on); the largest single items are audit entries of a policy
// change between two full address books (see docs/decisions/operations.md,
// "Bounded lists and caps").
const MaxPageBytes = 1 << 20

// pageItemBytes is what a page's items may take of MaxPageBytes: the rest
// is for the envelope ({"agents":[…],"next_cursor":"…"}).
const pageItemBytes = MaxPageBytes - 1024

// page converts rows, read with one row more than n, to at most n items
// whose JSON fits pageItemBytes, and when rows remain returns the cursor
// after the last item kept.
func page[T, O any](rows []T, n int, cursor func(*T) string, item func(*T) O) ([]O, *string) {
	out := make([]O, 0, min(len(rows), n))
	var size countingWriter
	enc := json.NewEncoder(&size)
	enc.SetEscapeHTML(false) // as huma writes bodies
	for i := range rows {
		if i == n {
			break
		}
		o := item(&rows[i])
		before := size
		if err := enc.Encode(o); err != nil {
			// Unmarshalable: huma reports it when it writes the body.
			size = before
		}
		if len(out) > 0 && size > pageItemBytes {
			break
		}
		out = append(out, o)
	}
	if len(out) == len(rows) {
		return out, nil
	}
	c := cursor(&rows[len(out)-1])
	return out, &c
}

// countingWriter counts bytes written (each item's JSON and its newline,
// which stands for the comma between items).
type countingWriter int

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

// PageQuery is the query of a paginated list (embedded in list inputs).
type PageQuery struct {
	Cursor string `query:"cursor" maxLength:"200" doc:"Where to continue: the next_cursor of the previous page. Omit for the first page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100. A page also ends early, with next_cursor, before it passes 1 MiB of JSON." example:"50"`
}

func (q PageQuery) size() int {
	if q.Limit <= 0 {
		return DefaultPageSize
	}
	return q.Limit
}
