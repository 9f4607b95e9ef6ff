package main

import (
	"encoding/binary"
	"fmt"
)

// executableTarget reads, from an executable's header, the operating
// system and architecture it was built for: ELF is taken for Linux (the
// only ELF target released), 64-bit Mach-O for macOS, PE for Windows, each
// with its machine field. It answers false for anything else, so a wheel
// or archive for one target cannot carry another target's binary (or a
// truncated one) unnoticed, on a machine that can run neither.
func executableTarget(data []byte) (target, bool) {
	le := binary.LittleEndian
	switch {
	case len(data) >= 20 && string(data[:4]) == "\x7fELF":
		// e_machine, after the 16-byte e_ident and e_type; both released
		// ELF targets are little-endian (e_ident[EI_DATA] = 1).
		if data[5] != 1 {
			return target{}, false
		}
		switch le.Uint16(data[18:]) {
		case 0x3e: // EM_X86_64
			return target{"linux", "amd64"}, true
		case 0xb7: // EM_AARCH64
			return target{"linux", "arm64"}, true
		}
	case len(data) >= 8 && le.Uint32(data) == 0xfeedfacf: // MH_MAGIC_64
		switch le.Uint32(data[4:]) {
		case 0x01000007: // CPU_TYPE_X86_64
			return target{"darwin", "amd64"}, true
		case 0x0100000c: // CPU_TYPE_ARM64
			return target{"darwin", "arm64"}, true
		}
	case len(data) >= 0x40 && string(data[:2]) == "MZ":
		// The PE header's offset is at 0x3c; the machine follows "PE\0\0".
		at := uint64(le.Uint32(data[0x3c:]))
		if at+6 > uint64(len(data)) || string(data[at:at+4]) != "PE\x00\x00" {
			return target{}, false
		}
		switch le.Uint16(data[at+4:]) {
		case 0x8664: // IMAGE_FILE_MACHINE_AMD64
			return target{"windows", "amd64"}, true
		case 0xaa64: // IMAGE_FILE_MACHINE_ARM64
			return target{"windows", "arm64"}, true
		}
	}
	return target{}, false
}

// checkExecutable refuses data that is not an executable of tg.
func checkExecutable(data []byte, tg target) error {
	got, ok := executableTarget(data)
	if !ok {
		return fmt.Errorf("not an executable of a released target, want %s", tg)
	}
	if got != tg {
		return fmt.Errorf("an executable for %s, want %s", got, tg)
	}
	return nil
}
