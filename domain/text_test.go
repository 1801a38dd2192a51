package domain

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCheckTextRefusesControlAndBidiCharacters(t *testing.T) {
	var refused []rune
	for r := rune(0); r <= 0x1F; r++ {
		refused = append(refused, r) // C0, NUL, tab and newline included
	}
	for r := rune(0x7F); r <= 0x9F; r++ {
		refused = append(refused, r) // DEL and C1
	}
	refused = append(refused, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C)
	for _, r := range refused {
		s := "order-" + string(r) + "-1"
		err := CheckText("orderId", s)
		var in *InvalidInputError
		if !errors.As(err, &in) {
			t.Fatalf("%U: got %v, want an InvalidInputError", r, err)
		}
		if in.Code != CodeParameterInvalid || in.Param != "orderId" {
			t.Errorf("%U: code %s param %q", r, in.Code, in.Param)
		}
		if want := fmt.Sprintf("%U", r); !strings.Contains(in.Message, want) {
			t.Errorf("%U: message %q does not name the character", r, in.Message)
		}
	}
	if err := CheckText("orderId", "o-\xff"); err == nil {
		t.Error("invalid UTF-8 passed")
	}
	for _, ok := range []string{"", "order-1001", "caf\u00e9 \u4e2d \U0001F600", "a b", "\uFFFD", "\u200D", "\u00A0", "\u2028x", "\u0627\u0644\u0639\u0631\u0628\u064A\u0629"} {
		if err := CheckText("orderId", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if err := CheckOptionalText("customerRefId", nil); err != nil {
		t.Error(err)
	}
	var in *InvalidInputError
	if s := "c\u202e1"; !errors.As(CheckOptionalText("customerRefId", &s), &in) || in.Param != "customerRefId" {
		t.Errorf("customerRefId: %v", in)
	}
}

func TestCheckWebURL(t *testing.T) {
	for _, ok := range []string{"https://shop.example/thanks", "http://shop.example", "HTTPS://Shop.Example:8443/a?b=c#d",
		"https://[2001:db8::1]/x", "https://127.0.0.1/x", "https://xn--caf-dma.example/"} {
		if err := CheckWebURL("redirectUrl", ok, "https", "http"); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "https:///x", "http:foo", "https:", "https://", "https://:443/x", "//shop.example/x", "/thanks",
		"ftp://shop.example/x", "javascript:alert(1)", "https://user:pw@shop.example/", "https://bank.example@evil.example/",
		"https://shop.example/a b", "https://shop.example/\u202ex", "https://shop.example/\x00", "https://shop example/", "https://[::1/x"} {
		err := CheckWebURL("redirectUrl", bad, "https", "http")
		var in *InvalidInputError
		if !errors.As(err, &in) || in.Param != "redirectUrl" || in.Code != CodeParameterInvalid {
			t.Errorf("%q: got %v", bad, err)
		}
	}
	if err := CheckWebURL("logoUrl", "http://shop.example/logo.png", "https"); err == nil {
		t.Error("http passed where only https is allowed")
	}
}

// A multi-line note (a refund's reason): tab, line feed and carriage return pass; every other
// character CheckText refuses is refused, as openapi.yaml's pattern for it says.
func TestCheckOptionalLines(t *testing.T) {
	for _, ok := range []string{"", "returned", "line one\nline two", "a\tb\r\nc"} {
		if err := CheckOptionalLines("reason", &ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if err := CheckOptionalLines("reason", nil); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"a\x00b", "a\x0bb", "a\x7fb", "a\u0093b", "a\u202eb", "a\u200eb", "a\u061cb", "a\xffb"} {
		var in *InvalidInputError
		if err := CheckOptionalLines("reason", &bad); !errors.As(err, &in) || in.Param != "reason" {
			t.Errorf("%q: got %v, want an InvalidInputError naming reason", bad, err)
		}
	}
}
