/*
 * bcryptprimitives.dll for Wine 8.0, built at test time by the wine harness
 * (never committed as a binary).
 *
 * Go >= 1.24 makes every Windows program read its random numbers through
 * bcryptprimitives.dll!ProcessPrng, which Windows 10 and later have and Wine
 * 8.0 (Debian 12) lacks: the runtime stops at start with "fatal error:
 * bcryptprimitives.dll not found". This library exports ProcessPrng and fills
 * the buffer from advapi32's RtlGenRandom (exported as SystemFunction036),
 * which Wine implements over the host's random source.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE out, SIZE_T size)
{
    const SIZE_T chunk = 1u << 30; /* RtlGenRandom takes a ULONG length */

    for (; size > 0;) {
        ULONG n = (ULONG)(size < chunk ? size : chunk);
        if (!SystemFunction036(out, n))
            return FALSE;
        out += n;
        size -= n;
    }
    return TRUE;
}
