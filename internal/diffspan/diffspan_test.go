package diffspan

import "testing"

func TestCommon(t *testing.T) {
	for _, tc := range []struct {
		a, b     string
		pre, suf int
	}{
		{"", "", 0, 0},
		{"abc", "abc", 3, 0},
		{"abc", "", 0, 0},
		{"abXc", "abc", 2, 1},
		{"abc", "abXc", 2, 1},
		{"aaa", "aa", 2, 0},   // the suffix does not reuse the prefix
		{"abca", "aXa", 1, 1}, // nor overlaps it on the shorter side
		{"xbc", "ybc", 0, 2},
	} {
		pre, suf := Common(len(tc.a), len(tc.b), func(i, j int) bool { return tc.a[i] == tc.b[j] })
		if pre != tc.pre || suf != tc.suf {
			t.Errorf("Common(%q, %q) = %d, %d; want %d, %d", tc.a, tc.b, pre, suf, tc.pre, tc.suf)
		}
	}
}
