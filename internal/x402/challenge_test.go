package x402

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// The seller's text is held to the rule on text people read: a control
// character, a format character (Cf) or a line or paragraph separator in
// v2's resource fails the parse, and in an entry's field (its memo; v1's
// resource, description and mime type) makes that entry malformed, each
// naming the field and the character. Letters of any script, either
// direction, punctuation and emoji pass unchanged.
func TestParsePaymentRequired_SellerTextRefusesControlAndFormatCharacters(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	wallet := Wallet{Network: solana.Devnet, Owner: w.pub}
	first := func(c map[string]any) map[string]any { return c["accepts"].([]map[string]any)[0] }
	fields := []struct {
		name  string
		v1    bool
		entry bool // in an accepts entry, else v2's resource
		set   func(c map[string]any, text string)
		got   func(c Choice) string
	}{
		{"resource.url", false, false,
			func(c map[string]any, text string) { c["resource"].(map[string]any)["url"] = text },
			func(c Choice) string { return c.Resource.URL }},
		{"resource.description", false, false,
			func(c map[string]any, text string) { c["resource"].(map[string]any)["description"] = text },
			func(c Choice) string { return c.Resource.Description }},
		{"resource.mimeType", false, false,
			func(c map[string]any, text string) { c["resource"].(map[string]any)["mimeType"] = text },
			func(c Choice) string { return c.Resource.MimeType }},
		{"extra.memo", false, true,
			func(c map[string]any, text string) { first(c)["extra"].(map[string]any)["memo"] = text },
			func(c Choice) string { return c.Memo }},
		{"extra.memo", true, true,
			func(c map[string]any, text string) { first(c)["extra"].(map[string]any)["memo"] = text },
			func(c Choice) string { return c.Memo }},
		{"resource", true, true,
			func(c map[string]any, text string) { first(c)["resource"] = text },
			func(c Choice) string { return c.Resource.URL }},
		{"description", true, true,
			func(c map[string]any, text string) { first(c)["description"] = text },
			func(c Choice) string { return c.Resource.Description }},
		{"mimeType", true, true,
			func(c map[string]any, text string) { first(c)["mimeType"] = text },
			func(c Choice) string { return c.Resource.MimeType }},
	}
	challenge := func(v1 bool) map[string]any {
		if v1 {
			return challengeV1(v1entry(s.pub, f.pub, "1000"))
		}
		return challengeV2(entry(s.pub, f.pub, "1000"))
	}
	bad := []struct {
		name string
		r    rune
	}{
		{"NUL", 0}, {"newline", '\n'}, {"carriage return", '\r'}, {"tab", '\t'}, {"escape", 0x1b}, {"DEL", 0x7f},
		{"C1 next line", 0x85}, {"C1 CSI", 0x9b},
		{"right-to-left override", 0x202e}, {"left-to-right embedding", 0x202a}, {"right-to-left isolate", 0x2067},
		{"Arabic letter mark", 0x61c}, {"zero-width space", 0x200b}, {"zero-width joiner", 0x200d},
		{"byte order mark", 0xfeff}, {"soft hyphen", 0xad}, {"tag letter", 0xe0041},
		{"line separator", 0x2028}, {"paragraph separator", 0x2029},
	}
	good := []string{
		"Weather report", "Café crème brûlée", "東京の天気予報", "Прогноз погоды", "تقرير الطقس", "דוח מזג אוויר",
		"sunny ☀️ 👍🏽 🇫🇷 🌦", "a – b — “c” ‘d’ … €5 ½", "text/plain; charset=utf-8", "https://seller.example/wetter/straße?q=ü&x=1",
	}
	for _, fd := range fields {
		version := "v2"
		if fd.v1 {
			version = "v1"
		}
		for _, b := range bad {
			t.Run(fmt.Sprintf("%s %s refuses %s", version, fd.name, b.name), func(t *testing.T) {
				c := challenge(fd.v1)
				fd.set(c, "https://seller.example/a"+string(b.r)+"b")
				want := fmt.Sprintf("%s contains %U", fd.name, b.r)
				pr, err := ParsePaymentRequired(mustJSON(t, c))
				if !fd.entry {
					if !errors.Is(err, ErrInvalidChallenge) || !strings.Contains(err.Error(), want) {
						t.Fatalf("parse: %v, want an invalid challenge naming %q", err, want)
					}
					return
				}
				if err != nil {
					t.Fatalf("parse: %v (an entry's text marks the entry, not the challenge)", err)
				}
				_, err = pr.Select(wallet, nil)
				var np *NotPayableError
				if !errors.As(err, &np) || !np.Has(ReasonMalformed) || !strings.Contains(err.Error(), want) {
					t.Fatalf("select: %v, want malformed naming %q", err, want)
				}
			})
		}
		for _, text := range good {
			t.Run(fmt.Sprintf("%s %s passes %s", version, fd.name, text), func(t *testing.T) {
				c := challenge(fd.v1)
				fd.set(c, text)
				ch, err := mustParse(t, c).Select(wallet, nil)
				if err != nil {
					t.Fatalf("select: %v", err)
				}
				if got := fd.got(ch); got != text {
					t.Fatalf("%s is %q, want %q", fd.name, got, text)
				}
			})
		}
	}
}

// A payable entry beside one whose memo is refused is still chosen: the
// refusal is that entry's reason, not the challenge's.
func TestParsePaymentRequired_SellerTextRefusalIsTheEntrys(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	forged := entry(s.pub, f.pub, "500")
	forged["extra"].(map[string]any)["memo"] = "paid\u202e"
	clean := entry(s.pub, f.pub, "1000")
	clean["extra"].(map[string]any)["memo"] = "order 42"
	c, err := mustParse(t, challengeV2(forged, clean)).Select(Wallet{Network: solana.Devnet, Owner: w.pub}, nil)
	if err != nil || c.Index != 1 || c.Memo != "order 42" {
		t.Fatalf("chose %d (memo %q): %v", c.Index, c.Memo, err)
	}
}
