package mpp

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// officialHeader is a WWW-Authenticate value the official server sent
// (mppx 0.11, @solana/mpp 0.6: the seller pays the fee), byte for byte.
const officialHeader = `Payment id="defTlZ_B5E5HUYzEw61ZM3Mlx8CnfN8grbMlAEYnYFw", realm="seller.example", method="solana", intent="charge", request="eyJhbW91bnQiOiIxMDAwMCIsImN1cnJlbmN5IjoiNHpNTUM5c3J0NVJpNVgxNEdBZ1hoYUhpaTNHblBBRUVSWVBKZ1pKRG5jRFUiLCJtZXRob2REZXRhaWxzIjp7ImRlY2ltYWxzIjo2LCJmZWVQYXllciI6dHJ1ZSwiZmVlUGF5ZXJLZXkiOiJGYkhUY0pxSHd2UVByUjZXWmhqM1RSazc4aTFXcEVleUxFUFVXZmFxc3V2USIsIm5ldHdvcmsiOiJkZXZuZXQiLCJyZWNlbnRCbG9ja2hhc2giOiJFa1NuTldpZDJjdndFVm5WeDlhQnFhd25taUNOaURncDNnVWRrRFBUS04xTiIsInRva2VuUHJvZ3JhbSI6IlRva2Vua2VnUWZlWnlpTndBSmJOYkdLUEZYQ1d1QnZmOVNzNjIzVlE1REEifSwicmVjaXBpZW50IjoiamY2dzR5WEQxOEtlMmR1OHFvUmpVeUNTdXNHZXp4dFRkSmJMOXV3Nk1mbiJ9", description="demo item", expires="2026-11-28T05:17:43.356Z"`

// officialChallenge is officialHeader parsed.
var officialChallenge = Challenge{
	ID: "defTlZ_B5E5HUYzEw61ZM3Mlx8CnfN8grbMlAEYnYFw", Realm: "seller.example", Method: "solana", Intent: "charge",
	Request:     officialHeader[strings.Index(officialHeader, `request="`)+9 : strings.Index(officialHeader, `", description`)],
	Description: "demo item", Expires: "2026-11-28T05:17:43.356Z",
}

func TestParseChallenges(t *testing.T) {
	t.Parallel()
	oc := officialChallenge
	withDesc := func(d string) Challenge { c := oc; c.Description = d; return c }
	other := oc
	other.ID, other.Realm = "c2", "other.example"
	sub := func(old, new string) string { return strings.Replace(officialHeader, old, new, 1) }
	cases := []struct {
		name   string
		values []string
		want   []Challenge
	}{
		{"the official server's header", []string{officialHeader}, []Challenge{oc}},
		{"two challenges on one line, comma-joined", []string{officialHeader + ", " + headerOf(other)}, []Challenge{oc, other}},
		{"two challenges on two lines", []string{officialHeader, headerOf(other)}, []Challenge{oc, other}},
		{"no space after the commas", []string{strings.ReplaceAll(officialHeader, `", `, `",`)}, []Challenge{oc}},
		{"empty list elements", []string{", ,  " + officialHeader + " ,, "}, []Challenge{oc}},
		{"another scheme first", []string{`Bearer realm="api", error="invalid_token", ` + officialHeader}, []Challenge{oc}},
		{"another scheme after", []string{officialHeader + `, Basic realm="x, \"y\""`}, []Challenge{oc}},
		{"a malformed challenge of another method beside it is skipped", []string{`Payment id="x", realm="r", method="stripe", intent="charge", request="e30", description="a\u200bb", ` + officialHeader}, []Challenge{oc}},
		{"a malformed challenge of another intent beside it is skipped", []string{officialHeader + `, Payment id="y", realm="r", method="solana", intent="session", request="not*base64"`}, []Challenge{oc}},
		{"a token68 scheme between", []string{officialHeader + ", Negotiate YIIB+w==, " + headerOf(other)}, []Challenge{oc, other}},
		{"a bare scheme between", []string{officialHeader + ", Basic, " + headerOf(other)}, []Challenge{oc, other}},
		{"Payment inside another scheme's quoted-string", []string{`Bearer error_description="use Payment id=\"x\", realm=\"y\""`}, nil},
		{"other schemes only", []string{`Bearer realm="x"`, `Basic realm="y"`}, nil},
		{"nothing", nil, nil},
		{"the scheme in another case", []string{sub("Payment ", "payment ")}, []Challenge{oc}},
		{"parameter names in another case", []string{sub(`id="`, `ID="`)}, []Challenge{oc}},
		{"whitespace around =", []string{sub(`realm="`, "realm \t= \"")}, []Challenge{oc}},
		{"tabs between the scheme and its parameters", []string{sub("Payment ", "Payment\t ")}, []Challenge{oc}},
		{"unquoted tokens", []string{`Payment id=defTlZ_B5E5HUYzEw61ZM3Mlx8CnfN8grbMlAEYnYFw, realm=seller.example, method=solana, intent=charge, request=` +
			oc.Request + `, description="demo item", expires=2026-11-28T05:17:43.356Z`}, []Challenge{oc}},
		{"unknown parameters are ignored", []string{officialHeader + `, foo="bar", x-y=z`}, []Challenge{oc}},
		{"quoted-pairs", []string{sub(`description="demo item"`, `description="a \"quoted\" \\ back\slash\x"`)}, []Challenge{withDesc(`a "quoted" \ backslashx`)}},
		{`\u escapes of characters above U+00FF`, []string{sub(`description="demo item"`, `description="\u2600 sunny \u2014 \u6771\u4eac"`)}, []Challenge{withDesc("☀ sunny — 東京")}},
		{`a surrogate pair of \u escapes`, []string{sub(`description="demo item"`, `description="\ud83c\udf26 \uD83D\uDC4D"`)}, []Challenge{withDesc("🌦 👍")}},
		{`\u without four hex digits is the letter u`, []string{sub(`description="demo item"`, `description="\u12 \uzzzz"`)}, []Challenge{withDesc("u12 uzzzz")}},
		{"octets above 0x7f are ISO-8859-1", []string{sub(`description="demo item"`, "description=\"M\xe9t\xe9o \xa35 \xbd\"")}, []Challenge{withDesc("Météo £5 ½")}},
		{"a value that is UTF-8 text is read as text (a challenge sent inside JSON)", []string{sub(`description="demo item"`, `description="Météo ☀ £5"`)}, []Challenge{withDesc("Météo ☀ £5")}},
		{"a comma inside a quoted-string", []string{sub(`description="demo item"`, `description="a, b, Payment id=\"c\""`)}, []Challenge{withDesc(`a, b, Payment id="c"`)}},
		{"an empty description", []string{sub(`description="demo item"`, `description=""`)}, []Challenge{withDesc("")}},
		{"every optional parameter", []string{officialHeader + `, digest="sha-256=abc", opaque="eyJvcmRlciI6IjQyIn0", header="Payment-Authorization"`},
			[]Challenge{func() Challenge {
				c := oc
				c.Digest, c.Opaque, c.Header = "sha-256=abc", "eyJvcmRlciI6IjQyIn0", "Payment-Authorization"
				return c
			}()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseChallenges(tc.values...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// A malformed Payment challenge fails the whole answer, saying why.
func TestParseChallenges_RefusesMalformedPaymentChallenges(t *testing.T) {
	t.Parallel()
	sub := func(old, new string) string {
		if !strings.Contains(officialHeader, old) {
			t.Fatalf("%q is not in the header", old)
		}
		return strings.Replace(officialHeader, old, new, 1)
	}
	desc := func(v string) string { return sub(`description="demo item"`, `description="`+v+`"`) }
	many := strings.TrimSuffix(strings.Repeat(officialHeader+", ", MaxChallenges+1), ", ")
	cases := []struct{ name, value, want string }{
		{"a parameter twice", officialHeader + `, realm="other"`, "parameter realm is given twice"},
		{"a parameter twice in another case", officialHeader + `, REALM="other"`, "parameter realm is given twice"},
		{"no id", sub(`id="defTlZ_B5E5HUYzEw61ZM3Mlx8CnfN8grbMlAEYnYFw", `, ""), "parameter id is missing"},
		{"an empty id", sub(`id="defTlZ_B5E5HUYzEw61ZM3Mlx8CnfN8grbMlAEYnYFw"`, `id=""`), "id is empty"},
		{"no realm", sub(`realm="seller.example", `, ""), "parameter realm is missing"},
		{"no method", sub(`method="solana", `, ""), "parameter method is missing"},
		{"no intent", sub(`intent="charge", `, ""), "parameter intent is missing"},
		{"no request", sub(`request="`+officialChallenge.Request+`", `, ""), "parameter request is missing"},
		{"a method in capitals", sub(`method="solana"`, `method="Solana"`), "method \"Solana\" is not lowercase"},
		{"an empty intent", sub(`intent="charge"`, `intent=""`), "intent is empty"},
		{"a request over 16 KiB", sub(officialChallenge.Request, strings.Repeat("A", MaxRequestBytes+1)), "longer than 16384 bytes"},
		{"a request that is not base64", sub(officialChallenge.Request, "not*base64"), "request: not base64"},
		{"a request mixing the alphabets", sub(officialChallenge.Request, "eyJh-_+/"), "mixes the base64 and base64url alphabets"},
		{"a request that is a JSON array", sub(officialChallenge.Request, "WzEsMl0"), "request: not a JSON object"},
		{"a request that is not UTF-8", sub(officialChallenge.Request, "eyJhIjoi_yJ9"), "request: not UTF-8"},
		{"expires not a date-time", sub(`expires="2026-11-28T05:17:43.356Z"`, `expires="tomorrow"`), "expires \"tomorrow\": not an RFC 3339 date-time"},
		{"expires without a zone", sub(`expires="2026-11-28T05:17:43.356Z"`, `expires="2026-11-28T05:17:43"`), "not an RFC 3339 date-time"},
		{"expires on the 31st of November", sub(`expires="2026-11-28T05:17:43.356Z"`, `expires="2026-11-31T05:17:43Z"`), "not an RFC 3339 date-time"},
		{"a digest of another algorithm", officialHeader + `, digest="md5=abc"`, "does not start with sha-256="},
		{"header= naming Host", officialHeader + `, header="Host"`, "names a field the request's framing owns"},
		{"header= naming Content-Length", officialHeader + `, header="content-length"`, "names a field the request's framing owns"},
		{"header= not a field name", officialHeader + `, header="Payment Authorization"`, "is not a field name"},
		{"an unterminated quoted-string", strings.TrimSuffix(officialHeader, `"`), "unterminated quoted-string"},
		{"text after a quoted-string", sub(`realm="seller.example"`, `realm="seller"example`), "follows the quoted-string"},
		{"an unquoted value with a space", sub(`realm="seller.example"`, `realm=seller example`), "has a character a token may not"},
		{"an unquoted value with a backslash", sub(`realm="seller.example"`, `realm=seller\example`), "has a character a token may not"},
		{"a parameter without a value", sub(`realm="seller.example"`, `realm=`), "parameter realm: no value"},
		{"an element that is not a parameter", officialHeader + `, "stray"`, "neither an auth-param nor an authentication scheme"},
		{"a token68 after Payment", "Payment YII/B+w==", "not an auth-param"},
		{"Payment without parameters", "Payment", "no parameters"},
		{"a parameter before any scheme", `realm="x", ` + officialHeader, "starts with the parameter \"realm\""},
		{"a control byte", desc("a\x01b"), "control byte 0x01"},
		{"a raw newline", desc("a\nb"), "control byte 0x0a"},
		{"a NUL escape", desc(`a\u0000b`), "description contains U+0000"},
		{"a right-to-left override", desc(`paid\u202e in full`), "description contains U+202E"},
		{"a zero-width space", desc(`a\u200bb`), "description contains U+200B"},
		{"a C1 control octet", desc("a\x85b"), "description contains U+0085"},
		{"a tab in a quoted-string", desc("a\tb"), "description contains U+0009"},
		{"a lone high surrogate", desc(`\ud83c x`), "half of a surrogate pair"},
		{"a lone low surrogate", desc(`\udf26`), "half of a surrogate pair"},
		{"a high surrogate at the end", desc(`\ud83c`), "half of a surrogate pair"},
		{"a bidi override in the realm", sub(`realm="seller.example"`, `realm="seller\u202e.example"`), "realm contains U+202E"},
		{"more than 16 Payment challenges", many, fmt.Sprintf("more than %d Payment challenges", MaxChallenges)},
		{"a malformed Solana charge beside another method's", `Payment id="x", realm="r", method="stripe", intent="charge", request="e30", ` + desc(`a\u200bb`), "description contains U+200B"},
		{"a field over 128 KiB", officialHeader + `, Bearer realm="` + strings.Repeat("x", MaxChallengeValueBytes) + `"`, "longer than 131072 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := ParseChallenges(tc.value)
			if !errors.Is(err, ErrInvalidChallenge) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want ErrInvalidChallenge with %q", cs, err, tc.want)
			}
		})
	}
}

// What mppx's serializer writes (every value a quoted-string, \ and "
// escaped, characters above U+00FF as \uXXXX UTF-16 code units, those up
// to U+00FF as ISO-8859-1 octets) reads back to the same challenges,
// whatever the seller's text.
func TestParseChallenges_ReadsBackWhatMppxWrites(t *testing.T) {
	t.Parallel()
	for _, d := range []string{
		"Weather report", `a "quoted" \ back`, "Météo à Zürich: 5 €", "東京の天気予報", "Прогноз погоды", "تقرير الطقس",
		"sunny ☀️ 👍🏽 🇫🇷 🌦", "a – b — “c” ‘d’ … ½ ©", `\u2600 is not an escape here`, "",
	} {
		c := officialChallenge
		c.Description = d
		other := c
		other.ID, other.Opaque, other.Header = "second", "eyJhIjoiYiJ9", "Payment-Authorization"
		got, err := ParseChallenges(headerOf(c, other))
		if err != nil || !reflect.DeepEqual(got, []Challenge{c, other}) {
			t.Errorf("%q: got %+v, %v", d, got, err)
		}
	}
}
