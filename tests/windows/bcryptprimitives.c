/* Wine 8.0 lacks bcryptprimitives.dll, which Rust >= 1.78 imports for
 * ProcessPrng (std's random source on Windows); Wine gained it in 8.13.
 * This stand-in serves the one export from advapi32's RtlGenRandom
 * (SystemFunction036), which Wine 8.0 has. Test harness only: it is put
 * in the tests' own Wine prefix, never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
