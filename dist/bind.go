package dist

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
)

// EnvBindAll set to a true value (1, true) makes rank 0 listen on every
// interface instead of the interface of its configured address.
const EnvBindAll = "RAYD_RENDEZVOUS_BIND_ALL"

// listenPlan is where rank 0 listens: hosts (IP literals, or "" for every
// interface) on one port, and why.
type listenPlan struct {
	hosts []string
	port  string
	why   string // set when the plan is every interface
}

// all reports the every-interface plan.
func (p listenPlan) all() bool { return len(p.hosts) == 1 && p.hosts[0] == "" }

// beyondLoopback reports whether anything but this host can reach the
// listener.
func (p listenPlan) beyondLoopback() bool {
	for _, h := range p.hosts {
		if a, err := netip.ParseAddr(h); !strings.EqualFold(h, "localhost") && (err != nil || !a.IsLoopback()) {
			return true
		}
	}
	return false
}

// planListen decides where rank 0 listens for addr (host:port):
//   - bindAll, an empty or unspecified host: every interface;
//   - "localhost" or a loopback address: that name or address;
//   - an address of one of this host's interfaces: that address;
//   - a name: the addresses it resolves to that belong to this host
//     (loopback ones included) when at least one of them is not loopback;
//   - anything else (an address or name that is not this host's, a name
//     that resolves to loopback only, which on some distributions is how a
//     host resolves its own name while the other nodes reach it on a real
//     interface, or a name that does not resolve): every interface.
func planListen(ctx context.Context, addr string, bindAll bool) (listenPlan, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return listenPlan{}, err
	}
	all := func(why string) (listenPlan, error) {
		return listenPlan{hosts: []string{""}, port: port, why: why}, nil
	}
	switch {
	case bindAll:
		return all(EnvBindAll + " is set")
	case host == "":
		return all("the address names no host")
	case strings.EqualFold(host, "localhost"):
		return listenPlan{hosts: []string{host}, port: port}, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		switch {
		case ip.IsUnspecified():
			return all("the address is unspecified")
		case ip.IsLoopback() || isLocal(ip):
			return listenPlan{hosts: []string{host}, port: port}, nil
		}
		return all(host + " is not an address of this host")
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return all(fmt.Sprintf("%s does not resolve here (%v)", host, err))
	}
	var hosts []string
	onlyLoopback := true
	for _, ip := range ips {
		ip = ip.Unmap()
		if ip.IsLinkLocalUnicast() || !(ip.IsLoopback() || isLocal(ip)) || slices.Contains(hosts, ip.String()) {
			continue
		}
		hosts = append(hosts, ip.String())
		onlyLoopback = onlyLoopback && ip.IsLoopback()
	}
	switch {
	case len(hosts) == 0:
		return all(host + " resolves to no address of this host")
	case onlyLoopback:
		return all(host + " resolves to loopback addresses only here")
	}
	return listenPlan{hosts: hosts, port: port}, nil
}

// isLocal reports whether ip is an address of one of this host's
// interfaces.
func isLocal(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if x, ok := netip.AddrFromSlice(n.IP); ok && x.Unmap() == ip.Unmap() {
				return true
			}
		}
	}
	return false
}

// listen opens the plan's listeners (all or none).
func (p listenPlan) listen() ([]net.Listener, error) {
	var lns []net.Listener
	for _, h := range p.hosts {
		ln, err := net.Listen("tcp", net.JoinHostPort(h, p.port))
		if err != nil {
			for _, l := range lns {
				_ = l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// String names where the plan listens.
func (p listenPlan) String() string {
	if p.all() {
		return "every interface, port " + p.port + " (" + p.why + ")"
	}
	var s []string
	for _, h := range p.hosts {
		s = append(s, net.JoinHostPort(h, p.port))
	}
	return strings.Join(s, ", ")
}

// insecureWarning is logged once per process: a rendezvous without a token
// that other hosts can reach.
var insecureWarning sync.Once

func warnNoToken(p listenPlan) {
	insecureWarning.Do(func() {
		slog.Warn("dist: the rendezvous has no token: any host that reaches it and knows the run id can join the job and read its NCCL id; set "+
			EnvToken+" (or "+EnvTokenFile+") to the same secret on every rank", "listen", p.String())
	})
}
