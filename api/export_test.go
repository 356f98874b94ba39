package api

import "github.com/simdex/simdex/auth"

// RouteInfo is a route of the table as the external tests see it.
type RouteInfo struct {
	Method, Path string
	Public       bool
	Perm         auth.Permission
}

// RouteTable returns the route table, for the tests that run a daemon.
func RouteTable() []RouteInfo {
	var out []RouteInfo
	for _, rt := range (&Server{}).routes() {
		out = append(out, RouteInfo{Method: rt.method, Path: rt.path, Public: rt.public, Perm: rt.perm})
	}
	return out
}
