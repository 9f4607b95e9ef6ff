//go:build !linux && !darwin

package storageguard

// statDirFS has nothing to read here: Windows refuses network paths by
// their text (§11.3), and other platforms open no ledger.
func statDirFS(string) (FSStat, error) { return FSStat{}, nil }

func onNetworkFS(FSStat) bool { return false }
