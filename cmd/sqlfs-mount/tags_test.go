//go:build !fuse3

package main

func buildTags() []string { return nil }
