// Package diffspan finds the span two sequences differ in: what a diff
// leaves out before it compares anything, so that its cost follows the
// size of the change, not of the inputs. The shell's diff and the edit
// tool's answer both start here.
package diffspan

// Common returns the length of the longest common prefix of two sequences
// of n and m elements, and the length of the longest common suffix of what
// follows it (the two never overlap: pre+suf is at most min(n, m)). eq
// reports whether element i of the first equals element j of the second;
// it is called once per element compared, in order from each end.
func Common(n, m int, eq func(i, j int) bool) (pre, suf int) {
	for pre < n && pre < m && eq(pre, pre) {
		pre++
	}
	for suf < n-pre && suf < m-pre && eq(n-1-suf, m-1-suf) {
		suf++
	}
	return pre, suf
}
