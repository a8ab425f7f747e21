package git

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// cmdRemote lists, adds and removes remotes in the repository's config.
func cmdRemote(s *session, args []string) error {
	verbose := false
	for len(args) > 0 && (args[0] == "-v" || args[0] == "--verbose") {
		verbose, args = true, args[1:]
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	cf, err := readConfigFile(r.dot, "config")
	if err != nil {
		return err
	}
	if len(args) == 0 {
		if !cf.raw.HasSection("remote") {
			return nil
		}
		for _, sub := range cf.raw.Section("remote").Subsections {
			if !verbose {
				fmt.Fprintln(s.out, sub.Name)
				continue
			}
			url := sub.Option("url")
			fmt.Fprintf(s.out, "%s\t%s (fetch)\n", sub.Name, url)
			push := url
			if pu := sub.OptionAll("pushurl"); len(pu) > 0 {
				push = pu[0]
			}
			fmt.Fprintf(s.out, "%s\t%s (push)\n", sub.Name, push)
		}
		return nil
	}
	sub, args := args[0], args[1:]
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return unsupported("git remote " + sub + " " + a)
		}
	}
	exists := func(name string) bool {
		return cf.raw.HasSection("remote") && cf.raw.Section("remote").HasSubsection(name)
	}
	switch {
	case sub == "add" && len(args) == 2:
		name, url := args[0], args[1]
		if !validRefName("refs/remotes/" + name + "/test") {
			return fatalf("'%s' is not a valid remote name", name)
		}
		if exists(name) {
			return errorf(3, "error: remote %s already exists.\n", name)
		}
		cf.raw.AddOption("remote", name, "url", url)
		cf.raw.AddOption("remote", name, "fetch", "+refs/heads/*:refs/remotes/"+name+"/*")
		return cf.write()
	case (sub == "remove" || sub == "rm") && len(args) == 1:
		name := args[0]
		if !exists(name) {
			return errorf(2, "error: No such remote: '%s'\n", name)
		}
		cf.raw.RemoveSubsection("remote", name)
		if len(cf.raw.Section("remote").Subsections) == 0 && len(cf.raw.Section("remote").Options) == 0 {
			cf.raw.RemoveSection("remote")
		}
		if cf.raw.HasSection("branch") {
			for _, b := range cf.raw.Section("branch").Subsections {
				if b.Option("remote") == name {
					cf.unsetAll("branch", b.Name, "remote")
					cf.unsetAll("branch", b.Name, "merge")
				}
			}
		}
		if err := cf.write(); err != nil {
			return err
		}
		return r.removeRemoteRefs(name)
	case sub == "get-url" && len(args) == 1:
		if !exists(args[0]) {
			return errorf(2, "error: No such remote '%s'\n", args[0])
		}
		fmt.Fprintln(s.out, cf.raw.Section("remote").Subsection(args[0]).Option("url"))
		return nil
	case sub == "set-url" && len(args) == 2:
		if !exists(args[0]) {
			return errorf(2, "error: No such remote '%s'\n", args[0])
		}
		cf.set("remote", args[0], "url", args[1])
		return cf.write()
	}
	return unsupported("git remote " + sub + " with these arguments")
}

// removeRemoteRefs deletes the remote-tracking refs of a removed remote
// and their reflogs.
func (r *repo) removeRemoteRefs(name string) error {
	it, err := r.r.Storer.IterReferences()
	if err != nil {
		return err
	}
	prefix := "refs/remotes/" + name + "/"
	var gone []plumbing.ReferenceName
	err = it.ForEach(func(ref *plumbing.Reference) error {
		if strings.HasPrefix(ref.Name().String(), prefix) {
			gone = append(gone, ref.Name())
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, n := range gone {
		if err := r.r.Storer.RemoveReference(n); err != nil {
			return err
		}
		if err := r.dropLog(n); err != nil {
			return err
		}
	}
	return nil
}
