package fs_test

import (
	"errors"
	"os"
	"path"
	"slices"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// trapPolicy hides secrets/ and every *.pem and makes config/ read-only.
var trapPolicy = sfs.Policy{Hidden: []string{"secrets/**", "*.pem"}, ReadOnly: []string{"config/**"}}

// openTrapped builds a tree full of ways around trapPolicy, made before
// the policy applies, and opens it under the policy.
func openTrapped(t *testing.T) *sfs.FS {
	t.Helper()
	f, store := open(t, sfs.Options{})
	for _, d := range []string{"/secrets", "/config", "/config/sub", "/pub", "/certs"} {
		must(t, f.Mkdir(d, 0o755))
	}
	for p, data := range map[string]string{
		"/secrets/key": "s3cret", "/certs/n.pem": "pem", "/top.pem": "pem",
		"/config/app.yml": "app", "/pub/ok": "ok",
	} {
		must(t, f.WriteFile(p, []byte(data), 0o644))
	}
	for link, target := range map[string]string{
		"/x": "secrets/key", "/abs": "/secrets/key", "/up": "pub/../secrets/key",
		"/d": ".", "/sd": "secrets", "/pem": "certs/n.pem", "/chain": "x",
		"/c": "config/app.yml", "/cd": "config", "/csub": "config/sub",
		"/config/out": "../pub",
	} {
		must(t, f.Symlink(target, link))
	}
	return reopen(t, f, store, sfs.Options{Policy: trapPolicy})
}

// The policy is a property of the file the resolver reaches, not of the
// name it was reached by: each symlink's target and every component on
// the way are checked, for reads and changes alike.
func TestPolicyAppliesToResolvedPath(t *testing.T) {
	f := openTrapped(t)
	for _, tc := range []struct {
		name string
		err  error
		want syscall.Errno // 0: allowed
	}{
		{"read through a link", errOf(f.ReadFile("x")), syscall.ENOENT},
		{"read through an absolute link", errOf(f.ReadFile("abs")), syscall.ENOENT},
		{"read through a link with ..", errOf(f.ReadFile("up")), syscall.ENOENT},
		{"read through a chain of links", errOf(f.ReadFile("chain")), syscall.ENOENT},
		{"read through a link to .", errOf(f.ReadFile("d/secrets/key")), syscall.ENOENT},
		{"read through a link to the directory", errOf(f.ReadFile("sd/key")), syscall.ENOENT},
		{"stat through a link", errOf(f.Stat("x")), syscall.ENOENT},
		{"lstat below a link to .", errOf(f.Lstat("d/secrets")), syscall.ENOENT},
		{"list through a link", errOf(f.ReadDir("sd")), syscall.ENOENT},
		{"list below a link to .", errOf(f.ReadDir("d/secrets")), syscall.ENOENT},
		{"open through a link", errOf(f.OpenFile("x", os.O_RDONLY, 0)), syscall.ENOENT},
		{"xattrs below a link to .", errOf(f.Listxattr("d/secrets/key")), syscall.ENOENT},
		{"pem at depth", errOf(f.ReadFile("certs/n.pem")), syscall.ENOENT},
		{"pem through a link", errOf(f.ReadFile("pem")), syscall.ENOENT},
		{"write through a link", f.WriteFile("x", []byte("w"), 0o644), syscall.ENOENT},
		{"create below a link to .", f.WriteFile("d/secrets/new", nil, 0o644), syscall.ENOENT},
		{"mkdir through a link", f.Mkdir("sd/new", 0o755), syscall.ENOENT},
		{"symlink below a link to .", f.Symlink("y", "d/secrets/l"), syscall.ENOENT},
		{"rename out through a link", f.Rename("d/secrets/key", "/stolen"), syscall.ENOENT},
		{"hard link out through a link", f.Link("sd/key", "/stolen"), syscall.ENOENT},
		{"truncate through a link", f.Truncate("x", 0), syscall.ENOENT},
		{"chmod through a link", f.Chmod("x", 0o777), syscall.ENOENT},
		{"setxattr below a link to .", f.Setxattr("d/secrets/key", "user.a", nil, 0), syscall.ENOENT},
		{"remove below a link to .", f.Remove("d/secrets/key"), syscall.ENOENT},
		{"write a read-only file through a link", f.WriteFile("c", []byte("w"), 0o644), syscall.EROFS},
		{"create in a read-only directory through a link", f.WriteFile("cd/new", nil, 0o644), syscall.EROFS},
		{"create where .. leads into read-only", f.WriteFile("csub/../new", nil, 0o644), syscall.EROFS},
		{"truncate a read-only file through a link", f.Truncate("c", 0), syscall.EROFS},
		{"chmod a read-only file through a link", f.Chmod("c", 0o777), syscall.EROFS},
		{"rename out of read-only through a link", f.Rename("cd/app.yml", "/moved"), syscall.EROFS},
		{"remove in read-only through a link", f.Remove("cd/app.yml"), syscall.EROFS},
		{"hard link to a read-only file", f.Link("cd/app.yml", "/hard"), syscall.EROFS},
		// What the resolver reaches is writable: the name written is not what counts.
		{"write where a read-only link leads out", f.WriteFile("config/out/f", []byte("w"), 0o644), 0},
		{"read past a link to .", errOf(f.ReadFile("d/pub/ok")), 0},
		{"read the link itself", errOf(f.Readlink("x")), 0},
		{"a read-only file stays readable through a link", errOf(f.ReadFile("c")), 0},
	} {
		if got := errnoOf(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if b, err := f.ReadFile("/pub/f"); err != nil || string(b) != "w" {
		t.Errorf("/pub/f after writing config/out/f: %q %v", b, err)
	}
	if s, _ := f.Readlink("x"); s != "secrets/key" {
		t.Errorf("readlink x = %q", s)
	}
	// A listing through a link hides what the listing of the directory
	// itself hides.
	if got, want := names(t, f, "/d"), names(t, f, "/"); !slices.Equal(got, want) || slices.Contains(got, "secrets") || slices.Contains(got, "top.pem") {
		t.Errorf("listing of d = %q, of / = %q", got, want)
	}
	if got := names(t, f, "/certs"); len(got) != 0 {
		t.Errorf("certs lists %q", got)
	}
}

// A refused attempt is audited under the path the resolver reached, and
// counted once under its rule.
func TestPolicyRefusalAuditedAtResolvedPath(t *testing.T) {
	f := openTrapped(t)
	agent := f.WithActor("exec:7")
	hidden := testutil.ToFloat64(metrics.PolicyRefusals.WithLabelValues("hidden"))
	readonly := testutil.ToFloat64(metrics.PolicyRefusals.WithLabelValues("readonly"))
	if _, err := agent.ReadFile("x"); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("read x: %v", err)
	} else if pe := (*os.PathError)(nil); !errors.As(err, &pe) || pe.Path != "x" {
		t.Errorf("the error names %v, want the name as written", err)
	}
	if err := agent.WriteFile("c", nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("write c: %v", err)
	}
	if got := testutil.ToFloat64(metrics.PolicyRefusals.WithLabelValues("hidden")) - hidden; got != 1 {
		t.Errorf("hidden refusals counted %v times, want 1", got)
	}
	if got := testutil.ToFloat64(metrics.PolicyRefusals.WithLabelValues("readonly")) - readonly; got != 1 {
		t.Errorf("read-only refusals counted %v times, want 1", got)
	}
	ev, err := auditAfterSync(t, f, sqlstore.AuditFilter{Actor: "exec:7"})
	must(t, err)
	var got []string
	for _, e := range ev {
		got = append(got, e.Op+" "+e.Path+" "+e.Result)
	}
	want := []string{"open /secrets/key ENOENT", "create /config/app.yml EROFS"}
	if !slices.Equal(got, want) {
		t.Fatalf("audit = %q, want %q", got, want)
	}
}

// The inode API, which the kernel's own resolution of symlinks goes
// through, refuses a hidden name at any depth.
func TestInodeLookupHidesAtDepth(t *testing.T) {
	f := openTrapped(t)
	x := f.Inodes()
	certs, err := x.Lookup(sqlstore.Root, "certs")
	must(t, err)
	if _, err := x.Lookup(certs.Ino, "n.pem"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("lookup certs/n.pem: %v", err)
	}
	if _, err := x.Lookup(sqlstore.Root, "secrets"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("lookup secrets: %v", err)
	}
	ents, _, err := x.ReadDir(certs.Ino, 0, 100)
	if err != nil || len(ents) != 0 {
		t.Errorf("readdir certs: %+v %v", ents, err)
	}
}

// A glob without "/" matches a base name at any depth, as in .gitignore
// and find -name; a glob with one is anchored at the workspace root. Both
// kinds of rule match alike.
func TestPolicyGlobForms(t *testing.T) {
	globs := []string{"*.pem", "secrets", "build/", "/top", "a/b", "**/deep/*.key"}
	paths := map[string]bool{ // path: matched
		"/x.pem": true, "/d/e/x.pem": true, "/d/x.pem.txt": false,
		"/secrets": true, "/d/secrets/k": true, "/d/secrets2": false,
		"/build/o": true, "/d/build": true,
		"/top": true, "/d/top": false,
		"/a/b/c": true, "/d/a/b": false,
		"/deep/k.key": true, "/d/deep/k.key": true, "/d/k.key": false,
	}
	f, store := open(t, sfs.Options{})
	for p := range paths {
		must(t, f.MkdirAll(path.Dir(p), 0o755))
		must(t, f.WriteFile(p, nil, 0o644))
	}
	for _, rule := range []string{"hidden", "readonly"} {
		t.Run(rule, func(t *testing.T) {
			pol, want := sfs.Policy{Hidden: globs}, syscall.ENOENT
			if rule == "readonly" {
				pol, want = sfs.Policy{ReadOnly: globs}, syscall.EROFS
			}
			must(t, pol.Validate())
			g := reopen(t, f, store, sfs.Options{Policy: pol})
			f = g
			for p, matched := range paths {
				err := g.Chmod(p, 0o600)
				if got := errnoOf(err); matched && got != want || !matched && err != nil {
					t.Errorf("%s under %q: %v, matched %v", p, globs, err, matched)
				}
			}
		})
	}
}
