// Package wine runs the agent's Windows executables under Wine for tests, on
// the Linux machines where CI runs.
//
// New finds wine (skipping the test when it is missing, failing under
// CFE_STRICT_TOOLS=1 as internal/testtool does for every tool), and hands the
// test a WINEPREFIX of its own for the test's duration:
//
//   - The prefix is cached under the user's cache directory, keyed by Wine's
//     version and the shim's source: `wineboot -i` takes 6–10 s and writes
//     about 700 MB (Debian's Wine copies its DLLs into the prefix), too much
//     to repeat per test binary. A file lock gives one test at a time the
//     prefix (and its wineserver), across test binaries too.
//   - Go ≥ 1.24 programs need bcryptprimitives.dll!ProcessPrng, which Wine 8.0
//     lacks; the prefix gets a small replacement DLL (shim/prng.c) built with
//     x86_64-w64-mingw32-gcc when the prefix is made. The DLL is never
//     committed: it is built from the source beside this file.
//   - The prefix uses Wine's null graphics driver (HKCU\Software\Wine\Drivers,
//     Graphics=null): without a display Wine creates no window otherwise,
//     and the agent's hidden stop window is how taskkill stops it gracefully.
//   - The test's clean-up kills the prefix's wineserver (and with it every
//     Windows process of the test), then releases the lock.
//
// Commands run with WINEDEBUG=-all and an environment of their own: nothing
// of the caller's CFE_* settings or TZ reaches the Windows program unless the
// test passes it. Wine shares the host's loopback, so a server that a Windows
// program starts on 127.0.0.1 is reachable from the test.
//
// The package builds only on Linux; this file keeps it a package elsewhere.
package wine
