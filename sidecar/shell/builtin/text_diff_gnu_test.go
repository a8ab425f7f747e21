package builtin

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// TestTextDiffMatchesGNU compares diff's output with GNU diff's on random
// files over small alphabets, where many equally short diffs exist and
// only GNU's own choices give the same text.
func TestTextDiffMatchesGNU(t *testing.T) {
	gnu := testenv.LookPath(t, "diff", "diffutils")
	rng := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	for n := 0; n < 150; n++ {
		size, alpha := []int{12, 40, 300}[n%3], []int{3, 6, 40}[(n/3)%3]
		lines := func() []string {
			out := make([]string, rng.Intn(size))
			for i := range out {
				out[i] = fmt.Sprintf("l%d\n", rng.Intn(alpha))
			}
			return out
		}
		a := lines()
		// b is an edited copy of a (or unrelated), sometimes without a final newline.
		var b strings.Builder
		for _, l := range a {
			switch rng.Intn(6) {
			case 0:
			case 1:
				fmt.Fprintf(&b, "l%d\n", rng.Intn(alpha))
			case 2:
				fmt.Fprintf(&b, "%sl%d\n", l, rng.Intn(alpha))
			default:
				b.WriteString(l)
			}
		}
		textA, textB := strings.Join(a, ""), b.String()
		if n%2 == 1 {
			textB = strings.Join(lines(), "")
		}
		if n%5 == 0 && textB != "" {
			textB = textB[:len(textB)-1]
		}
		if err := os.WriteFile(filepath.Join(dir, "a"), []byte(textA), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "b"), []byte(textB), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, flags := range [][]string{{}, {"-U0"}, {"-U2"}, {"-u"}} {
			args := append(append(flags, "--label", "A", "--label", "B"), "a", "b")
			if len(flags) == 0 {
				args = []string{"a", "b"}
			}
			cmd := exec.Command(gnu, args...)
			cmd.Dir = dir
			want, _ := cmd.Output()
			var out bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Dir: "/w",
				FS: newTextFS(map[string]string{"/w/a": textA, "/w/b": textB}), Getenv: func(string) string { return "" }}
			textDiff(context.Background(), env, append([]string{"diff"}, args...))
			if out.String() != string(want) {
				t.Fatalf("diff %q\na: %q\nb: %q\nGNU:\n%s\nours:\n%s", args, textA, textB, want, out.String())
			}
		}
	}
}
