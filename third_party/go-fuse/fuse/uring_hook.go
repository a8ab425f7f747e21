// Copyright 2026 the Go-FUSE Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package fuse

// sqlfs patch 1: the hooks a FUSE-over-io_uring transport outside this
// package needs to serve requests of a mounted Server.

// HandleRequestIov serves one request, as the kernel wrote it to
// /dev/fuse (in, a byte stream split anywhere), into out (the reply as it
// would be written to /dev/fuse, also a byte stream), with the Server's
// own state: its negotiated settings, its table of requests in flight
// (which an INTERRUPT read from /dev/fuse cancels) and its file system.
// It returns the number of bytes of out written, 0 with OK when the
// request takes no reply. Like ProtocolServer.HandleRequest, whose body
// it shares.
func (ms *Server) HandleRequestIov(in [][]byte, out [][]byte) (int, Status) {
	return ms.protocolServer.handleRequestIov(in, out)
}

// WithDeviceFD calls f with the /dev/fuse descriptor, held open for the
// duration of the call, and returns an error (without calling f) if it
// is already closed.
func (ms *Server) WithDeviceFD(f func(fd int)) error {
	return ms.fuseFD.withFD(f)
}
