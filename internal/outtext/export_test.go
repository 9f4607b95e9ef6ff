package outtext

// SetMapAtLeast sets the smallest chunk given memory of its own and
// returns the old value.
func SetMapAtLeast(n int) int {
	old := mapAtLeast
	mapAtLeast = n
	return old
}
