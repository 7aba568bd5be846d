package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/danielgtaylor/huma/v2"
)

// jsonFormat decodes numbers as json.Number, so validation sees a number's
// text: 1e400 is a field error (422) instead of a float64 overflow, and
// nothing is rounded before it is read as money.
var jsonFormat = huma.Format{
	Marshal:   huma.DefaultJSONFormat.Marshal,
	Unmarshal: unmarshalJSON,
}

func unmarshalJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}
