//go:build !linux

package exepages

// Release does nothing where the executable's pages cannot be listed.
func Release() (int64, error) { return 0, nil }
