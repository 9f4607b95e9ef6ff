package outtext

// OwnMemoryFrom turns memory of their own on for chunks of n bytes and
// more, and returns what puts the old setting back.
func OwnMemoryFrom(n int) (restore func()) {
	old, was := mapAtLeast, ownMemory.Load()
	mapAtLeast = n
	UseOwnMemory(true)
	return func() { mapAtLeast = old; UseOwnMemory(was) }
}
