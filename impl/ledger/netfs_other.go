//go:build !linux && !darwin

package ledger

// statDirFS has nothing to read here: Windows refuses network paths by
// their text (§11.3), and other platforms open no ledger.
func statDirFS(string) (fsStat, error) { return fsStat{}, nil }

func onNetworkFS(fsStat) bool { return false }
