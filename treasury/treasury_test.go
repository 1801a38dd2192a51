package treasury

import "testing"

func TestUnitsIsExactAtItsBoundaries(t *testing.T) {
	for _, tc := range []struct {
		in   string
		dec  int32
		want string
	}{
		{"0", 6, "0"},
		{"1", 6, "0.000001"},
		{"1000000", 6, "1"},
		{"1234500", 6, "1.2345"},
		{"100", 0, "100"}, // no decimals: trailing zeros are the number's own
		{"16666666666666667", 18, "0.016666666666666667"},
		{"115792089237316195423570985008687907853269984665640564039457584007913129639935", 18,
			"115792089237316195423570985008687907853269984665640564039457.584007913129639935"}, // 2^256-1 wei
		{"", 6, ""},
	} {
		if got := Units(tc.in, tc.dec); got != tc.want {
			t.Errorf("Units(%q, %d) = %q, want %q", tc.in, tc.dec, got, tc.want)
		}
	}
}
