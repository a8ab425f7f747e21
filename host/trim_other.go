//go:build !linux

package host

func trimCMemory() {}
