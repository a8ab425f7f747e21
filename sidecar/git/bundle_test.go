package git_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCloneBundle clones bundles written by real git (v2 and v3 headers,
// with and without HEAD, with prerequisites) with real git and with the
// built-in, and compares what they print, their exit status and what real
// git says about the two clones.
func TestCloneBundle(t *testing.T) {
	requireGit(t)
	for _, tc := range []struct {
		name, create, clone string
	}{
		{"v2-all", "git bundle create ../b.bundle --all", "git clone b.bundle"},
		{"v3-all", "git bundle create --version=3 ../b.bundle --all", "git clone b.bundle c"},
		{"branch-option", "git bundle create ../b.bundle --all", "git clone -q -b side b.bundle c"},
		{"head-on-side", "git checkout -q -f side && git bundle create ../b.bundle HEAD main side", "git clone b.bundle c"},
		{"no-head", "git bundle create ../b.bundle side", "git clone b.bundle c"},
		{"prerequisites", "git bundle create ../b.bundle HEAD~1..main", "git clone b.bundle c; ls"},
		{"not-a-bundle", "echo junk > ../b.bundle", "git clone b.bundle c 2>/dev/null; ls"},
		// A thin pack under a header naming no prerequisite: its delta
		// against a blob it lacks cannot be resolved.
		{"unresolved-delta", `for i in 300 600 900; do seq 1 $i > n && git add n && git commit -q -m $i; done &&
			(printf '# v2 git bundle\n%s refs/heads/main\n\n' $(git rev-parse HEAD); printf '%s\n^%s\n' HEAD HEAD~1 | git pack-objects --thin --stdout --revs -q) > ../b.bundle`,
			"git clone b.bundle c; echo \"exit $?\"; ls"},
		// Packs without all their ref needs: the tip commit alone (its
		// parent, trees and blobs missing), the commits alone, all but
		// one blob.
		{"missing-commit", `(printf '# v2 git bundle\n%s refs/heads/main\n\n' $(git rev-parse HEAD); git rev-parse HEAD | git pack-objects --stdout -q) > ../b.bundle`,
			"git clone b.bundle c; echo \"exit $?\"; ls"},
		{"missing-tree", `(printf '# v2 git bundle\n%s refs/heads/main\n\n' $(git rev-parse HEAD); git rev-list HEAD | git pack-objects --stdout -q) > ../b.bundle`,
			"git clone b.bundle c; echo \"exit $?\"; ls"},
		{"missing-blob", `(printf '# v2 git bundle\n%s refs/heads/main\n\n' $(git rev-parse HEAD); git rev-list --objects HEAD | grep -v ' README$' | git pack-objects --stdout -q) > ../b.bundle`,
			"git clone b.bundle c; echo \"exit $?\"; ls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			native := t.TempDir()
			src := filepath.Join(native, "src")
			if err := os.Mkdir(src, 0o755); err != nil {
				t.Fatal(err)
			}
			makeHistory(t, src)
			if out := runNative(t, src, tc.create); out.code != 0 {
				t.Fatalf("%s: %d %s", tc.create, out.code, out.stderr)
			}
			b, fsys := newStore(t)
			importDir(t, fsys, native, "/")
			want := runNative(t, native, tc.clone)
			got := runBuiltin(t, b, tc.clone)
			if got.stdout != want.stdout || got.stderr != want.stderr || got.code != want.code {
				t.Errorf("%s\n--- git: exit %d\n%s%s--- built-in: exit %d\n%s%s", tc.clone, want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr)
			}
			out := t.TempDir()
			export(t, fsys, "/", out)
			wi, gi := inspect(t, filepath.Join(native, "c")), inspect(t, filepath.Join(out, "c"))
			if len(wi) != len(gi) {
				t.Errorf("real git inspects %d things in git's clone, %d in the built-in's", len(wi), len(gi))
			}
			for k, v := range wi {
				if gi[k] != v {
					t.Errorf("real git %s differs\n--- on git's clone\n%s--- on the built-in's\n%s", k, v, gi[k])
				}
			}
		})
	}
}
