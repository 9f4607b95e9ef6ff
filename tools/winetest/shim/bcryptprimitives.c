/*
 * bcryptprimitives.dll for Wine 8.0, which lacks it: Go's runtime (1.24 and
 * later) takes its random bytes from ProcessPrng in this DLL and stops at
 * start-up without it. This stand-in serves ProcessPrng from BCryptGenRandom,
 * which Wine has. It is installed only into the private Wine prefix that
 * tools/winetest makes; nothing of the product links it.
 */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
