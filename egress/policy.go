// Package egress decides which network connections the code an agent runs
// may open, and opens them. It is the one place a connection out of an exec
// is allowed or refused, imported by the backends like metrics is:
//
//   - a Policy is the operator's rules: allow rules (--egress-allow) and
//     deny rules (--egress-deny), each a host glob or an address range, and
//     ports. A connection is allowed when an allow rule matches and no
//     deny rule does: a deny glob is checked on the name before any lookup,
//     a deny range on every address the name resolves to. Nothing matches
//     an empty Policy: the network is off unless the operator turns it on.
//     Every refusal names the rule that refused, or says no allow rule
//     matched.
//   - loopback, link-local, private, shared (CGNAT), multicast and other
//     special addresses, among them every cloud metadata endpoint, are
//     refused unless a rule names the address itself (an IP or a CIDR
//     range): a host glob such as "*" or "*.example.com" never reaches the
//     owner's own ports or the cloud's metadata service.
//   - a Dialer checks the host name against the rules before it asks DNS
//     (a refused name costs no lookup an agent could leak data through),
//     resolves once, checks every address and connects to the address it
//     checked, so a name that resolves differently the second time (DNS
//     rebinding) gains nothing.
//   - Transport is an http.RoundTripper over the Dialer, with no proxy
//     from the environment (a proxy would connect where nobody checked).
//   - Proxy is an HTTP proxy (CONNECT tunnels, absolute-form requests)
//     whose every connection is the Dialer's, answering a refusal 403
//     with its reason: the way out of a container's network namespace.
//
// Every attempt is counted in sqlfs_egress_connections_total{outcome} and
// handed to the Dialer's audit hook with the actor the context names
// (WithActor).
//
// Built on it: the container backend's proxy, credentials injected per
// host by a RoundTripper wrapping Transport (sidecar/httpcred, whose
// host rules are this package's Rule), git over HTTP through the same
// Transport, a host's per-workspace policy changed while the workspace
// runs (Dialer.SetPolicy: the next connection follows it). Rules per actor
// are not built (Policy.Allow takes the actor only to name it).
package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"strconv"
	"strings"
)

// ErrDenied is what a refused connection's error Is.
var ErrDenied = errors.New("egress denied")

// DeniedError says which connection was refused and why.
type DeniedError struct {
	Actor string
	Host  string // as asked
	Addr  netip.AddrPort
	// Rule is the deny rule that refused ("--egress-deny *.evil.com:443"),
	// "" when no allow rule matched or the request was malformed.
	Rule   string
	Reason string
}

func (e *DeniedError) Error() string {
	target := e.Host
	if e.Addr.IsValid() && e.Addr.Addr().String() != e.Host {
		target += " (" + e.Addr.String() + ")"
	} else if e.Addr.IsValid() {
		target = e.Addr.String()
	}
	return fmt.Sprintf("egress to %s refused: %s", target, e.Reason)
}

// Is makes errors.Is(err, ErrDenied) hold.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Rule allows connections to some hosts on some ports.
type Rule struct {
	// Host is a glob on the host name as asked (path.Match syntax, case
	// folded: "*", "*.example.com", "api.github.com"); "" when Prefix is set.
	Host string
	// Prefix is an address range ("10.0.0.0/8", "127.0.0.1/32"); it
	// matches the address dialed, whatever name led there, and is the only
	// way to allow a special address.
	Prefix netip.Prefix
	// MinPort and MaxPort bound the port, both included; 0 and 65535 is
	// every port.
	MinPort, MaxPort uint16
}

// String is the rule as --egress-allow takes it.
func (r Rule) String() string {
	host := r.Host
	if r.Prefix.IsValid() {
		host = r.Prefix.String()
		if r.Prefix.Addr().Is6() {
			host = "[" + host + "]"
		}
	}
	switch {
	case r.MinPort == 0 && r.MaxPort == 65535:
		return host
	case r.MinPort == r.MaxPort:
		return fmt.Sprintf("%s:%d", host, r.MinPort)
	}
	return fmt.Sprintf("%s:%d-%d", host, r.MinPort, r.MaxPort)
}

// ParseRule reads HOST[:PORTS]: HOST is a glob on the name, an IP address
// or a CIDR range (IPv6 in brackets when a port follows: [::1]:8080);
// PORTS is N, N-M or * (the default).
func ParseRule(s string) (Rule, error) {
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("egress rule %q: %s (want HOST[:PORT], e.g. '*.example.com:443', 10.0.0.0/8, '[::1]:8080')", s, why)
	}
	host, ports := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return bad("unclosed [")
		}
		host, ports = s[1:end], s[end+1:]
		if ports != "" {
			p, ok := strings.CutPrefix(ports, ":")
			if !ok {
				return bad("text after ]")
			}
			ports = p
		}
	case strings.Count(s, ":") == 1:
		host, ports, _ = strings.Cut(s, ":")
	}
	r := Rule{MinPort: 0, MaxPort: 65535}
	if ports != "" && ports != "*" {
		lo, hi, isRange := strings.Cut(ports, "-")
		if !isRange {
			hi = lo
		}
		l, err1 := strconv.ParseUint(lo, 10, 16)
		h, err2 := strconv.ParseUint(hi, 10, 16)
		if err1 != nil || err2 != nil || l == 0 || l > h {
			return bad("bad port " + ports)
		}
		r.MinPort, r.MaxPort = uint16(l), uint16(h)
	}
	if host == "" {
		return bad("no host")
	}
	if p, err := netip.ParsePrefix(host); err == nil {
		r.Prefix = p.Masked()
		return r, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		r.Prefix = netip.PrefixFrom(a, a.BitLen())
		return r, nil
	}
	if strings.ContainsAny(host, "/:[]") {
		return bad("not a host name, address or range")
	}
	r.Host = strings.ToLower(host)
	if _, err := path.Match(r.Host, ""); err != nil {
		return bad(err.Error())
	}
	return r, nil
}

func (r Rule) port(p uint16) bool { return p >= r.MinPort && p <= r.MaxPort }

// Matches reports whether the rule names a connection to host (a name or
// an address literal, as a URL carries it) on port, as far as the name
// tells without a lookup: a glob matches names, a range matches address
// literals in it. It is how other per-host settings (credentials) are
// written in the policy's syntax; whether a connection is allowed is
// Policy.Allow's question.
func (r Rule) Matches(host string, port uint16) bool {
	if !r.port(port) {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if r.Prefix.IsValid() {
		ip, err := netip.ParseAddr(host)
		return err == nil && ip.Zone() == "" && r.Prefix.Contains(ip.Unmap())
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return false // a name glob ("*") never matches an address literal
	}
	return matchHost(r.Host, host)
}

// Policy is the operator's rules: a connection is allowed when one allow
// rule matches it and no deny rule does. The zero Policy and a nil *Policy
// allow nothing. A Policy is immutable, so one serves every exec
// concurrently.
type Policy struct{ rules, deny []Rule }

// NewPolicy parses allow rules (see ParseRule).
func NewPolicy(rules ...string) (*Policy, error) { return ParsePolicy(rules, nil) }

// ParsePolicy parses allow and deny rules (see ParseRule; --egress-allow
// and --egress-deny).
func ParsePolicy(allow, deny []string) (*Policy, error) {
	p := &Policy{}
	for _, l := range []struct {
		in  []string
		out *[]Rule
	}{{allow, &p.rules}, {deny, &p.deny}} {
		for _, s := range l.in {
			r, err := ParseRule(s)
			if err != nil {
				return nil, err
			}
			*l.out = append(*l.out, r)
		}
	}
	return p, nil
}

// FromRules is the policy of allow and deny rules already parsed.
func FromRules(allow, deny []Rule) *Policy {
	return &Policy{rules: append([]Rule(nil), allow...), deny: append([]Rule(nil), deny...)}
}

// Rules returns a copy of the policy's allow rules.
func (p *Policy) Rules() []Rule {
	if p == nil {
		return nil
	}
	return append([]Rule(nil), p.rules...)
}

// DenyRules returns a copy of the policy's deny rules.
func (p *Policy) DenyRules() []Rule {
	if p == nil {
		return nil
	}
	return append([]Rule(nil), p.deny...)
}

// Empty reports whether the policy allows nothing at all.
func (p *Policy) Empty() bool { return p == nil || len(p.rules) == 0 }

// String lists the allow rules, comma-separated.
func (p *Policy) String() string { return join(p.Rules()) }

func join(rules []Rule) string {
	var s []string
	for _, r := range rules {
		s = append(s, r.String())
	}
	return strings.Join(s, ",")
}

// denied is the deny rule matching a connection to host (as asked) on
// port, and when addr is valid to that address: a name glob matches the
// name, a range the address.
func (p *Policy) denied(actor, host string, addr netip.AddrPort, port uint16) error {
	if p == nil {
		return nil
	}
	for _, r := range p.deny { // not DenyRules: no copy on every dial
		if !r.port(port) {
			continue
		}
		if r.Prefix.IsValid() && (!addr.IsValid() || !r.Prefix.Contains(addr.Addr().Unmap())) {
			continue
		}
		if !r.Prefix.IsValid() && !matchHost(r.Host, host) {
			continue
		}
		rule := "--egress-deny " + r.String()
		return &DeniedError{Actor: actor, Host: host, Addr: addr, Rule: rule, Reason: "denied by " + rule}
	}
	return nil
}

// mayName reports whether some rule could allow host on port, before any
// address is known: a refused name is never looked up, nor one a deny
// glob names.
func (p *Policy) mayName(actor, host string, port uint16) error {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if err := p.denied(actor, host, netip.AddrPort{}, port); err != nil {
		return err
	}
	for _, r := range p.Rules() {
		if r.port(port) && (r.Prefix.IsValid() || matchHost(r.Host, host)) {
			return nil
		}
	}
	return &DeniedError{Actor: actor, Host: host, Reason: p.noRule()}
}

func (p *Policy) noRule() string {
	if p.Empty() {
		return "the network is off for execs (the operator allows hosts with --egress-allow)"
	}
	return "no --egress-allow rule matches (allowed: " + p.String() + ")"
}

// Allow decides a connection of actor to addr, reached by the name host
// (the address itself when dialed by address). It returns nil or a
// *DeniedError. A deny rule matching the name or the address wins over
// every allow rule. actor is not matched by the rules yet; it names the
// connection in the error.
func (p *Policy) Allow(actor, host string, addr netip.AddrPort) error {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	ip := addr.Addr().Unmap()
	if err := p.denied(actor, host, netip.AddrPortFrom(ip, addr.Port()), addr.Port()); err != nil {
		return err
	}
	reason := p.noRule()
	for _, r := range p.Rules() {
		if !r.port(addr.Port()) {
			continue
		}
		if r.Prefix.IsValid() {
			if r.Prefix.Contains(ip) {
				return nil
			}
			continue
		}
		if !matchHost(r.Host, host) {
			continue
		}
		if Special(ip) {
			reason = fmt.Sprintf("%s is a loopback, private, link-local or other special address, which only a rule naming the address allows (e.g. --egress-allow %s)", ip, netip.PrefixFrom(ip, ip.BitLen()).String())
			continue
		}
		return nil
	}
	return &DeniedError{Actor: actor, Host: host, Addr: netip.AddrPortFrom(ip, addr.Port()), Reason: reason}
}

func matchHost(glob, host string) bool {
	ok, _ := path.Match(glob, host) // the glob was checked by ParseRule
	return ok
}

// special are the ranges beyond what netip's predicates cover that no
// public service lives in, or that embed another address (NAT64, 6to4,
// Teredo) an agent could smuggle a private one through.
var special = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // shared address space (CGNAT; Alibaba's metadata at 100.100.100.200)
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"240.0.0.0/4",     // reserved, and the limited broadcast
		"::/96",           // IPv4-compatible
		"64:ff9b::/96",    // NAT64
		"64:ff9b:1::/48",  // local NAT64
		"100::/64",        // discard
		"2001::/32",       // Teredo
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4
		"fec0::/10",       // site-local
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// Special reports whether a is an address an exec reaches only when a rule
// names it: loopback, private (RFC 1918, ULA), link-local (169.254/16, the
// metadata services' range, fe80::/10), multicast, unspecified, or one of
// the reserved and address-embedding ranges.
func Special(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() {
		return true
	}
	for _, p := range special {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
