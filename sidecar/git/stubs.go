package git

func cmdBranch(s *session, args []string) error   { return unsupported("branch") }
func cmdCheckout(s *session, args []string) error { return unsupported("checkout") }
func cmdSwitch(s *session, args []string) error   { return unsupported("switch") }
func cmdRestore(s *session, args []string) error  { return unsupported("restore") }
func cmdReset(s *session, args []string) error    { return unsupported("reset") }
func cmdTag(s *session, args []string) error      { return unsupported("tag") }
func cmdMerge(s *session, args []string) error    { return unsupported("merge") }
func cmdClone(s *session, args []string) error    { return unsupported("clone") }
