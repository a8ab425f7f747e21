package git

func cmdClone(s *session, args []string) error    { return unsupported("clone") }
