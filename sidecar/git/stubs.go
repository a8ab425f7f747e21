package git

import "time"

func cmdLog(s *session, args []string) error      { return unsupported("log") }
func cmdShow(s *session, args []string) error     { return unsupported("show") }
func cmdDiff(s *session, args []string) error     { return unsupported("diff") }
func cmdBranch(s *session, args []string) error   { return unsupported("branch") }
func cmdCheckout(s *session, args []string) error { return unsupported("checkout") }
func cmdSwitch(s *session, args []string) error   { return unsupported("switch") }
func cmdRestore(s *session, args []string) error  { return unsupported("restore") }
func cmdReset(s *session, args []string) error    { return unsupported("reset") }
func cmdTag(s *session, args []string) error      { return unsupported("tag") }
func cmdMerge(s *session, args []string) error    { return unsupported("merge") }
func cmdRevParse(s *session, args []string) error { return unsupported("rev-parse") }
func cmdLsFiles(s *session, args []string) error  { return unsupported("ls-files") }
func cmdConfig(s *session, args []string) error   { return unsupported("config") }
func cmdClone(s *session, args []string) error    { return unsupported("clone") }
func gitDate(t time.Time) string                  { return t.Format("Mon Jan 2 15:04:05 2006 -0700") }
